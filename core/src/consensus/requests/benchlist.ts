/**
 * The benchlist (avalanchego's): a validator whose requests keep failing is benched for a while, and
 * requests to a benched validator fail at once instead of waiting for a timeout each time. A
 * validator is benched after `failThreshold` consecutive failures spread over at least
 * `minFailingDurationMs` (so one burst of losses does not bench a healthy peer). Benching lasts
 * `durationMs`, or until the validator is heard from again (a benched validator is sent nothing, so
 * any message of its own — a query, an answer — shows it is back: a validator frozen for minutes
 * stayed benched for 15 more once thawed). At most `maxPortion` of the stake is benched at once: a
 * poll still draws benched validators (their queries fail), so benching more than a poll can lose
 * would stop every poll (tests "a benched validator is back once heard from", "benching stops at
 * maxPortion of the stake").
 */
import { ConsensusError } from '../errors.js';

export interface BenchlistConfig {
  /** Consecutive failures before benching (`--benchlist-fail-threshold`). */
  failThreshold: number;
  /** How long the failures must span (`--benchlist-min-failing-duration`). */
  minFailingDurationMs: number;
  /** How long a validator stays benched (`--benchlist-duration`). */
  durationMs: number;
  /**
   * Most of the stake benched at once (0..1; default 0.25 = 1 − alpha/k with the default k 20,
   * alpha 15: the share a poll can miss and still succeed). Needs `stake` in the constructor.
   */
  maxPortion?: number;
}

/** The stake of the chain's validators, for the maxPortion bound. */
export interface BenchStake {
  weightOf(key: string): number;
  total(): number;
}

/** avalanchego's defaults. */
export const DEFAULT_BENCHLIST: Readonly<BenchlistConfig> = Object.freeze({
  failThreshold: 10,
  minFailingDurationMs: 150_000,
  durationMs: 900_000,
});

/** Consecutive failed requests after which a validator counts as not answering (isFailing). */
export const UNRESPONSIVE_AFTER = 3;

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

  readonly #stake: BenchStake | undefined;

  constructor(config: BenchlistConfig, now: () => number, stake?: BenchStake) {
    if (!(Number.isSafeInteger(config.failThreshold) && config.failThreshold >= 1 && config.minFailingDurationMs >= 0 && config.durationMs >= 0)) {
      throw new ConsensusError('InvalidParams', '--benchlist-fail-threshold must be at least 1 and the benchlist durations at least 0');
    }
    if (config.maxPortion !== undefined && !(config.maxPortion >= 0 && config.maxPortion <= 1)) {
      throw new ConsensusError('InvalidParams', 'the benchlist maxPortion must be within 0..1');
    }
    this.#c = { ...config };
    this.#now = now;
    this.#stake = stake;
  }

  /**
   * Whether `key` is not answering: its last UNRESPONSIVE_AFTER requests failed and it has not been
   * heard from since. (One lost message does not make a validator unresponsive: polls leave such
   * validators out, and on a lossy network leaving out honest ones after single losses stalled polls.)
   */
  isFailing(key: string): boolean {
    return (this.#failing.get(key)?.count ?? 0) >= UNRESPONSIVE_AFTER;
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
    if (f.count >= this.#c.failThreshold && now - f.since >= this.#c.minFailingDurationMs && this.#roomFor(key)) {
      this.#failing.delete(key);
      this.#benched.set(key, now + this.#c.durationMs);
      return true;
    }
    return false;
  }

  /** Whether benching `key` keeps the benched stake within maxPortion. */
  #roomFor(key: string): boolean {
    if (!this.#stake) return true;
    const total = this.#stake.total();
    if (total <= 0) return false;
    let benched = this.#stake.weightOf(key);
    for (const k of this.#benched.keys()) if (this.isBenched(k)) benched += this.#stake.weightOf(k);
    return benched <= (this.#c.maxPortion ?? 0.25) * total;
  }

  /** `key` answered a request or sent a message of its own: its failures are forgiven and it is benched no more; true when it was benched. */
  answered(key: string): boolean {
    this.#failing.delete(key);
    const wasBenched = this.isBenched(key);
    this.#benched.delete(key);
    return wasBenched;
  }
}
