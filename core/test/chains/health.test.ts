import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chainHealth, ChainUnhealthy, type ChainHealthSource } from '../../src/chains/health.js';
import type { EngineStats, Reachability, SnowmanEngine } from '../../src/consensus/index.js';

const snow = { k: 20, alpha: 15 };
const everyone: Reachability = { validators: 5, reachable: 5, benched: 0, totalWeight: 5, reachableWeight: 5 };

function source(stats: Partial<EngineStats>, reach: Reachability = everyone, fault?: string): ChainHealthSource {
  const full = { state: 'running', lastAcceptedHeight: 3, processing: 0, oldestProcessingSince: undefined, buildFailures: 0, haltReason: undefined, ...stats };
  return { engine: { stats: full } as unknown as SnowmanEngine, sampler: { sample: () => [], reachability: () => reach }, fault };
}

function problems(s: ChainHealthSource, now = 1_000_000): string[] {
  try {
    chainHealth(s, snow, 120_000, now);
    return [];
  } catch (e) {
    assert.instance(e, ChainUnhealthy);
    return (e as ChainUnhealthy).problems;
  }
}

test('healthy: running, enough stake reachable, nothing stuck; the details say so', () => {
  assert.equal(chainHealth(source({}), snow, 120_000, 0), {
    state: 'running',
    lastAcceptedHeight: 3,
    processing: 0,
    longestProcessingMs: 0,
    validators: '5 of 5 connected, 100% of stake, need 75%',
  });
});

test('each problem is named, and all of them at once', () => {
  assert.equal(problems(source({ state: 'starting' })), ['not bootstrapped: the engine is starting']);
  assert.equal(problems(source({ state: 'halted', haltReason: 'accept of block X at height 4 failed: disk full' })), [
    'halted: accept of block X at height 4 failed: disk full',
  ]);
  assert.equal(problems(source({}, everyone, 'vm.buildBlock did not settle within 30000 ms')), ['halted: vm.buildBlock did not settle within 30000 ms']);
  assert.equal(problems(source({}, { validators: 5, reachable: 3, benched: 1, totalWeight: 5, reachableWeight: 3 })), [
    'waiting for validators: 3 of 5 connected (1 benched), 60% of stake, need 75%',
  ]);
  assert.equal(problems(source({ processing: 2, oldestProcessingSince: 1_000_000 - 150_000 })), ['a block has been processing for 150 s (limit 120 s)']);
  assert.equal(problems(source({ processing: 2, oldestProcessingSince: 1_000_000 - 119_000 })), [], 'within the bound');
  assert.equal(
    problems(source({ state: 'halted', haltReason: 'x', processing: 1, oldestProcessingSince: 0 }, { ...everyone, reachable: 0, reachableWeight: 0 })),
    ['halted: x', 'waiting for validators: 0 of 5 connected, 0% of stake, need 75%', 'a block has been processing for 1000 s (limit 120 s)'],
  );
});

test('a failing check still carries the details for the report', () => {
  try {
    chainHealth(source({ state: 'halted', haltReason: 'x' }), snow, 120_000, 0);
    assert.unreachable();
  } catch (e) {
    assert.is((e as ChainUnhealthy).message, 'halted: x');
    assert.is((e as ChainUnhealthy).details.state, 'halted');
  }
});

test.run();
