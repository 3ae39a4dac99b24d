/**
 * The C-Chain as an ethers v6 user sees it: one node for the file (cornice by default; hardhat's
 * node with CORNICE_EVM_TEST_TARGET=hardhat), the ERC-20 compiled from Solidity source once.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Contract, ContractFactory, type ContractTransactionReceipt, JsonRpcProvider, Wallet, WebSocketProvider, isError, parseEther, sha256, zeroPadValue, type Log } from 'ethers';
import { EWOQ_EVM_ADDRESS, EWOQ_EVM_KEY, setupReporting, startEvmTarget, type EvmTarget } from '../src/evm.js';
import { compileToken, type CompiledContract } from '../src/solidity.js';

let dir: string;
let target: EvmTarget;
let provider: JsonRpcProvider;
let wallet: Wallet;
let compiled: CompiledContract;
let token: Contract;
let tokenBlock: number;
const other = Wallet.createRandom().address;
const SUPPLY = 1_000_000n * 10n ** 18n;

/** Bounded wait for a promise (a subscription that never fires must fail the test, not hang it). */
function within<T>(ms: number, what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

test.before(
  setupReporting(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cornice-e2e-evm-ethers-'));
    compiled = compileToken();
    target = await startEvmTarget({ dataDir: dir, dbType: 'memory' });
    // Clients poll for receipts every 4 s by default; a user of a fast chain lowers it the same way.
    // No 250 ms request cache: back-to-back sends must each read the pending nonce afresh.
    provider = new JsonRpcProvider(target.rpcUrl, undefined, { pollingInterval: 100, cacheTimeout: -1 });
    wallet = new Wallet(EWOQ_EVM_KEY, provider);
  }),
);

test.after(async () => {
  provider?.destroy();
  await target?.stop();
  await rm(dir, { recursive: true, force: true });
});

test('chain ID from the provider; the funded ewoq address has a balance, a fresh one none', async () => {
  const { chainId } = await provider.getNetwork();
  assert.is(chainId, BigInt((await target.call('eth_chainId')).result));
  if (target.kind === 'cornice') assert.is(chainId, 43110n, 'the C-Chain chain ID (43110)');
  assert.is(wallet.address, EWOQ_EVM_ADDRESS);
  assert.ok((await provider.getBalance(EWOQ_EVM_ADDRESS)) > parseEther('1000'));
  assert.is(await provider.getBalance(other), 0n);
  assert.ok((await provider.getBlockNumber()) >= 0);
});

test('send value, wait for the receipt: the recipient has it, the sender paid value + gas', async () => {
  const before = await provider.getBalance(wallet.address);
  const tx = await wallet.sendTransaction({ to: other, value: parseEther('1.5') });
  const receipt = await within(30_000, 'receipt', tx.wait());
  assert.ok(receipt);
  assert.is(receipt.status, 1);
  assert.is(receipt.hash, tx.hash);
  assert.is(receipt.gasUsed, 21_000n);
  assert.is(await provider.getBalance(other), parseEther('1.5'));
  const after = await provider.getBalance(wallet.address);
  assert.is(before - after, parseEther('1.5') + receipt.gasUsed * receipt.gasPrice);
  const block = await provider.getBlock(receipt.blockNumber);
  assert.ok(block?.transactions.includes(tx.hash));
  assert.is(block?.hash, receipt.blockHash);
  const fetched = await provider.getTransaction(tx.hash);
  assert.is(fetched?.from, wallet.address);
  assert.is(fetched?.to, other);
  assert.is(fetched?.blockNumber, receipt.blockNumber);
  assert.is(await provider.getTransactionCount(wallet.address, 'latest'), tx.nonce + 1);
});

