/**
 * Connection floods against a real Network on 127.0.0.1 (issue 31: 600 idle TCP connections or 300
 * TLS connections that never send Version locked new peers out with ECONNRESET). The flood comes
 * from other loopback addresses (127.0.0.2, or 127.0.1.x for many IPs; the real peer dials from
 * 127.0.0.1): from one IP, the per-IP cooldown closes it beyond its burst before TLS and the real
 * peer gets in at once; from many IPs, the bound on connections in their handshake evicts the oldest
 * and the real peer gets in at once. From the real peer's own IP the flood holds that IP's allowance:
 * the peer gets in once the cooldown has passed (the node's clock is injected and moved by the test).
 * Warn lines about the flood stay few.
 */
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Network, type NetworkLimits } from '../../src/network/network.js';
import type { StakingCert } from '../../src/staking/cert.js';
import { captureLog } from '../helpers/log.js';
import { testCerts, tlsOptions, until } from './helpers.js';

const test = suite('network floods');

const NETWORK_ID = 12345;
const VERSION = 'cornice/0.1.0';
/** The bound within which a real peer must connect during a flood (ms, real time). */
const CONNECT_BOUND_MS = 5_000;

const running: Array<{ stop(): Promise<void> }> = [];
test.after.each(async () => {
  for (const r of running.splice(0).reverse()) await r.stop();
});

