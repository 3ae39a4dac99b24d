import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BOB, TOKEN, TRANSFER_TOPIC, filled, hex, makeTx, serve, type Served } from './rpc-fake-backend.js';

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

test.run();
