import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseArgs, type EvmRpcError } from '@cornice/evm';
import { utf8Encode } from '@cornice/sdk';
import { parseChainConfig } from '../src/config/chain-config.js';
import { DEFAULT_FEE_CONFIG } from '../src/config/fee-config.js';
import { PrecompileSchedule } from '../src/config/schedule.js';
import { parseUpgradeConfig } from '../src/config/upgrades.js';
import {
  CHAIN_CONFIG_ARGS,
  FEE_CONFIG_ARGS,
  TIMESTAMP_ARGS,
  activePrecompilesResult,
  activeRulesResult,
  chainConfigResult,
  feeConfigResult,
  parseTimestamp,
} from '../src/rpc/results.js';
import { ADMIN, DEFAULT_FEE_JSON, MODULES } from './config-helpers.js';

const chain = parseChainConfig(
  { chainId: 99999, etnaTimestamp: 500, txAllowListConfig: { blockTimestamp: 0, adminAddresses: [ADMIN] }, feeManagerConfig: { blockTimestamp: 0 } },
  MODULES,
);
const upgrades = parseUpgradeConfig(
  utf8Encode(JSON.stringify({ precompileUpgrades: [{ contractDeployerAllowListConfig: { blockTimestamp: 100 } }, { txAllowListConfig: { blockTimestamp: 200, disable: true } }] })),
  chain,
);
const schedule = new PrecompileSchedule(chain, upgrades);

/** The JSON-RPC error parseArgs gives for `params`. */
function rpcError(args: Parameters<typeof parseArgs>[0], params: unknown[]): { code: number; message: string } {
  try {
    parseArgs(args, params);
  } catch (e) {
    const err = e as EvmRpcError;
    return { code: err.rpcCode, message: err.message };
  }
  throw new Error('expected an error');
}

test('eth_feeConfig: {feeConfig, lastChangedAt} with JSON numbers (A.7 example)', () => {
  assert.equal(JSON.parse(JSON.stringify(feeConfigResult(DEFAULT_FEE_CONFIG, 0n))), {
    feeConfig: DEFAULT_FEE_JSON,
    lastChangedAt: 0,
  });
  const big = feeConfigResult({ ...DEFAULT_FEE_CONFIG, minBaseFee: 1n << 100n }, 42n);
  assert.is(big.feeConfig['minBaseFee'], (1n << 100n).toString());
  assert.is(big.lastChangedAt, 42);
});

test('eth_getChainConfig: the config with its upgrades, JSON-serializable', () => {
  const json = JSON.parse(JSON.stringify(chainConfigResult(chain, upgrades.precompileUpgrades)));
  assert.is(json.chainId, 99999);
  assert.is(json.cancunTime, 500);
  assert.equal(json.txAllowListConfig, { blockTimestamp: 0, adminAddresses: [ADMIN] });
  assert.equal(json.upgrades, {
    precompileUpgrades: [{ contractDeployerAllowListConfig: { blockTimestamp: 100 } }, { txAllowListConfig: { blockTimestamp: 200, disable: true } }],
  });
});

test('eth_getActivePrecompilesAt: key -> active config, before and after the scheduled upgrades', () => {
  assert.equal(activePrecompilesResult(chain, schedule, 99n), {
    txAllowListConfig: { blockTimestamp: 0, adminAddresses: [ADMIN] },
    feeManagerConfig: { blockTimestamp: 0 },
  });
  assert.equal(Object.keys(activePrecompilesResult(chain, schedule, 100n)), ['contractDeployerAllowListConfig', 'txAllowListConfig', 'feeManagerConfig']);
  assert.equal(activePrecompilesResult(chain, schedule, 200n), {
    contractDeployerAllowListConfig: { blockTimestamp: 100 },
    feeManagerConfig: { blockTimestamp: 0 },
  });
});

