import { request } from 'node:http';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BOB, FakeConnection, TOKEN, TRANSFER_TOPIC, filled, hex, makeTx, serve, type Served } from './rpc-fake-backend.js';

let s: Served;
test.before.each(async () => {
  s = await serve();
});
test.after.each(async () => {
  await s.close();
});

const ok = (method: string, params: unknown[] = []): Promise<any> => s.ok(method, params);

const ID = /^0x[0-9a-f]{1,32}$/;

test('block filter: hashes of blocks accepted since the last poll', async () => {
  const id = await ok('eth_newBlockFilter');
  assert.match(id, ID);
  assert.equal(await ok('eth_getFilterChanges', [id]), []);
  const b1 = s.backend.mine([makeTx()]);
  const b2 = s.backend.mine([]);
  assert.equal(await ok('eth_getFilterChanges', [id]), [hex(b1.block.header.hash), hex(b2.block.header.hash)]);
  assert.equal(await ok('eth_getFilterChanges', [id]), []);
  assert.is(await ok('eth_uninstallFilter', [id]), true);
  assert.is(await ok('eth_uninstallFilter', [id]), false);
  assert.equal((await s.call('eth_getFilterChanges', [id])).error, { code: -32000, message: 'filter not found' });
});

test('pending transaction filter: hashes, or full transactions when asked', async () => {
  const hashes = await ok('eth_newPendingTransactionFilter');
  const full = await ok('eth_newPendingTransactionFilter', [true]);
  const tx = makeTx();
  s.backend.admit(tx);
  assert.equal(await ok('eth_getFilterChanges', [hashes]), [hex(tx.hash)]);
  const [t] = await ok('eth_getFilterChanges', [full]);
  assert.is(t.hash, hex(tx.hash));
  assert.is(t.blockHash, null);
});

test('log filter: matching logs since the last poll; eth_getFilterLogs runs the whole query', async () => {
  s.backend.mine([makeTx()], 2);
  const id = await ok('eth_newFilter', [{ address: hex(TOKEN), topics: [hex(TRANSFER_TOPIC), hex(filled(2))] }]);
  const other = await ok('eth_newFilter', [{ address: hex(BOB) }]);
  const ranged = await ok('eth_newFilter', [{ fromBlock: '0x0', toBlock: '0x2' }]);
  assert.equal(await ok('eth_getFilterChanges', [id]), []);
  s.backend.mine([makeTx(), makeTx()], 2);
  s.backend.mine([makeTx()], 2);
  s.backend.mine([makeTx()], 2);
  const changes = await ok('eth_getFilterChanges', [id]);
  assert.equal(
    changes.map((l: any) => [l.blockNumber, l.logIndex]),
    [
      ['0x2', '0x1'],
      ['0x2', '0x3'],
      ['0x3', '0x1'],
      ['0x4', '0x1'],
    ],
  );
  assert.equal(await ok('eth_getFilterChanges', [id]), []);
  assert.equal(await ok('eth_getFilterChanges', [other]), []);
  // The numeric range bounds live changes too.
  assert.equal((await ok('eth_getFilterChanges', [ranged])).map((l: any) => l.blockNumber), ['0x2', '0x2', '0x2', '0x2']);
  // From latest to latest at query time.
  assert.is((await ok('eth_getFilterLogs', [id])).length, 1);
  assert.is((await ok('eth_getFilterLogs', [ranged])).length, 6);
  const blocks = await ok('eth_newBlockFilter');
  assert.equal((await s.call('eth_getFilterLogs', [blocks])).error, { code: -32000, message: 'filter not found' });
});

