/**
 * Invalid input at the EVM JSON-RPC endpoint, sent with raw fetch: every case gets a clear JSON-RPC
 * error (on cornice: the code the node's conventions say, a message naming the problem; on hardhat's
 * node, used to check the harness: any JSON-RPC error), and the node stays up.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EWOQ_EVM_ADDRESS, setupReporting, startEvmTarget, type EvmTarget } from '../src/evm.js';

let dir: string;
let target: EvmTarget;
let healthBefore: number | undefined;
const ZERO_HASH = `0x${'00'.repeat(31)}01`;

test.before(
  setupReporting(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cornice-e2e-evm-invalid-'));
    target = await startEvmTarget({ dataDir: dir, dbType: 'memory' });
    if (target.healthUrl) healthBefore = (await fetch(target.healthUrl)).status;
  }),
);

test.after(async () => {
  await target?.stop();
  await rm(dir, { recursive: true, force: true });
});

interface Reply {
  jsonrpc?: string;
  id?: unknown;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

async function post(body: string, init: RequestInit = {}): Promise<{ status: number; json: unknown }> {
  const res = await fetch(target.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body, ...init });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`HTTP ${res.status}: the reply is not JSON: ${text.slice(0, 200)}`);
  }
  return { status: res.status, json };
}

const call = async (method: string, params: unknown): Promise<Reply> => (await post(JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }))).json as Reply;

/** A JSON-RPC error, with the code and message the node's conventions give on cornice. */
function isError(r: Reply, what: string, codes: number[], message?: RegExp): void {
  assert.ok(r.error, `${what}: expected an error, got ${JSON.stringify(r)}`);
  assert.type(r.error!.code, 'number', what);
  assert.ok(typeof r.error!.message === 'string' && r.error!.message.length > 0, `${what}: an error message`);
  assert.is(r.result, undefined, `${what}: no result beside the error`);
  if (target.kind !== 'cornice') return;
  assert.ok(codes.includes(r.error!.code), `${what}: code ${r.error!.code} (${r.error!.message}), expected one of ${codes}`);
  assert.is.not(r.error!.code, -32603, `${what}: never an internal error`);
  if (message) assert.match(r.error!.message, message, what);
}

const INVALID_PARAMS = [-32602];

test('bad hex: addresses, quantities, block numbers, data, raw transactions', async () => {
  isError(await call('eth_getBalance', ['0xZZ', 'latest']), 'eth_getBalance bad address', INVALID_PARAMS);
  isError(await call('eth_getBalance', ['0x1234', 'latest']), 'eth_getBalance short address', INVALID_PARAMS);
  isError(await call('eth_getBalance', [EWOQ_EVM_ADDRESS, '0xnothex']), 'eth_getBalance bad block number', INVALID_PARAMS);
  isError(await call('eth_getBlockByNumber', ['0x12zz', false]), 'eth_getBlockByNumber bad hex', INVALID_PARAMS);
  // geth rejects a quantity without 0x; hardhat's node reads it as a number.
  const no0x = await call('eth_getBlockByNumber', ['12', false]);
  if (target.kind === 'cornice') isError(no0x, 'eth_getBlockByNumber without 0x', INVALID_PARAMS, /0x/);
  isError(await call('eth_getBlockByHash', ['0x1234', false]), 'eth_getBlockByHash short hash', INVALID_PARAMS);
  isError(await call('eth_getTransactionReceipt', ['0xqq']), 'eth_getTransactionReceipt bad hash', INVALID_PARAMS);
  isError(await call('eth_call', [{ to: EWOQ_EVM_ADDRESS, data: '0xabc' }, 'latest']), 'eth_call odd-length data', INVALID_PARAMS);
  isError(await call('eth_call', [{ to: EWOQ_EVM_ADDRESS, value: 'ten' }, 'latest']), 'eth_call bad value', INVALID_PARAMS);
  isError(await call('eth_sendRawTransaction', ['0xzz']), 'eth_sendRawTransaction not hex', INVALID_PARAMS);
  // Hex, but not a transaction: -32602, or -32000 with the decoder's reason.
  isError(await call('eth_sendRawTransaction', ['0x1234']), 'eth_sendRawTransaction not a transaction', [-32602, -32000]);
  isError(await call('eth_getBlockByNumber', ['bogus', false]), 'unknown block tag', INVALID_PARAMS);
});

