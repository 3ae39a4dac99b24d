/**
 * EVM tracing through a real node started as `npm start` (issue 35): viem and ethers call debug_trace*
 * unchanged, the README's worked example (a revert deep in a call tree, found with callTracer) runs as
 * written, trace_transaction / trace_block, and the faults: unknown tx, pending tx, genesis, unknown
 * tracer, malformed tracerConfig, a JavaScript tracer, a timeout, many traces at once with
 * /ext/health answering meanwhile. The switch: a node started without --evm-debug-api answers -32601
 * naming it.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Interface, JsonRpcProvider, Wallet } from 'ethers';
import { createClient, createWalletClient, defineChain, encodeFunctionData, http, type Abi, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { postRpc, type RpcReply } from '@cornice/core/testing';
import { type EvmTarget, EWOQ_EVM_KEY, ok, setupReporting, startEvmTarget } from '../src/evm.js';
import { REPO, npmStartFlags } from '../src/fixtures.js';
import { until } from '../src/network.js';
import { startNodeProcess } from '../src/process.js';
import { compileSolidity, type CompiledContract } from '../src/solidity.js';

const OFF_TEXT = 'the debug API is off on this chain (start the node with --evm-debug-api, or list "debug-tracer" in the chain config key "eth-apis")';

let dir: string;
let target: EvmTarget;
let contracts: Record<string, CompiledContract>;
let provider: JsonRpcProvider;
let wallet: Wallet;
let nonce = 0;
let router: string;
let impl: string;
let token: string;
let spinner: string;
let revertHash: string;
let spinHash: string;

const call = (method: string, params: unknown[] = []): Promise<RpcReply> => target.call(method, params);
/** Sends a tx from ewoq with a fixed gas (a reverting one too) and waits for its receipt. */
async function sendTx(tx: { to?: string; data: string; gasLimit?: bigint }): Promise<{ hash: string; status: number; blockNumber: number; contractAddress: string | null }> {
  const sent = await wallet.sendTransaction({ ...tx, gasLimit: tx.gasLimit ?? 3_000_000n, nonce: nonce++ });
  const receipt = await until(`the receipt of ${sent.hash}`, async () => (await call('eth_getTransactionReceipt', [sent.hash])).result ?? undefined, 30_000);
  return { hash: sent.hash, status: Number(receipt.status), blockNumber: Number(receipt.blockNumber), contractAddress: receipt.contractAddress };
}

async function deploy(name: string, args: unknown[] = []): Promise<string> {
  const c = contracts[name]!;
  const data = c.bytecode + new Interface(c.abi).encodeDeploy(args).slice(2);
  const r = await sendTx({ data });
  assert.is(r.status, 1, name);
  return r.contractAddress!;
}

test.before(
  setupReporting(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cornice-e2e-evm-trace-'));
    contracts = compileSolidity('TraceExample.sol', await readFile(join(REPO, 'test/fixtures/evm/TraceExample.sol'), 'utf8'));
    target = await startEvmTarget({ dataDir: dir, dbType: 'memory' });
    provider = new JsonRpcProvider(target.rpcUrl, undefined, { pollingInterval: 100, cacheTimeout: -1 });
    wallet = new Wallet(EWOQ_EVM_KEY, provider);
    nonce = await provider.getTransactionCount(wallet.address, 'pending');
    token = await deploy('ExampleToken');
    impl = await deploy('RouterImpl');
    router = await deploy('Router', [impl]);
    spinner = await deploy('Spinner');
    // No allowance: the token's require fails two frames down.
    const swap = new Interface(contracts.Router!.abi).encodeFunctionData('swap', [token, wallet.address, 1n]);
    const reverted = await sendTx({ to: router, data: swap, gasLimit: 300_000n });
    assert.is(reverted.status, 0);
    revertHash = reverted.hash;
    const spin = await sendTx({ to: spinner, data: new Interface(contracts.Spinner!.abi).encodeFunctionData('spin', [15_000n]), gasLimit: 4_000_000n });
    assert.is(spin.status, 1);
    spinHash = spin.hash;
  }),
);

test.after(async () => {
  provider?.destroy();
  await target?.stop();
  await rm(dir, { recursive: true, force: true });
});

