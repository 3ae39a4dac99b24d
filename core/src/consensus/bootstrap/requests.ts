/**
 * The bootstrapper's outstanding requests: who was asked, under which request ID, for what kind of
 * answer, and one deadline per request. A request ends when everyone asked answered or failed, at
 * its deadline, or when the run is aborted; whoever did not answer by then counts as no answer.
 * Answers from nodes that were not asked, for request IDs not outstanding, or of another kind than
 * the request are refused (the caller logs them).
 */
import type { Logger, ShortId } from '@cornice/sdk';
import type { Scheduler } from '../snowman/types.js';

export type RequestKind = 'frontier' | 'accepted' | 'ancestors';

interface Outstanding {
  readonly kind: RequestKind;
  readonly sentAt: number;
  /** node key -> node, not answered yet */
  readonly pending: Map<string, ShortId>;
  /** node key -> its answer */
  readonly answers: Map<string, unknown>;
  readonly observe: ((ms: number) => void) | undefined;
  finish(): void;
}

export interface AskOptions {
  kind: RequestKind;
  to: readonly ShortId[];
  timeoutMs: number;
  signal: AbortSignal;
  /** Sends the request to `to` under `requestId` (called once, after the request is registered). */
  send(to: readonly ShortId[], requestId: number): void;
  /** Called with the latency of each answer, and with the timeout for each node that did not answer. */
  observe?: (ms: number) => void;
}

export class BootstrapRequests {
  readonly #outstanding = new Map<number, Outstanding>();
  #nextId = 0;

  constructor(
    private readonly scheduler: Scheduler,
    private readonly log: Logger,
  ) {}

  /** Requests not yet ended. */
  get outstanding(): number {
    return this.#outstanding.size;
  }

  /** Asks `to`; resolves (never rejects) with the answers by node key once the request has ended. */
  ask<T>(o: AskOptions): Promise<Map<string, T>> {
    return new Promise((resolve) => {
      const answers = new Map<string, T>();
      const pending = new Map<string, ShortId>();
      for (const node of o.to) pending.set(node.key, node);
      if (pending.size === 0 || o.signal.aborted) {
        resolve(answers);
        return;
      }
      const requestId = this.#newRequestId();
      const onAbort = (): void => req.finish();
      const finish = (): void => {
        if (this.#outstanding.get(requestId) !== req) return;
        this.#outstanding.delete(requestId);
        timer.cancel();
        o.signal.removeEventListener('abort', onAbort);
        resolve(answers);
      };
      const req: Outstanding = { kind: o.kind, sentAt: this.scheduler.now(), pending, answers, observe: o.observe, finish };
      this.#outstanding.set(requestId, req);
      const timer = this.scheduler.setTimeout(() => {
        for (let i = 0; i < pending.size; i++) o.observe?.(o.timeoutMs);
        finish();
      }, o.timeoutMs);
      o.signal.addEventListener('abort', onAbort, { once: true });
      try {
        o.send([...pending.values()], requestId);
      } catch (err) {
        this.log.debug('bootstrap request could not be sent', { kind: o.kind, error: err instanceof Error ? err.message : String(err) });
        finish();
      }
    });
  }

  /** Records `from`'s answer to request `requestId`; false (nothing recorded) when it was not expected. */
  answer(kind: RequestKind, from: ShortId, requestId: number, value: unknown): boolean {
    const req = this.#outstanding.get(requestId);
    if (!req || req.kind !== kind || !req.pending.delete(from.key)) return false;
    req.answers.set(from.key, value);
    req.observe?.(this.scheduler.now() - req.sentAt);
    if (req.pending.size === 0) req.finish();
    return true;
  }

  /** `from` will not answer request `requestId` (the network said so): it counts as no answer. */
  failed(from: ShortId, requestId: number): boolean {
    const req = this.#outstanding.get(requestId);
    if (!req?.pending.delete(from.key)) return false;
    if (req.pending.size === 0) req.finish();
    return true;
  }

  /** Ends every outstanding request (with the answers it has). */
  endAll(): void {
    for (const req of [...this.#outstanding.values()]) req.finish();
  }

  #newRequestId(): number {
    do {
      this.#nextId = (this.#nextId + 1) >>> 0;
    } while (this.#outstanding.has(this.#nextId));
    return this.#nextId;
  }
}
