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

/** Lets the connection's pending dispatches settle. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

function connect(): FakeConnection {
  const c = new FakeConnection();
  s.rpc.websocket(c);
  return c;
}

async function rpc(c: FakeConnection, method: string, params: unknown[] = [], id = Math.floor(Math.random() * 1e9)): Promise<any> {
  c.receive(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
  await settle();
  const reply = c.messages.find((m) => m.id === id);
  assert.ok(reply, `reply to ${method}`);
  return reply;
}

const notifications = (c: FakeConnection, sub: string) =>
  c.messages.filter((m) => m.method === 'eth_subscription' && m.params.subscription === sub).map((m) => m.params.result);

test('the same methods over WebSocket, batches included', async () => {
  const c = connect();
  assert.equal(await rpc(c, 'eth_chainId', [], 1), { jsonrpc: '2.0', id: 1, result: '0xa866' });
  c.receive(JSON.stringify([{ jsonrpc: '2.0', id: 2, method: 'net_version' }, { jsonrpc: '2.0', id: 3, method: 'eth_nope' }]));
  await settle();
  assert.equal(c.messages.at(-1), [
    { jsonrpc: '2.0', id: 2, result: '1' },
    { jsonrpc: '2.0', id: 3, error: { code: -32601, message: 'the method eth_nope does not exist/is not available' } },
  ]);
  c.receive('{oops');
  await settle();
  assert.equal(c.messages.at(-1), { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } });
});

test('newHeads: geth notification format, the subscription reply first', async () => {
  const c = connect();
  const { result: sub } = await rpc(c, 'eth_subscribe', ['newHeads'], 10);
  assert.match(sub, /^0x[0-9a-f]{1,32}$/);
  const { block } = s.backend.mine([makeTx()]);
  const [head] = notifications(c, sub);
  assert.is(head.number, '0x1');
  assert.is(head.hash, hex(block.header.hash));
  assert.is(head.baseFeePerGas, '0x5d21dba00');
  assert.not.ok('transactions' in head);
  const raw = c.sent.at(-1)!;
  assert.ok(raw.startsWith(`{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"${sub}","result":{`), raw.slice(0, 120));
});

test('a block accepted while the subscribe call is in flight is announced after its reply', async () => {
  const c = connect();
  c.receive(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] }));
  s.backend.mine([]); // before the reply went out
  await settle();
  const [reply, note] = c.messages;
  assert.is(reply.id, 1);
  assert.is(note.method, 'eth_subscription');
  assert.is(note.params.subscription, reply.result);
});

test('logs: filtered by address and topics, one notification per log', async () => {
  const c = connect();
  const { result: all } = await rpc(c, 'eth_subscribe', ['logs']);
  const { result: some } = await rpc(c, 'eth_subscribe', ['logs', { address: [hex(TOKEN)], topics: [hex(TRANSFER_TOPIC), hex(filled(2))] }]);
  const { result: none } = await rpc(c, 'eth_subscribe', ['logs', { address: hex(BOB) }]);
  const tx = makeTx();
  s.backend.mine([tx], 3);
  assert.is(notifications(c, all).length, 3);
  const [log] = notifications(c, some);
  assert.equal(notifications(c, some).length, 1);
  assert.is(log.logIndex, '0x1');
  assert.is(log.transactionHash, hex(tx.hash));
  assert.is(log.removed, false);
  assert.equal(notifications(c, none), []);
});

test('newPendingTransactions: hashes, or full transactions; newAcceptedTransactions', async () => {
  const c = connect();
  const { result: hashes } = await rpc(c, 'eth_subscribe', ['newPendingTransactions']);
  const { result: full } = await rpc(c, 'eth_subscribe', ['newPendingTransactions', true]);
  const { result: accepted } = await rpc(c, 'eth_subscribe', ['newAcceptedTransactions']);
  const tx = makeTx();
  s.backend.admit(tx);
  assert.equal(notifications(c, hashes), [hex(tx.hash)]);
  assert.is(notifications(c, full)[0].hash, hex(tx.hash));
  assert.is(notifications(c, full)[0].blockNumber, null);
  s.backend.mine([tx]);
  assert.equal(notifications(c, accepted), [hex(tx.hash)]);
});

test('eth_unsubscribe ends a subscription; unknown ids: false', async () => {
  const c = connect();
  assert.is(s.backend.accepted$.observed, false, 'nothing subscribed: the chain makes no block views');
  const { result: sub } = await rpc(c, 'eth_subscribe', ['newHeads']);
  assert.is(s.backend.accepted$.observed, true);
  const { result: pending } = await rpc(c, 'eth_subscribe', ['newPendingTransactions']);
  assert.is(s.backend.pending$.observed, true);
  assert.is((await rpc(c, 'eth_unsubscribe', [pending])).result, true);
  assert.is(s.backend.pending$.observed, false, 'the last listener gone, the stream is let go');
  assert.is((await rpc(c, 'eth_unsubscribe', [sub])).result, true);
  assert.is(s.backend.accepted$.observed, false);
  assert.is((await rpc(c, 'eth_unsubscribe', [sub])).result, false);
  s.backend.mine([]);
  assert.equal(notifications(c, sub), []);
});

test('subscriptions are per connection and end with it', async () => {
  const a = connect();
  const b = connect();
  const { result: sub } = await rpc(a, 'eth_subscribe', ['newHeads']);
  assert.is((await rpc(b, 'eth_unsubscribe', [sub])).result, false, 'another connection cannot end it');
  a.close();
  const before = a.sent.length;
  s.backend.mine([]);
  assert.is(a.sent.length, before);
  // Nothing is left listening: a later block reaches only live connections.
  const { result: bsub } = await rpc(b, 'eth_subscribe', ['newHeads']);
  s.backend.mine([]);
  assert.is(notifications(b, bsub).length, 1);
});

test('bad subscriptions: clear errors', async () => {
  const c = connect();
  assert.equal((await rpc(c, 'eth_subscribe', [])).error, { code: -32602, message: 'expected subscription name as first argument' });
  assert.equal((await rpc(c, 'eth_subscribe', ['blocks'])).error, { code: -32601, message: 'no "blocks" subscription in eth namespace' });
  assert.equal((await rpc(c, 'eth_subscribe', ['logs', { address: '0x12' }])).error, {
    code: -32602,
    message: 'invalid argument 1: address: hex string has length 2, want 40 for address',
  });
  assert.equal((await rpc(c, 'eth_subscribe', ['newPendingTransactions', 'yes'])).error, { code: -32602, message: 'invalid argument 1: cannot unmarshal string into bool' });
  assert.equal((await rpc(c, 'eth_subscribe', ['newHeads', {}])).error, { code: -32602, message: 'too many arguments, want at most 1' });
  assert.equal((await rpc(c, 'eth_subscribe', { 0: 'newHeads' } as any)).error, { code: -32602, message: 'non-array args' });
});

test('bounded: subscriptions per connection, requests in flight', async () => {
  await s.close();
  s = await serve({ limits: { maxSubscriptions: 2, maxInFlight: 3 } });
  const c = connect();
  await rpc(c, 'eth_subscribe', ['newHeads']);
  await rpc(c, 'eth_subscribe', ['newHeads']);
  const r = await rpc(c, 'eth_subscribe', ['newHeads']);
  assert.is(r.error.code, -32000);
  assert.match(r.error.message, /too many subscriptions/);
  // A client that floods requests without waiting is disconnected.
  s.backend.gasPrice = () => new Promise(() => {});
  for (let i = 0; i < 4; i++) c.receive(JSON.stringify({ jsonrpc: '2.0', id: 100 + i, method: 'eth_gasPrice' }));
  assert.ok(c.closed);
  assert.is(c.closeCode, 1008);
});

test('close(): every connection is closed and its subscriptions end', async () => {
  const c = connect();
  await rpc(c, 'eth_subscribe', ['newHeads']);
  s.rpc.close();
  assert.ok(c.closed);
  const before = c.sent.length;
  s.backend.mine([]);
  assert.is(c.sent.length, before);
});

test.run();
