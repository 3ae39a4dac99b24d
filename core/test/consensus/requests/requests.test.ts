import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Id, silentLogger, type ShortId } from '@cornice/sdk';
import { Benchlist } from '../../../src/consensus/requests/benchlist.js';
import { RequestSender } from '../../../src/consensus/requests/sender.js';
import { AdaptiveTimeout, DEFAULT_TIMEOUTS, timeoutConfigProblem } from '../../../src/consensus/requests/timeouts.js';
import { EventQueue } from '../../../src/testing/simulation.js';
import type { LoopbackTarget } from '../../../src/consensus/snowman/loopback.js';
import { nodeIdOf, RecordingTransport } from '../helpers.js';

const test = suite('requests: timeouts, benchlist, sender');

test('adaptive timeout: starts at the initial value, follows coefficient × average latency within floor and ceiling', () => {
  let now = 0;
  const t = new AdaptiveTimeout({ initialMs: 5_000, minimumMs: 2_000, maximumMs: 10_000, coefficient: 2, halflifeMs: 1_000 }, () => now);
  assert.is(t.currentMs, 5_000);
  for (let i = 0; i < 50; i++) {
    now += 1_000;
    t.observe(10);
  }
  assert.is(t.currentMs, 2_000, 'fast answers: down to the floor');
  for (let i = 0; i < 50; i++) {
    now += 1_000;
    t.observe(4_000);
  }
  assert.ok(Math.abs(t.currentMs - 8_000) < 10, `2 × ~4000 ms, got ${t.currentMs}`);
  for (let i = 0; i < 50; i++) {
    now += 1_000;
    t.observe(60_000);
  }
  assert.is(t.currentMs, 10_000, 'slow answers: up to the ceiling');
  assert.is(timeoutConfigProblem(DEFAULT_TIMEOUTS), undefined);
  assert.match(timeoutConfigProblem({ ...DEFAULT_TIMEOUTS, minimumMs: 20_000 })!, /--network-minimum-timeout/);
  assert.throws(() => new AdaptiveTimeout({ ...DEFAULT_TIMEOUTS, coefficient: 0 }, () => 0), /positive/);
});

test('benchlist: benched after N consecutive failures spanning the minimum duration, for the bench duration; an answer forgives', () => {
  let now = 0;
  const b = new Benchlist({ failThreshold: 3, minFailingDurationMs: 1_000, durationMs: 5_000 }, () => now);
  assert.not.ok(b.failed('a'));
  assert.not.ok(b.failed('a'));
  assert.not.ok(b.failed('a'), 'three failures within a burst are not enough');
  now = 1_000;
  assert.ok(b.failed('a'), 'failing for a second, benched');
  assert.ok(b.isBenched('a'));
  assert.is(b.size, 1);
  now = 5_999;
  assert.ok(b.isBenched('a'));
  now = 6_000;
  assert.not.ok(b.isBenched('a'), 'the bench runs out');
  b.failed('c');
  b.failed('c');
  b.answered('c');
  now = 8_000;
  assert.not.ok(b.failed('c'), 'an answer cleared the record');
});

test('benchlist: a benched validator is back once heard from (it was benched for the whole duration before)', () => {
  let now = 0;
  const b = new Benchlist({ failThreshold: 2, minFailingDurationMs: 0, durationMs: 900_000 }, () => now);
  b.failed('a');
  assert.ok(b.failed('a'));
  now = 60_000;
  assert.ok(b.isBenched('a'));
  assert.ok(b.answered('a'), 'it was benched');
  assert.not.ok(b.isBenched('a'), 'a message of its own: back at once');
  assert.not.ok(b.answered('a'));
});

test('benchlist: benching stops at maxPortion of the stake; isFailing after three failures in a row', () => {
  const weights: Record<string, number> = { a: 20, b: 20, c: 20, d: 20, e: 20 };
  const b = new Benchlist({ failThreshold: 1, minFailingDurationMs: 0, durationMs: 60_000, maxPortion: 0.25 }, () => 0, {
    weightOf: (k) => weights[k] ?? 0,
    total: () => 100,
  });
  assert.ok(b.failed('a'), 'a fifth of the stake fits in a quarter');
  assert.not.ok(b.failed('b'), 'two fifths do not: b keeps being asked (its queries time out)');
  assert.is(b.size, 1);
  assert.ok(b.isFailing('b') === false && (b.failed('b'), b.failed('b'), b.isFailing('b')), 'three failures in a row: not answering');
  b.answered('b');
  assert.not.ok(b.isFailing('b'));
  assert.throws(() => new Benchlist({ failThreshold: 1, minFailingDurationMs: 0, durationMs: 1, maxPortion: 2 }, () => 0), /maxPortion/);
});

