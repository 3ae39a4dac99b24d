import type { Id, ShortId } from '@cornice/sdk';

/**
 * The engine's only way out. The node wires it to itself now (a loopback) and to TCP peers later.
 * Sends are fire-and-forget: a lost message shows up as a query that times out.
 */
export interface EngineTransport {
  pushQuery(to: readonly ShortId[], requestId: number, block: Uint8Array): void;
  /** A poll by block ID, for validators that were sent the block already (optional: without it every poll pushes the block). */
  pullQuery?(to: readonly ShortId[], requestId: number, blockId: Id): void;
  /** `accepted`: this node's last accepted block, so that a voter that lacks it fetches it. */
  chits(to: ShortId, requestId: number, preferred: Id, accepted?: Id): void;
  get(to: ShortId, requestId: number, blockId: Id): void;
  put(to: ShortId, requestId: number, block: Uint8Array): void;
}

/**
 * A validator as a poll sees it: connected; connected but its last request failed and it has not
 * answered since ('unresponsive': frozen, overloaded or partitioned — still asked, since only an
 * answer shows it is back); connected but benched; or not connected.
 */
export type ValidatorStatus = 'reachable' | 'unresponsive' | 'benched' | 'disconnected';

/** Who among a chain's validators could answer a poll now. */
export interface Reachability {
  /** Validators with weight. */
  validators: number;
  /** Of them, connected and not benched. */
  reachable: number;
  /** Of them, benched (and so not reachable). */
  benched: number;
  /** Of the reachable ones, those whose last request failed without an answer since. */
  unresponsive: number;
  totalWeight: number;
  reachableWeight: number;
  unresponsiveWeight: number;
}

/** Samples validators stake-weighted with replacement (stratified: see WeightedSampler); may return fewer than k, or none. */
export interface ValidatorSampler {
  sample(k: number): ShortId[];
  /** Who could answer now: the engine does not poll while too little stake could. */
  reachability(): Reachability;
}

/** Time and timers, injected so tests and simulations run on virtual time. */
export interface Scheduler {
  /** Milliseconds (any epoch; only differences matter). */
  now(): number;
  setTimeout(fn: () => void, ms: number): { cancel(): void };
  /** Lets other work run before continuing (a macrotask turn on the real clock). */
  yield(): Promise<void>;
}
