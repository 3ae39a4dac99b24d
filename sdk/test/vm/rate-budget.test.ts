import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RateBudget } from '../../src/index.js';

test('RateBudget: a minute\'s worth at once, refilled with the clock, never more; what it cannot take now, the ms until it can; more than a minute\'s worth never', () => {
  const b = new RateBudget(600, 0);
  assert.is(b.take(600, 0), 0);
  assert.is(b.take(1, 0), 100); // 10 units a second: 1 more in 100 ms
  assert.is(b.take(10, 500), 500); // 5 there, 5 more in 500 ms
  assert.is(b.take(10, 1_000), 0);
  assert.is(b.available(1_000_000), 600, 'never above a minute\'s worth');
  assert.is(b.take(601, 1_000_000), Infinity);
  assert.is(b.available(500_000), 600, 'time going backwards adds nothing (and takes nothing)');
  assert.is(b.take(600, 500_000), 0);
  assert.is(b.available(500_000 + 30_000), 300);
  assert.throws(() => new RateBudget(0, 0), /perMinute/);
});

test('RateBudget, one at a time: a minute\'s worth at once, then one per perMinute-th of a minute; time going backwards adds nothing', () => {
  const b = new RateBudget(60, 0);
  for (let i = 0; i < 60; i++) assert.is(b.take(1, 0), 0);
  assert.is(b.take(1, 0), 1000);
  assert.is(b.take(1, 400), 600);
  assert.is(b.take(1, 1000), 0);
  assert.is(b.take(1, -5000), 1000);
  assert.is(b.take(1, 10_000_000), 0);
  for (let i = 0; i < 59; i++) assert.is(b.take(1, 10_000_000), 0, 'never more than a minute\'s worth');
  assert.is(b.take(1, 10_000_000), 1000);
  assert.throws(() => new RateBudget(0, 0), /perMinute/);
});

test.run();
