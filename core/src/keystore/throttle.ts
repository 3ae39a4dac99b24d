/**
 * Throttling of password guesses by key — the keystore's key is a client and a username, so one
 * client's failures never lock another client (the owner) out. After `freeAttempts` consecutive
 * wrong passwords under a key, each further failure locks that key for
 * baseDelayMs * 2^(failures - freeAttempts), capped at maxDelayMs; while locked, attempts under it
 * are refused before the (expensive) key derivation runs. A correct password clears the entry. The
 * table is bounded: the least recently failed entries are dropped first.
 */

export interface ThrottleOptions {
  freeAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_THROTTLE: Readonly<ThrottleOptions> = Object.freeze({
  freeAttempts: 5,
  baseDelayMs: 1000,
  maxDelayMs: 60_000,
});

/** Most keys (client and username) tracked at once. */
export const MAX_THROTTLE_ENTRIES = 10_000;

interface Entry {
  failures: number;
  lockedUntil: number;
}

export class Throttle {
  readonly #opts: ThrottleOptions;
  readonly #now: () => number;
  readonly #maxEntries: number;
  /** Insertion order = order of the last failure (entries are re-inserted on update). */
  readonly #entries = new Map<string, Entry>();

  constructor(opts: ThrottleOptions, now: () => number, maxEntries = MAX_THROTTLE_ENTRIES) {
    this.#opts = opts;
    this.#now = now;
    this.#maxEntries = maxEntries;
  }

  /** Milliseconds until `username` may try again; 0 when not locked. */
  lockedFor(username: string): number {
    const e = this.#entries.get(username);
    if (!e) return 0;
    return Math.max(0, e.lockedUntil - this.#now());
  }

  /** Records a wrong password; returns the new consecutive failure count. */
  fail(username: string): number {
    const now = this.#now();
    const prev = this.#entries.get(username);
    const failures = (prev?.failures ?? 0) + 1;
    let lockedUntil = 0;
    const { freeAttempts, baseDelayMs, maxDelayMs } = this.#opts;
    if (failures >= freeAttempts) {
      // 2^k overflows to Infinity for huge k; min() keeps the cap.
      lockedUntil = now + Math.min(maxDelayMs, baseDelayMs * 2 ** (failures - freeAttempts));
    }
    this.#entries.delete(username);
    this.#entries.set(username, { failures, lockedUntil });
    while (this.#entries.size > this.#maxEntries) {
      const oldest = this.#entries.keys().next().value as string;
      this.#entries.delete(oldest);
    }
    return failures;
  }

  /** A correct password: forget the user's failures. */
  reset(username: string): void {
    this.#entries.delete(username);
  }

  /** Usernames tracked (tests, metrics). */
  get size(): number {
    return this.#entries.size;
  }
}
