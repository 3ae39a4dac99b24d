/**
 * Subscription notifications at a bounded cost (issue 32, point 7; src/rpc/notifier.ts, outbox.ts): an
 * accepted block's listener only queues work, each log is serialized once per block whatever the
 * number of subscriptions, delivery runs in slices with turns of the event loop between, and a
 * connection that falls too far behind is closed with 1008 "subscription queue overflow".
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FakeConnection, makeTx, serve, type Served } from './rpc-fake-backend.js';

let s: Served;
test.after.each(async () => {
  await s?.close();
});

const settle = () => new Promise((r) => setImmediate(r));

/** Turns of the event loop until `done()`, at most `ms` (then the test fails naming `what`). */
async function until(what: string, done: () => boolean, ms = 10_000): Promise<void> {
  const t0 = performance.now();
  while (!done()) {
    if (performance.now() - t0 > ms) assert.unreachable(`${what}: not within ${ms} ms`);
    await settle();
  }
}

async function connect(subscriptions: number, params: unknown[] = ['logs']): Promise<FakeConnection> {
  const c = new FakeConnection();
  s.rpc.websocket(c);
  for (let i = 0; i < subscriptions; i++) c.receive(JSON.stringify({ jsonrpc: '2.0', id: i, method: 'eth_subscribe', params }));
  await settle();
  return c;
}

const notes = (c: FakeConnection) => c.sent.filter((t) => t.startsWith('{"jsonrpc":"2.0","method":"eth_subscription"')).length;

test('20 connections x 256 logs subscriptions, a block of 200 logs: the accept returns at once, the loop turns, each log serialized once; connections that fall behind are closed', async () => {
  s = await serve();
  const conns: FakeConnection[] = [];
  for (let i = 0; i < 20; i++) conns.push(await connect(256));
  let turns = 0;
  let counting = true;
  const tick = (): void => {
    turns++;
    if (counting) setImmediate(tick);
  };
  setImmediate(tick);
  const t0 = performance.now();
  s.backend.mine(Array.from({ length: 20 }, () => makeTx()), 10);
  const acceptMs = performance.now() - t0;
  // 256 subscriptions x 200 logs = 51,200 notifications per connection: more than the 20,000 one may have waiting.
  await until('every connection closed', () => conns.every((c) => c.closed));
  counting = false;
  assert.ok(acceptMs < 100, `the accept took ${acceptMs.toFixed(1)} ms`);
  assert.ok(turns >= 3, `the event loop turned ${turns} times while the notifications were made`);
  for (const c of conns) {
    assert.is(c.closeCode, 1008);
    assert.is(c.closeReason, 'subscription queue overflow');
    assert.ok(notes(c) <= 20_001 + 2_000, `${notes(c)} notifications written before the drop`);
  }
  assert.is(s.rpc.notifier.stats.logsSerialized, 200, 'each log serialized once');
  assert.is(s.rpc.notifier.totalQueued, 0, 'nothing left waiting for closed connections');
  // The front end goes on: a new subscriber gets the next block.
  const fresh = await connect(1);
  s.backend.mine([makeTx()], 3);
  await until('the new subscriber notified', () => notes(fresh) >= 3);
  assert.is(fresh.closed, false);
});

test('bounded outboxes: a connection with too much waiting is closed, then the one with most waiting over all; the others get every notification', async () => {
  s = await serve({ limits: { maxQueuedNotifications: 100, maxQueuedNotificationsTotal: 150, notifyBytesPerTurn: 1 } });
  const a = await connect(1);
  const b = await connect(3);
  s.backend.mine(Array.from({ length: 6 }, () => makeTx()), 10);
  // b: 180 for 3 subscriptions > 100 waiting; a: 60.
  await until('b closed', () => b.closed);
  assert.equal([b.closeCode, b.closeReason], [1008, 'subscription queue overflow']);
  await until('a notified', () => notes(a) >= 60);
  assert.is(a.closed, false);

  const c = await connect(2);
  s.backend.mine(Array.from({ length: 6 }, () => makeTx()), 10);
  // a 60 + c 120 > 150 in all: c, with the most waiting, goes; a keeps all of its own.
  await until('c closed', () => c.closed);
  assert.is(c.closeReason, 'subscription queue overflow');
  await until('a notified again', () => notes(a) >= 120);
  assert.is(a.closed, false);
  assert.is(s.rpc.notifier.outboxes.dropped, 2);
  const logIndexes = a.messages.filter((m) => m.method === 'eth_subscription').map((m) => `${m.params.result.blockNumber}/${m.params.result.logIndex}`);
  assert.is(new Set(logIndexes).size, 120, 'each once, none lost');
});

test('many subscriptions with one filter match once; others still filter', async () => {
  s = await serve();
  const c = await connect(50, ['logs', { topics: [null, '0x' + '02'.repeat(32)] }]);
  const all = await connect(1);
  s.backend.mine(Array.from({ length: 10 }, () => makeTx()), 10);
  await until('all notified', () => notes(all) >= 100);
  await until('c notified', () => notes(c) >= 500);
  await settle();
  assert.is(notes(c), 500, '10 matching logs x 50 subscriptions');
  assert.is(s.rpc.notifier.stats.logsSerialized, 100);
});

test.run();