function senderWith(opts: { connected: (id: ShortId) => boolean; failThreshold?: number }) {
  const clock = new EventQueue();
  const link = new RecordingTransport(nodeIdOf(1));
  const timeouts = new AdaptiveTimeout({ initialMs: 2_000, minimumMs: 500, maximumMs: 10_000, coefficient: 2, halflifeMs: 60_000 }, () => clock.now());
  const benchlist = new Benchlist({ failThreshold: opts.failThreshold ?? 3, minFailingDurationMs: 0, durationMs: 60_000 }, () => clock.now());
  const sender = new RequestSender({ link, isConnected: opts.connected, scheduler: clock, timeouts, benchlist, log: silentLogger });
  const heard: string[] = [];
  const engine: LoopbackTarget = {
    onPushQuery: async () => void heard.push('pushQuery'),
    onGet: async () => void heard.push('get'),
    onChits: (from, rid) => void heard.push(`chits ${from.toString().slice(0, 4)} ${rid}`),
    onPut: async (_from, rid) => void heard.push(`put ${rid}`),
    onQueryFailed: (from, rid) => void heard.push(`failed ${from === a ? 'a' : from === b ? 'b' : '?'} ${rid} at ${clock.now()}`),
  };
  sender.attach(engine);
  return { clock, link, timeouts, benchlist, sender, heard };
}
const a = nodeIdOf(2);
const b = nodeIdOf(3);

test('sender: a query to a node that is not connected is not sent; it fails on the next turn when others of the poll were sent', () => {
  const s = senderWith({ connected: (id) => id === a });
  s.sender.pushQuery([a, b], 7, new Uint8Array([1]));
  const sent = s.link.take('pushQuery');
  assert.equal(sent.map((m) => m.to), [a], 'only the connected one is sent to');
  assert.equal(s.heard, []);
  s.clock.runNext();
  assert.equal(s.heard, ['failed b 7 at 0'], 'the poll need not wait for a node it could not reach');
  s.clock.runNext();
  assert.equal(s.heard, ['failed b 7 at 0', 'failed a 7 at 2000']);
  assert.is(s.sender.stats.timedOut, 1);
  assert.is(s.sender.stats.outstanding, 0);
});

test('sender: a poll that reached no one fails at its deadline, not at once (no tight repoll loop)', () => {
  const s = senderWith({ connected: () => false });
  s.sender.pushQuery([a, b], 8, new Uint8Array([1]));
  assert.equal(s.link.take('pushQuery'), []);
  assert.is(s.clock.peekTime(), 2_000);
  s.clock.runNext();
  s.clock.runNext();
  assert.equal(s.heard, ['failed a 8 at 2000', 'failed b 8 at 2000']);
});

test('sender: an answer clears the deadline, is passed on once, and its latency shortens the next deadline', () => {
  const s = senderWith({ connected: () => true });
  s.sender.get(a, 9, Id.empty);
  s.clock.advanceTo(100);
  s.sender.onPut(a, 9, new Uint8Array([1]));
  s.sender.onPut(a, 9, new Uint8Array([1]));
  s.sender.onChits(b, 9, Id.empty);
  assert.equal(s.heard, ['put 9'], 'the duplicate and the unsolicited answer are dropped');
  assert.is(s.clock.pending, 0);
  assert.ok(s.timeouts.currentMs < 2_000);
});

test('sender: repeated timeouts bench a validator; then its requests fail on the next turn without being sent', () => {
  const s = senderWith({ connected: (id) => id !== a, failThreshold: 2 });
  for (let rid = 1; rid <= 2; rid++) {
    s.sender.pushQuery([a], rid, new Uint8Array([1]));
    while (s.clock.runNext());
  }
  assert.is(s.sender.status(a), 'disconnected', 'not connected comes first');
  assert.ok(s.benchlist.isBenched(a.key));
  s.heard.length = 0;
  const before = s.clock.now();
  s.sender.pushQuery([a], 3, new Uint8Array([1]));
  assert.is(s.clock.peekTime(), before, 'fails on the next turn');
  s.clock.runNext();
  assert.equal(s.heard, [`failed a 3 at ${before}`]);
  assert.is(s.sender.status(b), 'reachable');
  s.benchlist.failed(b.key);
  s.benchlist.failed(b.key);
  assert.is(s.sender.status(b), 'benched', 'connected but benched');
});

test('sender: stop cancels every deadline and delivers nothing more', () => {
  const s = senderWith({ connected: () => true });
  s.sender.pushQuery([a, b], 1, new Uint8Array([1]));
  s.sender.stop();
  assert.is(s.clock.pending, 0);
  s.sender.onChits(a, 1, Id.empty);
  assert.equal(s.heard, []);
});

test('sender: status says unresponsive after three timeouts in a row; any message from the node clears it', () => {
  const s = senderWith({ connected: () => true, failThreshold: 100 });
  for (let rid = 1; rid <= 3; rid++) {
    assert.is(s.sender.status(a), 'reachable');
    s.sender.pushQuery([a], rid, new Uint8Array([1]));
    s.clock.runNext();
  }
  assert.is(s.sender.status(a), 'unresponsive');
  void s.sender.onPushQuery(a, 50, new Uint8Array([1]));
  assert.is(s.sender.status(a), 'reachable', 'it queried us: it is alive');
});

test.run();
