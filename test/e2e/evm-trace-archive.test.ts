/**
 * Tracing a tx in an old block (issue 35, "a block pruned from memory"): the node keeps every block's
 * state on disk (LevelDB, archive), while traces reuse kept VMs that follow recent blocks. A tx mined
 * early is traced right after it was mined, then again after 70 newer blocks (more than the accepted
 * steps a kept VM follows, MAX_STEPS in plugins/evm/src/chain/reader.ts) and again after a restart,
 * when no memory holds anything of it: callTracer, prestateTracer, the struct logger and
 * debug_traceBlockByNumber / trace_block answer the same each time. The later blocks rewrite the
 * slot the old tx wrote, so a trace on the wrong state would show (its SSTORE's gas, its prestate).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Interface, JsonRpcProvider, Wallet, toQuantity } from 'ethers';
import type { RpcReply } from '@cornice/core/testing';
import { type EvmTarget, EWOQ_EVM_KEY, ok, setupReporting, startEvmTarget } from '../src/evm.js';
import { REPO } from '../src/fixtures.js';
import { until } from '../src/network.js';
import { compileSolidity, type CompiledContract } from '../src/solidity.js';

/** Newer blocks mined after the traced ones. */
const NEWER_BLOCKS = 70;

let dir: string;
let target: EvmTarget;
let contracts: Record<string, CompiledContract>;
let wallet: Wallet;
let chainId: bigint;
let nonce = 0;
let token: string;
let router: string;
let spinner: string;
/** The traced txs, with what each trace answered right after the tx was mined. */
const traced: Array<{ hash: string; block: string; traces: Traces }> = [];

type Traces = Record<string, unknown>;

const call = (method: string, params: unknown[] = []): Promise<RpcReply> => target.call(method, params);
/** Signs a tx from ewoq (fixed gas and fees), sends it raw and waits for its receipt. */
async function sendTx(tx: { to?: string; data: string; gasLimit?: bigint }): Promise<{ hash: string; status: number; blockNumber: number; contractAddress: string | null }> {
  const raw = await wallet.signTransaction({ ...tx, gasLimit: tx.gasLimit ?? 3_000_000n, nonce: nonce++, chainId, maxFeePerGas: 100_000_000_000n, maxPriorityFeePerGas: 0n, type: 2 });
  const hash = await ok(target, 'eth_sendRawTransaction', [raw]);
  const receipt = await until(`the receipt of ${hash}`, async () => (await call('eth_getTransactionReceipt', [hash])).result ?? undefined, 30_000);
  return { hash, status: Number(receipt.status), blockNumber: Number(receipt.blockNumber), contractAddress: receipt.contractAddress };
}

async function deploy(name: string, args: unknown[] = []): Promise<string> {
  const c = contracts[name]!;
  const r = await sendTx({ data: c.bytecode + new Interface(c.abi).encodeDeploy(args).slice(2) });
  assert.is(r.status, 1, name);
  return r.contractAddress!;
}

const spin = (n: bigint) => sendTx({ to: spinner, data: new Interface(contracts.Spinner!.abi).encodeFunctionData('spin', [n]), gasLimit: 1_000_000n });

/** Every trace of the tx and of its block that the test compares. */
async function traces(hash: string, block: string): Promise<Traces> {
  return {
    callTracer: await ok(target, 'debug_traceTransaction', [hash, { tracer: 'callTracer', tracerConfig: { withLog: true } }]),
    prestateTracer: await ok(target, 'debug_traceTransaction', [hash, { tracer: 'prestateTracer' }]),
    prestateDiff: await ok(target, 'debug_traceTransaction', [hash, { tracer: 'prestateTracer', tracerConfig: { diffMode: true } }]),
    structLogger: await ok(target, 'debug_traceTransaction', [hash, { enableMemory: true }]),
    blockCallTracer: await ok(target, 'debug_traceBlockByNumber', [block, { tracer: 'callTracer' }]),
    blockStructLogger: await ok(target, 'debug_traceBlockByNumber', [block, {}]),
    traceTransaction: await ok(target, 'trace_transaction', [hash]),
    traceBlock: await ok(target, 'trace_block', [block]),
  };
}

function assertSameTraces(when: string): Promise<void> {
  return traced.reduce(async (prev, t) => {
    await prev;
    const now = await traces(t.hash, t.block);
    for (const k of Object.keys(t.traces)) assert.equal(now[k], t.traces[k], `${when}: ${k} of ${t.hash} (block ${t.block})`);
  }, Promise.resolve());
}

