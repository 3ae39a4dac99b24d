// Preload for a node under a bench (`node --import ./bench/event-loop-delay.mjs core/bin/cornice.js …`):
// records the process's event-loop delay; on SIGUSR2 writes {maxMs, p99Ms, p50Ms} since the last
// SIGUSR2 to $CORNICE_ELD_OUT and starts over. Used by evm-abuse.mjs: what a node's own event loop
// waited during an attack, apart from the client processes' scheduling.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { writeFileSync } from 'node:fs';

const h = monitorEventLoopDelay({ resolution: 5 });
h.enable();
process.on('SIGUSR2', () => {
  const out = process.env.CORNICE_ELD_OUT;
  if (out) writeFileSync(out, JSON.stringify({ maxMs: h.max / 1e6, p99Ms: h.percentile(99) / 1e6, p50Ms: h.percentile(50) / 1e6 }));
  h.reset();
});
