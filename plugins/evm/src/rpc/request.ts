/**
 * What a method knows of the request it serves: who asked (for fairness and per-client quotas),
 * when to stop (the client went away, or the request or its batch passed its deadline), and how
 * many characters its reply may still take (a batch's items share one budget, so an answer too big
 * is refused before it is built).
 */
import type { StopSignal } from '../backend.js';

/** Who sent a request. */
export interface RpcClient {
  /** One connection: an HTTP keep-alive connection or a WebSocket. Calls queue fairly between connections. */
  readonly connection: string;
  /**
   * The remote address of an HTTP connection: per-address quotas (filters) and fairness between
   * addresses. A WebSocket's is its connection key (the node does not hand its address to VMs).
   */
  readonly address: string;
}

/** Characters a reply may still take; a batch's items spend one budget. */
export class ReplyBudget {
  constructor(public remaining: number) {}

  spend(chars: number): void {
    this.remaining -= chars;
  }
}

/**
 * Something that may be called off (a connection that closes, a request past its deadline): a
 * StopSignal for the backend and the lanes, its listeners in a Set. Not an AbortSignal: making one
 * costs ~3.5 µs, and every request has a Cancel.
 */
export class Cancel implements StopSignal {
  #reason: unknown;
  #aborted = false;
  #listeners: Set<() => void> | undefined;

  get aborted(): boolean {
    return this.#aborted;
  }

  get reason(): unknown {
    return this.#reason;
  }

  /** Calls `fn` when this is called off (at once if it was); the returned function stops listening. */
  onAbort(fn: () => void): () => void {
    if (this.#aborted) {
      fn();
      return () => undefined;
    }
    (this.#listeners ??= new Set()).add(fn);
    return () => void this.#listeners?.delete(fn);
  }

  addEventListener(_type: 'abort', listener: () => void): void {
    if (this.#aborted) return;
    (this.#listeners ??= new Set()).add(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    this.#listeners?.delete(listener);
  }

  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    const listeners = this.#listeners;
    this.#listeners = undefined;
    if (listeners) for (const fn of listeners) fn();
  }
}

export interface CallContext {
  readonly client: RpcClient;
  /** Called off (its reason an EvmRpcError) when the client went away or the request passed its deadline: stop working. */
  readonly signal: Cancel;
  readonly budget: ReplyBudget;
}

/** A method result that is JSON text already (built in pieces, its size known before): written as is. */
export class RawJson {
  constructor(readonly text: string) {}
}

/** The client of calls made without a connection (tests, direct dispatch). */
export const LOCAL_CLIENT: RpcClient = { connection: 'local', address: 'local' };

/** Longest stretch of a request's work between two turns of the event loop, ms. */
export const SLICE_MS = 5;

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Gives the event loop a turn once `sliceMs` of work ran since the last one: a long loop of awaits
 * on resolved promises (a batch of cached reads, formatting 10,000 logs) otherwise never lets
 * /ext/health, the engine or another client in.
 */
export class Slicer {
  #since = performance.now();

  constructor(private readonly sliceMs = SLICE_MS) {}

  async pause(): Promise<void> {
    if (performance.now() - this.#since < this.sliceMs) return;
    await turn();
    this.#since = performance.now();
  }
}
