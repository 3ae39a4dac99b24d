import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EthRpcConfigError, EvmRpcError, createEthRpc } from '../src/index.js';
import { MemoryStore } from '@cornice/sdk';
import { FakeBackend, ManualClock, recordingLogger, serve, type Served } from './rpc-fake-backend.js';
import { Readable } from 'node:stream';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHttpHandler, DEFAULT_HTTP_LIMITS } from '../src/rpc/http.js';
import type { RpcDispatcher } from '../src/rpc/dispatch.js';

let s: Served;
test.before.each(async () => {
  s = await serve();
});
test.after.each(async () => {
  await s.close();
});

const req = (method: string, params: unknown = [], id: unknown = 1) => ({ jsonrpc: '2.0', id, method, params });

test('a single call: result with the id echoed, content-type json', async () => {
  const r = await s.post(JSON.stringify(req('eth_chainId', [], 'abc')));
  assert.is(r.status, 200);
  assert.equal(r.json, { jsonrpc: '2.0', id: 'abc', result: '0xa866' });
});

test('params may be absent or null', async () => {
  assert.is((await s.post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber' }))).json.result, '0x0');
  assert.is((await s.post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: null }))).json.result, '0x0');
});

test('the first answer of a turn is written at once, later ones together when it ends; one whose client left is dropped', async () => {
  const handler = createHttpHandler({ handle: async (text: string) => `"${text}"` } as unknown as RpcDispatcher, DEFAULT_HTTP_LIMITS, recordingLogger());
  const written: string[] = [];
  const request = (body: string) => Object.assign(Readable.from([Buffer.from(body)]), { method: 'POST', headers: { 'content-type': 'application/json' }, socket: { once() {} } }) as unknown as IncomingMessage;
  const response = () => ({ destroyed: false, writeHead() {}, end(text: string) { written.push(text); } }) as unknown as ServerResponse & { destroyed: boolean };
  const gone = response();
  await Promise.all([handler(request('a'), response()), handler(request('b'), gone), handler(request('c'), response())]);
  assert.equal(written, ['"a"'], 'the first at once, the others held while the turn lasts');
  gone.destroyed = true;
  await new Promise((r) => setImmediate(r));
  assert.equal(written, ['"a"', '"c"']);
  await handler(request('d'), response());
  assert.equal(written, ['"a"', '"c"', '"d"'], "a later turn's first answer is not held");
});

test('a request without a socket of its own (a VM in a worker thread, --vm-isolation) is served', async () => {
  const written: string[] = [];
  const req = Object.assign(Readable.from([Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'eth_chainId', params: [] }))]), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    socket: { remoteAddress: '127.0.0.1' },
  }) as unknown as IncomingMessage;
  const res = { destroyed: false, writableFinished: false, writeHead() {}, once() {}, end(text: string) { written.push(text); } } as unknown as ServerResponse;
  await s.rpc.http(req, res);
  assert.equal(JSON.parse(written[0]!), { jsonrpc: '2.0', id: 9, result: '0xa866' });
});

test('GET and PUT: 405 with a JSON-RPC error body', async () => {
  for (const method of ['GET', 'PUT', 'DELETE']) {
    const r = await s.post('', { 'content-type': 'application/json' }, method);
    assert.is(r.status, 405, method);
    assert.is(r.json.error.code, -32600);
    assert.match(r.json.error.message, /POST/);
  }
});

test('OPTIONS (CORS preflight): 204', async () => {
  const r = await s.post('', {}, 'OPTIONS');
  assert.is(r.status, 204);
});

test('a content type other than JSON: 415', async () => {
  const r = await s.post(JSON.stringify(req('eth_chainId')), { 'content-type': 'text/plain' });
  assert.is(r.status, 415);
  assert.match(r.json.error.message, /application\/json/);
});

