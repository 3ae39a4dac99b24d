/**
 * The inbound gate's rules on an injected clock (inbound.ts): the per-IP allowance and its
 * cooldown, the token given back by a finished handshake, the bound on connections in their
 * handshake with the oldest evicted, IPv6 counted per /64; and limitWarnings (log-limit.ts).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { InboundGate, ipGroup, type Handshake } from '../../src/network/inbound.js';
import { limitWarnings } from '../../src/network/log-limit.js';
import { captureLog } from '../helpers/log.js';

const test = suite('network inbound gate');

function clock() {
  let t = 1_000_000;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

const LIMITS = { inboundPerIpBurst: 3, inboundCooldownMs: 1_000, maxHandshaking: 100 };

/** Admits from `ip`, recording evictions in `closed`. */
function admit(gate: InboundGate, ip: string, closed: string[] = []): Handshake | string {
  return gate.admit(ip, (reason) => void closed.push(`${ip}: ${reason}`));
}
const isHandshake = (h: Handshake | string): h is Handshake => typeof h !== 'string';

test('an IP may open inboundPerIpBurst connections, then one per cooldown; other IPs are not affected', () => {
  const c = clock();
  const gate = new InboundGate(LIMITS, c.now);
  for (let i = 0; i < 3; i++) assert.ok(isHandshake(admit(gate, '10.0.0.1')), `connection ${i}`);
  const refused = admit(gate, '10.0.0.1');
  assert.type(refused, 'string');
  assert.match(refused as string, /^more than 3 connections from 10\.0\.0\.1 that did not finish their handshake \(one more every 1000 ms\)$/);
  assert.ok(isHandshake(admit(gate, '10.0.0.2')), 'another IP');
  c.advance(999);
  assert.type(admit(gate, '10.0.0.1'), 'string');
  c.advance(1);
  assert.ok(isHandshake(admit(gate, '10.0.0.1')), 'one more after the cooldown');
  assert.type(admit(gate, '10.0.0.1'), 'string');
  c.advance(10_000);
  for (let i = 0; i < 3; i++) assert.ok(isHandshake(admit(gate, '10.0.0.1')), 'refilled up to the burst, no more');
  assert.type(admit(gate, '10.0.0.1'), 'string');
});

test('a handshake that succeeds gives its token back (peers on one IP connect however often); a failed one does not', () => {
  const c = clock();
  const gate = new InboundGate(LIMITS, c.now);
  for (let round = 0; round < 20; round++) {
    const h = admit(gate, '127.0.0.1');
    assert.ok(isHandshake(h), `round ${round}`);
    gate.done(h as Handshake, true);
  }
  const failed = [admit(gate, '127.0.0.1'), admit(gate, '127.0.0.1'), admit(gate, '127.0.0.1')] as Handshake[];
  for (const h of failed) gate.done(h, false);
  assert.type(admit(gate, '127.0.0.1'), 'string');
  gate.done(failed[0]!, true); // a second done() of one handshake changes nothing
  assert.type(admit(gate, '127.0.0.1'), 'string');
  assert.is(gate.handshaking, 0);
});

test('at most maxHandshaking at once: a new connection evicts the oldest, whose close() is told why', () => {
  const c = clock();
  const gate = new InboundGate({ inboundPerIpBurst: 1_000, inboundCooldownMs: 1_000, maxHandshaking: 3 }, c.now);
  const closed: string[] = [];
  const hs = ['1.1.1.1', '1.1.1.2', '1.1.1.3'].map((ip) => admit(gate, ip, closed) as Handshake);
  assert.equal(closed, []);
  admit(gate, '1.1.1.4', closed);
  assert.equal(closed, ['1.1.1.1: evicted: 3 connections in their handshake']);
  gate.done(hs[1]!, true); // finished: no longer counted, never evicted
  admit(gate, '1.1.1.5', closed);
  assert.is(closed.length, 1);
  admit(gate, '1.1.1.6', closed);
  assert.equal(closed.slice(1), ['1.1.1.3: evicted: 3 connections in their handshake']);
  assert.is(gate.handshaking, 3);
});

test('IPv6 is counted per /64; v4 per address', () => {
  assert.is(ipGroup('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
  assert.is(ipGroup('2001:db8:1:2::ffff'), '2001:db8:1:2::/64');
  assert.is(ipGroup('::1'), '0:0:0:0::/64');
  assert.is(ipGroup('10.1.2.3'), '10.1.2.3');
  const gate = new InboundGate(LIMITS, clock().now);
  for (let i = 0; i < 3; i++) assert.ok(isHandshake(admit(gate, `2001:db8:1:2::${i + 1}`)));
  assert.type(admit(gate, '2001:db8:1:2:ffff::9'), 'string', 'same /64');
  assert.ok(isHandshake(admit(gate, '2001:db8:1:3::1')), 'another /64');
});

test('limitWarnings: at most `burst` lines of one message per interval; the next line says how many were left out; other messages and levels pass', () => {
  const c = clock();
  const out = captureLog();
  const log = limitWarnings(out, c.now, { burst: 2, intervalMs: 1_000 });
  for (let i = 0; i < 50; i++) log.warn('dropping peer', { i });
  log.warn('refusing peer', { i: 0 });
  for (let i = 0; i < 10; i++) log.info('peer connected', { i });
  assert.equal(
    out.lines.filter((l) => l.level === 'warn').map((l) => `${l.msg} ${JSON.stringify(l.fields)}`),
    ['dropping peer {"i":0}', 'dropping peer {"i":1}', 'refusing peer {"i":0}'],
  );
  assert.is(out.lines.filter((l) => l.level === 'info').length, 10);
  c.advance(1_000);
  log.warn('dropping peer', { i: 99 });
  assert.equal(out.lines.at(-1), { level: 'warn', msg: 'dropping peer', fields: { i: 99, suppressed: 48 } });
  log.warn('dropping peer', { i: 100 });
  assert.equal(out.lines.at(-1)?.fields, { i: 100 });
});

test.run();
