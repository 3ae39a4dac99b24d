import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { DEFAULT_SNOW_PARAMS, snowParamsProblem, type SnowParams } from '../../src/consensus/params.js';

const test = suite('snow params');
const p = (over: Partial<SnowParams>): SnowParams => ({ ...DEFAULT_SNOW_PARAMS, ...over });

test('defaults are k 20, alpha 15, beta 20/30, 4 concurrent repolls, and valid', () => {
  assert.equal({ ...DEFAULT_SNOW_PARAMS }, { k: 20, alpha: 15, betaVirtuous: 20, betaRogue: 30, concurrentRepolls: 4 });
  assert.is(snowParamsProblem(DEFAULT_SNOW_PARAMS), undefined);
  assert.ok(Object.isFrozen(DEFAULT_SNOW_PARAMS));
});

test('alpha must be more than k/2 and at most k', () => {
  assert.is(
    snowParamsProblem(p({ alpha: 3 })),
    '--snow-quorum-size (alpha) must be greater than half of --snow-sample-size (k) and at most k: got alpha=3, k=20',
  );
  assert.is(
    snowParamsProblem(p({ alpha: 10 })),
    '--snow-quorum-size (alpha) must be greater than half of --snow-sample-size (k) and at most k: got alpha=10, k=20',
  );
  assert.is(snowParamsProblem(p({ alpha: 11 })), undefined);
  assert.is(snowParamsProblem(p({ alpha: 20 })), undefined);
  assert.is(
    snowParamsProblem(p({ alpha: 21 })),
    '--snow-quorum-size (alpha) must be greater than half of --snow-sample-size (k) and at most k: got alpha=21, k=20',
  );
  // Odd k: 2 of 3 is a majority; 1 of 1 is fine.
  assert.is(snowParamsProblem(p({ k: 3, alpha: 2 })), undefined);
  assert.is(snowParamsProblem(p({ k: 1, alpha: 1 })), undefined);
  assert.match(snowParamsProblem(p({ k: 3, alpha: 1 })) ?? '', /got alpha=1, k=3$/);
});

test('k must be at least 1', () => {
  assert.is(snowParamsProblem(p({ k: 0, alpha: 0 })), '--snow-sample-size (k) must be at least 1: got k=0');
  assert.is(snowParamsProblem(p({ k: -5 })), '--snow-sample-size (k) must be at least 1: got k=-5');
});

test('0 < betaVirtuous <= betaRogue', () => {
  const text = (bv: number, br: number) =>
    `--snow-virtuous-commit-threshold (betaVirtuous) must be greater than 0 and at most --snow-rogue-commit-threshold (betaRogue): got betaVirtuous=${bv}, betaRogue=${br}`;
  assert.is(snowParamsProblem(p({ betaVirtuous: 0 })), text(0, 30));
  assert.is(snowParamsProblem(p({ betaVirtuous: 31 })), text(31, 30));
  assert.is(snowParamsProblem(p({ betaVirtuous: 30 })), undefined);
  assert.is(snowParamsProblem(p({ betaVirtuous: 1, betaRogue: 1, concurrentRepolls: 1 })), undefined);
});

test('0 < concurrentRepolls <= betaRogue', () => {
  const text = (c: number, br: number) =>
    `--snow-concurrent-repolls (concurrentRepolls) must be greater than 0 and at most --snow-rogue-commit-threshold (betaRogue): got concurrentRepolls=${c}, betaRogue=${br}`;
  assert.is(snowParamsProblem(p({ concurrentRepolls: 0 })), text(0, 30));
  assert.is(snowParamsProblem(p({ concurrentRepolls: 31 })), text(31, 30));
  assert.is(snowParamsProblem(p({ concurrentRepolls: 30 })), undefined);
});

test('every value must be an integer', () => {
  assert.is(snowParamsProblem(p({ k: 2.5 })), '--snow-sample-size (k) must be an integer: got k=2.5');
  assert.is(snowParamsProblem(p({ alpha: Number.NaN })), '--snow-quorum-size (alpha) must be an integer: got alpha=NaN');
  assert.is(
    snowParamsProblem(p({ betaRogue: '30' as unknown as number })),
    '--snow-rogue-commit-threshold (betaRogue) must be an integer: got betaRogue=30',
  );
});

test.run();
