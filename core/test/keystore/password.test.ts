import { createRequire } from 'node:module';
import { BroadcastChannel } from 'node:worker_threads';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { goQuote } from '../../src/keystore/errors.js';
import {
  exceedsChars,
  hasLoneSurrogate,
  isStrongPassword,
  meetsCompositionRule,
  passwordScore,
  STRENGTH_BUSY,
  STRENGTH_TIMEOUT,
  STRENGTH_UNAVAILABLE,
  ZXCVBN_START_TIMEOUT_MS,
  ZXCVBN_TIMEOUT_MS,
  ZxcvbnScorer,
  zxcvbnWorkersStarted,
} from '../../src/keystore/password.js';
import type { KeystoreError } from '../../src/keystore/keystore.js';
import { fixture, rejects } from './helpers.js';

const test = suite('keystore passwords and quoting');

test('zxcvbn is loaded lazily (in a worker), on first use', async () => {
  const mainLoaded = () => Object.keys(createRequire(import.meta.url).cache).some((k) => k.includes('zxcvbn'));
  assert.is(zxcvbnWorkersStarted(), 0);
  assert.is(await isStrongPassword('weak'), false);
  assert.is(zxcvbnWorkersStarted(), 0); // the composition rule fails first
  assert.is(await isStrongPassword('Tr0ub4dor&3'), true);
  assert.is(zxcvbnWorkersStarted(), 1);
  assert.is(await isStrongPassword('Correct-Battery-9!staple'), true);
  assert.is(zxcvbnWorkersStarted(), 1); // reused
  assert.is(mainLoaded(), false); // never on the main thread
});

test('composition rule', () => {
  for (const pw of ['', 'abcdefgh', 'Password1', 'password!', 'PASSWORD1!', 'Pass1!', 'Passwordd!', 'Pass word1']) {
    assert.is(meetsCompositionRule(pw), false, pw);
  }
  for (const pw of ['Password1!', 'P@ssw0rd', 'aB3$aaaa', 'Ünïcödé9€']) assert.is(meetsCompositionRule(pw), true, pw);
});

test('strength: composition AND zxcvbn >= 2', async () => {
  for (const pw of ['', 'abcdefgh', 'Password1', 'P@ssw0rd', 'Password1!', 'Passw0rd!']) {
    assert.is(await isStrongPassword(pw), false, pw);
  }
  for (const pw of ['Tr0ub4dor&3', 'Correct-Battery-9!staple', 'Bobby!234x7']) assert.is(await isStrongPassword(pw), true, pw);
  assert.ok((await passwordScore('Rumpelstiltskin1!'))! >= 2);
  assert.ok((await passwordScore('Rumpelstiltskin1!', ['Rumpelstiltskin']))! < 2);
  // Concurrent checks are answered each with its own score.
  const scores = await Promise.all(['P@ssw0rd', 'Tr0ub4dor&3', 'password', 'Correct-Battery-9!staple'].map((p) => passwordScore(p)));
  assert.equal(scores.map((s) => s! >= 2), [false, true, false, true]);
});

test('a password that zxcvbn takes seconds to score: refused after the deadline (fail closed), event loop free', async () => {
  // Dense in l33t characters: ~7 s of zxcvbn for its first 100 characters.
  const pw = Array.from({ length: 1024 }, (_, i) => String.fromCharCode(33 + ((i * 7919) % 94))).join('') + 'aA1!';
  let ticks = 0;
  const timer = setInterval(() => ticks++, 10);
  const t0 = performance.now();
  // Not accepted: a password that could not be scored in time is refused.
  await rejects(isStrongPassword(pw), 'StrengthCheckTimeout', STRENGTH_TIMEOUT);
  const ms = performance.now() - t0;
  clearInterval(timer);
  assert.ok(ms >= ZXCVBN_TIMEOUT_MS - 50 && ms < ZXCVBN_TIMEOUT_MS + 2000, `${ms} ms`);
  assert.ok(ticks > (ZXCVBN_TIMEOUT_MS / 10) * 0.5, `event loop ticks: ${ticks}`);
  // A fresh worker serves the next check.
  const before = zxcvbnWorkersStarted();
  assert.is(await isStrongPassword('P@ssw0rd'), false);
  assert.is(zxcvbnWorkersStarted(), before + 1);
});

/** Timers on a virtual clock (ms): advance() fires those due, in time order, then creation order. */
function virtualTimers() {
  let now = 0;
  let next = 0;
  const pending = new Map<number, { at: number; fn: () => void }>();
  return {
    now: () => now,
    setTimer: (fn: () => void, ms: number) => (pending.set(++next, { at: now + ms, fn }), next),
    clearTimer: (t: unknown) => void pending.delete(t as number),
    advance(ms: number) {
      const until = now + ms;
      for (;;) {
        let due: [number, { at: number; fn: () => void }] | undefined;
        for (const e of pending) if (e[1].at <= until && (!due || e[1].at < due[1].at)) due = e;
        if (!due) break;
        pending.delete(due[0]);
        now = due[1].at;
        due[1].fn();
      }
      now = until;
    },
    /** ms until each pending timer fires. */
    get pending() {
      return [...pending.values()].map((e) => e.at - now);
    },
  };
}

