import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { DEFAULT_SNOW_PARAMS } from '../../../src/consensus/params.js';
import { runThroughputBenchmark } from '../../../src/testing/simulation.js';
import { safeAndLive } from './helpers.js';

const test = suite('simulation: 20 validators, default parameters');

// With 5% of messages lost, a sampled honest validator answers with probability 0.95² ≈ 0.90, so
// honest stake h gives a poll about 20·h·0.90 votes against alpha = 15: h = 90% leaves a margin
// (~18 expected), while h = 85% (~15.3) sits on the edge where 20 consecutive successes take
// thousands of polls. The lossy runs therefore use 2 adversaries (10%); adversaries.test.ts runs
// 15% of every kind of adversary on a lossless network.
for (let seed = 1; seed <= 3; seed++) {
  test(`safe and live (delays, 5% drops, forks, 2 mixed adversaries = 10% of stake): seed ${seed}`, async () => {
    const r = await safeAndLive({
      seed,
      honest: 18,
      adversaries: 2,
      params: DEFAULT_SNOW_PARAMS,
      delay: { minMs: 5, maxMs: 50 },
      dropRate: 0.05,
      proposeEveryMs: 200,
      forkRate: 0.2,
      targetBlocks: 10,
      maxVirtualMs: 120_000,
    });
    assert.ok(r.rejected > 0);
  });
}

test('the throughput benchmark function reports its figures', async () => {
  const r = await runThroughputBenchmark({ blocks: 20 });
  assert.ok(r.blocks >= 20);
  assert.ok(r.realSeconds > 0);
  assert.ok(r.virtualSeconds > 0);
  assert.ok(r.messages > 0);
});

test.run();