test('a block hash as blockTag: state and calls at that block; mined transactions carry blockTimestamp; geth texts for a stale nonce and garbage RLP', async () => {
  const at = await provider.getBlock('latest');
  assert.ok(at?.hash);
  const was = await provider.getBalance(other, at.hash);
  const tx = await wallet.sendTransaction({ to: other, value: parseEther('0.25') });
  const receipt = await within(30_000, 'receipt', tx.wait());
  assert.ok(receipt);
  // ethers sends a 32-byte blockTag as the plain hash.
  assert.is(await provider.getBalance(other, at.hash), was, 'the balance before the transfer');
  assert.is(await provider.getBalance(other, receipt.blockHash), was + parseEther('0.25'));
  assert.is(await provider.getTransactionCount(wallet.address, receipt.blockHash), tx.nonce + 1);
  assert.is(await provider.getTransactionCount(wallet.address, at.hash), tx.nonce);
  assert.is(await provider.getCode(other, receipt.blockHash), '0x');
  assert.is(await provider.call({ to: other, blockTag: receipt.blockHash }), '0x');
  assert.is(await provider.getStorage(other, 0, at.hash), '0x' + '00'.repeat(32));
  // EIP-1898 objects.
  assert.is(BigInt((await target.call('eth_getBalance', [other, { blockHash: at.hash, requireCanonical: true }])).result), was);
  assert.is(BigInt((await target.call('eth_getBalance', [other, { blockNumber: '0x' + receipt.blockNumber.toString(16) }])).result), was + parseEther('0.25'));
  const unknown = '0x' + '99'.repeat(32);
  const missing = await target.call('eth_getBalance', [other, unknown]);
  assert.ok(missing.error, 'an unknown block hash is an error');
  if (target.kind === 'cornice') assert.equal(missing.error, { code: -32000, message: 'header for hash not found' });

  const block = await provider.getBlock(receipt.blockHash);
  const mined = (await target.call('eth_getTransactionByHash', [tx.hash])).result;
  assert.is(mined.blockTimestamp, '0x' + block!.timestamp.toString(16));
  const full = (await target.call('eth_getBlockByHash', [receipt.blockHash, true])).result;
  assert.is(full.transactions[0].blockTimestamp, mined.blockTimestamp);

  const stale = await wallet.signTransaction(await wallet.populateTransaction({ to: other, value: 1n, nonce: tx.nonce }));
  const refused = await target.call('eth_sendRawTransaction', [stale]);
  assert.ok(refused.error, 'a used nonce is refused');
  if (target.kind === 'cornice') assert.is(refused.error.message, `nonce too low: next nonce ${tx.nonce + 1}, tx nonce ${tx.nonce}`);
  try {
    await wallet.sendTransaction({ to: other, value: 1n, nonce: tx.nonce });
    assert.unreachable('a used nonce should be refused');
  } catch (e) {
    assert.ok(isError(e, 'NONCE_EXPIRED'), String(e));
  }
  if (target.kind === 'cornice') {
    const garbage = await target.call('eth_sendRawTransaction', ['0xc5830102']);
    assert.equal(garbage.error, { code: -32000, message: 'rlp: value size exceeds available input length' });
  }
});

test('deploy the ERC-20 compiled from Solidity source with solc-js, then call it', async () => {
  const factory = new ContractFactory(compiled.abi, compiled.bytecode, wallet);
  const deployed = await factory.deploy(SUPPLY);
  await within(30_000, 'deployment', deployed.waitForDeployment());
  const receipt = await deployed.deploymentTransaction()!.wait();
  assert.is(receipt!.status, 1);
  tokenBlock = receipt!.blockNumber;
  const address = await deployed.getAddress();
  assert.is(receipt!.contractAddress, address);
  assert.ok((await provider.getCode(address)).length > 2);
  token = new Contract(address, compiled.abi, wallet);
  assert.is(await token.getFunction('name')(), 'Cornice Token');
  assert.is(await token.getFunction('symbol')(), 'CRN');
  assert.is(await token.getFunction('decimals')(), 18n);
  assert.is(await token.getFunction('totalSupply')(), SUPPLY);
  assert.is(await token.getFunction('balanceOf')(wallet.address), SUPPLY);
  // The constructor's mint event is in the deployment receipt.
  const mint = token.interface.parseLog(receipt!.logs[0]!);
  assert.is(mint?.name, 'Transfer');
  assert.is(mint?.args.to, wallet.address);
});

