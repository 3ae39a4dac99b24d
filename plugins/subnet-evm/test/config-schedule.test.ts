import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { utf8Encode } from '@cornice/sdk';
import { parseChainConfig } from '../src/config/chain-config.js';
import { PrecompileSchedule, crosses } from '../src/config/schedule.js';
import { NO_UPGRADES, parseUpgradeConfig } from '../src/config/upgrades.js';
import { MODULES } from './config-helpers.js';

function schedule(genesis: Record<string, unknown>, upgrades: unknown[] = []): PrecompileSchedule {
  const chain = parseChainConfig({ chainId: 1, ...genesis }, MODULES);
  return new PrecompileSchedule(chain, upgrades.length ? parseUpgradeConfig(utf8Encode(JSON.stringify({ precompileUpgrades: upgrades })), chain) : NO_UPGRADES);
}

const S = schedule({ txAllowListConfig: { blockTimestamp: 0 }, feeManagerConfig: { blockTimestamp: 50 } }, [
  { contractDeployerAllowListConfig: { blockTimestamp: 100 } },
  { txAllowListConfig: { blockTimestamp: 100, disable: true } },
  { feeManagerConfig: { blockTimestamp: 150, disable: true } },
  { txAllowListConfig: { blockTimestamp: 200 } },
]);

const summary = (ts: Array<{ module: { key: string }; config: { blockTimestamp: bigint; disable: boolean } }>) =>
  ts.map((t) => `${t.module.key}@${t.config.blockTimestamp}${t.config.disable ? ' off' : ''}`);

test('activeAt: the latest config at or before the timestamp, when it enables, keyed in address order', () => {
  assert.equal([...S.activeAt(0n).keys()], ['txAllowListConfig']);
  assert.equal([...S.activeAt(50n).keys()], ['txAllowListConfig', 'feeManagerConfig']);
  assert.equal([...S.activeAt(100n).keys()], ['contractDeployerAllowListConfig', 'feeManagerConfig']);
  assert.equal([...S.activeAt(150n).keys()], ['contractDeployerAllowListConfig']);
  const at200 = S.activeAt(200n);
  assert.equal([...at200.keys()], ['contractDeployerAllowListConfig', 'txAllowListConfig']);
  assert.is(at200.get('txAllowListConfig')!.blockTimestamp, 200n);
  assert.is(S.activeConfig('txAllowListConfig', 199n), undefined);
  assert.is(S.activeConfig('txAllowListConfig', 10n)!.blockTimestamp, 0n);
  assert.is(S.activeConfig('nope', 10n), undefined);
});

test('genesis block (no parent) applies every config at or before its timestamp, in address order', () => {
  assert.equal(summary(S.transitions(undefined, 0n)), ['txAllowListConfig@0']);
  // A genesis block at 120 applies everything up to 120: each module's configs in order.
  assert.equal(summary(S.transitions(undefined, 120n)), ['contractDeployerAllowListConfig@100', 'txAllowListConfig@0', 'txAllowListConfig@100 off', 'feeManagerConfig@50']);
});

test('a block applies the configs its parent-to-block interval crosses (parent excluded, block included)', () => {
  assert.equal(summary(S.transitions(0n, 49n)), []);
  assert.equal(summary(S.transitions(49n, 50n)), ['feeManagerConfig@50']);
  assert.equal(summary(S.transitions(50n, 50n)), []);
  assert.equal(summary(S.transitions(99n, 100n)), ['contractDeployerAllowListConfig@100', 'txAllowListConfig@100 off']);
  // A long gap crosses several configs of one module: all, in order (disable then re-enable).
  assert.equal(summary(S.transitions(60n, 1000n)), ['contractDeployerAllowListConfig@100', 'txAllowListConfig@100 off', 'txAllowListConfig@200', 'feeManagerConfig@150 off']);
});

test('crosses: IsForkTransition', () => {
  assert.ok(crosses(0n, undefined, 0n));
  assert.not.ok(crosses(1n, undefined, 0n));
  assert.ok(crosses(5n, 4n, 5n));
  assert.not.ok(crosses(4n, 4n, 5n));
  assert.not.ok(crosses(6n, 4n, 5n));
});

test('no precompiles: nothing active, no transitions, no modules', () => {
  const s = schedule({});
  assert.is(s.activeAt(10n).size, 0);
  assert.equal(s.transitions(undefined, 10n), []);
  assert.equal(s.modules(), []);
  assert.equal(
    S.modules().map((m) => m.key),
    ['contractDeployerAllowListConfig', 'txAllowListConfig', 'feeManagerConfig'],
  );
});

test.run();
