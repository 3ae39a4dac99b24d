import { createRequire } from 'node:module';
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

/** Timers fired by hand, in creation order. */
function manualTimers() {
  const pending = new Map<number, () => void>();
  let next = 0;
  return {
    setTimer: (fn: () => void) => (pending.set(++next, fn), next),
    clearTimer: (t: unknown) => void pending.delete(t as number),
    fire(id: number) {
      const fn = pending.get(id);
      assert.ok(fn, `timer ${id} is pending`);
      pending.delete(id);
      fn();
    },
    get pending() {
      return [...pending.keys()];
    },
  };
}

const SCRIPTED = new URL('./fixtures/scripted-worker.js', import.meta.url);

test('scorer: a check past its deadline is refused (fail closed) and its worker replaced', async () => {
  const timers = manualTimers();
  const scorer = new ZxcvbnScorer({ workerUrl: SCRIPTED, ...timers });
  assert.is(await scorer.score('fast-1', []), 3);
  assert.equal(timers.pending, [], 'an answered check clears its deadline');
  const slow = scorer.score('slow', []);
  timers.fire(2);
  await rejects(slow, 'StrengthCheckTimeout', STRENGTH_TIMEOUT);
  assert.is(scorer.started, 1);
  assert.is(await scorer.score('fast-2', []), 3);
  assert.is(scorer.started, 2, 'the stuck worker was replaced');
  // Through the strength rule: refused, not accepted.
  const check = isStrongPassword('Slow-but-composed-1!', 'bob', scorer);
  timers.fire(4);
  await rejects(check, 'StrengthCheckTimeout');
});

test('scorer: waiting counts toward the deadline, and the queue is bounded ("busy")', async () => {
  const timers = manualTimers();
  const scorer = new ZxcvbnScorer({ workerUrl: SCRIPTED, maxQueued: 2, ...timers });
  const outcome = (p: Promise<number>) => p.then((s) => `score ${s}`, (e: KeystoreError) => e.code);
  const stuck = outcome(scorer.score('slow', [])); // running, never answers
  const waiting1 = outcome(scorer.score('fast-a', []));
  const waiting2 = outcome(scorer.score('fast-b', []));
  assert.is(scorer.queued, 2);
  await rejects(scorer.score('fast-c', []), 'Busy', STRENGTH_BUSY);
  // A waiting check whose deadline passes is refused without running.
  timers.fire(2);
  assert.is(await waiting1, 'StrengthCheckTimeout');
  assert.is(scorer.queued, 1);
  // The stuck one times out; the next waiting one runs on a new worker.
  timers.fire(1);
  assert.is(await stuck, 'StrengthCheckTimeout');
  assert.is(await waiting2, 'score 3');
  assert.equal(timers.pending, []);
});

test('createUser refuses when the strength check fails closed, and creates nothing', async () => {
  const timers = manualTimers();
  const scorer = new ZxcvbnScorer({ workerUrl: SCRIPTED, ...timers });
  const { ks } = fixture({ isStrongPassword: (pw, user) => isStrongPassword(pw, user, scorer) });
  const creating = ks.createUser('bob', 'Slow-but-composed-1!');
  await new Promise((r) => setImmediate(r));
  timers.fire(1);
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