test("viem: the README's worked example, as written, finds the token's revert under the router's DELEGATECALL", async () => {
  const chainId = Number(await ok(target, 'eth_chainId'));
  const chain = defineChain({ id: chainId, name: 'e2e', nativeCurrency: { name: 'AVAX', symbol: 'AVAX', decimals: 18 }, rpcUrls: { default: { http: [target.rpcUrl] } } });
  const client = createClient({ chain, transport: http(target.rpcUrl) });
  const hash = revertHash as Hex;
  // The README's lines (plugins/evm/README.md "Tracing"), unchanged:
  const tree = await client.request({ method: 'debug_traceTransaction', params: [hash, { tracer: 'callTracer' }] } as never) as any;
  const failed = (f: any): any => f.calls?.map(failed).find(Boolean) ?? (f.error ? f : undefined);
  assert.is(failed(tree).to, token.toLowerCase());
  assert.is(failed(tree).revertReason, 'insufficient allowance');
  // And the shape the README shows.
  assert.is(tree.type, 'CALL');
  assert.is(tree.to, router.toLowerCase());
  assert.is(tree.error, 'execution reverted');
  assert.is(tree.calls[0].type, 'DELEGATECALL');
  assert.is(tree.calls[0].to, impl.toLowerCase());
  assert.is(tree.calls[0].calls[0].type, 'CALL');
  assert.is(tree.calls[0].calls[0].to, token.toLowerCase());
  assert.is(tree.calls[0].calls[0].error, 'execution reverted');
  assert.match(tree.calls[0].calls[0].output, /^0x08c379a0/);
  // A wallet client's request is the same transport.
  const wc = createWalletClient({ account: privateKeyToAccount(EWOQ_EVM_KEY), chain, transport: http(target.rpcUrl) });
  const again = await wc.request({ method: 'debug_traceTransaction', params: [hash, { tracer: 'callTracer', tracerConfig: { onlyTopCall: true } }] } as never) as any;
  assert.is(again.calls, undefined);
  assert.is(again.error, 'execution reverted');
});

test('ethers: provider.send with the struct logger (geth\'s fields), and its options', async () => {
  const r = await provider.send('debug_traceTransaction', [revertHash, {}]);
  assert.equal(Object.keys(r).sort(), ['failed', 'gas', 'returnValue', 'structLogs']);
  assert.is(r.failed, true);
  assert.ok(r.structLogs.length > 50);
  const first = r.structLogs[0];
  assert.equal({ pc: first.pc, op: first.op, depth: first.depth }, { pc: 0, op: 'PUSH1', depth: 1 });
  assert.ok(Array.isArray(first.stack) && typeof first.gas === 'number' && typeof first.gasCost === 'number');
  assert.ok(r.structLogs.some((l: { op: string; depth: number }) => l.op === 'DELEGATECALL' && l.depth === 1));
  assert.ok(r.structLogs.some((l: { op: string; depth: number }) => l.op === 'REVERT' && l.depth === 3));
  const lean = await provider.send('debug_traceTransaction', [revertHash, { disableStack: true, limit: 5 }]);
  assert.is(lean.structLogs.length, 5);
  assert.is(lean.structLogs[0].stack, undefined);
});

test('debug_traceCall (callTracer on latest) and debug_traceBlockByNumber ([{txHash, result}])', async () => {
  const data = encodeFunctionData({ abi: contracts.Router!.abi as Abi, functionName: 'swap', args: [token as Address, wallet.address as Address, 1n] });
  const tree = await ok(target, 'debug_traceCall', [{ from: wallet.address, to: router, data, gas: '0x493e0' }, 'latest', { tracer: 'callTracer' }]);
  assert.is(tree.calls[0].calls[0].revertReason, 'insufficient allowance');
  const receipt = await provider.getTransactionReceipt(revertHash);
  const traces = await ok(target, 'debug_traceBlockByNumber', [`0x${receipt!.blockNumber.toString(16)}`, { tracer: 'callTracer' }]);
  assert.is(traces.length, 1);
  assert.is(traces[0].txHash, revertHash);
  assert.is(traces[0].result.to, router.toLowerCase());
});

test('trace_transaction and trace_block: the flat list, parity errors, the block\'s txs joined', async () => {
  const flat = await ok(target, 'trace_transaction', [revertHash]);
  assert.equal(flat.map((e: { traceAddress: number[] }) => e.traceAddress), [[], [0], [0, 0]]);
  assert.equal(flat.map((e: { action: { callType: string } }) => e.action.callType), ['call', 'delegatecall', 'call']);
  assert.ok(flat.every((e: { error?: string; transactionHash: string }) => e.error === 'Reverted' && e.transactionHash === revertHash));
  assert.equal(Object.keys(flat[2]).sort(), ['action', 'blockHash', 'blockNumber', 'error', 'result', 'subtraces', 'traceAddress', 'transactionHash', 'transactionPosition', 'type']);
  const receipt = await provider.getTransactionReceipt(revertHash);
  for (const ref of [`0x${receipt!.blockNumber.toString(16)}`, receipt!.blockHash]) assert.equal(await ok(target, 'trace_block', [ref]), flat);
  assert.equal(await ok(target, 'trace_block', ['0x0']), []);
  assert.equal(await ok(target, 'trace_transaction', [`0x${'11'.repeat(32)}`]), []);
});