test('transact; read the Transfer logs with getLogs and with contract.queryFilter', async () => {
  const tx = await token.getFunction('transfer')(other, 100n);
  const receipt: ContractTransactionReceipt = await within(30_000, 'receipt', tx.wait());
  assert.is(receipt.status, 1);
  assert.is(await token.getFunction('balanceOf')(other), 100n);
  assert.is(receipt.logs.length, 1);
  const address = await token.getAddress();
  const transferTopic = token.interface.getEvent('Transfer')!.topicHash;
  const logs = await provider.getLogs({ address, topics: [transferTopic, null, zeroPadValue(other, 32)], fromBlock: tokenBlock, toBlock: 'latest' });
  assert.is(logs.length, 1);
  assert.is(logs[0]!.transactionHash, tx.hash);
  assert.is(logs[0]!.blockHash, receipt.blockHash);
  assert.is(logs[0]!.index, receipt.logs[0]!.index);
  const all = await provider.getLogs({ address, fromBlock: tokenBlock, toBlock: 'latest' });
  assert.is(all.length, 2, 'the mint and the transfer');
  const toOther = await token.queryFilter(token.filters.Transfer!(null, other), tokenBlock);
  assert.is(toOther.length, 1);
  const ev = toOther[0] as unknown as { args: { from: string; to: string; value: bigint } };
  assert.equal([ev.args.from, ev.args.to, ev.args.value], [wallet.address, other, 100n]);
  const none = await provider.getLogs({ address: Wallet.createRandom().address, fromBlock: tokenBlock, toBlock: 'latest' });
  assert.equal(none, []);
});

test('a WebSocket subscription (WebSocketProvider + contract.on) delivers Transfer events; new blocks via provider.on', async () => {
  const ws = new WebSocketProvider(target.wsUrl);
  try {
    assert.is((await ws.getNetwork()).chainId, (await provider.getNetwork()).chainId);
    const watched = new Contract(await token.getAddress(), compiled.abi, ws);
    const seen: Array<{ to: string; value: bigint; log: Log }> = [];
    let wake: () => void = () => {};
    // With a topic filter, ethers hands the listener the event payload (its decoded args and log) last.
    await watched.on(watched.filters.Transfer!(wallet.address), (...args: unknown[]) => {
      const ev = args[args.length - 1] as { args: [string, string, bigint]; log: Log };
      seen.push({ to: ev.args[1], value: ev.args[2], log: ev.log });
      wake();
    });
    const blocks: number[] = [];
    await ws.on('block', (n: number) => blocks.push(n));
    // Requests on one socket are handled in order: once this answers, the subscriptions are in place.
    await ws.send('eth_blockNumber', []);
    const got = new Promise<void>((resolve) => (wake = () => seen.length >= 2 && resolve()));
    const r1 = await (await token.getFunction('transfer')(other, 7n)).wait();
    const r2 = await (await token.getFunction('transfer')(other, 8n)).wait();
    await within(15_000, 'Transfer events over the WebSocket', got);
    assert.equal(
      seen.map((s) => [s.to, s.value, s.log.transactionHash]),
      [
        [other, 7n, r1.hash],
        [other, 8n, r2.hash],
      ],
    );
    await until(() => blocks.includes(r2.blockNumber), 15_000, 'newHeads for the transfer block');
    await watched.removeAllListeners();
  } finally {
    await ws.destroy();
  }
});

async function until(cond: () => boolean, ms: number, what: string): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('estimateGas: 21,000 for a plain transfer (cornice); a token transfer costs more', async () => {
  const plain = await provider.estimateGas({ from: wallet.address, to: other, value: 1n });
  // geth and coreth answer exactly 21,000 for a transfer to an account without code; hardhat's
  // binary search lands on 21,001.
  if (target.kind === 'cornice') assert.is(plain, 21_000n);
  else assert.ok(plain >= 21_000n && plain <= 21_100n, `plain transfer estimate ${plain}`);
  const est = await token.getFunction('transfer').estimateGas(other, 1n);
  assert.ok(est > 21_000n && est < 100_000n, `token transfer estimate ${est}`);
  const tx = await token.getFunction('transfer')(other, 1n, { gasLimit: est });
  assert.is((await tx.wait()).status, 1, 'the estimate is enough');
});

