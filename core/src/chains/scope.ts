/**
 * Which chain a piece of work belongs to, carried across async boundaries (AsyncLocalStorage): every
 * call into a chain's VM, and so every timer or promise the VM starts from there, runs in its chain's
 * scope. A process-level fault (an uncaught exception or unhandled rejection, an rxjs subscriber that
 * threw) can then be pinned on the chain whose code raised it, and that chain halted instead of the
 * node going down.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

export interface ChainScope {
  /** The chain's primary alias, or its ID. */
  readonly name: string;
  readonly chainId: string;
  /** Halts the chain (idempotent): a fault confined to it. */
  fault(reason: string): void;
}

const storage = new AsyncLocalStorage<ChainScope>();

/** Runs `fn` (and everything it schedules) in `scope`. */
export function runInChain<T>(scope: ChainScope, fn: () => T): T {
  return storage.run(scope, fn);
}

/** The chain whose work is running now, if any. */
export function currentChain(): ChainScope | undefined {
  return storage.getStore();
}
