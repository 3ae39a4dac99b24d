/**
 * Payloads waiting to go into a block, in arrival order, bounded. `waitForItems` resolves as soon as
 * something is pending (at once when already so) and rejects when its signal aborts or the pool
 * closes; waiting costs one listener, no polling.
 */
import { TimestampError } from './errors.js';

export const DEFAULT_MEMPOOL_CAPACITY = 4096;

interface Waiter {
  resolve(): void;
  reject(err: unknown): void;
}

export class Mempool {
  readonly #items: Uint8Array[] = [];
  readonly #waiters = new Set<Waiter>();
  #closed: TimestampError | undefined;

  constructor(readonly capacity = DEFAULT_MEMPOOL_CAPACITY) {}

  get size(): number {
    return this.#items.length;
  }

  /** True when a push would be refused (MempoolFull). */
  get full(): boolean {
    return this.#items.length >= this.capacity;
  }

  /** Queues a copy of `data`; TimestampError('MempoolFull') at capacity. Wakes every waiter. */
  push(data: Uint8Array): void {
    if (this.#closed) throw this.#closed;
    if (this.#items.length >= this.capacity) {
      throw new TimestampError('MempoolFull', `mempool is full (${this.capacity} pending blocks); try again later`, {
        capacity: this.capacity,
      });
    }
    this.#items.push(data.slice());
    for (const w of [...this.#waiters]) w.resolve();
  }

  /** The oldest pending payload (not removed). */
  peek(): Uint8Array | undefined {
    return this.#items[0];
  }

  /** Removes and returns the oldest pending payload. */
  shift(): Uint8Array | undefined {
    return this.#items.shift();
  }

  /** Resolves when something is pending; rejects with TimestampError('Aborted') when `signal` aborts. */
  waitForItems(signal: AbortSignal): Promise<void> {
    if (this.#closed) return Promise.reject(this.#closed);
    if (signal.aborted) return Promise.reject(aborted());
    if (this.#items.length > 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => waiter.reject(aborted());
      const done = (): void => {
        this.#waiters.delete(waiter);
        signal.removeEventListener('abort', onAbort);
      };
      const waiter: Waiter = {
        resolve: () => {
          done();
          resolve();
        },
        reject: (err) => {
          done();
          reject(err);
        },
      };
      this.#waiters.add(waiter);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Drops everything and rejects current and future waits with `reason`. */
  close(reason: TimestampError): void {
    this.#closed = reason;
    this.#items.length = 0;
    for (const w of [...this.#waiters]) w.reject(reason);
  }
}

function aborted(): TimestampError {
  return new TimestampError('Aborted', 'waiting for an event was aborted');
}
