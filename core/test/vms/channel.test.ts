// The host <-> worker message channel (--vm-isolation), wired to itself: a held request goes with
// the next message, in order, or alone after its hold; so does a held answer.

const HOLD_MS = 1;
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Channel } from '../../src/vms/isolation/channel.js';
import type { Message } from '../../src/vms/isolation/protocol.js';

/** Two channels joined by a synchronous "port"; `posted` lists what side A posted. */
function pair(holdAnswer?: (op: string) => number | undefined) {
  const posted: Message[] = [];
  const seen: string[] = [];
  let b!: Channel;
  const a = new Channel((m) => (posted.push(structuredClone(m)), queueMicrotask(() => b.receive(structuredClone(m)))), {
    request: () => undefined,
    event: () => undefined,
  });
  b = new Channel((m) => queueMicrotask(() => a.receive(structuredClone(m))), {
    request: (op) => (seen.push(op), op),
    event: (op) => void seen.push(`evt ${op}`),
    ...(holdAnswer ? { holdAnswer } : {}),
  });
  return { a, b, posted, seen };
}

test('a held request goes with the next message, before it: one message for both', async () => {
  const { a, posted, seen } = pair();
  const held = a.request('setPreference', [1], HOLD_MS);
  assert.is(posted.length, 0, 'not sent yet');
  const next = a.request('accept', []);
  assert.is(posted.length, 1);
  assert.is(posted[0]!.t, 'batch');
  assert.equal(await held, 'setPreference');
  assert.equal(await next, 'accept');
  assert.equal(seen, ['setPreference', 'accept']);
  assert.equal(a.sent, 1);
  a.event('log', []);
  assert.is(posted.length, 2, 'nothing held: the next message goes alone');
});

test('a held request with nothing to go with is sent alone after HOLD_MS', async () => {
  const { a, posted, seen } = pair();
  const held = a.request('setPreference', [1], HOLD_MS);
  await new Promise((r) => setTimeout(r, HOLD_MS + 20));
  assert.is(posted.length, 1);
  assert.is(posted[0]!.t, 'req');
  assert.equal(await held, 'setPreference');
  assert.equal(seen, ['setPreference']);
});

test('a held request that cannot be sent fails alone; the message after it still goes', async () => {
  const { a, seen } = pair();
  const held = a.request('bad', [() => 1], HOLD_MS); // a function cannot be cloned
  const next = a.request('ok', []);
  try {
    await held;
    assert.unreachable();
  } catch (e) {
    assert.is((e as Error).name, 'DataCloneError');
  }
  assert.equal(await next, 'ok');
  assert.equal(seen, ['ok']);
});

test('a held answer goes with the next message of its side, or alone after its hold', async () => {
  const { a, b } = pair((op) => (op === 'pref' ? 100 : undefined));
  let answered = false;
  const pref = a.request('pref', []).then(() => (answered = true));
  await new Promise((r) => setTimeout(r, 20));
  assert.is(answered, false, 'held');
  assert.is(b.sent, 0);
  b.event('log', []);
  await pref;
  assert.is(b.sent, 1, 'one batch for both');
  const again = a.request('pref', []);
  const started = Date.now();
  await again;
  assert.ok(Date.now() - started >= 90, 'sent alone at the end of its hold');
  assert.is(b.sent, 2);
});

test('an answer held for 0 ms goes with what the same turn sends next, else alone at the end of the turn', async () => {
  const { a, b, posted } = pair((op) => (op === 'wait' ? 0 : undefined));
  const both = Promise.all([a.request('wait', []), a.request('service', [])]);
  assert.equal(await both, ['wait', 'service']);
  assert.is(posted.length, 2, 'two requests');
  assert.is(b.sent, 1, 'both answers in one message, the held one first');
  await a.request('wait', []);
  assert.is(b.sent, 2);
});

test('failAll drops held requests with the others', async () => {
  const { a, posted } = pair();
  const held = a.request('setPreference', [1], HOLD_MS);
  a.failAll(new Error('gone'));
  try {
    await held;
    assert.unreachable();
  } catch (e) {
    assert.is((e as Error).message, 'gone');
  }
  await new Promise((r) => setTimeout(r, HOLD_MS + 20));
  assert.is(posted.length, 0);
});

test.run();
