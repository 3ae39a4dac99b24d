import { suite } from 'uvu';
import { DEFAULT_SNOW_PARAMS } from '../../../src/consensus/params.js';
import type { SimulationOptions } from '../../../src/testing/simulation.js';
import { safeAndLive } from './helpers.js';

const test = suite('simulation: 50 validators');

const base: Omit<SimulationOptions, 'seed'> = {
  honest: 42,
  adversaries: 8, // 16% of the stake
  params: { k: 10, alpha: 7, betaVirtuous: 15, betaRogue: 20, concurrentRepolls: 4 },
  // Long-tailed delays: 5 ms plus an exponential with a 25 ms mean (some exceed the 300 ms request deadline).
  delay: (random) => 5 - Math.log(1 - random()) * 25,
  dropRate: 0.05,
  proposeEveryMs: 200,
  forkRate: 0.2,
  targetBlocks: 10,
  maxVirtualMs: 60_000,
};

for (let seed = 1; seed <= 5; seed++) {
  test(`safe and live (k = 10, long-tailed delays, 5% drops, forks, 8 adversaries): seed ${seed}`, async () => {
    await safeAndLive({ ...base, seed });
  });
}

test('safe and live with the default parameters (5 adversaries = 10% of stake)', async () => {
  await safeAndLive({ ...base, seed: 1, honest: 45, adversaries: 5, params: DEFAULT_SNOW_PARAMS, maxVirtualMs: 120_000 });
});

test.run();
