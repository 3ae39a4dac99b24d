import type { ShortId } from '@cornice/sdk';
import { ConsensusError } from '../errors.js';
import type { Reachability, ValidatorSampler, ValidatorStatus } from './types.js';

export interface WeightedValidator {
  nodeId: ShortId;
  /** Stake weight (any positive number or bigint); zero-weight validators are never drawn. */
  weight: number | bigint;
}

/** Which validators that are not answering go first when some are left out of samples. */
const LEAVE_OUT_ORDER: readonly ValidatorStatus[] = ['disconnected', 'benched', 'unresponsive'];

/**
 * Stake-weighted sampling WITH replacement: each of the k draws picks a validator with probability
 * weight / total. `random` returns a float in [0, 1) (Math.random by default; a seeded PRNG in tests);
 * `status` says who is connected, benched or not answering (everyone reachable by default).
 *
 * Validators that cannot answer now (not connected, benched, or unresponsive: a request failed since
 * their last answer) are left out of the draws, up to `maxLeftOut` of the stake (disconnected ones
 * first, then benched, then unresponsive, each in list order; the rest are drawn as usual). Drawn,
 * a silent fifth of the stake got 6 or more of 20 seats in a fifth of the polls, which then could
 * not reach alpha = 15: beta successful polls in a row took many times beta polls (test "a
 * frozen fifth of the stake costs no polls"). The bound keeps what an attacker gains by making
 * honest validators look silent small: with maxLeftOut = 1 − alpha/k (0.25) its share of the draws
 * grows by at most 1/0.75.
 */
export class WeightedSampler implements ValidatorSampler {
  readonly #ids: ShortId[] = [];
  readonly #cumulative: number[] = [];
  readonly #total: number;
  readonly #random: () => number;
  readonly #status: (nodeId: ShortId) => ValidatorStatus;
  readonly #maxLeftOut: number;

  constructor(
    validators: readonly WeightedValidator[],
    random: () => number = Math.random,
    status: (nodeId: ShortId) => ValidatorStatus = () => 'reachable',
    /** Most of the stake (0..1) left out of the draws for not answering; 0 draws from everyone. */
    maxLeftOut = 0,
  ) {
    this.#random = random;
    this.#status = status;
    this.#maxLeftOut = maxLeftOut;
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
    const r: Reachability = { validators: this.#ids.length, reachable: 0, benched: 0, unresponsive: 0, totalWeight: this.#total, reachableWeight: 0, unresponsiveWeight: 0 };
    let below = 0;
    this.#ids.forEach((id, i) => {
      const upTo = this.#cumulative[i] as number;
      const status = this.#status(id);
      if (status === 'reachable' || status === 'unresponsive') {
        r.reachable += 1;
        r.reachableWeight += upTo - below;
        if (status === 'unresponsive') {
          r.unresponsive += 1;
          r.unresponsiveWeight += upTo - below;
        }
      } else if (status === 'benched') r.benched += 1;
      below = upTo;
    });
    return r;
  }

  sample(k: number): ShortId[] {
    const out: ShortId[] = [];
    const pool = this.#drawPool();
    if (pool.ids.length === 0) return out;
    for (let i = 0; i < k; i++) {
      const x = this.#random() * pool.total;
      let lo = 0;
      let hi = pool.cumulative.length - 1;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if ((pool.cumulative[mid] ?? 0) > x) hi = mid;
        else lo = mid + 1;
      }
      out.push(pool.ids[lo] as ShortId);
    }
    return out;
  }

  /** Everyone with weight, but those left out for not answering (see the class comment). */
  #drawPool(): { ids: ShortId[]; cumulative: number[]; total: number } {
    const all = { ids: this.#ids, cumulative: this.#cumulative, total: this.#total };
    if (this.#maxLeftOut <= 0 || this.#ids.length === 0) return all;
    const weights = this.#ids.map((_, i) => (this.#cumulative[i] as number) - (i === 0 ? 0 : (this.#cumulative[i - 1] as number)));
    const statuses = this.#ids.map((id) => this.#status(id));
    const leftOut = new Set<number>();
    let budget = this.#maxLeftOut * this.#total;
    for (const status of LEAVE_OUT_ORDER) {
      statuses.forEach((s, i) => {
        const w = weights[i] as number;
        if (s === status && w <= budget) {
          leftOut.add(i);
          budget -= w;
        }
      });
    }
    if (leftOut.size === 0 || leftOut.size === this.#ids.length) return all;
    const pool = { ids: [] as ShortId[], cumulative: [] as number[], total: 0 };
    this.#ids.forEach((id, i) => {
      if (leftOut.has(i)) return;
      pool.total += weights[i] as number;
      pool.ids.push(id);
      pool.cumulative.push(pool.total);
    });
    return pool;
  }
}
