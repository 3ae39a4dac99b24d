/**
 * Requests between an engine and its validators, with avalanchego's sender semantics: every query
 * and Get the engine sends is registered with a deadline from the adaptive timeout, and the engine
 * hears `onQueryFailed` when no answer came by then. A request to a validator that is not connected
 * is not sent: it fails on the next turn when other requests of its batch were sent, else at its
 * deadline (never at once: an engine whose every query failed instantly would repoll in a tight
 * loop); a request to a benched validator fails on the next turn without waiting. Each timeout counts against the validator in the benchlist; any answer clears it.
 *
 * It sits between the engine and a link (the loopback now, TCP peers later): the engine sends through
 * it (it is the engine's EngineTransport) and the link delivers to it (it is the link's target).
 */
import type { Id, Logger, ShortId } from '@cornice/sdk';
import type { LoopbackTarget } from '../snowman/loopback.js';
import type { EngineTransport, Scheduler, ValidatorStatus } from '../snowman/types.js';
import type { AdaptiveTimeout } from './timeouts.js';
import type { Benchlist } from './benchlist.js';

/** The requests sent under one request ID (a poll's queries, or one Get): one deadline for all. */
interface Batch {
  readonly requestId: number;
  readonly sentAt: number;
  /** node key -> node, still unanswered */
  readonly pending: Map<string, ShortId>;
  timer: { cancel(): void } | undefined;
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
  readonly #batches = new Map<number, Batch>();
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

