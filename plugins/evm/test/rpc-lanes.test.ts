/**
 * The lanes eth_call / eth_estimateGas and block scans run in (src/rpc/lanes.ts): bounded
 * concurrency, one job per connection, round-robin over addresses and connections, a slot left for
 * other addresses, bounded queues, and waiting jobs dropped when their request aborts.
 */
import { setMaxListeners } from 'node:events';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Lane } from '../src/rpc/lanes.js';
import type { RpcClient } from '../src/rpc/request.js';

const client = (connection: string, address = '127.0.0.1'): RpcClient => ({ connection, address });

/** A job the test ends: `started` when the lane ran it, `finish()` settles it. */
function job(log: string[], name: string) {
  let finish!: () => void;
  const done = new Promise<void>((r) => (finish = r));
  return {
    finish: () => finish(),
    fn: async () => {
      log.push(name);
      await done;
      return name;
    },
  };
}

const settle = () => new Promise((r) => setImmediate(r));
const never = new AbortController().signal;
// Every job of these tests listens to one of two signals.
setMaxListeners(0, never);

test('at most `concurrency` jobs run, at most one per connection; the others wait in order', async () => {
  const lane = new Lane('eth_call', { concurrency: 2, perConnectionQueue: 10, queue: 100 });
  const log: string[] = [];
  const a1 = job(log, 'a1');
  const a2 = job(log, 'a2');
  const b1 = job(log, 'b1');
  const runs = [lane.run(client('a'), never, a1.fn), lane.run(client('a'), never, a2.fn), lane.run(client('b', '10.0.0.2'), never, b1.fn)];
  await settle();
  assert.equal(log, ['a1', 'b1'], "a's second call waits for its first, b's runs beside it");
  assert.is(lane.running, 2);
  assert.is(lane.queued, 1);
  a1.finish();
  await settle();
  assert.equal(log, ['a1', 'b1', 'a2']);
  a2.finish();
  b1.finish();
  assert.equal(await Promise.all(runs), ['a1', 'a2', 'b1']);
  assert.is(lane.running, 0);
});

test("one connection's hundred jobs do not wait in front of another connection's one (round-robin)", async () => {
  const lane = new Lane('eth_call', { concurrency: 1, perConnectionQueue: 200, queue: 1000 });
  const log: string[] = [];
  const jobs = Array.from({ length: 100 }, (_, i) => job(log, `flood${i}`));
  const flood = jobs.map((j) => lane.run(client('flood'), never, j.fn));
  await settle();
  const honest = job(log, 'honest');
  const h = lane.run(client('honest'), never, honest.fn);
  jobs[0]!.finish();
  await settle();
  assert.equal(log, ['flood0', 'honest'], 'the honest job runs next, not after 99 more');
  honest.finish();
  await h;
  for (const j of jobs) j.finish();
  await Promise.all(flood);
});

test('one address runs at most concurrency - 1 jobs: a slot stays for other addresses', async () => {
  const lane = new Lane('eth_call', { concurrency: 3, perConnectionQueue: 10, queue: 100 });
  const log: string[] = [];
  const jobs = ['c1', 'c2', 'c3', 'c4'].map((c) => ({ c, j: job(log, c) }));
  const runs = jobs.map(({ c, j }) => lane.run(client(c, '10.0.0.66'), never, j.fn));
  await settle();
  assert.equal(log, ['c1', 'c2'], 'two of three slots for the busy address');
  const other = job(log, 'other');
  const o = lane.run(client('x', '10.0.0.7'), never, other.fn);
  await settle();
  assert.equal(log, ['c1', 'c2', 'other']);
  other.finish();
  await o;
  for (const { j } of jobs) j.finish();
  await Promise.all(runs);
});

test('bounded queues: per connection and in all, -32005 at once', async () => {
  const lane = new Lane('eth_call', { concurrency: 1, perConnectionQueue: 2, queue: 3 });
  const log: string[] = [];
  const running = job(log, 'running');
  const r = lane.run(client('a'), never, running.fn);
  await settle();
  const waiting = [job(log, 'w1'), job(log, 'w2')];
  const w = waiting.map((j) => lane.run(client('a'), never, j.fn));
  const refused = (await lane.run(client('a'), never, async () => 'ran').catch((e: unknown) => e)) as { rpcCode: number; message: string };
  assert.is(refused.rpcCode, -32005);
  assert.is(refused.message, 'too many eth_call requests waiting on this connection (at most 2): try again later');
  const other = job(log, 'b');
  const b = lane.run(client('b'), never, other.fn);
  const full = (await lane.run(client('c'), never, async () => 'ran').catch((e: unknown) => e)) as Error;
  assert.is(full.message, 'too many eth_call requests waiting (at most 3): try again later');
  for (const j of [running, ...waiting, other]) j.finish();
  await Promise.all([r, ...w, b]);
});

test('a waiting job whose request aborts (client gone, deadline) never runs; a running one gets the signal', async () => {
  const lane = new Lane('eth_call', { concurrency: 1, perConnectionQueue: 100, queue: 100 });
  const gone = new AbortController();
  setMaxListeners(0, gone.signal);
  const log: string[] = [];
  let seen: AbortSignal | undefined;
  const first = lane.run(client('a'), gone.signal, async () => {
    seen = gone.signal;
    log.push('first');
    await new Promise<void>((resolve) => gone.signal.addEventListener('abort', () => resolve()));
    return 'stopped';
  });
  const rest = Array.from({ length: 50 }, (_, i) =>
    lane.run(client('a'), gone.signal, async () => {
      log.push(`rest${i}`);
      return 'ran';
    }),
  );
  await settle();
  assert.is(lane.queued, 50);
  gone.abort(new Error('client went away'));
  assert.is(lane.queued, 0, 'dropped from the queue at once');
  const outcomes = await Promise.allSettled(rest);
  assert.ok(outcomes.every((o) => o.status === 'rejected' && (o.reason as Error).message === 'client went away'));
  assert.is(await first, 'stopped');
  assert.ok(seen?.aborted);
  assert.equal(log, ['first'], 'none of the waiting jobs ran');
  assert.is(lane.running, 0);
  assert.is(await lane.run(client('b'), never, async () => 'next'), 'next');
});

test.run();