test("the chain's streams are observed only while a filter wants them (the chain makes no views for nobody)", async () => {
  const observed = () => ({ blocks: s.backend.accepted$.observed, pending: s.backend.pending$.observed });
  assert.equal(observed(), { blocks: false, pending: false }, 'no filter: neither stream');
  const pending = await ok('eth_newPendingTransactionFilter');
  assert.equal(observed(), { blocks: false, pending: true });
  const logs = await ok('eth_newFilter', [{ address: hex(TOKEN) }]);
  assert.equal(observed(), { blocks: false, pending: true }, 'a log filter reads the chain when polled: it needs no stream');
  const blocks = await ok('eth_newBlockFilter');
  assert.equal(observed(), { blocks: true, pending: true });
  await ok('eth_uninstallFilter', [pending]);
  assert.equal(observed(), { blocks: true, pending: false });
  s.clock.advance(6 * 60_000);
  assert.equal((await s.call('eth_getFilterChanges', [blocks])).error?.message, 'filter not found');
  assert.equal((await s.call('eth_getFilterChanges', [logs])).error?.message, 'filter not found');
  assert.equal(observed(), { blocks: false, pending: false }, 'an expired filter lets go');
});

test('a filter not polled for 5 minutes expires (injected clock); polling keeps it alive', async () => {
  const idle = await ok('eth_newBlockFilter');
  const polled = await ok('eth_newBlockFilter');
  for (let i = 0; i < 4; i++) {
    s.clock.advance(2 * 60_000);
    await ok('eth_getFilterChanges', [polled]);
  }
  assert.equal((await s.call('eth_getFilterChanges', [idle])).error, { code: -32000, message: 'filter not found' });
  assert.equal(await ok('eth_getFilterChanges', [polled]), []);
  s.clock.advance(5 * 60_000 + 1);
  assert.equal((await s.call('eth_getFilterChanges', [polled])).error, { code: -32000, message: 'filter not found' });
  assert.is(await ok('eth_uninstallFilter', [polled]), false);
});

test('an expired filter stops buffering: blocks after expiry are not kept for it', async () => {
  await ok('eth_newBlockFilter');
  s.clock.advance(6 * 60_000);
  s.backend.mine([]);
  const id = await ok('eth_newBlockFilter');
  assert.equal(await ok('eth_getFilterChanges', [id]), []);
});

test('bounded: the number of filters, and the changes buffered per filter', async () => {
  await s.close();
  s = await serve({ limits: { maxFilters: 3, maxChanges: 4 } });
  const ids = [await ok('eth_newBlockFilter'), await ok('eth_newPendingTransactionFilter'), await ok('eth_newFilter', [{}])];
  const r = await s.call('eth_newBlockFilter');
  assert.is(r.error?.code, -32000);
  assert.match(r.error!.message, /too many filters/);
  await ok('eth_uninstallFilter', [ids[2]]);
  await ok('eth_newBlockFilter');
  // A client that stops polling: its filter is dropped once its buffer would pass the bound.
  for (let i = 0; i < 4; i++) s.backend.admit(makeTx());
  assert.is((await ok('eth_getFilterChanges', [ids[1]])).length, 4);
  for (let i = 0; i < 5; i++) s.backend.admit(makeTx());
  assert.equal((await s.call('eth_getFilterChanges', [ids[1]])).error, { code: -32000, message: 'filter not found' });
  assert.ok(s.log.lines.some((l) => l.msg === 'eth filter dropped: changes not polled'));
});

test('bad filter arguments: -32602 naming the argument', async () => {
  assert.equal((await s.call('eth_getFilterChanges', [5])).error, { code: -32602, message: 'invalid argument 0: cannot unmarshal number into string' });
  assert.equal((await s.call('eth_getFilterChanges', [])).error, { code: -32602, message: 'missing value for required argument 0' });
  assert.equal((await s.call('eth_newFilter', [{ topics: 'x' }])).error, { code: -32602, message: 'invalid argument 0: topics: cannot unmarshal string into topic list' });
  assert.equal((await s.call('eth_newFilter', [{ fromBlock: 'soon' }])).error, { code: -32602, message: 'invalid argument 0: fromBlock: hex string without 0x prefix' });
  assert.equal((await s.call('eth_newPendingTransactionFilter', ['yes'])).error, { code: -32602, message: 'invalid argument 0: cannot unmarshal string into bool' });
  assert.equal((await s.call('eth_getFilterChanges', ['x'.repeat(200)])).error, { code: -32602, message: 'invalid argument 0: string longer than 128 characters' });
});

