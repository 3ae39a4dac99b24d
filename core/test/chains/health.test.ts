import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chainHealth, ChainUnhealthy, type ChainHealthSource } from '../../src/chains/health.js';
import type { EngineStats, Reachability, SnowmanEngine } from '../../src/consensus/index.js';

const snow = { k: 20, alpha: 15 };
const everyone: Reachability = { validators: 5, reachable: 5, benched: 0, unresponsive: 0, totalWeight: 5, reachableWeight: 5, unresponsiveWeight: 0 };

function source(stats: Partial<EngineStats>, reach: Reachability = everyone, fault?: string): ChainHealthSource {
  const full = { state: 'running', lastAcceptedHeight: 3, processing: 0, oldestProcessingSince: undefined, buildFailures: 0, haltReason: undefined, successfulPolls: 40, failedPolls: 2, lastAcceptedAt: 0, txsWaitingSince: undefined, behind: undefined, ...stats };
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
    polls: { successful: 40, failed: 2 },
    processing: 0,
    longestProcessingMs: 0,
    validators: '5 of 5 connected, 100% of stake, need 75%',
  });
});

test('while the chain bootstraps, health says how far it is', () => {
  const bootstrapping = { chain: 'X', phase: 'fetching' as const, fetched: 1200, accepted: 800, targetHeight: 5000, height: 800, etaMs: 3_000 };
  assert.equal(problems({ ...source({ state: 'idle' }), bootstrapping }), [
    'bootstrapping: fetching: 1200 blocks fetched, 800 accepted, height 800 of 5000, about 3 s left',
  ]);
});

test('each problem is named, and all of them at once', () => {
  assert.equal(problems(source({ state: 'starting' })), ['not bootstrapped: the engine is starting']);
  assert.equal(problems(source({ state: 'halted', haltReason: 'accept of block X at height 4 failed: disk full' })), [
    'halted: accept of block X at height 4 failed: disk full',
  ]);
  assert.equal(problems(source({}, everyone, 'vm.buildBlock did not settle within 30000 ms')), ['halted: vm.buildBlock did not settle within 30000 ms']);
  assert.equal(problems(source({}, { ...everyone, reachable: 3, benched: 1, reachableWeight: 3 })), [
    'waiting for validators: 3 of 5 connected (1 benched), 60% of stake, need 75%',
  ]);
  assert.equal(problems(source({ processing: 2, oldestProcessingSince: 1_000_000 - 150_000 })), ['a block has been processing for 150 s (limit 120 s)']);
  assert.equal(problems(source({ processing: 2, oldestProcessingSince: 1_000_000 - 119_000 })), [], 'within the bound');
  assert.equal(
    problems(source({ state: 'halted', haltReason: 'x', processing: 1, oldestProcessingSince: 0 }, { ...everyone, reachable: 0, reachableWeight: 0 })),
    ['halted: x', 'waiting for validators: 0 of 5 connected, 0% of stake, need 75%', 'a block has been processing for 1000 s (limit 120 s)'],
  );
});

test('validators that stopped answering: counted out of the answering stake, named, unhealthy below alpha/k', () => {
  const oneFrozen = { ...everyone, unresponsive: 1, unresponsiveWeight: 1 };
  assert.equal(problems(source({}, oneFrozen)), [], 'four of five answering is enough');
  assert.is(chainHealth(source({}, oneFrozen), snow, 120_000, 0).validators, '5 of 5 connected, 1 not answering, 80% of stake answering, need 75%');
  assert.equal(problems(source({}, { ...everyone, unresponsive: 2, unresponsiveWeight: 2 })), [
    'too few validators answering: 5 of 5 connected, 2 not answering, 60% of stake answering, need 75%',
  ]);
});

test('transactions waiting with nothing accepted for the limit: unhealthy; an accept since they came restarts the count', () => {
  const now = 1_000_000;
  assert.equal(problems(source({ txsWaitingSince: now - 130_000, lastAcceptedAt: now - 500_000 }), now), [
    'transactions have waited 130 s and no block was accepted (limit 120 s)',
  ]);
  assert.equal(problems(source({ txsWaitingSince: now - 130_000, lastAcceptedAt: now - 60_000 }), now), []);
  assert.equal(problems(source({ txsWaitingSince: undefined, lastAcceptedAt: 0 }), now), [], 'nothing waits: an idle chain is healthy');
});

test('peers reporting accepted blocks above ours: unhealthy with the heights, until caught up', () => {
  assert.equal(problems(source({ behind: { peerHeight: 40, forMs: 6_000 } })), [
    'behind: peers have accepted height 40, this node is at height 3 and has accepted nothing for 6 s (fetching)',
  ]);
  assert.equal(problems(source({ behind: { peerHeight: undefined, forMs: 9_000 } })), [
    'behind: peers have accepted blocks this node lacks, this node is at height 3 and has accepted nothing for 9 s (fetching)',
  ]);
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
