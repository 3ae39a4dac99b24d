/**
 * Requests between an engine and its validators, with avalanchego's sender semantics: every query
 * and Get the engine sends is registered with a deadline from the adaptive timeout, and the engine
 * hears `onQueryFailed` when no answer came by then. A request to a validator that is not connected
 * is not sent and fails at its deadline (never at once: an engine whose every query failed
 * instantly would repoll in a tight loop); a request to a benched validator fails on the next turn
 * without waiting. Each timeout counts against the validator in the benchlist; any answer clears it.
 *
 * It sits between the engine and a link (the loopback now, TCP peers later): the engine sends through
 * it (it is the engine's EngineTransport) and the link delivers to it (it is the link's target).
 */
import type { Id, Logger, ShortId } from '@cornice/sdk';
import type { LoopbackTarget } from '../snowman/loopback.js';
import type { EngineTransport, Scheduler, ValidatorStatus } from '../snowman/types.js';
import type { AdaptiveTimeout } from './timeouts.js';
import type { Benchlist } from './benchlist.js';

interface Outstanding {
  readonly node: ShortId;
  readonly requestId: number;
  readonly sentAt: number;
  readonly timer: { cancel(): void };
}

export interface RequestSenderOptions {
  /** Sends to connected peers. */
  link: EngineTransport;
  /** Whether `node` is connected now (this node itself always is). */
  isConnected(node: ShortId): boolean;
  scheduler: Scheduler;
  /** Shared by every chain of the node: latencies are a property of the network. */
  timeouts: AdaptiveTimeout;
  /** This chain's. */
  benchlist: Benchlist;
  log: Logger;
}

export interface SenderStats {
  outstanding: number;
  benched: number;
  timeoutMs: number;
  timedOut: number;
}

export class RequestSender implements EngineTransport, LoopbackTarget {
  readonly #o: RequestSenderOptions;
  readonly #outstanding = new Map<string, Outstanding>();
  #engine: LoopbackTarget | undefined;
  #stopped = false;
  #timedOut = 0;

  constructor(opts: RequestSenderOptions) {
    this.#o = opts;
  }

  /** The engine that receives answers and failures. */
  attach(engine: LoopbackTarget): void {
    this.#engine = engine;
  }

  /** Whether a poll can count on `node` now: connected and not benched. */
  status(node: ShortId): ValidatorStatus {
    if (!this.#o.isConnected(node)) return 'disconnected';
    return this.#o.benchlist.isBenched(node.key) ? 'benched' : 'reachable';
  }

  get stats(): SenderStats {
    return { outstanding: this.#outstanding.size, benched: this.#o.benchlist.size, timeoutMs: this.#o.timeouts.currentMs, timedOut: this.#timedOut };
  }

  /** Cancels every deadline; nothing is delivered afterwards. */
  stop(): void {
    this.#stopped = true;
    for (const r of this.#outstanding.values()) r.timer.cancel();
    this.#outstanding.clear();
  }

  // ---- from the engine -------------------------------------------------------------------------

  pushQuery(to: readonly ShortId[], requestId: number, block: Uint8Array): void {
    const send: ShortId[] = [];
    for (const node of to) if (this.#register(node, requestId)) send.push(node);
    if (send.length > 0) this.#o.link.pushQuery(send, requestId, block);
  }

  get(to: ShortId, requestId: number, blockId: Id): void {
    if (this.#register(to, requestId)) this.#o.link.get(to, requestId, blockId);
  }

  chits(to: ShortId, requestId: number, preferred: Id): void {
    if (!this.#stopped) this.#o.link.chits(to, requestId, preferred);
  }

  put(to: ShortId, requestId: number, block: Uint8Array): void {
    if (!this.#stopped) this.#o.link.put(to, requestId, block);
  }

  /** Registers a request; true when it should go out (the validator is connected and not benched). */
  #register(node: ShortId, requestId: number): boolean {
    if (this.#stopped) return false;
    const key = requestKey(node, requestId);
    this.#outstanding.get(key)?.timer.cancel();
    if (this.#o.benchlist.isBenched(node.key)) {
      const timer = this.#o.scheduler.setTimeout(() => this.#fail(key, false), 0);
      this.#outstanding.set(key, { node, requestId, sentAt: this.#o.scheduler.now(), timer });
      return false;
    }
    const timer = this.#o.scheduler.setTimeout(() => this.#fail(key, true), this.#o.timeouts.currentMs);
    this.#outstanding.set(key, { node, requestId, sentAt: this.#o.scheduler.now(), timer });
    return this.#o.isConnected(node);
  }

  /** A request's deadline passed (or it was refused at once because its validator is benched). */
  #fail(key: string, timedOut: boolean): void {
    const r = this.#outstanding.get(key);
    if (!r || this.#stopped) return;
    this.#outstanding.delete(key);
    if (timedOut) {
      this.#timedOut += 1;
      this.#o.timeouts.observe(this.#o.scheduler.now() - r.sentAt);
      if (this.#o.benchlist.failed(r.node.key)) this.#o.log.info('validator benched', { nodeId: r.node.toString() });
    }
    this.#engine?.onQueryFailed(r.node, r.requestId);
  }

  /** An answer to one of our requests: true (and its deadline cleared) when it was outstanding. */
  #answered(from: ShortId, requestId: number): boolean {
    const key = requestKey(from, requestId);
    const r = this.#outstanding.get(key);
    if (!r || this.#stopped) return false;
    r.timer.cancel();
    this.#outstanding.delete(key);
    this.#o.timeouts.observe(this.#o.scheduler.now() - r.sentAt);
    this.#o.benchlist.answered(from.key);
    return true;
  }

  // ---- from the link ---------------------------------------------------------------------------

  onPushQuery(from: ShortId, requestId: number, bytes: Uint8Array): Promise<void> {
    return this.#stopped || !this.#engine ? Promise.resolve() : this.#engine.onPushQuery(from, requestId, bytes);
  }

  onGet(from: ShortId, requestId: number, blockId: Id): Promise<void> {
    return this.#stopped || !this.#engine ? Promise.resolve() : this.#engine.onGet(from, requestId, blockId);
  }

  onChits(from: ShortId, requestId: number, preferred: Id): void {
    if (this.#answered(from, requestId)) this.#engine?.onChits(from, requestId, preferred);
  }

  onPut(from: ShortId, requestId: number, bytes: Uint8Array): Promise<void> {
    return this.#answered(from, requestId) && this.#engine ? this.#engine.onPut(from, requestId, bytes) : Promise.resolve();
  }

  /** The link could not deliver a request: it fails now and counts against the validator. */
  onQueryFailed(from: ShortId, requestId: number): void {
    const key = requestKey(from, requestId);
    const r = this.#outstanding.get(key);
    if (!r || this.#stopped) return;
    r.timer.cancel();
    this.#outstanding.delete(key);
    if (this.#o.benchlist.failed(from.key)) this.#o.log.info('validator benched', { nodeId: from.toString() });
    this.#engine?.onQueryFailed(from, requestId);
  }
}

function requestKey(node: ShortId, requestId: number): string {
  return `${requestId}:${node.key}`;
}