test('close(): filters end', async () => {
  const id = await ok('eth_newBlockFilter');
  s.rpc.close();
  assert.equal((await s.call('eth_getFilterChanges', [id])).error, { code: -32000, message: 'filter not found' });
});

/** One JSON-RPC call on a connection of its own from `localAddress` (127.0.0.0/8 is all loopback). */
function callFrom(localAddress: string, method: string, params: unknown[] = []): Promise<any> {
  return new Promise((resolve, reject) => {
    const u = new URL(s.url);
    const req = request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', agent: false, localAddress, headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve(JSON.parse(text)));
    });
    req.on('error', reject);
    req.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }));
  });
}

test('no single client holds them all: a quota per remote address, with an error naming it; others still install', async () => {
  await s.close();
  s = await serve({ limits: { maxFilters: 10, maxFiltersPerClient: 3 } });
  const mine: string[] = [];
  for (let i = 0; i < 3; i++) mine.push((await callFrom('127.0.0.1', i === 1 ? 'eth_newFilter' : 'eth_newBlockFilter', i === 1 ? [{}] : [])).result);
  const refused = await callFrom('127.0.0.1', 'eth_newPendingTransactionFilter');
  assert.equal(refused.error, { code: -32000, message: 'too many filters installed by this client (at most 3): uninstall unused ones' });
  // Another address is not held back by the first one's filters.
  assert.match((await callFrom('127.0.0.2', 'eth_newBlockFilter')).result, ID);
  // Polling keeps a filter, but not a slot beyond the quota; uninstalling frees one.
  assert.equal((await callFrom('127.0.0.1', 'eth_getFilterChanges', [mine[0]])).result, []);
  assert.is((await callFrom('127.0.0.1', 'eth_uninstallFilter', [mine[0]])).result, true);
  assert.match((await callFrom('127.0.0.1', 'eth_newBlockFilter')).result, ID);
  // An expired filter frees its slot too.
  s.clock.advance(6 * 60_000);
  assert.match((await callFrom('127.0.0.1', 'eth_newBlockFilter')).result, ID);
  // Over WebSocket, the quota is the connection's.
  const c = new FakeConnection();
  s.rpc.websocket(c);
  for (let i = 0; i < 4; i++) c.receive(JSON.stringify({ jsonrpc: '2.0', id: i, method: 'eth_newBlockFilter' }));
  await new Promise((r) => setImmediate(r));
  assert.equal(c.messages.map((m) => m.error?.message ?? 'ok'), ['ok', 'ok', 'ok', 'too many filters installed by this client (at most 3): uninstall unused ones']);
});

test('filters are cheap: accepted blocks cost log filters nothing; a poll reads the logs since the last from the chain', async () => {
  await s.close();
  s = await serve({ limits: { maxFilters: 2_000, maxFiltersPerClient: 2_000 } });
  const ids: string[] = [];
  for (let i = 0; i < 1_000; i++) ids.push(await ok('eth_newFilter', [{ topics: [hex(TRANSFER_TOPIC), hex(filled(1 + (i % 10)))] }]));
  assert.is(s.backend.accepted$.observed, false, 'log filters do not listen to blocks');
  s.backend.calls.length = 0;
  s.backend.mine(Array.from({ length: 10 }, () => makeTx()), 10);
  s.backend.mine(Array.from({ length: 10 }, () => makeTx()), 10);
  assert.equal(s.backend.calls, [], 'mining touched no filter');
  const changes = await ok('eth_getFilterChanges', [ids[3]]);
  assert.is(changes.length, 20, 'one log of each of the 20 txs matches');
  const reads = s.backend.calls.filter((c) => c.method === 'logs');
  assert.is(reads.length, 1);
  assert.equal([(reads[0]!.args[0] as any).fromBlock, (reads[0]!.args[0] as any).toBlock], [1n, 2n]);
  assert.equal(await ok('eth_getFilterChanges', [ids[3]]), []);
});

test.run();
