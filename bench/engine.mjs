// Snowman engine throughput in the deterministic simulation: 20 validators with the default
// parameters (k=20, alpha=15, beta 20/30), no drops, no adversaries, until every validator has
// accepted the blocks. Real CPU time of the whole simulated network on one thread.
import { fileURLToPath } from 'node:url';
import { runThroughputBenchmark } from '@cornice/core/testing';
import { report } from './lib.mjs';

export async function benchEngine({ blocks = 200 } = {}) {
  const r = await runThroughputBenchmark({ blocks });
  report({
    bench: 'engine throughput in simulation (20 validators, default params)',
    value: Math.round(r.blocks / r.realSeconds),
    unit: 'blocks/s',
    blocks: r.blocks,
    realSeconds: Math.round(r.realSeconds * 100) / 100,
    virtualSeconds: Math.round(r.virtualSeconds * 100) / 100,
    messages: r.messages,
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await benchEngine();