/** The receipt of a mined tx that failed: ethers' wait() throws CALL_EXCEPTION with it. */
async function failedReceipt(tx: { wait(): Promise<unknown> }): Promise<{ status: number | null; hash: string; gasUsed: bigint } | undefined> {
  try {
    await tx.wait();
  } catch (e) {
    assert.ok(isError(e, 'CALL_EXCEPTION'), String(e));
    return e.receipt ?? undefined;
  }
  assert.unreachable('the receipt should say failed');
}

test('a revert: its reason from a call, from estimateGas, and a mined failing transaction', async () => {
  try {
    await token.getFunction('transferFrom').staticCall(other, wallet.address, 1n);
    assert.unreachable('the call should revert');
  } catch (e) {
    assert.ok(isError(e, 'CALL_EXCEPTION'), String(e));
    assert.is(e.reason, 'CorniceToken: allowance too low');
  }
  try {
    await token.getFunction('transfer')('0x0000000000000000000000000000000000000000', 1n);
    assert.unreachable('gas estimation should revert');
  } catch (e) {
    assert.ok(isError(e, 'CALL_EXCEPTION'), String(e));
    assert.is(e.reason, 'CorniceToken: transfer to the zero address');
  }
  // With a gas limit given, nothing is estimated: the transaction is mined and fails.
  const tx = await token.getFunction('transfer')(other, SUPPLY * 2n, { gasLimit: 100_000n });
  const receipt = await failedReceipt(tx);
  assert.is(receipt?.status, 0);
  assert.is(receipt?.hash, tx.hash);
  assert.is(await token.getFunction('balanceOf')(other), 116n, 'the reverted transfer moved nothing');
});

test('KZG point evaluation (0x0a): a proof that holds gives the blob size and modulus; a tx with one that does not is mined with status 0, and the next tx follows', async () => {
  const pe = '0x000000000000000000000000000000000000000a';
  // The zero polynomial: commitment and proof the point at infinity, y = 0 at any z.
  const inf = `c0${'00'.repeat(47)}`;
  const versionedHash = `01${sha256(`0x${inf}`).slice(4)}`;
  const z = `${'00'.repeat(31)}09`;
  const good = `0x${versionedHash}${z}${'00'.repeat(32)}${inf}${inf}`;
  const out = await provider.call({ to: pe, data: good });
  assert.is(out, `0x${(4096).toString(16).padStart(64, '0')}73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001`);
  const bad = `0x${versionedHash}${z}${'00'.repeat(31)}01${inf}${inf}`; // y = 1: the proof does not hold
  const failing = await wallet.sendTransaction({ to: pe, data: bad, gasLimit: 100_000n });
  const next = await wallet.sendTransaction({ to: other, value: 1n, gasLimit: 21_000n });
  const receipt = await failedReceipt(failing);
  assert.is(receipt?.status, 0);
  assert.is(receipt?.gasUsed, 100_000n, 'a failed precompile takes all its gas');
  assert.is((await next.wait())?.status, 1);
});

test('insufficient funds: -32000 "insufficient funds for gas * price + value", ethers code INSUFFICIENT_FUNDS', async () => {
  const poor = Wallet.createRandom().connect(provider);
  const fee = await provider.getFeeData();
  const signed = await poor.signTransaction({
    to: other,
    value: 1n,
    gasLimit: 21_000n,
    nonce: 0,
    chainId: (await provider.getNetwork()).chainId,
    maxFeePerGas: fee.maxFeePerGas,
    maxPriorityFeePerGas: fee.maxPriorityFeePerGas,
  });
  const raw = await target.call('eth_sendRawTransaction', [signed]);
  assert.ok(raw.error, 'an error, not a hash');
  if (target.kind === 'cornice') {
    assert.is(raw.error.code, -32000);
    assert.match(raw.error.message, /^insufficient funds for gas \* price \+ value/);
  }
  try {
    await poor.sendTransaction({ to: other, value: 1n, gasLimit: 21_000n });
    assert.unreachable('sending from an empty account should fail');
  } catch (e) {
    if (target.kind === 'cornice') assert.ok(isError(e, 'INSUFFICIENT_FUNDS'), String(e));
    else assert.ok(isError(e, 'INSUFFICIENT_FUNDS') || isError(e, 'UNKNOWN_ERROR'), String(e));
  }
  assert.is(await provider.getTransactionCount(poor.address, 'pending'), 0);
});

test.run();