function testClock() {
  let t = Date.now();
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

async function startNode(cert: StakingCert, o: { bootstrap?: { port: number; cert: StakingCert }; limits?: Partial<NetworkLimits>; now?: () => number } = {}) {
  const log = captureLog();
  const net = new Network({
    networkId: NETWORK_ID,
    nodeId: cert.nodeId,
    cert,
    host: '127.0.0.1',
    port: 0,
    bootstrappers: o.bootstrap ? [{ ip: '127.0.0.1', port: o.bootstrap.port, nodeId: o.bootstrap.cert.nodeId }] : [],
    version: VERSION,
    log,
    limits: { dialBackoffMs: 20, maxDialBackoffMs: 100, dialTimeoutMs: 2_000, handshakeTimeoutMs: 30_000, ...o.limits },
    ...(o.now ? { now: o.now } : {}),
  });
  const { port } = await net.start();
  running.push(net);
  return { net, port, log };
}

/** The source address of flood connection `i`: one other IP, or `ips` of them. */
const source = (ips: number) => (i: number) => (ips === 1 ? '127.0.0.2' : `127.0.1.${(i % ips) + 1}`);

/** `n` TCP connections to `port` that say nothing; resolves once each is connected (or was closed). */
async function idleTcp(port: number, n: number, from: (i: number) => string): Promise<{ open: () => number }> {
  const sockets: Socket[] = [];
  await Promise.all(
    Array.from({ length: n }, (_, i) => {
      const s = netConnect({ port, host: '127.0.0.1', localAddress: from(i) });
      s.on('error', () => {});
      sockets.push(s);
      return new Promise<void>((resolve) => {
        s.once('connect', () => resolve());
        s.once('close', () => resolve());
      });
    }),
  );
  running.push({ stop: async () => sockets.forEach((s) => s.destroy()) });
  return { open: () => sockets.filter((s) => !s.destroyed).length };
}

/** `n` TLS connections (with a certificate) that never send Version; resolves once each finished its TLS handshake or was closed. */
async function idleTls(port: number, cert: StakingCert, n: number, from: (i: number) => string): Promise<{ open: () => number; tlsDone: () => number }> {
  const sockets: Socket[] = [];
  let tlsDone = 0;
  // A few at a time: the test's own CPU for TLS stays small on a shared machine.
  for (let i = 0; i < n; i += 25) {
    await Promise.all(
      Array.from({ length: Math.min(25, n - i) }, (_, j) => {
        const s = tlsConnect({ ...tlsOptions(cert), host: '127.0.0.1', port, localAddress: from(i + j) } as ConnectionOptions);
        s.on('error', () => {});
        s.resume(); // reads (and drops) what the node says, so that its closing is seen
        sockets.push(s);
        return new Promise<void>((resolve) => {
          s.once('secureConnect', () => {
            tlsDone++;
            resolve();
          });
          s.once('close', () => resolve());
        });
      }),
    );
  }
  running.push({ stop: async () => sockets.forEach((s) => s.destroy()) });
  return { open: () => sockets.filter((s) => !s.destroyed).length, tlsDone: () => tlsDone };
}

const warnLines = (log: ReturnType<typeof captureLog>) => log.lines.filter((l) => l.level === 'warn');

test('600 idle TCP connections from one other IP: beyond the burst closed at once; a real peer connects at once (few warn lines)', async () => {
  const [ca, cb] = await testCerts(2);
  // The node's clock stands still: no cooldown passes during the test (on a real clock one more
  // connection of the flood would get in each second).
  const a = await startNode(ca!, { now: testClock().now, limits: { inboundPerIpBurst: 16, inboundCooldownMs: 1_000 } });
  const flood = await idleTcp(a.port, 600, source(1));
  await until(() => flood.open() <= 16, 'the flood beyond the burst closed');
  assert.is(flood.open(), 16, 'the burst waits for its handshake');
  const b = await startNode(cb!, { bootstrap: { port: a.port, cert: ca! } });
  const t0 = performance.now();
  await until(() => a.net.isConnected(cb!.nodeId) && b.net.isConnected(ca!.nodeId), 'the real peer connected', CONNECT_BOUND_MS);
  assert.ok(performance.now() - t0 < CONNECT_BOUND_MS);
  assert.is(flood.open(), 16, 'while the flood is still open');
  // 584 refusals, a handful of warn lines.
  const refusals = warnLines(a.log).filter((l) => l.msg === 'closing inbound connection');
  assert.ok(refusals.length >= 1 && refusals.length <= 5, `${refusals.length} warn lines`);
});

test('600 idle TCP connections from 60 IPs (each within its burst): at most maxHandshaking stay, the oldest evicted; a real peer connects at once', async () => {
  const [ca, cb] = await testCerts(2);
  const a = await startNode(ca!, { limits: { inboundPerIpBurst: 16, maxHandshaking: 64 } });
  const flood = await idleTcp(a.port, 600, source(60));
  await until(() => flood.open() <= 64, 'the oldest evicted');
  const b = await startNode(cb!, { bootstrap: { port: a.port, cert: ca! } });
  await until(() => a.net.isConnected(cb!.nodeId) && b.net.isConnected(ca!.nodeId), 'the real peer connected', CONNECT_BOUND_MS);
  assert.ok(flood.open() >= 60, `${flood.open()} of the flood still open`);
  assert.ok(warnLines(a.log).length <= 10, `${warnLines(a.log).length} warn lines`);
});

test('600 idle TCP connections from the real peer\'s own IP: it gets in once the cooldown has passed', async () => {
  const [ca, cb] = await testCerts(2);
  const clock = testClock();
  const a = await startNode(ca!, { now: clock.now, limits: { inboundPerIpBurst: 16, inboundCooldownMs: 1_000 } });
  const flood = await idleTcp(a.port, 600, () => '127.0.0.1');
  await until(() => flood.open() <= 16, 'the flood beyond the burst closed');
  const b = await startNode(cb!, { bootstrap: { port: a.port, cert: ca! } });
  clock.advance(1_000); // one cooldown: one more connection from 127.0.0.1
  await until(() => a.net.isConnected(cb!.nodeId) && b.net.isConnected(ca!.nodeId), 'the real peer connected', CONNECT_BOUND_MS);
  assert.is(flood.open(), 16, 'while the flood is still open');
});

test('300 TLS connections that never send Version, from one other IP: refused past the burst before TLS, the rest time out; a real peer connects at once', async () => {
  const [ca, cb, flooder] = await testCerts(3);
  const a = await startNode(ca!, { now: testClock().now, limits: { inboundPerIpBurst: 16, inboundCooldownMs: 1_000, handshakeTimeoutMs: 2_000 } });
  const flood = await idleTls(a.port, flooder!, 300, source(1));
  assert.ok(flood.tlsDone() <= 16, `${flood.tlsDone()} TLS handshakes done`);
  const b = await startNode(cb!, { bootstrap: { port: a.port, cert: ca! } });
  await until(() => a.net.isConnected(cb!.nodeId) && b.net.isConnected(ca!.nodeId), 'the real peer connected', CONNECT_BOUND_MS);
  // The admitted ones never send Version: closed by the handshake deadline (2 s here, real time).
  await until(() => flood.open() === 0, 'the silent TLS connections closed by their deadline', 5_000);
  assert.ok(a.net.isConnected(cb!.nodeId), 'the real peer stays');
  assert.ok(warnLines(a.log).length <= 10, `${warnLines(a.log).length} warn lines`);
});

test('300 TLS connections that never send Version, from 30 IPs (each within its burst): the oldest evicted; a real peer connects at once', async () => {
  const [ca, cb, flooder] = await testCerts(3);
  const a = await startNode(ca!, { limits: { inboundPerIpBurst: 16, maxHandshaking: 64 } });
  const flood = await idleTls(a.port, flooder!, 300, source(30));
  assert.is(flood.tlsDone(), 300);
  await until(() => flood.open() <= 64, 'the oldest evicted');
  const b = await startNode(cb!, { bootstrap: { port: a.port, cert: ca! } });
  await until(() => a.net.isConnected(cb!.nodeId) && b.net.isConnected(ca!.nodeId), 'the real peer connected', CONNECT_BOUND_MS);
  assert.is(a.net.peers().length, 1);
});

test.run();
