import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { utf8Encode } from '@cornice/sdk';
import { parseChainConfig, type SubnetChainConfig } from '../src/config/chain-config.js';
import { MAX_UPGRADE_BYTES, parseUpgradeConfig } from '../src/config/upgrades.js';
import { ADMIN, MODULES, throwsConfig } from './config-helpers.js';

const chain = (extra: Record<string, unknown> = {}): SubnetChainConfig => parseChainConfig({ chainId: 1, ...extra }, MODULES);
const upgrades = (json: unknown, c = chain()) => parseUpgradeConfig(utf8Encode(typeof json === 'string' ? json : JSON.stringify(json)), c);
const list = (...entries: unknown[]) => ({ precompileUpgrades: entries });

test('empty bytes, whitespace, {} and an empty list: no upgrades', () => {
  assert.equal(parseUpgradeConfig(new Uint8Array(), chain()).precompileUpgrades, []);
  assert.equal(upgrades(' \n').precompileUpgrades, []);
  assert.equal(upgrades({}).precompileUpgrades, []);
  assert.equal(upgrades({ precompileUpgrades: [], stateUpgrades: [], networkUpgradeOverrides: {} }).precompileUpgrades, []);
});

test('enable, disable, re-enable one key; other keys interleave at equal timestamps', () => {
  const u = upgrades(
    list(
      { txAllowListConfig: { blockTimestamp: 100, adminAddresses: [ADMIN] } },
      { feeManagerConfig: { blockTimestamp: 100 } },
      { txAllowListConfig: { blockTimestamp: 200, disable: true } },
      { txAllowListConfig: { blockTimestamp: 300 } },
    ),
  );
  assert.equal(
    u.precompileUpgrades.map((p) => [p.key, p.config.blockTimestamp, p.config.disable]),
    [
      ['txAllowListConfig', 100n, false],
      ['feeManagerConfig', 100n, false],
      ['txAllowListConfig', 200n, true],
      ['txAllowListConfig', 300n, false],
    ],
  );
});

test('a key enabled at genesis may first be disabled, after its genesis timestamp', () => {
  const c = chain({ txAllowListConfig: { blockTimestamp: 50 } });
  assert.is(upgrades(list({ txAllowListConfig: { blockTimestamp: 60, disable: true } }), c).precompileUpgrades.length, 1);
  throwsConfig(
    () => upgrades(list({ txAllowListConfig: { blockTimestamp: 50, disable: true } }), c),
    'precompileUpgrades[0].txAllowListConfig.blockTimestamp',
    /config block timestamp \(50\) <= previous timestamp \(50\) of same key/,
  );
  throwsConfig(() => upgrades(list({ txAllowListConfig: { blockTimestamp: 60 } }), c), 'precompileUpgrades[0].txAllowListConfig.disable', /disable should be \[true\]/);
});

test('values beyond 2^53 in upgrade.json stay exact (lossless parse)', () => {
  const u = upgrades(`{"precompileUpgrades":[{"feeManagerConfig":{"blockTimestamp":18446744073709551615}}]}`);
  assert.is(u.precompileUpgrades[0]!.config.blockTimestamp, (1n << 64n) - 1n);
  throwsConfig(
    () => upgrades(`{"precompileUpgrades":[{"feeManagerConfig":{"blockTimestamp":18446744073709551616}}]}`),
    'precompileUpgrades[0].feeManagerConfig.blockTimestamp',
    /must be at most 18446744073709551615/,
  );
});

test('managerAddresses only once Durango is active at the upgrade timestamp', () => {
  const c = chain({ durangoTimestamp: 1000 });
  throwsConfig(
    () => upgrades(list({ txAllowListConfig: { blockTimestamp: 999, managerAddresses: [ADMIN] } }), c),
    'precompileUpgrades[0].txAllowListConfig.managerAddresses',
    /cannot add managers before Durango/,
  );
  assert.is(upgrades(list({ txAllowListConfig: { blockTimestamp: 1000, managerAddresses: [ADMIN] } }), c).precompileUpgrades.length, 1);
});

