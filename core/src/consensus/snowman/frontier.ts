/**
 * Accepted-frontier gossip while idle: while nothing is processing, every frontierGossipMs, a
 * PullQuery for our last accepted block to one validator other than this node, in turn. Its Chits
 * name its last accepted block (Ancestors.noteAccepted), so a node that missed the last blocks of a
 * quiet chain hears of them (avalanchego's accepted-frontier gossip). One timer per chain, armed
 * only while another validator could answer: a one-node chain, or one waiting for validators,
 * schedules nothing (test "an idle engine … schedules nothing"). The engine arms it again at start,
 * after an accept, when polls resume and when a validator answers.
 */
import type { Id, Logger, ShortId } from '@cornice/sdk';
import { describe } from './options.js';
import type { EngineTransport, Scheduler, ValidatorSampler } from './types.js';

export interface FrontierGossipOptions {
  /** How often (<= 0: never). */
  intervalMs: number;
  k: number;
  nodeId: ShortId;
  validators: Pick<ValidatorSampler, 'sample'>;
  transport: Pick<EngineTransport, 'pullQuery' | 'pushQuery'>;
  scheduler: Scheduler;
  log: Logger;
  /** Whether gossip may run now: the engine is running and polls are not waiting for validators. */
  active: () => boolean;
  /** Whether nothing is processing. */
  idle: () => boolean;
  /** Our last accepted block, once started. */
  lastAccepted: () => { id: Id; bytes: Uint8Array } | undefined;
  newRequestId: () => number;
}

export class FrontierGossip {
  readonly #o: FrontierGossipOptions;
  #timer: { cancel(): void } | undefined;
  #turn = 0;

  constructor(opts: FrontierGossipOptions) {
    this.#o = opts;
  }

  /** Starts the timer unless it runs, gossip may not run now, or no other validator could answer. */
  arm(): void {
    const o = this.#o;
    if (this.#timer || !o.active() || o.intervalMs <= 0) return;
    if (this.#others().length === 0) return;
    this.#timer = o.scheduler.setTimeout(() => {
      this.#timer = undefined;
      if (!o.active()) return;
      try {
        if (o.idle()) this.#gossip();
      } catch (err) {
        o.log.warn('frontier gossip failed', { error: describe(err) });
      }
      this.arm();
    }, o.intervalMs);
  }

  cancel(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
  }

  #others(): ShortId[] {
    return this.#o.validators.sample(this.#o.k).filter((n) => !n.equals(this.#o.nodeId));
  }

  #gossip(): void {
    const o = this.#o;
    const last = o.lastAccepted();
    const others = this.#others();
    const to = others[this.#turn++ % Math.max(1, others.length)];
    if (!last || !to) return;
    const requestId = o.newRequestId();
    if (o.transport.pullQuery) o.transport.pullQuery([to], requestId, last.id);
    else o.transport.pushQuery([to], requestId, last.bytes);
  }
}
