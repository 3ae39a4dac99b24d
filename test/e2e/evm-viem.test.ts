/**
 * The C-Chain as a viem user sees it (http and webSocket transports): the ethers journey, shorter.
 * One node for the file (cornice by default; hardhat's node with CORNICE_EVM_TEST_TARGET=hardhat).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  BaseError,
  ContractFunctionRevertedError,
  InsufficientFundsError,
  createPublicClient,
  createWalletClient,
  defineChain,
  http,
  parseEther,
  webSocket,
  type Abi,
  type Address,
  type Chain,
  type Hex,
  type Log,
  type PublicClient,
  type WalletClient,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { WebSocket as WsWebSocket } from 'ws';
import { EWOQ_EVM_ADDRESS, EWOQ_EVM_KEY, setupReporting, startEvmTarget, type EvmTarget } from '../src/evm.js';
import { compileToken } from '../src/solidity.js';

let dir: string;
let target: EvmTarget;
let chain: Chain;
let pub: PublicClient;
let wallet: WalletClient;
let abi: Abi;
let bytecode: Hex;
let tokenAddress: Address;
let tokenBlock: bigint;
const account = privateKeyToAccount(EWOQ_EVM_KEY);
const other = privateKeyToAccount(generatePrivateKey()).address;
const SUPPLY = 1_000_000n * 10n ** 18n;
const POLL = { pollingInterval: 100, timeout: 30_000 };

// viem's webSocket transport (through isows) takes the global WebSocket, which Node 20 lacks; its
// fallback imports `ws` from where npm hoisted it, and in this monorepo that is another package's
// ws 7, which has no ESM export. A Node 20 user sets the global the same way.
(globalThis as { WebSocket?: unknown }).WebSocket ??= WsWebSocket;

test.before(
  setupReporting(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cornice-e2e-evm-viem-'));
    const c = compileToken();
    abi = c.abi as Abi;
    bytecode = c.bytecode as Hex;
    target = await startEvmTarget({ dataDir: dir, dbType: 'memory' });
    // The chain's ID comes from the node, never from a constant.
    const probe = createPublicClient({ transport: http(target.rpcUrl) });
    const id = await probe.getChainId();
    chain = defineChain({ id, name: `e2e ${target.kind}`, nativeCurrency: { name: 'AVAX', symbol: 'AVAX', decimals: 18 }, rpcUrls: { default: { http: [target.rpcUrl], webSocket: [target.wsUrl] } } });
    pub = createPublicClient({ chain, transport: http(target.rpcUrl), pollingInterval: 100, cacheTime: 0 });
    wallet = createWalletClient({ account, chain, transport: http(target.rpcUrl) });
  }),
);

test.after(async () => {
  await target?.stop();
  await rm(dir, { recursive: true, force: true });
});

test('chain ID and balances', async () => {
  assert.is(await pub.getChainId(), chain.id);
  if (target.kind === 'cornice') assert.is(chain.id, 43110);
  assert.is(account.address, EWOQ_EVM_ADDRESS);
  assert.ok((await pub.getBalance({ address: account.address })) > parseEther('1000'));
  assert.is(await pub.getBalance({ address: other }), 0n);
});

test('sendTransaction and waitForTransactionReceipt (http polling)', async () => {
  const hash = await wallet.sendTransaction({ account, chain, to: other, value: parseEther('2') });
  const receipt = await pub.waitForTransactionReceipt({ hash, ...POLL });
  assert.is(receipt.status, 'success');
  assert.is(receipt.gasUsed, 21_000n);
  assert.is(await pub.getBalance({ address: other }), parseEther('2'));
  const tx = await pub.getTransaction({ hash });
  assert.is(tx.from.toLowerCase(), account.address.toLowerCase());
  assert.is(tx.blockHash, receipt.blockHash);
  // State at a block given by hash (EIP-1898), before and at the transfer's block.
  const parent = (await pub.getBlock({ blockHash: receipt.blockHash })).parentHash;
  assert.is(await pub.getBalance({ address: other, blockHash: receipt.blockHash }), parseEther('2'));
  assert.is(await pub.getBalance({ address: other, blockHash: parent, requireCanonical: true }), 0n);
  assert.is(await pub.getTransactionCount({ address: account.address, blockHash: parent }), tx.nonce);
});

test('deployContract from solc-js output, readContract', async () => {
  const hash = await wallet.deployContract({ account, chain, abi, bytecode, args: [SUPPLY] });
  const receipt = await pub.waitForTransactionReceipt({ hash, ...POLL });
  assert.is(receipt.status, 'success');
  assert.ok(receipt.contractAddress);
  tokenAddress = receipt.contractAddress!;
  tokenBlock = receipt.blockNumber;
  assert.ok(((await pub.getCode({ address: tokenAddress })) ?? '0x').length > 2);
  assert.is(await pub.readContract({ address: tokenAddress, abi, functionName: 'symbol' }), 'CRN');
  assert.is(await pub.readContract({ address: tokenAddress, abi, functionName: 'balanceOf', args: [account.address] }), SUPPLY);
});

test('writeContract, then getLogs / getContractEvents with an event filter', async () => {
  const hash = await wallet.writeContract({ account, chain, address: tokenAddress, abi, functionName: 'transfer', args: [other, 50n] });
  const receipt = await pub.waitForTransactionReceipt({ hash, ...POLL });
  assert.is(receipt.status, 'success');
  assert.is(await pub.readContract({ address: tokenAddress, abi, functionName: 'balanceOf', args: [other] }), 50n);
  const events = await pub.getContractEvents({ address: tokenAddress, abi, eventName: 'Transfer', args: { to: other }, fromBlock: tokenBlock, toBlock: 'latest' });
  assert.is(events.length, 1);
  assert.is(events[0]!.transactionHash, hash);
  assert.equal((events[0] as unknown as { args: unknown }).args, { from: account.address, to: other, value: 50n });
  const transferEvent = abi.find((x) => x.type === 'event' && x.name === 'Transfer') as never;
  const logs = await pub.getLogs({ address: tokenAddress, event: transferEvent, fromBlock: tokenBlock, toBlock: 'latest' });
  assert.is(logs.length, 2, 'the mint and the transfer');
});

test('webSocket transport: watchContractEvent (eth_subscribe logs) and waitForTransactionReceipt over newHeads', async () => {
  const ws = createPublicClient({ chain, transport: webSocket(target.wsUrl), cacheTime: 0 });
  const seen: Log[] = [];
  let wake: () => void = () => {};
  let failure: Error | undefined;
  const unwatch = ws.watchContractEvent({
    address: tokenAddress,
    abi,
    eventName: 'Transfer',
    args: { to: other },
    onLogs: (logs) => {
      seen.push(...(logs as Log[]));
      wake();
    },
    onError: (e) => (failure = e),
  });
  try {
    // Requests on one socket are handled in order: once this answers, the subscription is in place.
    await ws.request({ method: 'eth_chainId' });
    const got = new Promise<void>((resolve) => (wake = () => seen.length >= 1 && resolve()));
    const hash = await wallet.writeContract({ account, chain, address: tokenAddress, abi, functionName: 'transfer', args: [other, 9n] });
    const receipt = await ws.waitForTransactionReceipt({ hash, timeout: 30_000 });
    assert.is(receipt.status, 'success');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([got, new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('no Transfer log over the WebSocket within 15 s')), 15_000)))]).finally(() => clearTimeout(timer));
    assert.is(failure, undefined);
    assert.is(seen.length, 1);
    assert.is(seen[0]!.transactionHash, hash);
    assert.equal((seen[0] as unknown as { args: unknown }).args, { from: account.address, to: other, value: 9n });
  } finally {
    unwatch();
    await (ws.transport as unknown as { getRpcClient(): Promise<{ close(): void }> }).getRpcClient().then((c) => c.close());
  }
});

test('estimateGas and estimateContractGas', async () => {
  const plain = await pub.estimateGas({ account: account.address, to: other, value: 1n });
  if (target.kind === 'cornice') assert.is(plain, 21_000n);
  else assert.ok(plain >= 21_000n && plain <= 21_100n, `plain transfer estimate ${plain}`);
  const est = await pub.estimateContractGas({ account: account.address, address: tokenAddress, abi, functionName: 'transfer', args: [other, 1n] });
  assert.ok(est > 21_000n && est < 100_000n, `token transfer estimate ${est}`);
});

test("a revert's reason: readContract and simulateContract", async () => {
  const reasonOf = async (p: Promise<unknown>) => {
    try {
      await p;
    } catch (e) {
      assert.instance(e, BaseError);
      const reverted = (e as BaseError).walk((x) => x instanceof ContractFunctionRevertedError) as ContractFunctionRevertedError | null;
      assert.ok(reverted, String(e));
      return reverted!.reason;
    }
    throw new Error('expected a revert');
  };
  assert.is(await reasonOf(pub.simulateContract({ account, address: tokenAddress, abi, functionName: 'transferFrom', args: [other, account.address, 1n] })), 'CorniceToken: allowance too low');
  assert.is(await reasonOf(pub.simulateContract({ account, address: tokenAddress, abi, functionName: 'transfer', args: ['0x0000000000000000000000000000000000000000', 1n] })), 'CorniceToken: transfer to the zero address');
});

test('insufficient funds: InsufficientFundsError', async () => {
  const poor = privateKeyToAccount(generatePrivateKey());
  try {
    await wallet.sendTransaction({ account: poor, chain, to: other, value: 1n, gas: 21_000n });
    assert.unreachable('sending from an empty account should fail');
  } catch (e) {
    assert.instance(e, BaseError);
    const insufficient = (e as BaseError).walk((x) => x instanceof InsufficientFundsError);
    if (target.kind === 'cornice') {
      assert.ok(insufficient, String(e));
      assert.match((e as BaseError).details, /insufficient funds for gas \* price \+ value/);
    } else assert.ok(/funds/i.test((e as BaseError).details), String(e));
  }
});

test.run();
