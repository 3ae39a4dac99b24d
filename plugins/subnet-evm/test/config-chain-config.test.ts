import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chainConfigJson, parseChainConfig } from '../src/config/chain-config.js';
import { DEFAULT_FEE_CONFIG } from '../src/config/fee-config.js';
import { parseUpgradeConfig } from '../src/config/upgrades.js';
import { ADMIN, DEFAULT_FEE_JSON, MODULES, throwsConfig } from './config-helpers.js';
import { hasErrorCode, isNodeError, utf8Encode } from '@cornice/sdk';
import { ConfigError } from '../src/types.js';

const FEE = {
  gasLimit: 20000000,
  minBaseFee: 1000000000,
  targetGas: 100000000,
  baseFeeChangeDenominator: 48,
  minBlockGasCost: 0,
  maxBlockGasCost: 10000000,
  targetBlockRate: 2,
  blockGasCostStep: 500000,
};

test('a minimal config: chainId only; fee config default, fee recipients off, SubnetEVM/Durango/Etna from genesis', () => {
  const c = parseChainConfig({ chainId: 99999 }, MODULES);
  assert.is(c.chainId, 99999n);
  assert.equal(c.feeConfig, DEFAULT_FEE_CONFIG);
  assert.is(c.allowFeeRecipients, false);
  assert.equal(c.upgrades, { subnetEVMTimestamp: 0n, durangoTimestamp: 0n, etnaTimestamp: 0n });
  assert.ok(c.isDurango(0n) && c.isSubnetEVM(0n) && c.isEtna(5n));
  assert.not.ok(c.isGranite(10n ** 12n) || c.isFortuna(0n));
  assert.is(c.genesisPrecompiles.size, 0);
});

test('a full config: forks at 0, feeConfig, allowFeeRecipients, scheduled upgrades, genesis precompiles by key', () => {
  const c = parseChainConfig(
    {
      chainId: 99999,
      homesteadBlock: 0,
      eip150Block: 0,
      eip150Hash: '0x2086799aeebeae135c246c65021c82b4e15a2c451340993aacfd2751886514f0',
      eip155Block: 0,
      eip158Block: 0,
      byzantiumBlock: 0,
      constantinopleBlock: 0,
      petersburgBlock: 0,
      istanbulBlock: 0,
      muirGlacierBlock: 0,
      subnetEVMTimestamp: 0,
      durangoTimestamp: 100,
      etnaTimestamp: 200,
      graniteTimestamp: 300,
      feeConfig: FEE,
      allowFeeRecipients: true,
      txAllowListConfig: { blockTimestamp: 0, adminAddresses: [ADMIN] },
      feeManagerConfig: { blockTimestamp: 150, adminAddresses: [ADMIN], managerAddresses: [ADMIN] },
      someGethField: 'ignored',
      ethash: {},
    },
    MODULES,
  );
  assert.is(c.feeConfig.gasLimit, 20_000_000n);
  assert.is(c.allowFeeRecipients, true);
  assert.is(c.upgrades.durangoTimestamp, 100n);
  assert.ok(c.isDurango(100n));
  assert.not.ok(c.isDurango(99n));
  assert.ok(c.isGranite(300n));
  assert.equal([...c.genesisPrecompiles.keys()], ['txAllowListConfig', 'feeManagerConfig']);
  assert.is(c.genesisPrecompiles.get('feeManagerConfig')!.blockTimestamp, 150n);

  const json = chainConfigJson(c, parseUpgradeConfig(utf8Encode('{"precompileUpgrades":[{"txAllowListConfig":{"blockTimestamp":400,"disable":true}}]}'), c).precompileUpgrades);
  assert.equal(json, {
    chainId: 99999,
    homesteadBlock: 0,
    eip150Block: 0,
    eip155Block: 0,
    eip158Block: 0,
    byzantiumBlock: 0,
    constantinopleBlock: 0,
    petersburgBlock: 0,
    istanbulBlock: 0,
    muirGlacierBlock: 0,
    berlinBlock: 0,
    londonBlock: 0,
    eip150Hash: '0x2086799aeebeae135c246c65021c82b4e15a2c451340993aacfd2751886514f0',
    shanghaiTime: 100,
    cancunTime: 200,
    feeConfig: FEE,
    allowFeeRecipients: true,
    subnetEVMTimestamp: 0,
    durangoTimestamp: 100,
    etnaTimestamp: 200,
    graniteTimestamp: 300,
    txAllowListConfig: { blockTimestamp: 0, adminAddresses: [ADMIN] },
    feeManagerConfig: { blockTimestamp: 150, adminAddresses: [ADMIN], managerAddresses: [ADMIN] },
    upgrades: { precompileUpgrades: [{ txAllowListConfig: { blockTimestamp: 400, disable: true } }] },
  });
});

test('chainConfigJson: upgrades.precompileUpgrades is present (empty) without upgrade.json; allowFeeRecipients false is shown', () => {
  const json = chainConfigJson(parseChainConfig({ chainId: 1 }, MODULES), []);
  assert.equal(json['upgrades'], { precompileUpgrades: [] });
  assert.is(json['allowFeeRecipients'], false);
  assert.equal(json['feeConfig'], DEFAULT_FEE_JSON);
  // Its output reads back as the same config.
  const again = parseChainConfig(json, MODULES);
  assert.is(again.chainId, 1n);
  assert.equal(again.upgrades, { subnetEVMTimestamp: 0n, durangoTimestamp: 0n, etnaTimestamp: 0n });
});

