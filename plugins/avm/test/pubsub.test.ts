import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Id, type WebSocketConnection } from '@cornice/sdk';
import { pubsubHandler, type DecidedStatus } from '../src/pubsub.js';

/** A connection the test drives: messages in, what the handler sent out. */
function fakeConnection() {
  const sent: unknown[] = [];
  let onMessage: (t: string) => void = () => {};
  let onClose: () => void = () => {};
  const conn: WebSocketConnection = {
    send: (t) => sent.push(JSON.parse(t)),
    close: () => onClose(),
    onMessage: (l) => (onMessage = l),
    onClose: (l) => (onClose = l),
    closed: false,
  };
  return { conn, sent, message: (t: string) => onMessage(t), close: () => onClose() };
}

function decisions() {
  const listeners = new Set<(id: Id, s: DecidedStatus) => void>();
  return {
    onTxDecided(l: (id: Id, s: DecidedStatus) => void) {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    decide: (id: Id, s: DecidedStatus) => listeners.forEach((l) => l(id, s)),
    get listening() {
      return listeners.size;
    },
  };
}

const tx = (n: number) => Id.fromBytes(new Uint8Array(32).fill(n));

test('a subscribed channel receives decided tx IDs; others do not; unsubscribe stops them', () => {
  const vm = decisions();
  const c = fakeConnection();
  pubsubHandler(vm)(c.conn);
  vm.decide(tx(1), 'accepted');
  assert.equal(c.sent, []);
  c.message('{"channel":"accepted","unsubscribe":false}');
  vm.decide(tx(2), 'accepted');
  vm.decide(tx(3), 'rejected');
  assert.equal(c.sent, [{ channel: 'accepted', value: tx(2).toString() }]);
  c.message('{"channel":"rejected"}');
  vm.decide(tx(4), 'rejected');
  c.message('{"channel":"accepted","unsubscribe":true}');
  vm.decide(tx(5), 'accepted');
  assert.equal(c.sent.slice(1), [{ channel: 'rejected', value: tx(4).toString() }]);
});

test('malformed requests get an error message and the connection stays; closing removes the listener', () => {
  const vm = decisions();
  const c = fakeConnection();
  pubsubHandler(vm)(c.conn);
  for (const bad of ['nope', '{"channel":"everything"}', '{"channel":"accepted","unsubscribe":"yes"}', 'x'.repeat(1000), 'null']) c.message(bad);
  assert.is(c.sent.length, 5);
  assert.ok(c.sent.every((m) => typeof (m as { error?: string }).error === 'string'));
  assert.is(vm.listening, 1);
  c.close();
  assert.is(vm.listening, 0);
});

test.run();
