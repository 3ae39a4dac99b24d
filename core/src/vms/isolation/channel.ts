/**
 * One side of the host <-> worker conversation: numbered requests with their pending replies, and
 * events. The same class runs on both threads; each side passes what to do with the other's
 * requests and events.
 */
import { fromWireError, toWireError, type Message } from './protocol.js';

export interface ChannelHandlers {
  /** Answers a request of the other side (a thrown error crosses back as a WireError). */
  request(op: string, args: unknown[]): Promise<unknown> | unknown;
  event(op: string, args: unknown[]): void;
}

interface Pending {
  resolve(value: unknown): void;
  reject(e: unknown): void;
}

export class Channel {
  #next = 1;
  readonly #pending = new Map<number, Pending>();
  /** Messages posted and received: each is a crossing (and may wake the other thread). */
  sent = 0;
  received = 0;

  constructor(
    private readonly post: (m: Message) => void,
    private readonly handlers: ChannelHandlers,
  ) {
    const postOne = post;
    this.post = (m) => {
      postOne(m);
      this.sent++;
    };
  }

  /** Sends a request; the promise settles with the other side's answer (or `failAll`). */
  request(op: string, args: unknown[]): Promise<unknown> {
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      try {
        this.post({ t: 'req', id, op, args });
      } catch (e) {
        this.#pending.delete(id);
        reject(e);
      }
    });
  }

  event(op: string, args: unknown[]): void {
    this.post({ t: 'evt', op, args });
  }

  /** Rejects every request still waiting for an answer (the other side is gone). */
  failAll(e: Error): void {
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const p of pending) p.reject(e);
  }

  get pending(): number {
    return this.#pending.size;
  }

  receive(m: Message): void {
    this.received++;
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
      answer.then(
        (value) => this.#reply({ t: 'res', id: m.id, ok: true, value }),
        (e: unknown) => this.#reply({ t: 'res', id: m.id, ok: false, error: toWireError(e) }),
      );
    } else this.handlers.event(m.op, m.args);
  }

  #reply(m: Message): void {
    try {
      this.post(m);
    } catch (e) {
      // A value that cannot be cloned: the asker still gets an answer.
      if (m.t === 'res') this.post({ t: 'res', id: m.id, ok: false, error: toWireError(e) });
    }
  }
}
