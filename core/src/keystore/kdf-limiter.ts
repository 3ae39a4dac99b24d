/**
 * Node-wide bound on password key derivations (scrypt) in flight. Every keystore operation that
 * runs the KDF (createUser, each password check, importUser) goes through one limiter: at most
 * `maxRunning` derivations at once (each holds 128*N*r bytes, 32 MiB at the default cost, and a
 * thread of libuv's pool of 4, which LevelDB and the file system share), the next `maxWaiting`
 * callers wait their turn in order, and any caller beyond that is refused at once with a clear
 * "busy" error instead of queueing without bound.
 */
import { KeystoreError } from './errors.js';

export interface KdfLimits {
  /** Derivations running at once. */
  maxRunning: number;
  /** Callers waiting for a slot; one more is refused. */
  maxWaiting: number;
}

export const DEFAULT_KDF_LIMITS: Readonly<KdfLimits> = Object.freeze({ maxRunning: 2, maxWaiting: 32 });

export const KEYSTORE_BUSY = 'keystore busy: too many password checks in progress; try again';

export class KdfLimiter {
  readonly #limits: KdfLimits;
  #running = 0;
  readonly #waiting: Array<() => void> = [];

  constructor(limits: KdfLimits = DEFAULT_KDF_LIMITS) {
    const ok = (n: number, min: number) => Number.isInteger(n) && n >= min;
    if (!ok(limits.maxRunning, 1) || !ok(limits.maxWaiting, 0)) {
      throw new KeystoreError('InvalidOptions', 'KDF limits out of range (maxRunning >= 1, maxWaiting >= 0)');
    }
    this.#limits = { ...limits };
  }

  /** Runs `derive` when a slot is free; KeystoreError('Busy') when too many callers already wait. */
  async run<T>(derive: () => Promise<T>): Promise<T> {
    if (this.#running >= this.#limits.maxRunning) {
      if (this.#waiting.length >= this.#limits.maxWaiting) throw new KeystoreError('Busy', KEYSTORE_BUSY);
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    } else {
      this.#running++;
    }
    try {
      return await derive();
    } finally {
      // Hand the slot straight to the next waiter (the count stays), or free it.
      const next = this.#waiting.shift();
      if (next) next();
      else this.#running--;
    }
  }

  /** Derivations running now (tests, metrics). */
  get running(): number {
    return this.#running;
  }

  /** Callers waiting now (tests, metrics). */
  get waiting(): number {
    return this.#waiting.length;
  }
}
