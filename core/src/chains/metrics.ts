import client from 'prom-client';
import type { Id, VMMetrics } from '@cornice/sdk';
import type { Registry } from '../metrics/metrics.js';

const NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/**
 * A VM's metrics in the node registry, named `cornice_vm_<vm>_<name>` and labelled with the chain
 * ID. Metrics of the same name from several chains of one VM share the metric (one label each).
 */
export function vmMetrics(registry: Registry, vmName: string, chainId: Id): VMMetrics {
  const chain = chainId.toString();
  const full = (name: string) => {
    const n = `cornice_vm_${vmName.replace(/[^a-zA-Z0-9_]/g, '_')}_${name}`;
    if (!NAME.test(name)) throw new TypeError(`invalid metric name ${name}`);
    return n;
  };
  const existing = <T>(name: string) => registry.getSingleMetric(name) as T | undefined;
  return {
    counter(name, help) {
      const n = full(name);
      const m = existing<client.Counter<'chain'>>(n) ?? new client.Counter({ name: n, help, labelNames: ['chain'], registers: [registry] });
      return { inc: (by = 1) => m.inc({ chain }, by) };
    },
    gauge(name, help) {
      const n = full(name);
      const m = existing<client.Gauge<'chain'>>(n) ?? new client.Gauge({ name: n, help, labelNames: ['chain'], registers: [registry] });
      return { set: (v) => m.set({ chain }, v) };
    },
    histogram(name, help, buckets) {
      const n = full(name);
      const m =
        existing<client.Histogram<'chain'>>(n) ??
        new client.Histogram({ name: n, help, labelNames: ['chain'], registers: [registry], ...(buckets ? { buckets } : {}) });
      return { observe: (v) => m.observe({ chain }, v) };
    },
  };
}