const SCRIPTED = new URL('./fixtures/scripted-worker.js', import.meta.url);
const SLOW_START = new URL('./fixtures/slow-start-worker.js', import.meta.url);

/** A check's outcome, as a string, without awaiting it. */
function tracked(p: Promise<number>): { state: string; done: Promise<void> } {
  const t: { state: string; done: Promise<void> } = { state: 'pending', done: Promise.resolve() };
  t.done = p.then(
    (s) => void (t.state = `score ${s}`),
    (e: KeystoreError) => void (t.state = e.code),
  );
  return t;
}

/** The test's end of slow-start-worker's BroadcastChannel: waits for a worker to listen, tells it to get ready (or crash). */
function slowStartControl() {
  const channel = new BroadcastChannel('slow-start-worker');
  let listening = 0;
  let wake = () => {};
  channel.onmessage = (e) => {
    if ((e as MessageEvent).data === 'listening') (listening++, wake());
  };
  return {
    /** Resolves once `n` workers have said they listen. */
    async listening(n: number) {
      while (listening < n) await new Promise<void>((r) => (wake = r));
    },
    say: (what: 'ready' | 'crash') => channel.postMessage(what),
    close: () => channel.close(),
  };
}

test('a slow-starting worker: start-up does not count toward the deadline, and has its own bound', async () => {
  const timers = virtualTimers();
  const control = slowStartControl();
  try {
    const scorer = new ZxcvbnScorer({ workerUrl: SLOW_START, ...timers });
    const first = tracked(scorer.score('fast-1', []));
    await control.listening(1);
    // Five seconds of start-up (a loaded machine loading zxcvbn's dictionaries): the check waits.
    // (With the deadline counted from the ask, it was refused at 1 s: issue 31's "could not be checked in time".)
    timers.advance(5 * ZXCVBN_TIMEOUT_MS);
    await new Promise((r) => setImmediate(r));
    assert.is(first.state, 'pending');
    assert.equal(timers.pending, [ZXCVBN_START_TIMEOUT_MS - 5 * ZXCVBN_TIMEOUT_MS], 'only the start-up bound runs');
    control.say('ready');
    await first.done;
    assert.is(first.state, 'score 3');
    assert.is(scorer.ready, true);
    // Once up, the deadline runs from the ask.
    const slow = tracked(scorer.score('slow', []));
    assert.equal(timers.pending, [ZXCVBN_TIMEOUT_MS]);
    timers.advance(ZXCVBN_TIMEOUT_MS);
    await slow.done;
    assert.is(slow.state, 'StrengthCheckTimeout');

    // A worker that never comes up: the checks waiting for it are refused at the start-up bound.
    const stuck = new ZxcvbnScorer({ workerUrl: SLOW_START, ...timers });
    const waiting = tracked(stuck.score('fast-2', []));
    const warming = stuck.warm().then(() => 'ready', (e: KeystoreError) => e.code);
    await control.listening(2);
    timers.advance(ZXCVBN_START_TIMEOUT_MS - 1);
    await new Promise((r) => setImmediate(r));
    assert.is(waiting.state, 'pending');
    timers.advance(1);
    await waiting.done;
    assert.is(waiting.state, 'StrengthCheckUnavailable');
    assert.is(await warming, 'StrengthCheckUnavailable');
    assert.match(STRENGTH_UNAVAILABLE, /did not start within 30 s/);
    assert.equal(timers.pending, []);
    // The next check starts a new worker.
    const next = tracked(stuck.score('fast-3', []));
    await control.listening(3);
    control.say('ready');
    await next.done;
    assert.is(next.state, 'score 3');
    assert.is(stuck.started, 2);
  } finally {
    control.close();
  }
});

test('a worker failing while it starts: the waiting checks are refused at once, no restart loop', async () => {
  const timers = virtualTimers();
  const control = slowStartControl();
  try {
    const scorer = new ZxcvbnScorer({ workerUrl: SLOW_START, ...timers });
    const check = tracked(scorer.score('fast-1', []));
    await control.listening(1);
    control.say('crash');
    await check.done;
    assert.is(check.state, 'Internal');
    assert.is(scorer.started, 1);
    assert.equal(timers.pending, [], 'no start-up bound left running');
  } finally {
    control.close();
  }
});

