import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EventWaiter } from '../../src/index.js';

/** Timers the test fires by hand; records the delays asked for. */
function manualTimers() {
  const pending = new Set<{ fn: () => void; ms: number }>();
  return {
    asked: [] as number[],
    setTimeout(fn: () => void, ms: number) {
      const t = { fn, ms };
      pending.add(t);
      this.asked.push(ms);
      return { cancel: () => pending.delete(t) };
    },
    fire() {
      for (const t of [...pending]) {
        pending.delete(t);
        t.fn();
      }
    },
    get pending() {
      return pending.size;
    },
  };
}

const tick = () => new Promise((r) => setImmediate(r));
const stopNever = () => {};

test('resolves at once when the check says now; otherwise sleeps until a wake and checks again', async () => {
  const timers = manualTimers();
  const w = new EventWaiter({ timers, now: () => 0, maxSleepMs: 60_000 });
  let ready = false;
  let checks = 0;
  const waiting = w.wait(new AbortController().signal, async () => (checks++, ready ? 'now' : undefined), stopNever);
  await tick();
  assert.is(checks, 1);
  assert.is(timers.pending, 0, 'no time named and no idle sleep: no timer');
  ready = true;
  w.wake();
  assert.is(await waiting, 'pendingTxs');
  assert.is(checks, 2);
});

test('a wake during the check is not lost: the check runs again at once', async () => {
  const w = new EventWaiter({ timers: manualTimers(), now: () => 0, maxSleepMs: 60_000 });
  let checks = 0;
  const result = await w.wait(
    new AbortController().signal,
    async () => {
      checks++;
      if (checks === 1) w.wake();
      return checks === 2 ? 'now' : undefined;
    },
    stopNever,
  );
  assert.is(result, 'pendingTxs');
  assert.is(checks, 2);
});

test('sleeps until the named time (bounded by maxSleepMs) or idleSleepMs; stop() ends the wait', async () => {
  const timers = manualTimers();
  const w = new EventWaiter({ timers, now: () => 1_000_000, maxSleepMs: 60_000, idleSleepMs: 30_000 });
  const answers: Array<'now' | number | undefined> = [1_005, 10_000, undefined, 'now'];
  const waiting = w.wait(new AbortController().signal, async () => answers.shift(), stopNever);
  for (let i = 0; i < 3; i++) {
    await tick();
    timers.fire();
  }
  assert.is(await waiting, 'pendingTxs');
  assert.equal(timers.asked, [5_000, 60_000, 30_000]);

  const abort = new AbortController();
  const stopped = w.wait(abort.signal, async () => undefined, () => {
    if (abort.signal.aborted) throw new Error('aborted');
  });
  await tick();
  abort.abort();
  await stopped.then(() => assert.unreachable(), (e: Error) => assert.is(e.message, 'aborted'));
});

test.run();
