/**
 * Validator sets and the sampler consensus polls draw from. With sybil protection on, a subnet's
 * validators by stake (from genesis now, from the platform chain later); with it off, the connected
 * nodes with equal weight — on a lone node, itself — avalanchego's dev-node semantics.
 */
import { randomInt } from 'node:crypto';
import { Id, type ShortId, type Validator, type ValidatorsView } from '@cornice/sdk';
import type { ValidatorSampler } from '../consensus/index.js';

export class ValidatorSets implements ValidatorsView {
  readonly #sets = new Map<string, Validator[]>();

  constructor(defaultSubnet: readonly Validator[] = []) {
    this.#sets.set(Id.empty.key, [...defaultSubnet]);
  }

  /** Replaces a subnet's validators (the platform chain will call this). */
  set(subnetId: Id, validators: readonly Validator[]): void {
    this.#sets.set(subnetId.key, [...validators]);
  }

  async list(subnetId: Id = Id.empty): Promise<Validator[]> {
    return [...(this.#sets.get(subnetId.key) ?? [])];
  }

  listNow(subnetId: Id): readonly Validator[] {
    return this.#sets.get(subnetId.key) ?? [];
  }
}

/** Draws k items with replacement, each with probability proportional to its weight. */
export function weightedSample(validators: readonly Validator[], k: number, rand: (max: number) => number = randomInt): ShortId[] {
  const total = validators.reduce((s, v) => s + v.weight, 0n);
  if (total === 0n || k <= 0) return [];
  // Weights are bigint (nAVA); scale into a safe integer range for the draw.
  const scale = total > BigInt(Number.MAX_SAFE_INTEGER) ? total / BigInt(2 ** 48) + 1n : 1n;
  const weights = validators.map((v) => Number(v.weight / scale));
  const sum = weights.reduce((a, b) => a + b, 0);
  if (sum === 0) return [];
  const out: ShortId[] = [];
  for (let i = 0; i < k; i++) {
    let r = rand(sum);
    let j = 0;
    while (r >= weights[j]!) r -= weights[j++]!;
    out.push(validators[j]!.nodeId);
  }
  return out;
}

export interface SamplerOptions {
  sybilProtection: boolean;
  sets: ValidatorSets;
  subnetId: Id;
  /** Nodes this node is connected to, itself included (only itself until networking exists). */
  connected: () => readonly ShortId[];
  rand?: (max: number) => number;
}

export function validatorSampler(o: SamplerOptions): ValidatorSampler {
  return {
    sample(k) {
      const pool: readonly Validator[] = o.sybilProtection
        ? o.sets.listNow(o.subnetId)
        : o.connected().map((nodeId) => ({ nodeId, weight: 1n }));
      return weightedSample(pool, k, o.rand);
    },
  };
}
