/**
 * The four extra eth_ methods (src/rpc/methods.ts) through a subnet-EVM VM's own JSON-RPC handler:
 * results from the chain's config, schedule and state, and the -32602 / -32000 refusals.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { checksumAddress, hex0x } from '../src/index.js';
import type { EvmVM } from '@cornice/evm/chain';
import { ADMIN, addressOf, buildAndAccept, FAST_FEES, key, manualClock, send, serveRpc, signedTx, startSubnetVM, subnetGenesis } from './chain-helpers.js';

const admin = hex0x(ADMIN);
const genesis = subnetGenesis({ feeConfig: FAST_FEES, txAllowListConfig: { blockTimestamp: 0, adminAddresses: [admin] } });
const upgrade = JSON.stringify({ precompileUpgrades: [{ feeManagerConfig: { blockTimestamp: 1500, adminAddresses: [admin] } }] });

let vm: EvmVM;
let rpc: Awaited<ReturnType<typeof serveRpc>>;
const clock = manualClock(1000);

test.before(async () => {
  vm = await startSubnetVM({ genesis, clock, upgrade });
  rpc = await serveRpc(vm);
});

test.after(async () => {
  await rpc.close();
  await vm.shutdown();
});

async function refused(method: string, params: unknown[], code: number, message: string): Promise<void> {
  const r = await rpc.call(method, params);
  assert.equal(r.error && { code: r.error.code, message: r.error.message }, { code, message }, `${method} ${JSON.stringify(params)}`);
}

test('eth_getChainConfig: the genesis config with its precompiles and upgrade.json; no arguments', async () => {
  const cfg = await rpc.ok('eth_getChainConfig');
  assert.is(cfg.chainId, 99999);
  assert.equal(cfg.feeConfig, FAST_FEES);
  assert.equal(cfg.txAllowListConfig, { blockTimestamp: 0, adminAddresses: [admin] });
  assert.equal(cfg.upgrades, { precompileUpgrades: [{ feeManagerConfig: { blockTimestamp: 1500, adminAddresses: [admin] } }] });
  await refused('eth_getChainConfig', [1], -32602, 'too many arguments, want at most 0');
});

test('eth_getActivePrecompilesAt / eth_getActiveRulesAt: by timestamp (number or 0x quantity; default the head block), -32602 for a bad one', async () => {
  const txAllowList = { blockTimestamp: 0, adminAddresses: [admin] };
  const feeManager = { blockTimestamp: 1500, adminAddresses: [admin] };
  // The head is the genesis block (time 0).
  assert.equal(await rpc.ok('eth_getActivePrecompilesAt'), { txAllowListConfig: txAllowList });
  assert.equal(await rpc.ok('eth_getActivePrecompilesAt', [1499]), { txAllowListConfig: txAllowList });
  assert.equal(await rpc.ok('eth_getActivePrecompilesAt', [1500]), { txAllowListConfig: txAllowList, feeManagerConfig: feeManager });
  assert.equal(await rpc.ok('eth_getActivePrecompilesAt', ['0x5dc']), { txAllowListConfig: txAllowList, feeManagerConfig: feeManager });
  const rules = await rpc.ok('eth_getActiveRulesAt', [1500]);
  assert.is(rules.ChainID, 99999);
  assert.is(rules.IsDurango, true);
  assert.equal(Object.keys(rules.ActivePrecompiles), ['0x0200000000000000000000000000000000000002', '0x0200000000000000000000000000000000000003']);
  assert.equal(Object.keys((await rpc.ok('eth_getActiveRulesAt')).ActivePrecompiles), ['0x0200000000000000000000000000000000000002']);
  for (const method of ['eth_getActivePrecompilesAt', 'eth_getActiveRulesAt']) {
    await refused(method, [-1], -32602, 'invalid argument 0: cannot unmarshal number -1 into uint64');
    await refused(method, [1.5], -32602, 'invalid argument 0: cannot unmarshal number 1.5 into uint64');
    await refused(method, [true], -32602, 'invalid argument 0: cannot unmarshal boolean into uint64');
    await refused(method, [1, 2], -32602, 'too many arguments, want at most 1');
  }
});

test('eth_feeConfig: latest, a number, a block hash (string or EIP-1898 object); header not found; -32602 for a bad argument', async () => {
  const genesisHash = hex0x((await vm.backend.block(0n))!.header.hash);
  const before = { feeConfig: FAST_FEES, lastChangedAt: 0 };
  assert.equal(await rpc.ok('eth_feeConfig'), before);
  // The fee manager activates in the first block at or after 1500 and stores the genesis config with that block's number.
  clock.at(1500);
  await send(vm, { nonce: 0n, to: ADMIN });
  const b1 = await buildAndAccept(vm);
  const after = { feeConfig: FAST_FEES, lastChangedAt: 1 };
  assert.equal(await rpc.ok('eth_feeConfig'), after);
  assert.equal(await rpc.ok('eth_feeConfig', ['latest']), after);
  assert.equal(await rpc.ok('eth_feeConfig', ['0x0']), before);
  assert.equal(await rpc.ok('eth_feeConfig', [{ blockHash: genesisHash }]), before);
  assert.equal(await rpc.ok('eth_feeConfig', [{ blockHash: hex0x(b1.eth.hash()) }]), after);
  assert.equal(await rpc.ok('eth_feeConfig', [genesisHash]), before);
  assert.equal(await rpc.ok('eth_feeConfig', [hex0x(b1.eth.hash())]), after);
  await refused('eth_feeConfig', ['0x5'], -32000, 'header not found');
  await refused('eth_feeConfig', [{ blockHash: hex0x(new Uint8Array(32).fill(9)) }], -32000, 'header not found');
  await refused('eth_feeConfig', [hex0x(new Uint8Array(32).fill(9))], -32000, 'header not found');
  await refused('eth_feeConfig', [`0x${'zz'.repeat(32)}`], -32602, 'invalid argument 0: invalid hex string');
  await refused('eth_feeConfig', ['soon'], -32602, 'invalid argument 0: hex string without 0x prefix');
  await refused('eth_feeConfig', ['latest', 1], -32602, 'too many arguments, want at most 1');
});

test('tx allow list: a sender without a role is refused at admission with the reference text', async () => {
  const outsiderKey = key(9);
  const r = await rpc.call('eth_sendRawTransaction', [hex0x(signedTx(vm, { key: outsiderKey, nonce: 0n, to: ADMIN }).serialize())]);
  assert.equal(r.error && { code: r.error.code, message: r.error.message }, {
    code: -32000,
    message: `cannot issue transaction from non-allow listed address: ${checksumAddress(addressOf(outsiderKey))}`,
  });
});

test.run();
