/**
 * Prometheus metrics of the node, served as text at /ext/metrics. The registry is the node's; other
 * modules add their own metrics to it.
 */
import client from 'prom-client';

export type Registry = client.Registry;

export function createRegistry(opts: { defaultMetrics?: boolean } = {}): client.Registry {
  const registry = new client.Registry();
  // Event-loop lag sampled every 100 ms (prom-client's 10 ms default wakes an idle node 100 times a second).
  if (opts.defaultMetrics ?? true) client.collectDefaultMetrics({ register: registry, prefix: 'cornice_', eventLoopMonitoringPrecision: 100 });
  return registry;
}

/** Counters and a latency histogram for the JSON-RPC front end. */
export class ApiMetrics {
  readonly #requests: client.Counter<'method'>;
  readonly #errors: client.Counter<'method' | 'code'>;
  readonly #latency: client.Histogram<'method'>;

  constructor(registry: client.Registry) {
    this.#requests = new client.Counter({
      name: 'cornice_api_requests_total',
      help: 'JSON-RPC requests handled, by method',
      labelNames: ['method'],
      registers: [registry],
    });
    this.#errors = new client.Counter({
      name: 'cornice_api_errors_total',
      help: 'JSON-RPC requests answered with an error, by method and error code',
      labelNames: ['method', 'code'],
      registers: [registry],
    });
    this.#latency = new client.Histogram({
      name: 'cornice_api_request_duration_seconds',
      help: 'JSON-RPC request handling time, by method',
      labelNames: ['method'],
      buckets: [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
      registers: [registry],
    });
  }

  /** `method` must be a registered method name or 'unknown' (bounded label cardinality). */
  observe(method: string, startedNs: bigint, errorCode: number): void {
    this.#requests.inc({ method });
    if (errorCode !== 0) this.#errors.inc({ method, code: String(errorCode) });
    this.#latency.observe({ method }, Number(process.hrtime.bigint() - startedNs) / 1e9);
  }
}