const BAD: Array<[string, unknown, string, RegExp]> = [
  ['not JSON', '{"precompileUpgrades": [', 'upgrade.json', /not valid JSON/],
  ['an array root', '[]', 'upgrade.json', /must be a JSON object, got an array/],
  ['an unknown top-level key', { precompileUpgrade: [] }, 'precompileUpgrade', /unknown upgrade config key/],
  ['stateUpgrades', { stateUpgrades: [{ blockTimestamp: 5, accounts: {} }] }, 'stateUpgrades', /not supported/],
  ['networkUpgradeOverrides', { networkUpgradeOverrides: { durangoTimestamp: 5 } }, 'networkUpgradeOverrides', /not supported/],
  ['precompileUpgrades an object', { precompileUpgrades: {} }, 'precompileUpgrades', /must be an array, got an object/],
  ['an entry not an object', list(5), 'precompileUpgrades[0]', /must be a JSON object, got a number/],
  ['an entry with no key', list({}), 'precompileUpgrades[0]', /exactly one precompile config key, got 0/],
  ['an entry with two keys', list({ txAllowListConfig: { blockTimestamp: 1 }, feeManagerConfig: { blockTimestamp: 1 } }), 'precompileUpgrades[0]', /exactly one .*got 2 \(txAllowListConfig, feeManagerConfig\)/],
  ['an unknown key', list({ warpConfig: { blockTimestamp: 1 } }), 'precompileUpgrades[0].warpConfig', /unknown precompile config key/],
  ['no blockTimestamp', list({ txAllowListConfig: {} }), 'precompileUpgrades[0].txAllowListConfig.blockTimestamp', /block timestamp cannot be nil/],
  ['a negative blockTimestamp', list({ txAllowListConfig: { blockTimestamp: -1 } }), 'precompileUpgrades[0].txAllowListConfig.blockTimestamp', /must not be negative/],
  ['a string disable', list({ txAllowListConfig: { blockTimestamp: 1, disable: 'true' } }), 'precompileUpgrades[0].txAllowListConfig.disable', /must be true or false/],
  ['a first disable of a key not at genesis', list({ txAllowListConfig: { blockTimestamp: 1, disable: true } }), 'precompileUpgrades[0].txAllowListConfig.disable', /disable should be \[false\]/],
  [
    'two enables in a row',
    list({ txAllowListConfig: { blockTimestamp: 1 } }, { txAllowListConfig: { blockTimestamp: 2 } }),
    'precompileUpgrades[1].txAllowListConfig.disable',
    /disable should be \[true\]/,
  ],
  [
    'timestamps decreasing across keys',
    list({ txAllowListConfig: { blockTimestamp: 10 } }, { feeManagerConfig: { blockTimestamp: 9 } }),
    'precompileUpgrades[1].feeManagerConfig.blockTimestamp',
    /config block timestamp \(9\) < previous timestamp \(10\)/,
  ],
  [
    'one key twice at one timestamp',
    list({ txAllowListConfig: { blockTimestamp: 10 } }, { txAllowListConfig: { blockTimestamp: 10, disable: true } }),
    'precompileUpgrades[1].txAllowListConfig.blockTimestamp',
    /<= previous timestamp \(10\) of same key/,
  ],
  ['a field the module refuses', list({ txAllowListConfig: { blockTimestamp: 1, bogus: 1 } }), 'precompileUpgrades[0].txAllowListConfig.bogus', /unknown field/],
];
for (const [name, json, field, why] of BAD) {
  test(`upgrade.json refused: ${name}, naming ${field}`, () => throwsConfig(() => upgrades(json), field, why));
}

test('upgrade.json larger than 1 MiB is refused before parsing', () => {
  throwsConfig(() => parseUpgradeConfig(new Uint8Array(MAX_UPGRADE_BYTES + 1).fill(0x20), chain()), 'upgrade.json', /at most 1048576/);
});

test('more than 1,000 entries are refused', () => {
  const many = Array.from({ length: 1001 }, (_, i) => ({ txAllowListConfig: { blockTimestamp: i + 1, ...(i % 2 ? { disable: true } : {}) } }));
  throwsConfig(() => upgrades(list(...many)), 'precompileUpgrades', /at most 1000/);
});

test.run();