test('wrong parameter counts and shapes', async () => {
  isError(await call('eth_getBalance', []), 'eth_getBalance without params', INVALID_PARAMS);
  isError(await call('eth_getBlockByNumber', ['latest', false, 'extra', 'more']), 'eth_getBlockByNumber with 4 params', INVALID_PARAMS);
  isError(await call('eth_getTransactionByHash', []), 'eth_getTransactionByHash without params', INVALID_PARAMS);
  isError(await call('eth_chainId', ['unexpected']), 'eth_chainId with a param', INVALID_PARAMS);
  isError(await call('eth_getBalance', { address: EWOQ_EVM_ADDRESS }), 'params as an object', [-32602, -32600]);
  isError(await call('eth_sendRawTransaction', [42]), 'a number where data is expected', INVALID_PARAMS);
});

test('unknown blocks, transactions and methods', async () => {
  // Reads of a block above the head or of an unknown hash answer null, as in geth.
  assert.equal((await call('eth_getBlockByNumber', ['0xffffff', false])).result, null);
  assert.equal((await call('eth_getBlockByHash', [ZERO_HASH, false])).result, null);
  assert.equal((await call('eth_getTransactionByHash', [ZERO_HASH])).result, null);
  assert.equal((await call('eth_getTransactionReceipt', [ZERO_HASH])).result, null);
  // State at a block that does not exist is an error, never a made-up zero.
  isError(await call('eth_getBalance', [EWOQ_EVM_ADDRESS, '0xffffff']), 'eth_getBalance at a future block', [-32000, -32602]);
  isError(await call('eth_getBalance', [EWOQ_EVM_ADDRESS, { blockHash: ZERO_HASH }]), 'eth_getBalance at an unknown block hash', [-32000, -32602]);
  isError(await call('eth_call', [{ to: EWOQ_EVM_ADDRESS }, '0xffffff']), 'eth_call at a future block', [-32000, -32602]);
  isError(await call('eth_nosuchmethod', []), 'unknown method', [-32601]);
  isError(await call('admin_peers', []), 'a namespace that is not served', [-32601]);
});

test('malformed JSON, bad envelopes, an oversized batch, non-POST', async () => {
  const malformed = await post('{"jsonrpc":"2.0","id":1,"method":"eth_chainId"');
  isError(malformed.json as Reply, 'malformed JSON', [-32700]);
  isError((await post('{"jsonrpc":"2.0","id":1}')).json as Reply, 'no method', [-32600]);
  isError((await post('"eth_chainId"')).json as Reply, 'a string as the request', [-32600]);
  // A batch far above any node's limit (geth: 1,000; cornice's default: 100).
  const big = JSON.stringify(Array.from({ length: 1001 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'eth_chainId', params: [] })));
  const over = await post(big);
  if (target.kind === 'cornice') {
    const r = (Array.isArray(over.json) ? over.json[0] : over.json) as Reply;
    isError(r, 'oversized batch', [-32600, -32000], /batch/i);
    if (Array.isArray(over.json)) assert.ok(over.json.every((x: Reply) => x.error), 'no request of an oversized batch runs');
  }
  // A small batch is answered, one reply per request, with their ids.
  const small = await post(JSON.stringify([1, 2, 3].map((id) => ({ jsonrpc: '2.0', id, method: 'eth_chainId', params: [] }))));
  assert.ok(Array.isArray(small.json), 'a batch gets an array');
  const replies = small.json as Reply[];
  assert.equal(replies.map((r) => r.id).sort(), [1, 2, 3]);
  assert.ok(replies.every((r) => typeof r.result === 'string'));
  const get = await fetch(target.rpcUrl, { method: 'GET' });
  if (target.kind === 'cornice') {
    assert.is(get.status, 405);
    isError((await get.json()) as Reply, 'GET', [-32600], /POST/);
  } else await get.arrayBuffer();
});