test('scorer: a check past its deadline is refused (fail closed) and its worker replaced', async () => {
  const timers = virtualTimers();
  const scorer = new ZxcvbnScorer({ workerUrl: SCRIPTED, ...timers });
  assert.is(await scorer.score('fast-1', []), 3);
  assert.equal(timers.pending, [], 'an answered check clears its deadline');
  const slow = tracked(scorer.score('slow', []));
  timers.advance(ZXCVBN_TIMEOUT_MS - 1);
  await new Promise((r) => setImmediate(r));
  assert.is(slow.state, 'pending');
  timers.advance(1);
  await slow.done;
  assert.is(slow.state, 'StrengthCheckTimeout');
  assert.is(scorer.started, 1);
  assert.is(await scorer.score('fast-2', []), 3);
  assert.is(scorer.started, 2, 'the stuck worker was replaced');
  // Through the strength rule: refused, not accepted.
  const check = isStrongPassword('Slow-but-composed-1!', 'bob', scorer);
  timers.advance(ZXCVBN_TIMEOUT_MS);
  await rejects(check, 'StrengthCheckTimeout');
});

test('scorer: waiting counts toward the deadline, the replacement worker\'s start-up does not, and the queue is bounded ("busy")', async () => {
  const timers = virtualTimers();
  const scorer = new ZxcvbnScorer({ workerUrl: SCRIPTED, maxQueued: 2, ...timers });
  await scorer.warm();
  const stuck = tracked(scorer.score('slow', [])); // running, never answers
  const waiting1 = tracked(scorer.score('fast-a', []));
  timers.advance(400);
  const waiting2 = tracked(scorer.score('slow-b', []));
  assert.is(scorer.queued, 2);
  await rejects(scorer.score('fast-c', []), 'Busy', STRENGTH_BUSY);
  // At 1 s the stuck one and the one that waited as long behind it are refused; the worker is replaced.
  timers.advance(600);
  await Promise.all([stuck.done, waiting1.done]);
  assert.equal([stuck.state, waiting1.state], ['StrengthCheckTimeout', 'StrengthCheckTimeout']);
  assert.is(scorer.queued, 1);
  // While the new worker starts, the last one's deadline is stopped with 400 ms left of it.
  assert.is(scorer.ready, false);
  timers.advance(10 * ZXCVBN_TIMEOUT_MS);
  await scorer.warm();
  assert.is(scorer.started, 2);
  assert.ok(timers.pending.includes(400), `pending: ${timers.pending}`);
  timers.advance(399);
  await new Promise((r) => setImmediate(r));
  assert.is(waiting2.state, 'pending');
  timers.advance(1);
  await waiting2.done;
  assert.is(waiting2.state, 'StrengthCheckTimeout');
  assert.equal(timers.pending, []);
});

test('createUser refuses when the strength check fails closed, and creates nothing', async () => {
  const timers = virtualTimers();
  const scorer = new ZxcvbnScorer({ workerUrl: SCRIPTED, ...timers });
  await scorer.warm();
  const { ks } = fixture({ isStrongPassword: (pw, user) => isStrongPassword(pw, user, scorer) });
  const creating = ks.createUser('bob', 'Slow-but-composed-1!');
  while (timers.pending.length === 0) await new Promise((r) => setImmediate(r));
  timers.advance(ZXCVBN_TIMEOUT_MS);
  await rejects(creating, 'StrengthCheckTimeout', STRENGTH_TIMEOUT);
  assert.equal(await ks.listUsers(), []);
  await ks.createUser('bob', 'fast-And-composed-1!');
});

test('exceedsChars counts code points', () => {
  assert.is(exceedsChars('a'.repeat(1024)), false);
  assert.is(exceedsChars('a'.repeat(1025)), true);
  assert.is(exceedsChars('😀'.repeat(1024)), false); // 2048 UTF-16 units
  assert.is(exceedsChars('😀'.repeat(1025)), true);
  assert.is(exceedsChars('😀'.repeat(600) + 'a'.repeat(424)), false);
  assert.is(exceedsChars('x'.repeat(5_000_000)), true);
  assert.is(exceedsChars('abc', 2), true);
});

test('hasLoneSurrogate', () => {
  assert.is(hasLoneSurrogate('abc😀'), false);
  assert.is(hasLoneSurrogate('abc\ud83d'), true);
  assert.is(hasLoneSurrogate('\ude00abc'), true);
});

test('goQuote matches Go %q', () => {
  assert.is(goQuote('bob'), '"bob"');
  assert.is(goQuote(''), '""');
  assert.is(goQuote('a"b\\c'), '"a\\"b\\\\c"');
  assert.is(goQuote('\x07\b\f\n\r\t\v'), '"\\a\\b\\f\\n\\r\\t\\v"');
  assert.is(goQuote('\x00\x1b\x7f'), '"\\x00\\x1b\\x7f"');
  assert.is(goQuote('héllo wörld 😀'), '"héllo wörld 😀"');
  assert.is(goQuote('\u0085\u00a0\u200b\u2028'), '"\\u0085\\u00a0\\u200b\\u2028"');
  assert.is(goQuote('\u{e0001}'), '"\\U000e0001"');
  assert.is(goQuote('\ud800'), '"\\ud800"');
});

test.run();
