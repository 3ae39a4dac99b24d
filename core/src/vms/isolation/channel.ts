/**
 * One side of the host <-> worker conversation: numbered requests with their pending replies, and
 * events. The same class runs on both threads; each side passes what to do with the other's
 * requests and events.
 */
import { fromWireError, toWireError, type Event, type Message, type Request, type Response } from './protocol.js';

export interface ChannelHandlers {
  /** Answers a request of the other side (a thrown error crosses back as a WireError). */
  request(op: string, args: unknown[]): Promise<unknown> | unknown;
  event(op: string, args: unknown[]): void;
  /** Ms to hold the answer to a request of `op` (see `request`'s holdMs), or undefined to send it at once. */
  holdAnswer?(op: string): number | undefined;
}

interface Pending {
  resolve(value: unknown): void;
  reject(e: unknown): void;
}

export class Channel {
  #next = 1;
  readonly #pending = new Map<number, Pending>();
  /** Messages posted and received (a batch is one): each is a crossing, and may wake the other thread. */
  sent = 0;
  received = 0;

  /** Requests and answers held back (`holdMs`), sent before the next message, with it. */
  #held: Array<Request | Response | Event> = [];
  #holdTimer: { cancel(): void } | undefined;

  constructor(
    private readonly postOne: (m: Message) => void,
    private readonly handlers: ChannelHandlers,
  ) {}

  /**
   * Sends a request; the promise settles with the other side's answer (or `failAll`). With `holdMs`
   * it waits (at most that long; 0: to the end of this event-loop turn) for the next message and
   * goes with it: one message, and one wake-up of the other thread, for both. Order is kept:
   * nothing is sent before it.
   */
  request(op: string, args: unknown[], holdMs?: number): Promise<unknown> {
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      const m: Request = { t: 'req', id, op, args };
      if (holdMs !== undefined) return this.#hold(m, holdMs);
      try {
        this.post(m);
      } catch (e) {
        this.#pending.delete(id);
        reject(e);
      }
    });
  }

  /** Posts `m`, after (and with) the held requests. */
  private post(m: Request | Response | Event): void {
    if (this.#held.length > 0) {
      const held = this.#takeHeld();
      try {
        this.postOne({ t: 'batch', msgs: [...held, m] });
        this.sent++;
        return;
      } catch {
        // One of them cannot be sent: each alone, so that only that one fails.
        this.#postEach(held);
      }
    }
    this.postOne(m);
    this.sent++;
  }

  #hold(m: Request | Response | Event, ms: number): void {
    this.#held.push(m);
    if (this.#holdTimer) return;
    // 0: until the end of this turn of the event loop (what else this turn sends goes with it).
    if (ms === 0) {
      const immediate = setImmediate(() => this.#flush());
      this.#holdTimer = { cancel: () => clearImmediate(immediate) };
    } else {
      const timer = setTimeout(() => this.#flush(), ms);
      this.#holdTimer = { cancel: () => clearTimeout(timer) };
    }
  }

  #flush(): void {
    if (this.#held.length > 0) this.#postEach(this.#takeHeld());
  }

  #takeHeld(): Array<Request | Response | Event> {
    const held = this.#held;
    this.#held = [];
    this.#holdTimer?.cancel();
    this.#holdTimer = undefined;
    return held;
  }

  #postEach(held: Array<Request | Response | Event>): void {
    for (const m of held) {
      try {
        this.postOne(m);
        this.sent++;
      } catch (e) {
        if (m.t === 'evt') throw e; // its sender checked it could be sent (see `event`)
        if (m.t === 'res') {
          this.postOne({ t: 'res', id: m.id, ok: false, error: toWireError(e) });
          this.sent++;
          continue;
        }
        const p = this.#pending.get(m.id);
        this.#pending.delete(m.id);
        p?.reject(e);
      }
    }
  }

  /**
   * Sends an event; with `holdMs`, held like a request (see `request`). A held event cannot report
   * a failure to send it: hold only events made of values that always clone (bytes, numbers).
   */
  event(op: string, args: unknown[], holdMs?: number): void {
    const m: Event = { t: 'evt', op, args };
    if (holdMs !== undefined) this.#hold(m, holdMs);
    else this.post(m);
  }

  /** Rejects every request still waiting for an answer (the other side is gone). */
  failAll(e: Error): void {
    this.#takeHeld();
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const p of pending) p.reject(e);
  }

  get pending(): number {
    return this.#pending.size;
  }

  receive(m: Message): void {
    this.received++;
    if (m.t === 'batch') {
      for (const one of m.msgs) this.#receiveOne(one);
      return;
    }
    this.#receiveOne(m);
  }

  #receiveOne(m: Request | Response | Event): void {
    if (m.t === 'res') {
      const p = this.#pending.get(m.id);
      if (!p) return; // late answer to a request given up on
      this.#pending.delete(m.id);
      if (m.ok) p.resolve(m.value);
      else p.reject(fromWireError(m.error));
    } else if (m.t === 'req') {
      let answer: Promise<unknown>;
      try {
        answer = Promise.resolve(this.handlers.request(m.op, m.args));
      } catch (e) {
        answer = Promise.reject(e);
      }
      const holdMs = this.handlers.holdAnswer?.(m.op);
      answer.then(
        (value) => this.#reply({ t: 'res', id: m.id, ok: true, value }, holdMs),
        (e: unknown) => this.#reply({ t: 'res', id: m.id, ok: false, error: toWireError(e) }, holdMs),
      );
    } else this.handlers.event(m.op, m.args);
  }

  #reply(m: Response, holdMs: number | undefined): void {
    if (holdMs !== undefined) return this.#hold(m, holdMs);
    try {
      this.post(m);
    } catch (e) {
      // A value that cannot be cloned: the asker still gets an answer.
      if (m.t === 'res') this.post({ t: 'res', id: m.id, ok: false, error: toWireError(e) });
    }
  }
}
