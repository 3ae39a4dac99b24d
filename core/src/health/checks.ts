/**
 * Liveness checks. Each check is an async function that throws when unhealthy (an error with a
 * `details` field reports it as the check's message); results keep the
 * reference's shape (go-sundheit): message, error, timestamp, duration (ns), contiguousFailures,
 * timeOfFirstFailure.
 */
export type Check = () => Promise<unknown>;

export interface CheckResult {
  message: unknown;
  error?: { message: string };
  timestamp: string;
  duration: number;
  contiguousFailures: number;
  timeOfFirstFailure: string | null;
}

export interface HealthReport {
  checks: Record<string, CheckResult>;
  healthy: boolean;
}

export class HealthChecks {
  readonly #checks = new Map<string, Check>();
  readonly #failures = new Map<string, { count: number; first: string }>();

  constructor(
    private readonly now: () => Date = () => new Date(),
    private readonly timeoutMs = 5_000,
  ) {}

  register(name: string, check: Check): void {
    this.#checks.set(name, check);
  }

  unregister(name: string): void {
    this.#checks.delete(name);
    this.#failures.delete(name);
  }

  async run(): Promise<HealthReport> {
    const checks: Record<string, CheckResult> = {};
    let healthy = true;
    await Promise.all(
      [...this.#checks].map(async ([name, check]) => {
        const started = process.hrtime.bigint();
        const timestamp = this.now().toISOString();
        let message: unknown = null;
        let error: string | undefined;
        try {
          message = await withTimeout(check(), this.timeoutMs);
        } catch (e) {
          error = e instanceof Error ? e.message : String(e);
          // A failing check may say more than its message (e.g. a chain's state).
          message = (e as { details?: unknown } | null)?.details ?? null;
        }
        const duration = Number(process.hrtime.bigint() - started);
        if (error === undefined) this.#failures.delete(name);
        else {
          healthy = false;
          const f = this.#failures.get(name) ?? { count: 0, first: timestamp };
          f.count += 1;
          this.#failures.set(name, f);
        }
        const f = this.#failures.get(name);
        checks[name] = {
          message,
          ...(error !== undefined ? { error: { message: error } } : {}),
          timestamp,
          duration,
          contiguousFailures: f?.count ?? 0,
          timeOfFirstFailure: f?.first ?? null,
        };
      }),
    );
    return { checks, healthy };
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`check timed out after ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
