/**
 * The request budget's rules on an injected clock (request-budget.ts): request rate, requests in
 * progress (and their expiry), reply bytes, busy time (overlapping requests counted once), the pool
 * all non-validators share, and the validator allocation.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { DEFAULT_REQUEST_BUDGET, RequestBudget, type Allocation, type RequestBudgetLimits, type Ticket } from '../../src/network/request-budget.js';

const test = suite('network request budget');

function clock() {
  let t = 5_000_000;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

const open: Allocation = { requestsPerSecond: 1e6, requestsBurst: 1e6, maxInFlight: 1e6, replyBytesPerSecond: 1e12, replyBytesBurst: 1e12, busyShare: 1, busyBurstMs: 0 };
const limits = (o: { atLarge?: Partial<Allocation>; pool?: Partial<Allocation>; validator?: Partial<Allocation>; maxRequestMs?: number }): RequestBudgetLimits => ({
  validator: { ...open, ...o.validator },
  atLarge: { ...open, ...o.atLarge },
  atLargePool: { ...open, ...o.pool },
  maxRequestMs: o.maxRequestMs ?? 30_000,
});
const ok = (t: ReturnType<RequestBudget['admit']>): t is Ticket => !('refused' in t);
const why = (t: ReturnType<RequestBudget['admit']>) => ('refused' in t ? `${t.refused}${t.pool ? ' (pool)' : ''}` : 'admitted');

test('request rate: the burst, then requestsPerSecond', () => {
  const c = clock();
  const b = new RequestBudget(limits({ atLarge: { requestsPerSecond: 10, requestsBurst: 3 } }), c.now);
  for (let i = 0; i < 3; i++) assert.ok(ok(b.admit('p', false)), `request ${i}`);
  assert.is(why(b.admit('p', false)), 'request rate');
  c.advance(100);
  assert.ok(ok(b.admit('p', false)), 'one more after 100 ms at 10/s');
  assert.is(why(b.admit('p', false)), 'request rate');
  assert.ok(ok(b.admit('q', false)), 'another peer has its own');
});

test('requests in progress: at most maxInFlight; a finished one frees its place; one older than maxRequestMs stops counting', () => {
  const c = clock();
  const b = new RequestBudget(limits({ atLarge: { maxInFlight: 2 }, maxRequestMs: 1_000 }), c.now);
  const t1 = b.admit('p', false) as Ticket;
  const t2 = b.admit('p', false) as Ticket;
  assert.is(why(b.admit('p', false)), 'requests in progress');
  t1.finish();
  t1.finish(); // twice: nothing more
  const t3 = b.admit('p', false);
  assert.ok(ok(t3));
  assert.is(why(b.admit('p', false)), 'requests in progress');
  c.advance(1_000); // t2 and t3 never finish: after maxRequestMs they stop counting
  assert.ok(ok(b.admit('p', false)));
  void t2;
});

test('reply bytes: a peer in debt gets nothing until it refills', () => {
  const c = clock();
  const b = new RequestBudget(limits({ atLarge: { replyBytesPerSecond: 1_000, replyBytesBurst: 2_000 } }), c.now);
  (b.admit('p', false) as Ticket).finish();
  b.replied('p', false, 2_000);
  assert.ok(ok(b.admit('p', false)), 'at zero, not in debt');
  b.replied('p', false, 1_500);
  assert.is(why(b.admit('p', false)), 'reply bytes');
  c.advance(1_499);
  assert.is(why(b.admit('p', false)), 'reply bytes');
  c.advance(1);
  assert.ok(ok(b.admit('p', false)));
});

test('busy time: overlapping requests count once; beyond burst + share the peer waits', () => {
  const c = clock();
  const b = new RequestBudget(limits({ atLarge: { busyShare: 0.25, busyBurstMs: 100 } }), c.now);
  // Three requests in progress together for 100 ms: 100 ms busy, not 300.
  const ts = [b.admit('p', false), b.admit('p', false), b.admit('p', false)] as Ticket[];
  c.advance(100);
  for (const t of ts) t.finish();
  assert.ok(ok(b.admit('p', false)), 'exactly the burst used: not in debt');
  c.advance(40); // this one keeps it busy 40 ms more: in debt by 40 ms - 40 * 0.25 = 30 ms
  assert.is(why(b.admit('p', false)), 'busy time', 'refused while its request is still in progress');
  c.advance(200); // the one in progress keeps charging: debt 30 + 200 - 50 = 180 ms
  assert.is(why(b.admit('p', false)), 'busy time');
});

test('busy time refills at busyShare of the wall clock', () => {
  const c = clock();
  const b = new RequestBudget(limits({ atLarge: { busyShare: 0.25, busyBurstMs: 100 } }), c.now);
  const t = b.admit('p', false) as Ticket;
  c.advance(300);
  t.finish(); // 300 ms busy against a full burst of 100: 200 ms of debt
  c.advance(799);
  assert.is(why(b.admit('p', false)), 'busy time');
  c.advance(1);
  assert.ok(ok(b.admit('p', false)), '200 ms of debt repaid at 0.25 in 800 ms');
});

test('non-validators also share the pool: many fresh certificates do not multiply the allocation; validators are not in it', () => {
  const c = clock();
  const b = new RequestBudget(limits({ atLarge: { maxInFlight: 2 }, pool: { maxInFlight: 5, replyBytesPerSecond: 1, replyBytesBurst: 10_000 } }), c.now);
  const admitted = Array.from({ length: 20 }, (_, i) => b.admit(`sybil${i}`, false)).filter(ok);
  assert.is(admitted.length, 5);
  assert.is(why(b.admit('sybil99', false)), 'requests in progress (pool)');
  assert.ok(ok(b.admit('v1', true)), 'a validator is not held to the pool');
  for (const t of admitted) t.finish();
  b.replied('sybil1', false, 10_001);
  assert.is(why(b.admit('sybil2', false)), 'reply bytes (pool)', 'bytes sent to one non-validator count for all');
  assert.ok(ok(b.admit('v1', true)));
});

test('the defaults: validators get more of everything than non-validators, and are not bounded by busy time', () => {
  const { validator: v, atLarge: a, atLargePool: p } = DEFAULT_REQUEST_BUDGET;
  for (const k of ['requestsPerSecond', 'requestsBurst', 'maxInFlight', 'replyBytesPerSecond', 'replyBytesBurst'] as const) {
    assert.ok(v[k] > a[k], k);
    assert.ok(p[k] >= a[k], `pool ${k}`);
  }
  assert.is(v.busyShare, 1);
  assert.ok(a.busyShare < p.busyShare && p.busyShare < 1);
});

test.run();