test('a body over 5 MiB: 413 with a JSON error, nothing parsed', async () => {
  const big = JSON.stringify(req('web3_sha3', ['0x' + '00'.repeat(3 * 1024 * 1024)]));
  const r = await s.post(big);
  assert.is(r.status, 413);
  assert.is(r.json.error.code, -32600);
  assert.match(r.json.error.message, /too large/);
  assert.is(s.backend.calls.length, 0);
  // The front end still answers.
  assert.is((await s.call('eth_chainId')).result, '0xa866');
});

test('a body just under the bound is served', async () => {
  const r = await s.post(JSON.stringify(req('web3_sha3', ['0x' + '00'.repeat(2 * 1024 * 1024)])));
  assert.is(r.status, 200);
  assert.match(r.json.result, /^0x[0-9a-f]{64}$/);
});

test('invalid JSON: -32700; not UTF-8: -32700', async () => {
  const r = await s.post('{"jsonrpc":"2.0",');
  assert.equal(r.json, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } });
  const res = await fetch(s.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Uint8Array.of(0xff, 0xfe) });
  assert.is(((await res.json()) as any).error.code, -32700);
});

test('invalid requests: -32600 naming the problem', async () => {
  for (const [body, text] of [
    ['1', /JSON object/],
    ['"x"', /JSON object/],
    ['{"jsonrpc":"1.0","id":1,"method":"eth_chainId"}', /jsonrpc/],
    ['{"jsonrpc":"2.0","id":1}', /method/],
    ['{"jsonrpc":"2.0","id":1,"method":""}', /method/],
    ['{"jsonrpc":"2.0","id":{},"method":"eth_chainId"}', /id/],
    ['{"jsonrpc":"2.0","id":1,"method":5}', /method/],
  ] as const) {
    const r = await s.post(body);
    assert.is(r.status, 200);
    assert.is(r.json.error.code, -32600, body);
    assert.match(r.json.error.message, text, body);
  }
});

test('unknown method and foreign namespaces: -32601 in geth words', async () => {
  for (const m of ['eth_nope', 'debug_nope', 'trace_nope', 'admin_peers', 'txpool_nope', 'avax.getUTXOs', 'constructor', '__proto__', 'toString']) {
    const r = await s.call(m);
    assert.is(r.error?.code, -32601, m);
    assert.is(r.error?.message, `the method ${m} does not exist/is not available`);
  }
});

test('eth_subscribe over HTTP: notifications not supported', async () => {
  const r = await s.call('eth_subscribe', ['newHeads']);
  assert.equal(r.error, { code: -32601, message: 'notifications not supported' });
});

test('params not an array: -32602 non-array args', async () => {
  for (const params of [{ a: 1 }, 'x', 5, true]) {
    const r = await s.post(JSON.stringify(req('eth_getBalance', params)));
    assert.equal(r.json.error, { code: -32602, message: 'non-array args' });
  }
});

