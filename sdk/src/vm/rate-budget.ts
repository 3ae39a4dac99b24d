/**
 * A rate bound for what a VM lets callers do for free (the asset VM's free-tx bytes, the timestamp
 * VM's proposals): a token bucket on the chain's clock. Tests: sdk/test/vm/rate-budget.test.ts.
 */
/**
 * `perMinute` units a minute on an injected clock (ms), at most one minute's worth held (a burst).
 * Time that goes backwards adds nothing.
 */
export class RateBudget {
  #tokens: number;
  #at: number;

  constructor(
    readonly perMinute: number,
    now: number,
  ) {
    if (!Number.isSafeInteger(perMinute) || perMinute < 1) throw new RangeError('perMinute must be a whole number >= 1');
    this.#tokens = perMinute;
    this.#at = now;
  }

  /** Units available at `now` (ms). */
  available(now: number): number {
    this.#refill(now);
    return Math.floor(this.#tokens);
  }

  /**
   * Takes `cost` units at `now` (ms) when there are that many: 0. Otherwise takes nothing and
   * answers the milliseconds until there will be (Infinity when `cost` is more than a minute's worth).
   */
  take(cost: number, now: number): number {
    this.#refill(now);
    if (cost > this.perMinute) return Infinity;
    if (cost <= this.#tokens) {
      this.#tokens -= cost;
      return 0;
    }
    return Math.ceil(((cost - this.#tokens) * 60_000) / this.perMinute);
  }

  #refill(now: number): void {
    const elapsed = now - this.#at;
    this.#at = now;
    if (elapsed > 0) this.#tokens = Math.min(this.perMinute, this.#tokens + (elapsed * this.perMinute) / 60_000);
  }
}
