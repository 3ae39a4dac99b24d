/**
 * The plugin (src/plugin.ts): its vmID, the per-chain config file (config.json), the genesis check
 * platform.createBlockchain runs, and a bad config becoming EvmChainError('InvalidConfig') when a
 * chain initializes.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { hasErrorCode, utf8Encode } from '@cornice/sdk';
import { testChainContext } from '@cornice/core/testing';
import { EvmVM } from '@cornice/evm/chain';
import { checkSubnetGenesis, subnetEvmOptions, vmFactory } from '../src/index.js';
import { FAST_FEES, GWEI, manualClock, serveRpc, startSubnetVM, subnetGenesis } from './chain-helpers.js';

interface Expected {
  code: string;
  message: string;
  field?: string;
}

function expectError(e: unknown, want: Expected): void {
  assert.ok(hasErrorCode(e, want.code), `want ${want.code}, got ${String(e)}`);
  assert.is((e as Error).message, want.message);
  if (want.field !== undefined) assert.equal((e as { data?: unknown }).data, { field: want.field });
}

function genesisError(bytes: Uint8Array, want: Expected): void {
  try {
    checkSubnetGenesis(bytes);
  } catch (e) {
    expectError(e, want);
    return;
  }
  assert.unreachable(`expected ${want.message}`);
}

async function initializeError(init: { genesis: Uint8Array; config?: string; upgrade?: string }, want: Expected): Promise<void> {
  const vm = new EvmVM(subnetEvmOptions);
  try {
    await vm.initialize(testChainContext(), {
      genesis: init.genesis,
      ...(init.config !== undefined ? { config: utf8Encode(init.config) } : {}),
      ...(init.upgrade !== undefined ? { upgrade: utf8Encode(init.upgrade) } : {}),
    });
  } catch (e) {
    expectError(e, want);
    return;
  } finally {
    await vm.shutdown();
  }
  assert.unreachable(`expected ${want.message}`);
}

test('vmFactory: vmID subnetevm, the subnet-EVM genesis check, its client version and gas price floor', async () => {
  assert.is(vmFactory.name, 'subnetevm');
  assert.is(vmFactory.vmId.toString(), 'srEXiWaHuhNyGwPUi444Tu47ZEDwxTWrbQiuD7FmgSAQ6X7Dy');
  // The genesis check is the subnet-EVM's: it refuses what the C-Chain's parse accepts.
  const bad = utf8Encode(JSON.stringify({ config: { chainId: 5, feeConfig: { ...FAST_FEES, gasLimit: 0 } }, alloc: {} }));
  assert.throws(() => vmFactory.checkGenesis!(bad), /config\.feeConfig\.gasLimit/);
  assert.throws(() => checkSubnetGenesis(bad), /config\.feeConfig\.gasLimit/);
  const vm = await startSubnetVM({ genesis: subnetGenesis({ feeConfig: { ...FAST_FEES, minBaseFee: 7_000_000_000 } }), clock: manualClock(1000) });
  const rpc = await serveRpc(vm);
  try {
    // The genesis block's base fee and the gas price: the genesis fee config's minBaseFee.
    assert.is((await vm.backend.block(0n))!.header.baseFeePerGas, 7n * GWEI);
    assert.is(await vm.backend.gasPrice(), 7n * GWEI);
    assert.is(await rpc.ok('web3_clientVersion'), 'cornice-subnet-evm/0.1.0');
  } finally {
    await rpc.close();
    await vm.shutdown();
  }
});

test('config.json: bad JSON, not an object, a bad feeRecipient or EVM key are InvalidConfig; empty, {} and unknown keys are fine; the EVM keys are read', async () => {
  const genesis = subnetGenesis();
  await initializeError({ genesis, config: '{"feeRecipient":' }, { code: 'InvalidConfig', message: 'invalid chain config file: not valid JSON' });
  for (const config of ['[]', '"x"', 'null', '7']) {
    await initializeError({ genesis, config }, { code: 'InvalidConfig', message: 'invalid chain config file: must be a JSON object' });
  }
  for (const bad of ['"0x12"', '5', '"8db97c7cece249c2b98bdc0226cc4c2a57bf52fc"', `"0x${'g'.repeat(40)}"`]) {
    await initializeError(
      { genesis, config: `{"feeRecipient":${bad}}` },
      { code: 'InvalidConfig', message: 'invalid chain config file: feeRecipient: must be a 0x-prefixed 20-byte hex address', field: 'feeRecipient' },
    );
  }
  for (const config of ['', '{}', '{"pruning-enabled":false}']) {
    const vm = await startSubnetVM({ genesis, clock: manualClock(1000), config });
    await vm.shutdown();
  }
  // The EVM's keys, as in subnet-evm's config.json.
  await initializeError(
    { genesis, config: '{"allow-unprotected-txs":"yes"}' },
    { code: 'InvalidConfig', message: 'invalid chain config file: allow-unprotected-txs: must be true or false', field: 'allow-unprotected-txs' },
  );
  const vm = await startSubnetVM({ genesis, clock: manualClock(1000), config: JSON.stringify({ 'allow-unprotected-txs': true, 'rpc-gas-cap': 30_000, feeRecipient: `0x${'11'.repeat(20)}` }) });
  try {
    assert.is(vm.chain.options.allowUnprotectedTxs, true);
    assert.is(vm.chain.options.rpcGasCap, 30_000n);
  } finally {
    await vm.shutdown();
  }
});

test('checkSubnetGenesis: a bad genesis or subnet-EVM config fails naming the field (InvalidGenesis / InvalidConfig)', () => {
  checkSubnetGenesis(subnetGenesis({ feeConfig: FAST_FEES, feeManagerConfig: { blockTimestamp: 0 } }));
  genesisError(utf8Encode('{'), { code: 'InvalidGenesis', message: 'invalid genesis: not valid JSON' });
  genesisError(subnetGenesis({ feeConfig: { ...FAST_FEES, gasLimit: 0 } }), {
    code: 'InvalidConfig',
    message: 'invalid chain config: config.feeConfig.gasLimit: gasLimit cannot be less than or equal to 0: gasLimit = 0',
    field: 'config.feeConfig.gasLimit',
  });
  genesisError(subnetGenesis({ warpConfig: { blockTimestamp: 0 } }), {
    code: 'InvalidConfig',
    message:
      'invalid chain config: config.warpConfig: unknown precompile config key (known: contractDeployerAllowListConfig, contractNativeMinterConfig, txAllowListConfig, feeManagerConfig, rewardManagerConfig)',
    field: 'config.warpConfig',
  });
  genesisError(subnetGenesis({ txAllowListConfig: { adminAddresses: [] } }), {
    code: 'InvalidConfig',
    message: 'invalid chain config: config.txAllowListConfig.blockTimestamp: block timestamp cannot be nil',
    field: 'config.txAllowListConfig.blockTimestamp',
  });
  genesisError(subnetGenesis({ durangoTimestamp: 10, etnaTimestamp: 5 }), {
    code: 'InvalidConfig',
    message: 'invalid chain config: config.etnaTimestamp: unsupported fork ordering: etnaTimestamp (5) is before durangoTimestamp (10)',
    field: 'config.etnaTimestamp',
  });
});

test('initialize: a bad genesis config or upgrade.json is EvmChainError InvalidConfig naming the field (not a wrapped rules error)', async () => {
  await initializeError(
    { genesis: subnetGenesis({ feeConfig: { ...FAST_FEES, targetGas: 0 } }) },
    { code: 'InvalidConfig', message: 'invalid chain config: config.feeConfig.targetGas: targetGas cannot be less than or equal to 0: targetGas = 0', field: 'config.feeConfig.targetGas' },
  );
  await initializeError(
    { genesis: subnetGenesis(), upgrade: JSON.stringify({ precompileUpgrades: [{ txAllowListConfig: { blockTimestamp: 100, disable: true } }] }) },
    {
      code: 'InvalidConfig',
      message: 'invalid chain config: precompileUpgrades[0].txAllowListConfig.disable: disable should be [false] (the precompile is not enabled at this point)',
      field: 'precompileUpgrades[0].txAllowListConfig.disable',
    },
  );
  await initializeError(
    { genesis: subnetGenesis(), upgrade: '{"precompileUpgrades":' },
    { code: 'InvalidConfig', message: "invalid chain config: upgrade.json: not valid JSON (Unexpected end of JSON input)", field: 'upgrade.json' },
  );
});

test.run();