test('argument errors in geth words', async () => {
  const cases: Array<[string, unknown[], string]> = [
    ['eth_getBalance', ['a1'.repeat(20), 'latest'], 'invalid argument 0: hex string without 0x prefix'],
    ['eth_getBalance', ['0x' + 'a1'.repeat(20)], 'missing value for required argument 1'],
    ['eth_getBalance', ['0x' + 'a1'.repeat(20), 'latest', 1], 'too many arguments, want at most 2'],
    ['eth_getBalance', ['0x' + 'a1'.repeat(19), 'latest'], 'invalid argument 0: hex string has length 38, want 40 for address'],
    ['eth_getBalance', ['0x' + 'a1'.repeat(20) + 'a', 'latest'], 'invalid argument 0: hex string of odd length'],
    ['eth_getBalance', ['0x' + 'zz'.repeat(20), 'latest'], 'invalid argument 0: invalid hex string'],
    ['eth_getBalance', ['0x' + 'a1'.repeat(20), 'newest'], 'invalid argument 1: hex string without 0x prefix'],
    ['eth_getBalance', ['0x' + 'a1'.repeat(20), '0x01'], 'invalid argument 1: hex number with leading zero digits'],
    ['eth_getBalance', ['0x' + 'a1'.repeat(20), '0x'], 'invalid argument 1: hex string "0x"'],
    ['eth_getBalance', ['0x' + 'a1'.repeat(20), '0x' + 'f'.repeat(17)], 'invalid argument 1: hex number > 64 bits'],
    ['eth_getBalance', ['0x' + 'a1'.repeat(20), '0x8000000000000000'], 'invalid argument 1: block number larger than int64'],
    ['eth_getBalance', [5, 'latest'], 'invalid argument 0: cannot unmarshal number into address'],
    ['eth_getBlockByNumber', ['latest'], 'missing value for required argument 1'],
    ['eth_getBlockByNumber', ['latest', 'yes'], 'invalid argument 1: cannot unmarshal string into bool'],
    ['eth_getTransactionByHash', ['0x1234'], 'invalid argument 0: hex string has length 4, want 64 for hash'],
    ['web3_sha3', ['0x123'], 'invalid argument 0: hex string of odd length'],
    ['eth_chainId', [1], 'too many arguments, want at most 0'],
    ['eth_call', [{ to: '0x' + 'b0'.repeat(20), gas: '0x' + '1'.repeat(17) }], 'invalid argument 0: gas: hex number > 64 bits'],
    ['eth_call', [{ data: '0x00', input: '0x01' }], 'invalid argument 0: both "data" and "input" are set and not equal. Please use "input" to pass transaction call data'],
    ['eth_call', [{ gasPrice: '0x1', maxFeePerGas: '0x1' }], 'invalid argument 0: both gasPrice and (maxFeePerGas or maxPriorityFeePerGas) specified'],
    ['eth_call', ['0x00'], 'invalid argument 0: cannot unmarshal string into transaction object'],
    ['eth_call', [{}, { blockHash: '0x' + '00'.repeat(32), blockNumber: '0x1' }], 'invalid argument 1: cannot specify both BlockHash and BlockNumber, choose one or the other'],
    ['eth_getLogs', [{ topics: [null, null, null, null, null] }], 'invalid argument 0: topics: exceed max topics'],
    ['eth_getLogs', [{ blockHash: '0x' + '00'.repeat(32), fromBlock: '0x1' }], 'invalid argument 0: cannot specify both BlockHash and FromBlock/ToBlock, choose one or the other'],
    ['eth_getLogs', [{ address: '0x12' }], 'invalid argument 0: address: hex string has length 2, want 40 for address'],
    ['eth_feeHistory', ['0x1', 'latest', [50, 10]], 'invalid argument 2: invalid reward percentile: #0:50 > #1:10'],
    ['eth_feeHistory', ['0x1', 'latest', [101]], 'invalid argument 2: invalid reward percentile: 101'],
    ['eth_feeHistory', ['ten', 'latest'], 'invalid argument 0: cannot unmarshal invalid string into block count'],
  ];
  for (const [method, params, message] of cases) {
    const r = await s.call(method, params);
    assert.equal(r.error, { code: -32602, message }, `${method} ${JSON.stringify(params)}`);
  }
});

test('notifications get no reply; a batch of notifications: empty 200', async () => {
  const r = await s.post(JSON.stringify({ jsonrpc: '2.0', method: 'eth_blockNumber', params: [] }));
  assert.is(r.status, 200);
  assert.is(r.text, '');
  const b = await s.post(JSON.stringify([{ jsonrpc: '2.0', method: 'eth_blockNumber' }, { jsonrpc: '2.0', method: 'eth_chainId' }]));
  assert.is(b.status, 200);
  assert.is(b.text, '');
  assert.ok(s.backend.calls.some((c) => c.method === 'blockNumber'), 'the notification ran');
});

