/**
 * A token bucket on an injected clock: what a peer may send us per second. Reading from a peer that
 * is over its budget pauses until the budget refills (TCP backpressure then slows the sender), so a
 * flooding peer is slowed down, never served faster than its share.
 */
export class TokenBucket {
  #tokens: number;
  #at: number;

  constructor(
    /** Tokens added per second. */
    readonly ratePerSecond: number,
    /** Most tokens held (the burst). */
    readonly burst: number,
    private readonly now: () => number,
  ) {
    this.#tokens = burst;
    this.#at = now();
  }

  #refill(): void {
    const t = this.now();
    if (t > this.#at) {
      this.#tokens = Math.min(this.burst, this.#tokens + ((t - this.#at) / 1000) * this.ratePerSecond);
      this.#at = t;
    }
  }

  /** Tokens held now (negative while in debt). */
  get available(): number {
    this.#refill();
    return this.#tokens;
  }

  /** Takes `n` tokens (the balance may go negative); ms to wait until the balance is back to zero. */
  take(n: number): number {
    this.#refill();
    this.#tokens -= n;
    return this.#tokens >= 0 ? 0 : Math.ceil((-this.#tokens / this.ratePerSecond) * 1000);
  }
}