test('precompile failures are EVM errors, not internal ones: KZG point evaluation with a bad input', async () => {
  const r = await call('eth_call', [{ to: '0x000000000000000000000000000000000000000a', data: `0x${'11'.repeat(192)}` }, 'latest']);
  if (target.kind === 'cornice') isError(r, 'point evaluation', [-32000], /^kzg commitment does not match versioned hash$/);
  else assert.ok(r.error, 'an error');
});

test('a heavy eth_call (a loop to the gas cap, 300 BN254 pairings, a MODEXP of a 100 KB exponent, BLAKE2F of 3M rounds) does not hold the node: health answers first', async () => {
  if (target.kind !== 'cornice' || !target.healthUrl) return;
  const at = '0x00000000000000000000000000000000000000c0';
  const g2 = '198e9393920d483a7260bfb731fb5d25f1aa493335a9e71297e485b7aef312c21800deef121f1e76426a00665e5c4479674322d4f75edadd46debd5cd992f6ed090689d0585ff075ec9e99ad690c3395bc4b313370b38ef355acdadcd122975b12c85ea5db8c6deb4aab71808dcb408fe3d1e7690c43d37b4ce6cc0166fa7daa';
  const pair = `${'0'.repeat(63)}1${'0'.repeat(63)}2${g2}`;
  const word = (n: number) => n.toString(16).padStart(64, '0');
  const heavy: [string, unknown[]][] = [
    // JUMPDEST PUSH1 0 JUMP, put at `at` by a state override: runs until the 50M gas cap is spent (~1.5 s here).
    ['a loop', [{ to: at }, 'latest', { [at]: { code: '0x5b600056' } }]],
    ['pairings', [{ to: '0x0000000000000000000000000000000000000008', data: `0x${pair.repeat(300)}` }, 'latest']],
    // 4.3M gas; @ethereumjs' own loop held the node 3.4 s on it.
    ['modexp', [{ to: '0x0000000000000000000000000000000000000005', data: `0x${word(32)}${word(100_000)}${word(32)}${'ff'.repeat(32)}${'ff'.repeat(100_000)}${'fd'.repeat(32)}` }, 'latest']],
    // 3M gas; in process it held the node ~1.1 s.
    ['blake2f', [{ to: '0x0000000000000000000000000000000000000009', data: `0x${(3_000_000).toString(16).padStart(8, '0')}${'00'.repeat(208)}01` }, 'latest']],
  ];
  for (const [what, params] of heavy) {
    const order: string[] = [];
    const running = call('eth_call', params).then((reply) => (order.push('call'), reply));
    await new Promise((resolve) => setTimeout(resolve, 200)); // the call is under way
    const health = fetch(target.healthUrl).then((r) => (order.push('health'), r.status));
    const r = await running;
    assert.is(await health, healthBefore, what);
    assert.equal(order, ['health', 'call'], `${what}: health answered while the call ran`);
    // Out of gas, or on a slow machine geth's timeout text; the pairings' product is not 1.
    if (r.error) isError(r, what, [-32000], /^(out of gas|execution aborted \(timeout = 5s\))$/);
    else if (what === 'modexp') assert.match(r.result as string, /^0x[0-9a-f]{64}$/, what);
    else if (what === 'blake2f') assert.match(r.result as string, /^0x[0-9a-f]{128}$/, what);
    else assert.is(r.result, `0x${'0'.repeat(64)}`, what);
  }
});

test('the node is still up and answering after all of it', async () => {
  const r = await call('eth_blockNumber', []);
  assert.type(r.result, 'string');
  assert.match(r.result as string, /^0x[0-9a-f]+$/);
  if (target.node) {
    assert.is(target.node.proc.exitCode, null, 'the process is alive');
    assert.is((await fetch(target.healthUrl!)).status, healthBefore, 'health as before');
  }
});

test.run();