const BAD: Array<[string, unknown, string, RegExp]> = [
  ['not an object', 'x', 'config', /must be a JSON object, got a string/],
  ['chainId missing', {}, 'config.chainId', /is required/],
  ['chainId 0', { chainId: 0 }, 'config.chainId', /must be at least 1/],
  ['chainId negative', { chainId: -3 }, 'config.chainId', /must be at least 1/],
  ['chainId too large', { chainId: (1n << 63n).toString() }, 'config.chainId', /must be at most/],
  ['chainId a word', { chainId: 'one' }, 'config.chainId', /must be an integer/],
  ['feeConfig invalid', { chainId: 1, feeConfig: { ...FEE, gasLimit: 0 } }, 'config.feeConfig.gasLimit', /gasLimit cannot be less than or equal to 0/],
  ['feeConfig field missing', { chainId: 1, feeConfig: { gasLimit: 1 } }, 'config.feeConfig.minBaseFee', /minBaseFee cannot be nil/],
  ['allowFeeRecipients a string', { chainId: 1, allowFeeRecipients: 'yes' }, 'config.allowFeeRecipients', /must be true or false/],
  ['a block fork above 0', { chainId: 1, istanbulBlock: 5 }, 'config.istanbulBlock', /must be 0 or absent/],
  ['a block fork negative', { chainId: 1, homesteadBlock: -1 }, 'config.homesteadBlock', /must not be negative/],
  ['pragueTime', { chainId: 1, pragueTime: 0 }, 'config.pragueTime', /not supported/],
  ['shanghaiTime not Durango', { chainId: 1, durangoTimestamp: 10, shanghaiTime: 5 }, 'config.shanghaiTime', /must equal durangoTimestamp \(10\)/],
  ['subnetEVMTimestamp not 0', { chainId: 1, subnetEVMTimestamp: 5 }, 'config.subnetEVMTimestamp', /must be 0/],
  ['etna before durango', { chainId: 1, durangoTimestamp: 100, etnaTimestamp: 50 }, 'config.etnaTimestamp', /unsupported fork ordering: etnaTimestamp \(50\) is before durangoTimestamp \(100\)/],
  ['granite before etna (fortuna unset)', { chainId: 1, etnaTimestamp: 100, graniteTimestamp: 99 }, 'config.graniteTimestamp', /before etnaTimestamp/],
  ['a timestamp above uint64', { chainId: 1, durangoTimestamp: (1n << 64n).toString() }, 'config.durangoTimestamp', /must be at most/],
  ['a timestamp a fraction', { chainId: 1, durangoTimestamp: 0.5 }, 'config.durangoTimestamp', /must be an integer/],
  ['eip150Hash short', { chainId: 1, eip150Hash: '0x12' }, 'config.eip150Hash', /32-byte/],
  ['an unknown precompile key', { chainId: 1, warpConfig: { blockTimestamp: 0 } }, 'config.warpConfig', /unknown precompile config key \(known: feeManagerConfig, txAllowListConfig, contractDeployerAllowListConfig\)/],
  ['a precompile config not an object', { chainId: 1, txAllowListConfig: [] }, 'config.txAllowListConfig', /must be a JSON object/],
  ['a precompile without blockTimestamp', { chainId: 1, txAllowListConfig: {} }, 'config.txAllowListConfig.blockTimestamp', /block timestamp cannot be nil/],
  ['a genesis precompile disabled', { chainId: 1, txAllowListConfig: { blockTimestamp: 0, disable: true } }, 'config.txAllowListConfig.disable', /cannot be disabled/],
  ['managers before Durango', { chainId: 1, durangoTimestamp: 100, txAllowListConfig: { blockTimestamp: 99, managerAddresses: [ADMIN] } }, 'config.txAllowListConfig.managerAddresses', /cannot add managers before Durango/],
  ['the module refuses a field', { chainId: 1, txAllowListConfig: { blockTimestamp: 0, adminAddresses: ['0x1'] } }, 'config.txAllowListConfig.adminAddresses[0]', /must be an address/],
];
for (const [name, json, field, why] of BAD) {
  test(`parseChainConfig refuses ${name}, naming ${field}`, () => throwsConfig(() => parseChainConfig(json, MODULES), field, why));
}

test('managers at Durango exactly are fine; unknown non-Config keys and non-object …Config values are ignored', () => {
  const c = parseChainConfig({ chainId: 1, durangoTimestamp: 100, txAllowListConfig: { blockTimestamp: 100, managerAddresses: [ADMIN] }, otherConfig: 5, clique: {} }, MODULES);
  assert.is(c.genesisPrecompiles.size, 1);
});

test('an absent Etna follows a later Durango (not before it); an explicit Etna keeps its value', () => {
  assert.is(parseChainConfig({ chainId: 1, durangoTimestamp: 100 }, MODULES).upgrades.etnaTimestamp, 100n);
  assert.is(parseChainConfig({ chainId: 1, durangoTimestamp: 100, etnaTimestamp: 150 }, MODULES).upgrades.etnaTimestamp, 150n);
});

test('two modules with one key are refused', () => {
  throwsConfig(() => parseChainConfig({ chainId: 1 }, [MODULES[0]!, MODULES[0]!]), 'feeManagerConfig', /two precompile modules/);
});

test('ConfigError is a typed NodeError: code InvalidConfig, data { field }, its own name', () => {
  try {
    parseChainConfig({ chainId: 1, feeConfig: { ...FEE, gasLimit: 0 } }, MODULES);
    assert.unreachable('accepted');
  } catch (e) {
    assert.instance(e, ConfigError);
    assert.ok(isNodeError(e));
    assert.ok(hasErrorCode(e, 'InvalidConfig'));
    assert.is((e as ConfigError).field, 'config.feeConfig.gasLimit');
    assert.equal((e as ConfigError).data, { field: 'config.feeConfig.gasLimit' });
    assert.is((e as Error).name, 'ConfigError');
  }
});

test.run();
