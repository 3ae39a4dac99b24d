/**
 * The adaptive request timeout (avalanchego's timeout manager): the timeout is `coefficient` times a
 * time-decaying average of observed response latencies, clamped to [minimumMs, maximumMs]. A request
 * that times out counts as a latency of the timeout itself, so a network that stops answering pushes
 * the timeout up towards the ceiling; fast answers bring it back down towards the floor.
 */
import { ConsensusError } from '../errors.js';

export interface TimeoutConfig {
  /** The timeout before anything was observed (`--network-initial-timeout`). */
  initialMs: number;
  /** Floor (`--network-minimum-timeout`). */
  minimumMs: number;
  /** Ceiling (`--network-maximum-timeout`). */
  maximumMs: number;
  /** Timeout = coefficient × average latency (`--network-timeout-coefficient`). */
  coefficient: number;
  /** An observation's weight halves every halflife (`--network-timeout-halflife`). */
  halflifeMs: number;
}

/** avalanchego's defaults. */
export const DEFAULT_TIMEOUTS: Readonly<TimeoutConfig> = Object.freeze({
  initialMs: 5_000,
  minimumMs: 2_000,
  maximumMs: 10_000,
  coefficient: 2,
  halflifeMs: 300_000,
});

/** Why `c` is invalid (naming the flags), or undefined. */
export function timeoutConfigProblem(c: TimeoutConfig): string | undefined {
  const finite = [c.initialMs, c.minimumMs, c.maximumMs, c.coefficient, c.halflifeMs].every((v) => Number.isFinite(v) && v > 0);
  if (!finite) return 'network timeouts, coefficient and halflife must be positive';
  if (c.minimumMs > c.maximumMs) return `--network-minimum-timeout (${c.minimumMs} ms) exceeds --network-maximum-timeout (${c.maximumMs} ms)`;
  if (c.initialMs < c.minimumMs || c.initialMs > c.maximumMs) {
    return `--network-initial-timeout (${c.initialMs} ms) must lie between --network-minimum-timeout (${c.minimumMs} ms) and --network-maximum-timeout (${c.maximumMs} ms)`;
  }
  if (c.coefficient < 1) return `--network-timeout-coefficient must be at least 1 (got ${c.coefficient})`;
  return undefined;
}

export class AdaptiveTimeout {
  readonly #c: TimeoutConfig;
  readonly #now: () => number;
  /** Decayed sums of latency and of weight; the average is their quotient. */
  #sum: number;
  #weight = 1;
  #last: number;

  constructor(config: TimeoutConfig, now: () => number) {
    const problem = timeoutConfigProblem(config);
    if (problem) throw new ConsensusError('InvalidParams', problem);
    this.#c = { ...config };
    this.#now = now;
    this.#last = now();
    // Seeded so that the first timeout is the initial one.
    this.#sum = config.initialMs / config.coefficient;
  }

  /** The ceiling: no request waits longer. */
  get maximumMs(): number {
    return this.#c.maximumMs;
  }

  /** The timeout for a request sent now, in ms. */
  get currentMs(): number {
    const t = (this.#sum / this.#weight) * this.#c.coefficient;
    return Math.min(this.#c.maximumMs, Math.max(this.#c.minimumMs, t));
  }

  /** A response arrived `latencyMs` after its request (or a request timed out after that long). */
  observe(latencyMs: number): void {
    const now = this.#now();
    const decay = 0.5 ** (Math.max(0, now - this.#last) / this.#c.halflifeMs);
    this.#last = now;
    this.#sum = this.#sum * decay + Math.max(0, latencyMs);
    this.#weight = this.#weight * decay + 1;
  }
}
