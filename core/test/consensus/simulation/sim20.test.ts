import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { DEFAULT_SNOW_PARAMS } from '../../../src/consensus/params.js';
import { runThroughputBenchmark } from '../../../src/consensus/simulation.js';
import { safeAndLive } from './helpers.js';

const test = suite('simulation: 20 validators, default parameters');

test('safe and live across seeds (delays, 5% drops, forks, 3 adversaries = 15% of stake)', async () => {
  for (let seed = 1; seed <= 5; seed++) {
    const r = await safeAndLive({
      seed,
      honest: 17,
      adversaries: 3,
      params: DEFAULT_SNOW_PARAMS,
      delay: { minMs: 5, maxMs: 50 },
      dropRate: 0.05,
      proposeEveryMs: 200,
      forkRate: 0.2,
      targetBlocks: 10,
      maxVirtualMs: 120_000,
    });
    assert.ok(r.rejected > 0);
  }
});

test('the throughput benchmark function reports its figures', async () => {
  const r = await runThroughputBenchmark({ blocks: 20 });
  assert.ok(r.blocks >= 20);
  assert.ok(r.realSeconds > 0);
  assert.ok(r.virtualSeconds > 0);
  assert.ok(r.messages > 0);
});

test.run();
