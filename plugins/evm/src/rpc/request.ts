/**
 * What a method knows of the request it serves: who asked (for fairness and per-client quotas),
 * when to stop (the client went away, or the request or its batch passed its deadline), and how
 * many characters its reply may still take (a batch's items share one budget, so an answer too big
 * is refused before it is built).
 */
import { EvmRpcError, type StopSignal } from '../evm-backend.js';

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

/**
 * The characters of replies being built, over all requests: each request's budget bounds one reply,
 * this bounds them all (100 connections each building a 25 MB batch reply would hold 2.5 GB).
 */
export class ReplyPool {
  #used = 0;

  constructor(readonly size: number) {}

  get free(): number {
    return this.size - this.#used;
  }

  take(chars: number): boolean {
    if (chars > this.size - this.#used) return false;
    this.#used += chars;
    return true;
  }

  release(chars: number): void {
    this.#used -= chars;
  }
}

export function tooLarge(): EvmRpcError {
  return new EvmRpcError(-32003, 'response too large');
}

/** The replies being built over all requests fill the pool. */
export function poolFull(size: number): EvmRpcError {
  return new EvmRpcError(-32005, `too many large replies being built (at most ${size} characters in all): try again later`);
}

/** Why a budget is spent: its own size reached, or the pool over all requests full. */
export type Spent = 'size' | 'pool';

/** Characters a reply may still take; a batch's items spend one budget, which holds its part of the pool. */
export class ReplyBudget {
  /** Set once the budget is spent: the rest of a batch is not run. */
  spent: Spent | undefined;
  #held = 0;

  constructor(
    public remaining: number,
    readonly pool: ReplyPool = new ReplyPool(Infinity),
  ) {}

  /** Whether `chars` more fit: charged to the budget and the pool; else the budget is spent (and why). */
  take(chars: number): boolean {
    if (chars > this.remaining) return this.#spend('size');
    if (!this.pool.take(chars)) return this.#spend('pool');
    this.remaining -= chars;
    this.#held += chars;
    return true;
  }

  /**
   * Refuses, before it is built, a reply of at most `bound` characters that cannot fit what is left
   * here (-32003) or in the pool (-32005), spending the budget so the rest of a batch is not run
   * (dispatch.ts); nothing is charged.
   */
  reserve(bound: number): void {
    if (bound > this.remaining) {
      this.spent = 'size';
      throw tooLarge();
    }
    if (bound > this.pool.free) {
      this.spent = 'pool';
      throw poolFull(this.pool.size);
    }
  }

  /** Charges `chars` to this budget only (error replies, separators: small). */
  charge(chars: number): void {
    this.remaining -= chars;
  }

  #spend(why: Spent): false {
    this.spent = why;
    return false;
  }

  /** Gives back what this budget holds of the pool (its reply is handed on). */
  release(): void {
    this.pool.release(this.#held);
    this.#held = 0;
  }
}

/**
 * Something that may be called off (a connection that closes, a request past its deadline): a
 * StopSignal for the backend and the lanes, its listeners in a Set. Not an AbortSignal, which is
 * costly to make next to a cheap read, and every request has a Cancel (see StopSignal,
 * evm-backend.ts).
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
