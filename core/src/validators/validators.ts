/**
 * Validator sets and the sampler consensus polls draw from. With sybil protection on, a subnet's
 * current validators by stake (the genesis validators until the platform chain reports, then what it
 * reports through PlatformEvents.validatorsChanged); with it off, the connected
 * nodes with equal weight — on a lone node, itself — avalanchego's dev-node semantics.
 */
import { Id, type ShortId, type Validator, type ValidatorsView } from '@cornice/sdk';
import { WeightedSampler, type ValidatorSampler, type ValidatorStatus } from '../consensus/index.js';

export class ValidatorSets implements ValidatorsView {
  readonly #sets = new Map<string, Validator[]>();

  constructor(defaultSubnet: readonly Validator[] = []) {
    this.#sets.set(Id.empty.key, [...defaultSubnet]);
  }

  /** Replaces a subnet's validators (on the platform chain's validatorsChanged). */
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

export interface SamplerOptions {
  sybilProtection: boolean;
  sets: ValidatorSets;
  subnetId: Id;
  /** Nodes this node is connected to, itself included (only itself on a node without networking). */
  connected: () => readonly ShortId[];
  /** Whether a validator is connected, benched or neither (the chain's RequestSender knows). */
  status: (nodeId: ShortId) => ValidatorStatus;
  /** A float in [0, 1); Math.random by default, seeded in tests. */
  random?: () => number;
  /** Most of the stake left out of polls for not answering (WeightedSampler); 0 by default. */
  maxLeftOut?: number;
}

export function validatorSampler(o: SamplerOptions): ValidatorSampler {
  const current = () => {
    const pool: readonly Validator[] = o.sybilProtection
      ? o.sets.listNow(o.subnetId)
      : o.connected().map((nodeId) => ({ nodeId, weight: 1n }));
    return new WeightedSampler(pool, o.random, o.status, o.maxLeftOut);
  };
  return {
    sample: (k) => current().sample(k),
    reachability: () => current().reachability(),
  };
}