test('faults: unknown tx, pending tx, genesis, unknown tracer, malformed tracerConfig, a JavaScript tracer, a timeout', async () => {
  const err = async (method: string, params: unknown[], code: number, text: RegExp) => {
    const r = await call(method, params);
    assert.is(r.error?.code, code, `${method} ${JSON.stringify(params).slice(0, 120)}: ${JSON.stringify(r)}`);
    assert.match(r.error!.message, text);
  };
  await err('debug_traceTransaction', [`0x${'11'.repeat(32)}`], -32000, /^transaction not found$/);
  // A tx after a nonce gap stays in the pool.
  const pending = await wallet.signTransaction({ to: wallet.address, value: 1n, nonce: nonce + 5, gasLimit: 21_000n, chainId: (await provider.getNetwork()).chainId, maxFeePerGas: 100_000_000_000n, maxPriorityFeePerGas: 0n, type: 2 });
  const pendingHash = await provider.send('eth_sendRawTransaction', [pending]);
  await err('debug_traceTransaction', [pendingHash], -32000, /^transaction not found$/);
  assert.equal(await ok(target, 'trace_transaction', [pendingHash]), []);
  await err('debug_traceBlockByNumber', ['0x0'], -32000, /^genesis is not traceable$/);
  await err('debug_traceTransaction', [revertHash, { tracer: 'nopeTracer' }], -32602, /^tracer "nopeTracer" not found: the built-in tracers are callTracer, /);
  await err('debug_traceTransaction', [revertHash, { tracer: 'callTracer', tracerConfig: { withLog: 'yes' } }], -32602, /^invalid tracer config: .*withLog/);
  await err('debug_traceTransaction', [revertHash, { tracer: 'callTracer', tracerConfig: [1] }], -32602, /tracerConfig: want an object/);
  await err('debug_traceTransaction', [revertHash, { tracer: '{step: function(log) {}, result: function() { return 1; }, fault: function() {}}' }], -32602, /^JavaScript tracers are not supported: the built-in tracers are callTracer/);
  await err('debug_traceTransaction', [spinHash, { timeout: '1ms' }], -32000, /^execution timeout$/);
  await err('debug_traceTransaction', [spinHash, { timeout: 'soon' }], -32602, /timeout: time: invalid duration "soon"/);
});

test('many traces at once: each answers a trace or -32005 busy, none fails otherwise; /ext/health answers meanwhile; the node serves after', async () => {
  const traces = Array.from({ length: 40 }, () => call('debug_traceTransaction', [spinHash, { tracer: 'callTracer' }]));
  let tracing = true;
  const all = Promise.all(traces);
  void all.then(
    () => (tracing = false),
    () => (tracing = false),
  );
  const health: Array<{ status: number; ms: number }> = [];
  while (tracing) {
    const t0 = Date.now();
    const res = await fetch(target.healthUrl!);
    await res.text();
    health.push({ status: res.status, ms: Date.now() - t0 });
  }
  const replies = await all;
  const answered = replies.filter((r) => r.result !== undefined).length;
  const busy = replies.filter((r) => r.error?.code === -32005).length;
  assert.is(answered + busy, replies.length, JSON.stringify(replies.find((r) => r.result === undefined && r.error?.code !== -32005)));
  assert.ok(answered >= 2, `${answered} answered`);
  assert.ok(health.length >= 1);
  assert.ok(health.every((h) => h.status === 200 && h.ms < 2_000), JSON.stringify(health));
  assert.is((await ok(target, 'debug_traceTransaction', [spinHash, { tracer: 'callTracer' }])).type, 'CALL');
});

test('a node started without --evm-debug-api (npm start\'s other flags, network local) answers -32601 naming the flag', async () => {
  const flags = npmStartFlags().filter((f) => f !== '--evm-debug-api');
  assert.ok(flags.includes('--network-id=local'));
  const node = await startNodeProcess([...flags, `--data-dir=${dir}/off`, '--db-type=memory'], 60_000);
  try {
    const rpc = `${node.url}/ext/bc/C/rpc`;
    await until('the C-Chain', async () => ((await postRpc(rpc, 'eth_chainId', []).catch(() => undefined))?.result ? true : undefined), 30_000);
    for (const method of ['debug_traceTransaction', 'trace_transaction']) {
      const r = await postRpc(rpc, method, [revertHash]);
      assert.equal(r.error, { code: -32601, message: `the method ${method} does not exist/is not available: ${OFF_TEXT}` });
    }
  } finally {
    await node.stop();
  }
});

test.run();
