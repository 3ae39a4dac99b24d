/**
 * The C-Chain's state survives a restart with LevelDB: balances, code, storage (through eth_call),
 * receipts, transactions, logs and every block hash read the same after SIGTERM and after kill -9,
 * and the chain goes on from where it stopped. One node (and data dir) for the file.
 * On hardhat's node (CORNICE_EVM_TEST_TARGET=hardhat) the restart is a no-op: the run checks the
 * snapshot-and-compare logic only.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Contract, ContractFactory, Interface, JsonRpcProvider, Wallet, parseEther, toQuantity } from 'ethers';
import { EWOQ_EVM_ADDRESS, EWOQ_EVM_KEY, setupReporting, startEvmTarget, type EvmTarget } from '../src/evm.js';
import { compileToken, type CompiledContract } from '../src/solidity.js';

let dir: string;
let target: EvmTarget;
let compiled: CompiledContract;
let tokenAddress: string;
const txHashes: string[] = [];
const recipients = [Wallet.createRandom().address, Wallet.createRandom().address];

test.before(
  setupReporting(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cornice-e2e-evm-restart-'));
    compiled = compileToken();
    target = await startEvmTarget({ dataDir: dir, dbType: 'leveldb' });
  }),
);

test.after(async () => {
  await target?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** Runs `fn` with an ethers wallet on the target's current URL (a restarted node has a new port). */
async function withWallet<T>(fn: (w: Wallet) => Promise<T>): Promise<T> {
  const provider = new JsonRpcProvider(target.rpcUrl, undefined, { pollingInterval: 100, cacheTimeout: -1 });
  try {
    return await fn(new Wallet(EWOQ_EVM_KEY, provider));
  } finally {
    provider.destroy();
  }
}

async function rpc(method: string, params: unknown[]): Promise<any> {
  const r = await target.call(method, params);
  if (r.error) throw new Error(`${method}: ${r.error.code} ${r.error.message}`);
  return r.result;
}

/** Everything a client could read back about what was done so far. */
async function snapshot() {
  const head = Number(await rpc('eth_blockNumber', []));
  const blocks = [];
  for (let n = 0; n <= head; n++) blocks.push(await rpc('eth_getBlockByNumber', [toQuantity(n), false]));
  const iface = new Interface(compiled.abi);
  const accounts = [EWOQ_EVM_ADDRESS, ...recipients];
  return {
    head,
    blocks,
    byHash: await Promise.all(blocks.map((b) => rpc('eth_getBlockByHash', [b.hash, true]))),
    balances: await Promise.all(accounts.map((a) => rpc('eth_getBalance', [a, 'latest']))),
    nonces: await Promise.all(accounts.map((a) => rpc('eth_getTransactionCount', [a, 'latest']))),
    code: await rpc('eth_getCode', [tokenAddress, 'latest']),
    storage: await rpc('eth_getStorageAt', [tokenAddress, '0x0', 'latest']),
    tokenBalances: await Promise.all(accounts.map((a) => rpc('eth_call', [{ to: tokenAddress, data: iface.encodeFunctionData('balanceOf', [a]) }, 'latest']))),
    receipts: await Promise.all(txHashes.map((h) => rpc('eth_getTransactionReceipt', [h]))),
    txs: await Promise.all(txHashes.map((h) => rpc('eth_getTransactionByHash', [h]))),
    logs: await rpc('eth_getLogs', [{ address: tokenAddress, fromBlock: '0x0', toBlock: 'latest' }]),
  };
}

async function transferValueAndTokens(w: Wallet, value: bigint, tokens: bigint): Promise<void> {
  const token = new Contract(tokenAddress, compiled.abi, w);
  const t1 = await w.sendTransaction({ to: recipients[0], value });
  txHashes.push(t1.hash);
  assert.is((await t1.wait())?.status, 1);
  const t2 = await token.getFunction('transfer')(recipients[1], tokens);
  txHashes.push(t2.hash);
  assert.is((await t2.wait())?.status, 1);
}

test('value transfers, a deployed ERC-20 and token transfers, then SIGTERM and a restart: everything reads the same', async () => {
  await withWallet(async (w) => {
    const deployed = await new ContractFactory(compiled.abi, compiled.bytecode, w).deploy(10n ** 24n);
    await deployed.waitForDeployment();
    txHashes.push(deployed.deploymentTransaction()!.hash);
    tokenAddress = await deployed.getAddress();
    await transferValueAndTokens(w, parseEther('3'), 1_000n);
  });
  const before = await snapshot();
  assert.ok(before.head >= 3, 'at least the three blocks of this test');
  assert.ok(before.receipts.every((r) => r.status === '0x1'));
  assert.is(before.logs.length, 2, 'the mint and one transfer');
  const code = await target.restart('SIGTERM');
  if (target.kind === 'cornice') assert.is(code, 0, 'a clean exit on SIGTERM');
  assert.equal(await snapshot(), before);
});

test('the restarted chain goes on: the next block builds on the old head, nonces continue', async () => {
  const before = await snapshot();
  await withWallet((w) => transferValueAndTokens(w, parseEther('1'), 5n));
  const after = await snapshot();
  assert.ok(after.head > before.head);
  assert.is(after.blocks[before.head + 1].parentHash, before.blocks[before.head].hash);
  assert.equal(after.blocks.slice(0, before.head + 1), before.blocks, 'history unchanged');
  assert.is(BigInt(after.balances[1]), parseEther('4'));
  assert.is(BigInt(after.tokenBalances[2]), 1_005n);
});

test('kill -9 once the receipts are out: the accepted state survives', async () => {
  await withWallet((w) => transferValueAndTokens(w, parseEther('2'), 7n));
  const before = await snapshot();
  await target.restart('SIGKILL');
  assert.equal(await snapshot(), before);
  await withWallet((w) => transferValueAndTokens(w, 1n, 1n));
  const after = await snapshot();
  assert.is(after.blocks[before.head + 1].parentHash, before.blocks[before.head].hash);
  assert.is(BigInt(after.balances[1]), parseEther('6') + 1n);
  assert.is(BigInt(after.tokenBalances[2]), 1_013n);
});

test.run();
