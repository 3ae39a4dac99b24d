/**
 * The benchlist (avalanchego's): a validator whose requests keep failing is benched for a while, and
 * requests to a benched validator fail at once instead of waiting for a timeout each time. A
 * validator is benched after `failThreshold` consecutive failures spread over at least
 * `minFailingDurationMs` (so one burst of losses does not bench a healthy peer); any answer clears its
 * record. Benching lasts `durationMs`.
 */
import { ConsensusError } from '../errors.js';

export interface BenchlistConfig {
  /** Consecutive failures before benching (`--benchlist-fail-threshold`). */
  failThreshold: number;
  /** How long the failures must span (`--benchlist-min-failing-duration`). */
  minFailingDurationMs: number;
  /** How long a validator stays benched (`--benchlist-duration`). */
  durationMs: number;
}

/** avalanchego's defaults. */
export const DEFAULT_BENCHLIST: Readonly<BenchlistConfig> = Object.freeze({
  failThreshold: 10,
  minFailingDurationMs: 150_000,
  durationMs: 900_000,
});

interface Failing {
  count: number;
  since: number;
}

export class Benchlist {
  readonly #c: BenchlistConfig;
  readonly #now: () => number;
  readonly #failing = new Map<string, Failing>();
  /** node key -> benched until */
  readonly #benched = new Map<string, number>();

  constructor(config: BenchlistConfig, now: () => number) {
    if (!(Number.isSafeInteger(config.failThreshold) && config.failThreshold >= 1 && config.minFailingDurationMs >= 0 && config.durationMs >= 0)) {
      throw new ConsensusError('InvalidParams', '--benchlist-fail-threshold must be at least 1 and the benchlist durations at least 0');
    }
    this.#c = { ...config };
    this.#now = now;
  }

  isBenched(key: string): boolean {
    const until = this.#benched.get(key);
    if (until === undefined) return false;
    if (this.#now() < until) return true;
    this.#benched.delete(key);
    return false;
  }

  /** Validators benched now. */
  get size(): number {
    for (const key of [...this.#benched.keys()]) this.isBenched(key);
    return this.#benched.size;
  }

  /** A request to `key` failed; true when this benched it. */
  failed(key: string): boolean {
    if (this.isBenched(key)) return false;
    const now = this.#now();
    const f = this.#failing.get(key) ?? { count: 0, since: now };
    f.count += 1;
    this.#failing.set(key, f);
    if (f.count >= this.#c.failThreshold && now - f.since >= this.#c.minFailingDurationMs) {
      this.#failing.delete(key);
      this.#benched.set(key, now + this.#c.durationMs);
      return true;
    }
    return false;
  }

  /** `key` answered a request: its failures are forgiven (benching, if any, runs its course). */
  answered(key: string): void {
    this.#failing.delete(key);
  }
}