test("eth_getActiveRulesAt: params.Rules' first shape; precompiles keyed by 0x address; Cancun and the E upgrade with Etna", () => {
  const before = activeRulesResult(chain, schedule, 150n);
  assert.equal(before, {
    ChainID: 99999,
    IsHomestead: true,
    IsEIP150: true,
    IsEIP155: true,
    IsEIP158: true,
    IsByzantium: true,
    IsConstantinople: true,
    IsPetersburg: true,
    IsIstanbul: true,
    IsCancun: false,
    IsSubnetEVM: true,
    IsDurango: true,
    IsEUpgrade: false,
    ActivePrecompiles: {
      '0x0200000000000000000000000000000000000000': { blockTimestamp: 100 },
      '0x0200000000000000000000000000000000000002': { blockTimestamp: 0, adminAddresses: [ADMIN] },
      '0x0200000000000000000000000000000000000003': { blockTimestamp: 0 },
    },
    Predicaters: {},
    AccepterPrecompiles: {},
  });
  const after = activeRulesResult(chain, schedule, 500n);
  assert.is(after['IsCancun'], true);
  assert.is(after['IsEUpgrade'], true);
  assert.equal(Object.keys(after['ActivePrecompiles'] as object), ['0x0200000000000000000000000000000000000000', '0x0200000000000000000000000000000000000003']);
});

test('timestamp argument: a JSON number or a 0x quantity; absent is undefined (the head)', () => {
  assert.is(parseTimestamp(0), 0n);
  assert.is(parseTimestamp(1700000000), 1_700_000_000n);
  assert.is(parseTimestamp('0x6553f100'), 1_700_000_000n);
  assert.is(parseTimestamp('0xffffffffffffffff'), (1n << 64n) - 1n);
  assert.equal(parseArgs(TIMESTAMP_ARGS, []), [undefined]);
  assert.equal(parseArgs(TIMESTAMP_ARGS, [null]), [undefined]);
  assert.equal(parseArgs(TIMESTAMP_ARGS, [5]), [5n]);
});

const BAD_TIMESTAMPS: Array<[string, unknown, RegExp]> = [
  ['negative', -1, /^invalid argument 0: cannot unmarshal number -1 into uint64$/],
  ['a fraction', 1.5, /cannot unmarshal number 1.5 into uint64/],
  ['beyond 2^53', 2 ** 60, /not exact in JSON: send it as a 0x quantity/],
  ['a decimal string', '100', /hex string without 0x prefix/],
  ['a hex quantity above uint64', '0x10000000000000000', /hex number > 64 bits/],
  ['leading zeros', '0x01', /leading zero/],
  ['a bool', true, /cannot unmarshal boolean into uint64/],
  ['an object', {}, /cannot unmarshal object into uint64/],
  ['an array', [1], /cannot unmarshal array into uint64/],
];
for (const [name, v, why] of BAD_TIMESTAMPS) {
  test(`timestamp argument refused (${name}): -32602 naming argument 0`, () => {
    const e = rpcError(TIMESTAMP_ARGS, [v]);
    assert.is(e.code, -32602);
    assert.match(e.message, /^invalid argument 0: /);
    assert.match(e.message, why);
  });
}

test('too many arguments: -32602 (eth_getActiveRulesAt takes one, eth_getChainConfig none, eth_feeConfig one)', () => {
  assert.equal(rpcError(TIMESTAMP_ARGS, [1, 2]), { code: -32602, message: 'too many arguments, want at most 1' });
  assert.equal(rpcError(CHAIN_CONFIG_ARGS, [1]), { code: -32602, message: 'too many arguments, want at most 0' });
  assert.equal(rpcError(FEE_CONFIG_ARGS, ['latest', 1]), { code: -32602, message: 'too many arguments, want at most 1' });
});

test('eth_feeConfig block argument: a tag, number or hash; garbage is -32602', () => {
  assert.equal(parseArgs(FEE_CONFIG_ARGS, ['latest']), ['latest']);
  assert.equal(parseArgs(FEE_CONFIG_ARGS, ['0x10']), [16n]);
  assert.equal(parseArgs(FEE_CONFIG_ARGS, []), [undefined]);
  const e = rpcError(FEE_CONFIG_ARGS, ['newest']);
  assert.is(e.code, -32602);
  assert.match(e.message, /^invalid argument 0: hex string without 0x prefix/);
});

test.run();
