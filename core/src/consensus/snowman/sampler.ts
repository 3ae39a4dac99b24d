import type { ShortId } from '@cornice/sdk';
import { ConsensusError } from '../errors.js';
import type { Reachability, ValidatorSampler, ValidatorStatus } from './types.js';

export interface WeightedValidator {
  nodeId: ShortId;
  /** Stake weight (any positive number or bigint); zero-weight validators are never drawn. */
  weight: number | bigint;
}

/**
 * Stake-weighted sampling WITH replacement: each of the k draws picks a validator with probability
 * weight / total. `random` returns a float in [0, 1) (Math.random by default; a seeded PRNG in tests);
 * `status` says who is connected, and who of them is benched (everyone reachable by default).
 */
export class WeightedSampler implements ValidatorSampler {
  readonly #ids: ShortId[] = [];
  readonly #cumulative: number[] = [];
  readonly #total: number;
  readonly #random: () => number;
  readonly #status: (nodeId: ShortId) => ValidatorStatus;

  constructor(
    validators: readonly WeightedValidator[],
    random: () => number = Math.random,
    status: (nodeId: ShortId) => ValidatorStatus = () => 'reachable',
  ) {
    this.#random = random;
    this.#status = status;
    let total = 0;
    for (const v of validators) {
      // Number(bigint) keeps relative weights to float precision, which is all sampling needs.
      const w = Number(v.weight);
      if (!Number.isFinite(w) || w < 0) throw new ConsensusError('InvalidParams', 'validator weight must be a finite number >= 0');
      if (w === 0) continue;
      total += w;
      this.#ids.push(v.nodeId);
      this.#cumulative.push(total);
    }
    this.#total = total;
  }

  reachability(): Reachability {
    const r: Reachability = { validators: this.#ids.length, reachable: 0, benched: 0, totalWeight: this.#total, reachableWeight: 0 };
    let below = 0;
    this.#ids.forEach((id, i) => {
      const upTo = this.#cumulative[i] as number;
      const status = this.#status(id);
      if (status === 'reachable') {
        r.reachable += 1;
        r.reachableWeight += upTo - below;
      } else if (status === 'benched') r.benched += 1;
      below = upTo;
    });
    return r;
  }

  sample(k: number): ShortId[] {
    const out: ShortId[] = [];
    if (this.#ids.length === 0) return out;
    for (let i = 0; i < k; i++) {
      const x = this.#random() * this.#total;
      let lo = 0;
      let hi = this.#cumulative.length - 1;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if ((this.#cumulative[mid] ?? 0) > x) hi = mid;
        else lo = mid + 1;
      }
      out.push(this.#ids[lo] as ShortId);
    }
    return out;
  }
}