test('batches: replies in order, notifications left out, errors per item', async () => {
  const r = await s.post(
    JSON.stringify([req('eth_chainId', [], 1), { jsonrpc: '2.0', method: 'eth_chainId' }, req('eth_nope', [], 2), 7, req('net_version', [], 3)]),
  );
  assert.equal(r.json, [
    { jsonrpc: '2.0', id: 1, result: '0xa866' },
    { jsonrpc: '2.0', id: 2, error: { code: -32601, message: 'the method eth_nope does not exist/is not available' } },
    { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'invalid request: a request must be a JSON object' } },
    { jsonrpc: '2.0', id: 3, result: '1' },
  ]);
});

test('empty batch: -32600; more than 1,000 items: batch too large, nothing run', async () => {
  assert.equal((await s.post('[]')).json, { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'empty batch' } });
  const big = Array.from({ length: 1001 }, (_, i) => req('eth_blockNumber', [], i));
  const r = await s.post(JSON.stringify(big));
  assert.equal(r.json, [{ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'batch too large' } }]);
  assert.is(s.backend.calls.length, 0);
  const ok = await s.post(JSON.stringify(big.slice(0, 1000)));
  assert.is(ok.json.length, 1000);
});

test('a reply over the response bound: -32003 response too large (single and in a batch)', async () => {
  await s.close();
  s = await serve({ limits: { maxResponseChars: 1_000 } });
  const one = await s.call('eth_getBlockByNumber', ['latest', false]);
  assert.equal(one.error, { code: -32003, message: 'response too large' });
  const r = await s.post(JSON.stringify([req('eth_chainId', [], 1), req('web3_sha3', ['0x' + '00'.repeat(900)], 2), req('eth_getBlockByNumber', ['latest', false], 3)]));
  assert.is(r.json[0].result, '0xa866');
  assert.is(r.json[1].result.length, 66);
  assert.equal(r.json[2], { jsonrpc: '2.0', id: 3, error: { code: -32003, message: 'response too large' } });
});

test('EvmRpcError: its code, message and data (bytes as hex)', async () => {
  s.backend.failWith = () => new EvmRpcError(3, 'execution reverted', Uint8Array.of(1, 2));
  const r = await s.call('eth_gasPrice');
  assert.equal(r.error, { code: 3, message: 'execution reverted', data: '0x0102' });
});

test('a bug in the backend: -32603 internal error, logged, no stack to the client', async () => {
  s.backend.failWith = () => new TypeError('cannot read properties of undefined (secret detail)');
  const r = await s.call('eth_getBalance', ['0x' + 'a1'.repeat(20), 'latest']);
  assert.equal(r.error, { code: -32603, message: 'internal error' });
  const line = s.log.lines.find((l) => l.level === 'error');
  assert.ok(line, 'logged');
  assert.is(line!.msg, 'eth rpc method failed');
  assert.is(line!.fields!.method, 'eth_getBalance');
});

test('a method that never settles: -32002 request timed out after the bound', async () => {
  await s.close();
  s = await serve({ limits: { callTimeoutMs: 50 } });
  s.backend.gasPrice = () => new Promise(() => {});
  const r = await s.call('eth_gasPrice');
  assert.equal(r.error, { code: -32002, message: 'request timed out' });
});

test('extraMethods: an extension adds an eth_ method; built-ins and foreign namespaces are refused', async () => {
  await s.close();
  const extra = new Map([['eth_feeConfig', async (params: readonly unknown[]) => ({ gasLimit: '0x7a1200', got: params.length })]]);
  s = await serve({ extraMethods: extra });
  assert.equal((await s.call('eth_feeConfig', ['latest'])).result, { gasLimit: '0x7a1200', got: 1 });
  const opts = { clientVersion: 'x', accounts: new MemoryStore(), log: recordingLogger(), clock: new ManualClock() };
  for (const name of ['eth_getBalance', 'eth_newFilter', 'eth_subscribe', 'debug_traceCall', 'avax.issueTx', 'eth_', 'eth_a.b']) {
    assert.throws(
      () => createEthRpc(new FakeBackend(), { ...opts, extraMethods: new Map([[name, async () => 1]]) }),
      (e: unknown) => e instanceof EthRpcConfigError,
      name,
    );
  }
});