test.before(
  setupReporting(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cornice-e2e-evm-trace-archive-'));
    contracts = compileSolidity('TraceExample.sol', await readFile(join(REPO, 'test/fixtures/evm/TraceExample.sol'), 'utf8'));
    target = await startEvmTarget({ dataDir: dir, dbType: 'leveldb' });
    wallet = new Wallet(EWOQ_EVM_KEY);
    chainId = BigInt(await ok(target, 'eth_chainId'));
    const provider = new JsonRpcProvider(target.rpcUrl, undefined, { staticNetwork: true, cacheTimeout: -1 });
    try {
      nonce = await provider.getTransactionCount(wallet.address, 'pending');
    } finally {
      provider.destroy();
    }
  }),
);

test.after(async () => {
  await target?.stop();
  await rm(dir, { recursive: true, force: true });
});

test('txs in early blocks, traced right after they were mined', async () => {
  token = await deploy('ExampleToken');
  const impl = await deploy('RouterImpl');
  router = await deploy('Router', [impl]);
  spinner = await deploy('Spinner');
  // A call tree that reverts two frames down (no allowance), and a first write of Spinner's slot.
  const swap = await sendTx({ to: router, data: new Interface(contracts.Router!.abi).encodeFunctionData('swap', [token, wallet.address, 1n]), gasLimit: 300_000n });
  assert.is(swap.status, 0);
  const first = await spin(10n);
  assert.is(first.status, 1);
  for (const t of [swap, first]) {
    const block = toQuantity(t.blockNumber);
    traced.push({ hash: t.hash, block, traces: await traces(t.hash, block) });
  }
  const [swapTraces, spinTraces] = traced.map((t) => t.traces) as [any, any];
  assert.is(swapTraces.callTracer.calls[0].calls[0].revertReason, 'insufficient allowance');
  assert.is(swapTraces.blockCallTracer[0].txHash, swap.hash);
  assert.is(BigInt(spinTraces.callTracer.gasUsed), BigInt((await ok(target, 'eth_getTransactionReceipt', [first.hash])).gasUsed));
  assert.ok(spinTraces.structLogger.structLogs.some((l: { op: string }) => l.op === 'SSTORE'));
  // Before the tx, Spinner's slot 0 was empty; after it, the sum 0 + 1 + 4 + … + 81 = 285.
  assert.is(spinTraces.prestateDiff.post[spinner.toLowerCase()].storage[`0x${'0'.repeat(64)}`], `0x${(285).toString(16).padStart(64, '0')}`);
});

test(`${NEWER_BLOCKS} newer blocks rewrite the same slot; the old txs trace the same, and so do their blocks`, async () => {
  const oldHead = Number(await ok(target, 'eth_blockNumber'));
  for (let i = 0; i < NEWER_BLOCKS; i++) assert.is((await spin(BigInt(11 + i))).status, 1);
  const head = Number(await ok(target, 'eth_blockNumber'));
  assert.ok(head - oldHead >= NEWER_BLOCKS, `${head - oldHead} newer blocks`);
  await assertSameTraces(`after ${NEWER_BLOCKS} blocks`);
  // The same call on the latest state costs less (its SSTORE rewrites a set slot): the old trace's gas
  // came from the old state.
  const spinTraces = traced[1]!.traces as any;
  const data = new Interface(contracts.Spinner!.abi).encodeFunctionData('spin', [10n]);
  const now = await ok(target, 'debug_traceCall', [{ from: wallet.address, to: spinner, data, gas: '0xf4240' }, 'latest', { tracer: 'callTracer' }]);
  assert.ok(BigInt(now.gasUsed) < BigInt(spinTraces.callTracer.gasUsed), `${now.gasUsed} < ${spinTraces.callTracer.gasUsed}`);
  // And its prestate shows the slot empty, as it was then.
  const zero = `0x${'0'.repeat(64)}`;
  assert.equal(spinTraces.prestateTracer[spinner.toLowerCase()].storage, { [zero]: zero });
});

test('after a restart (no memory holds the old blocks) the old txs and blocks trace the same', async () => {
  const head = await ok(target, 'eth_blockNumber');
  await target.restart();
  assert.is(await ok(target, 'eth_blockNumber'), head);
  // The old blocks first: the node's first traces after its start.
  await assertSameTraces('after a restart');
  // And again, now that the kept trace VMs were moved to those old roots.
  await assertSameTraces('after a restart, again');
});

test.run();