  /** Whether a poll can count on `node` now: connected, not benched, and answering. */
  status(node: ShortId): ValidatorStatus {
    if (!this.#o.isConnected(node)) return 'disconnected';
    if (this.#o.benchlist.isBenched(node.key)) return 'benched';
    return this.#o.benchlist.isFailing(node.key) ? 'unresponsive' : 'reachable';
  }

  /** Any message from `from`: it is alive, so it is not failing or benched (see Benchlist). */
  #heardFrom(from: ShortId): void {
    if (!this.#stopped && this.#o.benchlist.answered(from.key)) this.#o.log.warn('validator unbenched: heard from it again', { nodeId: from.toString() });
  }

  get stats(): SenderStats {
    let outstanding = 0;
    for (const b of this.#batches.values()) outstanding += b.pending.size;
    return { outstanding, benched: this.#o.benchlist.size, timeoutMs: this.#o.timeouts.currentMs, timedOut: this.#timedOut };
  }

  /** Cancels every deadline; nothing is delivered afterwards. */
  stop(): void {
    this.#stopped = true;
    for (const b of this.#batches.values()) b.timer?.cancel();
    this.#batches.clear();
  }

  // ---- from the engine -------------------------------------------------------------------------

  pushQuery(to: readonly ShortId[], requestId: number, block: Uint8Array): void {
    const send = this.#register(to, requestId);
    if (send.length > 0) this.#o.link.pushQuery(send, requestId, block);
  }

  /** Present when the link can send PullQuery. */
  get pullQuery(): ((to: readonly ShortId[], requestId: number, blockId: Id) => void) | undefined {
    const link = this.#o.link;
    if (!link.pullQuery) return undefined;
    return (to, requestId, blockId) => {
      const send = this.#register(to, requestId);
      if (send.length > 0) link.pullQuery!(send, requestId, blockId);
    };
  }

  get(to: ShortId, requestId: number, blockId: Id): void {
    if (this.#register([to], requestId).length > 0) this.#o.link.get(to, requestId, blockId);
  }

  chits(to: ShortId, requestId: number, preferred: Id, accepted?: Id): void {
    if (!this.#stopped) this.#o.link.chits(to, requestId, preferred, accepted);
  }

  put(to: ShortId, requestId: number, block: Uint8Array): void {
    if (!this.#stopped) this.#o.link.put(to, requestId, block);
  }

  /**
   * Registers requests to `to` under one deadline; returns who to send to (connected, not benched).
   * Benched validators fail on the next turn; the others not connected fail at the deadline.
   */
  #register(to: readonly ShortId[], requestId: number): ShortId[] {
    if (this.#stopped) return [];
    this.#drop(requestId);
    const batch: Batch = { requestId, sentAt: this.#o.scheduler.now(), pending: new Map(), timer: undefined };
    const send: ShortId[] = [];
    const benched: ShortId[] = [];
    for (const node of to) {
      if (this.#o.benchlist.isBenched(node.key)) {
        benched.push(node);
        continue;
      }
      batch.pending.set(node.key, node);
      if (this.#o.isConnected(node)) send.push(node);
    }
    // Requests to nodes not connected fail on the next turn when some of the batch went out (the
    // poll then ends with the answers of those connected); only a batch that went nowhere waits
    // for its deadline, so that an engine cut off from everyone does not repoll in a tight loop.
    const unsent = send.length > 0 ? [...batch.pending.values()].filter((n) => !this.#o.isConnected(n)) : [];
    for (const node of unsent) batch.pending.delete(node.key);
    if (batch.pending.size > 0) {
      this.#batches.set(requestId, batch);
      batch.timer = this.#o.scheduler.setTimeout(() => this.#expire(batch), this.#o.timeouts.currentMs);
    }
    const failNow = [...benched, ...unsent];
    if (failNow.length > 0) {
      this.#o.scheduler.setTimeout(() => {
        if (!this.#stopped) for (const node of failNow) this.#engine?.onQueryFailed(node, requestId);
      }, 0);
    }
    return send;
  }

  /** Forgets an older batch under the same request ID (the engine reuses IDs only after wrapping). */
  #drop(requestId: number): void {
    const old = this.#batches.get(requestId);
    if (!old) return;
    old.timer?.cancel();
    this.#batches.delete(requestId);
  }

  /** A batch's deadline passed: every request still unanswered fails and counts against its validator. */
  #expire(batch: Batch): void {
    if (this.#stopped || this.#batches.get(batch.requestId) !== batch) return;
    this.#batches.delete(batch.requestId);
    const elapsed = this.#o.scheduler.now() - batch.sentAt;
    for (const node of batch.pending.values()) {
      this.#timedOut += 1;
      this.#o.timeouts.observe(elapsed);
      if (this.#o.benchlist.failed(node.key)) this.#o.log.warn('validator benched: its requests keep failing', { nodeId: node.toString() });
      this.#engine?.onQueryFailed(node, batch.requestId);
    }
  }

  /** Takes `from`'s request out of its batch; the batch when it was outstanding. */
  #take(from: ShortId, requestId: number): Batch | undefined {
    if (this.#stopped) return undefined;
    const batch = this.#batches.get(requestId);
    if (!batch?.pending.delete(from.key)) return undefined;
    if (batch.pending.size === 0) {
      batch.timer?.cancel();
      this.#batches.delete(requestId);
    }
    return batch;
  }

  /** An answer to one of our requests: true (its deadline cleared, its latency observed) when it was outstanding. */
  #answered(from: ShortId, requestId: number): boolean {
    const batch = this.#take(from, requestId);
    if (!batch) return false;
    this.#o.timeouts.observe(this.#o.scheduler.now() - batch.sentAt);
    this.#o.benchlist.answered(from.key);
    return true;
  }

  // ---- from the link ---------------------------------------------------------------------------

  onPushQuery(from: ShortId, requestId: number, bytes: Uint8Array): Promise<void> {
    this.#heardFrom(from);
    return this.#stopped || !this.#engine ? Promise.resolve() : this.#engine.onPushQuery(from, requestId, bytes);
  }

  onPullQuery(from: ShortId, requestId: number, blockId: Id): Promise<void> {
    this.#heardFrom(from);
    return this.#stopped || !this.#engine?.onPullQuery ? Promise.resolve() : this.#engine.onPullQuery(from, requestId, blockId);
  }

  onGet(from: ShortId, requestId: number, blockId: Id): Promise<void> {
    this.#heardFrom(from);
    return this.#stopped || !this.#engine ? Promise.resolve() : this.#engine.onGet(from, requestId, blockId);
  }

  onChits(from: ShortId, requestId: number, preferred: Id, accepted?: Id): void {
    this.#heardFrom(from);
    if (this.#answered(from, requestId)) this.#engine?.onChits(from, requestId, preferred, accepted);
  }

  onPut(from: ShortId, requestId: number, bytes: Uint8Array): Promise<void> {
    this.#heardFrom(from);
    return this.#answered(from, requestId) && this.#engine ? this.#engine.onPut(from, requestId, bytes) : Promise.resolve();
  }

  onGossipedBlock(from: ShortId, bytes: Uint8Array): Promise<void> {
    this.#heardFrom(from);
    return this.#stopped || !this.#engine?.onGossipedBlock ? Promise.resolve() : this.#engine.onGossipedBlock(from, bytes);
  }

  /** The link could not deliver a request: it fails now and counts against the validator. */
  onQueryFailed(from: ShortId, requestId: number): void {
    if (!this.#take(from, requestId)) return;
    if (this.#o.benchlist.failed(from.key)) this.#o.log.warn('validator benched: its requests keep failing', { nodeId: from.toString() });
    this.#engine?.onQueryFailed(from, requestId);
  }
}