const METHODS = [
  'web3_clientVersion', 'web3_sha3', 'net_version', 'net_listening', 'net_peerCount', 'eth_chainId', 'eth_blockNumber',
  'eth_getBlockByNumber', 'eth_getBlockByHash', 'eth_getHeaderByNumber', 'eth_getHeaderByHash', 'eth_getBlockTransactionCountByNumber', 'eth_getBlockTransactionCountByHash',
  'eth_getUncleCountByBlockNumber', 'eth_getUncleCountByBlockHash', 'eth_getUncleByBlockNumberAndIndex', 'eth_getUncleByBlockHashAndIndex', 'eth_coinbase', 'eth_getBalance', 'eth_getCode', 'eth_getStorageAt',
  'eth_getTransactionCount', 'eth_gasPrice', 'eth_maxPriorityFeePerGas', 'eth_baseFee', 'eth_feeHistory', 'eth_estimateGas',
  'eth_call', 'eth_sendRawTransaction', 'eth_getTransactionByHash', 'eth_getTransactionByBlockHashAndIndex',
  'eth_getTransactionByBlockNumberAndIndex', 'eth_getTransactionReceipt', 'eth_getBlockReceipts', 'eth_getLogs', 'eth_newFilter',
  'eth_newBlockFilter', 'eth_newPendingTransactionFilter', 'eth_getFilterChanges', 'eth_getFilterLogs', 'eth_uninstallFilter',
  'eth_accounts', 'eth_syncing', 'eth_subscribe', 'eth_unsubscribe', 'eth_sendTransaction', 'eth_sign', 'personal_newAccount',
  'personal_listAccounts', 'personal_unlockAccount', 'personal_lockAccount', 'personal_importRawKey', 'personal_sendTransaction',
  'personal_sign', 'personal_ecRecover', 'eth_signTransaction', 'eth_fillTransaction', 'eth_getRawTransactionByHash', 'eth_blobBaseFee',
  'eth_pendingTransactions', 'txpool_content', 'txpool_contentFrom', 'txpool_inspect', 'txpool_status',
];

test('sweep: malformed params to every method never give -32603, and the front end keeps answering', async () => {
  const junk: unknown[] = [
    null, true, 0, -1, 1.5, 1e300, '', 'x', '0x', '0x0', '0xzz', '0x' + 'f'.repeat(200), 'latest', {}, [], [[]], { blockHash: 5 },
    { blockNumber: 'x' }, { from: 1 }, { to: '0x' }, { address: {} }, { topics: [[5]] }, { state: 1 }, { ['0x' + '00'.repeat(20)]: { balance: {} } },
    { accessList: [{ address: 1 }] }, { accessList: [null] }, [1, 2, 3], '\u0000', 'personal',
  ];
  for (const method of METHODS) {
    const shapes: unknown[][] = [[], Array(6).fill('0x1')];
    for (const j of junk) shapes.push([j], [j, j], ['0x' + 'a1'.repeat(20), j], [j, 'latest'], [{}, j], [j, j, j]);
    const body = JSON.stringify(shapes.map((params, i) => req(method, params, i)));
    const r = await s.post(body);
    assert.is(r.status, 200, method);
    for (const item of r.json) {
      assert.is.not(item.error?.code, -32603, `${method} ${JSON.stringify(shapes[item.id])}: ${JSON.stringify(item.error)}`);
    }
  }
  assert.not.ok(s.log.lines.some((l) => l.level === 'error'), JSON.stringify(s.log.lines.slice(0, 3)));
  assert.is((await s.call('eth_chainId')).result, '0xa866');
});

test.run();
