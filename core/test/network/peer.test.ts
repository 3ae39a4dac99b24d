/**
 * The peer layer over real TLS on 127.0.0.1: the Version handshake and its refusals, what drops a
 * peer (each logged as 'dropping peer'), inbound throttling (the socket is paused, then resumed) and
 * the bound on unsent bytes. One side is a Peer; the other a Peer too, or a raw TLS socket writing
 * whatever bytes the test needs.
 */
import type { TLSSocket } from 'node:tls';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Id } from '@cornice/sdk';
import { MAX_MESSAGE_BYTES, type Message } from '../../src/network/messages.js';
import { DEFAULT_PEER_LIMITS, Peer, compatibleVersion, type LocalIdentity, type PeerLimits } from '../../src/network/peer.js';
import type { StakingCert } from '../../src/staking/cert.js';
import { captureLog } from '../helpers/log.js';
import { testCerts, tlsPair, until, wire } from './helpers.js';

const test = suite('network peer');

const NETWORK_ID = 12345;
const VERSION = 'cornice/0.1.0';
const CHAIN = Id.fromBytes(new Uint8Array(32).fill(9));
const seconds = (ms: number) => BigInt(Math.floor(ms / 1000));

let nextNonce = 1n;
const identity = (over: Partial<LocalIdentity> = {}): LocalIdentity => ({
  networkId: NETWORK_ID,
  nonce: nextNonce++,
  listen: { ip: '127.0.0.1', port: 9651 },
  ipTime: 0n,
  ipSignature: new Uint8Array(0),
  version: VERSION,
  ...over,
});

/** A Version as another node would send it (its clock: now). */
const version = (over: Partial<Extract<Message, { op: 'Version' }>> = {}): Uint8Array =>
  wire({ op: 'Version', networkId: NETWORK_ID, nonce: 0xabcdn, time: seconds(Date.now()), listen: { ip: '127.0.0.1', port: 9652 }, ipTime: 0n, ipSignature: new Uint8Array(0), version: VERSION, ...over });
const gossip = (payload: Uint8Array = Uint8Array.of(1, 2, 3)): Uint8Array => wire({ op: 'Gossip', chainId: CHAIN, payload });

interface Side {
  peer: Peer;
  log: ReturnType<typeof captureLog>;
  ready: number;
  messages: Message[];
  /** Why the peer closed, once it did. */
  closed: string | undefined;
}

/** A Peer on `socket`, talking to the holder of `other`, recording its events and log. */
function peerOn(
  socket: TLSSocket,
  other: StakingCert,
  o: { self?: Partial<LocalIdentity>; limits?: Partial<PeerLimits>; now?: () => number; onMessage?: (m: Message) => void } = {},
): Side {
  const log = captureLog();
  const side = { log, ready: 0, messages: [], closed: undefined } as unknown as Side;
  side.peer = new Peer(
    socket,
    other.nodeId,
    'inbound',
    { ip: '127.0.0.1', port: socket.remotePort ?? 0 },
    identity(o.self),
    {
      ready: () => void side.ready++,
      message: (_p, m) => {
        side.messages.push(m);
        o.onMessage?.(m);
      },
      closed: (_p, reason) => void (side.closed = reason),
    },
    log,
    { ...DEFAULT_PEER_LIMITS, ...o.limits },
    o.now,
  );
  return side;
}

/** Two Peers on one TLS connection. */
async function peerPair(a: Parameters<typeof peerOn>[2] = {}, b: Parameters<typeof peerOn>[2] = {}): Promise<[Side, Side]> {
  const [ca, cb] = await testCerts(2);
  const { server, client } = await tlsPair(ca!, cb!);
  return [peerOn(server, cb!, a), peerOn(client, ca!, b)];
}

/** A Peer on the server end; the test writes raw bytes on `raw` (the client end), which records what it reads. */
async function rawPeer(o: Parameters<typeof peerOn>[2] = {}): Promise<{ side: Side; raw: TLSSocket; rawClosed: () => boolean; received: () => number }> {
  const [ca, cb] = await testCerts(2);
  const { server, client } = await tlsPair(ca!, cb!);
  let closed = false;
  let bytes = 0;
  client.on('data', (d: Buffer) => void (bytes += d.length));
  client.on('error', () => {});
  client.on('close', () => void (closed = true));
  return { side: peerOn(server, cb!, o), raw: client, rawClosed: () => closed, received: () => bytes };
}

const closedBoth = (a: Side, b: Side) => until(() => a.closed !== undefined && b.closed !== undefined, 'both peers closed');

/** The peer was dropped for `reason`, with a 'dropping peer' log line naming it, and its socket is gone. */
async function assertDropped(side: Side, reason: string | RegExp): Promise<void> {
  await until(() => side.closed !== undefined, 'the peer dropped');
  if (typeof reason === 'string') assert.is(side.closed, reason);
  else assert.match(side.closed!, reason);
  const line = side.log.lines.find((l) => l.msg === 'dropping peer');
  assert.ok(line, `a 'dropping peer' line: ${JSON.stringify(side.log.lines)}`);
  assert.is(line.fields?.reason, side.closed);
  assert.is(line.fields?.nodeId, side.peer.nodeId.toString());
  assert.ok(side.peer.closed);
  assert.not.ok(side.peer.ready);
  assert.ok(side.peer.socket.destroyed);
}

// ---- handshake -------------------------------------------------------------------------------

test('handshake: both send Version, both become ready with the other\'s Version; later messages are delivered', async () => {
  const [a, b] = await peerPair({ self: { listen: { ip: '127.0.0.1', port: 1111 } } }, { self: { listen: { ip: '127.0.0.1', port: 2222 } } });
  await until(() => a.ready === 1 && b.ready === 1, 'both ready');
  assert.ok(a.peer.ready && b.peer.ready);
  assert.is(a.peer.info?.listen.port, 2222);
  assert.is(b.peer.info?.listen.port, 1111);
  assert.is(a.peer.info?.version, VERSION);
  assert.ok(a.peer.lastReceived > 0 && a.peer.lastSent > 0);
  assert.ok(b.peer.send({ op: 'Gossip', chainId: CHAIN, payload: Uint8Array.of(7) }));
  await until(() => a.messages.length === 1, 'the Gossip delivered');
  assert.is(a.messages[0]!.op, 'Gossip');
  // Ping is answered by the peer layer (Pong is not delivered either).
  assert.ok(b.peer.send({ op: 'Ping' }));
  assert.ok(b.peer.send({ op: 'Gossip', chainId: CHAIN, payload: Uint8Array.of(8) }));
  await until(() => a.messages.length === 2, 'the second Gossip delivered');
  assert.equal(a.messages.map((m) => m.op), ['Gossip', 'Gossip']);
  assert.equal(b.messages, []);
  a.peer.close('test over');
  await closedBoth(a, b);
  assert.is(a.closed, 'test over');
  assert.is(b.closed, 'connection closed');
  assert.not.ok(a.peer.send({ op: 'Ping' }), 'a closed peer sends nothing');
});

test('handshake refused: another network ID (both sides say why, and log it)', async () => {
  const [a, b] = await peerPair({ self: { networkId: 1 } }, { self: { networkId: 2 } });
  await closedBoth(a, b);
  assert.is(a.ready + b.ready, 0);
  assert.is(a.closed, 'wrong network: peer is on network 2, this node on 1');
  assert.is(b.closed, 'wrong network: peer is on network 1, this node on 2');
  await assertDropped(a, a.closed!);
});

test('handshake refused: a clock skew over the bound (injected clocks), either way; within the bound accepted', async () => {
  const limits = { maxClockSkewSeconds: 30 };
  const [a, b] = await peerPair({ limits }, { limits, now: () => Date.now() + 31_000 });
  await closedBoth(a, b);
  assert.match(a.closed!, /^clock skew of 3[12] s exceeds 30 s$/);
  assert.match(b.closed!, /^clock skew of -3[12] s exceeds 30 s$/);
  await assertDropped(b, b.closed!);
  const [c, d] = await peerPair({ limits }, { limits, now: () => Date.now() - 20_000 });
  await until(() => c.ready === 1 && d.ready === 1, 'a 20 s skew accepted');
  c.peer.close('test over');
});

test('handshake refused: an incompatible version (same application and major.minor needed)', async () => {
  const [a, b] = await peerPair({ self: { version: 'cornice/0.1.0' } }, { self: { version: 'cornice/0.2.0' } });
  await closedBoth(a, b);
  assert.is(a.closed, 'incompatible version "cornice/0.2.0" (this node: cornice/0.1.0)');
  await assertDropped(b, 'incompatible version "cornice/0.1.0" (this node: cornice/0.2.0)');
  const [c, d] = await peerPair({ self: { version: 'cornice/0.1.0' } }, { self: { version: 'cornice/0.1.7' } });
  await until(() => c.ready === 1 && d.ready === 1, 'another patch accepted');
  c.peer.close('test over');
});

test('compatibleVersion: application, major and minor must match; anything unparsable is incompatible', () => {
  assert.ok(compatibleVersion('cornice/1.2.3', 'cornice/1.2.0'));
  assert.ok(compatibleVersion('cornice/1.2.99', 'cornice/1.2.3'));
  assert.not.ok(compatibleVersion('cornice/1.3.0', 'cornice/1.2.0'));
  assert.not.ok(compatibleVersion('cornice/2.2.0', 'cornice/1.2.0'));
  assert.not.ok(compatibleVersion('avalanche/1.2.0', 'cornice/1.2.0'));
  for (const bad of ['', 'cornice/1.2', 'cornice/1.2.3.4', 'cornice/1.2.x', 'Cornice/1.2.0', ' cornice/1.2.0', 'cornice/1.2.0\n']) {
    assert.not.ok(compatibleVersion(bad, 'cornice/1.2.0'), JSON.stringify(bad));
  }
});

test('handshake refused: a Version with this node\'s own nonce is a self-connection', async () => {
  const [a, b] = await peerPair({ self: { nonce: 42n } }, { self: { nonce: 42n } });
  await closedBoth(a, b);
  assert.is(a.closed, 'self-connection');
  await assertDropped(b, 'self-connection');
});

test('no Version within handshakeTimeoutMs: dropped', async () => {
  const { side, rawClosed } = await rawPeer({ limits: { handshakeTimeoutMs: 50 } });
  await assertDropped(side, 'no Version within 50 ms');
  await until(rawClosed, 'the other end sees the connection closed');
});

test('a message before the handshake: dropped', async () => {
  const { side, raw, rawClosed } = await rawPeer();
  raw.write(wire({ op: 'Ping' }));
  await assertDropped(side, 'Ping before the handshake');
  await until(rawClosed, 'the other end sees the connection closed');
  assert.is(side.ready, 0);
});

test('a second Version: dropped', async () => {
  const { side, raw } = await rawPeer();
  raw.write(version());
  await until(() => side.ready === 1, 'ready');
  raw.write(version());
  await assertDropped(side, 'a second Version');
});

test('a frame that does not decode, and a frame of length 0: dropped', async () => {
  const one = await rawPeer();
  one.raw.write(version());
  await until(() => one.side.ready === 1, 'ready');
  one.raw.write(Uint8Array.of(0, 0, 0, 3, 0, 1, 99)); // codec version 1, op 99
  await assertDropped(one.side, /^malformed message: .*99/);
  const two = await rawPeer();
  two.raw.write(Uint8Array.of(0, 0, 0, 0));
  await assertDropped(two.side, 'malformed frame: frame: announced length is 0');
});

test('an oversized length prefix (2 GiB) drops the peer before anything is buffered', async () => {
  const { side, raw, rawClosed } = await rawPeer();
  raw.write(version());
  await until(() => side.ready === 1, 'ready');
  raw.write(Uint8Array.of(0x80, 0, 0, 0, 1, 2, 3));
  await assertDropped(side, `malformed frame: frame: announced length 2147483648 exceeds ${MAX_MESSAGE_BYTES}`);
  await until(rawClosed, 'the other end sees the connection closed');
});

test('a message handler that throws is logged; the peer stays', async () => {
  const { side, raw } = await rawPeer({
    onMessage: (m) => {
      if (m.op === 'Gossip' && m.payload[0] === 1) throw new TypeError('handler bug');
    },
  });
  raw.write(version());
  raw.write(gossip(Uint8Array.of(1)));
  raw.write(gossip(Uint8Array.of(2)));
  await until(() => side.messages.length === 2, 'both delivered');
  assert.ok(side.peer.ready);
  const line = side.log.lines.find((l) => l.msg === 'peer message handler failed');
  assert.is(line?.fields?.error, 'handler bug');
  side.peer.close('test over');
});

test('messages sent in one turn of the event loop, from several callbacks, leave in one write', async () => {
  const [a, b] = await peerPair();
  await until(() => a.ready === 1 && b.ready === 1, 'the handshake');
  await new Promise((r) => setImmediate(r));
  const socket = a.peer.socket as unknown as Record<'_write' | '_writev', (...args: unknown[]) => unknown>;
  let writes = 0;
  for (const name of ['_write', '_writev'] as const) {
    const original = socket[name]!.bind(socket);
    socket[name] = (...args: unknown[]) => (writes++, original(...args));
  }
  const g = (n: number): Message => ({ op: 'Gossip', chainId: CHAIN, payload: Uint8Array.of(n) });
  // Three callbacks of one check phase, as several sockets' data callbacks in one poll phase.
  for (let n = 1; n <= 3; n++) setImmediate(() => a.peer.send(g(n)));
  await until(() => b.messages.filter((m) => m.op === 'Gossip').length === 3, 'delivered');
  assert.is(writes, 1);
  assert.equal(b.messages.filter((m) => m.op === 'Gossip').map((m) => (m as { payload: Uint8Array }).payload[0]), [1, 2, 3], 'in order');
  a.peer.close('test over');
});

// ---- throttling ------------------------------------------------------------------------------

/** Records when `socket` is paused and resumed (after the Peer started reading it). */
function flow(socket: TLSSocket): Array<{ op: 'pause' | 'resume'; at: number }> {
  const seen: Array<{ op: 'pause' | 'resume'; at: number }> = [];
  const pause = socket.pause.bind(socket);
  const resume = socket.resume.bind(socket);
  socket.pause = () => (seen.push({ op: 'pause', at: performance.now() }), pause());
  socket.resume = () => (seen.push({ op: 'resume', at: performance.now() }), resume());
  return seen;
}

test('inbound messages over the budget pause the socket; it resumes when the budget refills', async () => {
  // The buckets' clock moves only when the test moves it: only the burst is free until then.
  let now = Date.now();
  const delivered: number[] = [];
  const { side, raw } = await rawPeer({
    now: () => now,
    limits: { inboundMessagesPerSecond: 10, inboundMessagesBurst: 2 },
    onMessage: () => void delivered.push(performance.now()),
  });
  const seen = flow(side.peer.socket);
  // One write, one TLS record: Version and 3 Gossips, 2 over the burst: a pause of 200 ms.
  raw.write(Buffer.concat([version(), gossip(), gossip(), gossip()]));
  await until(() => seen.length === 1, 'the socket paused');
  assert.is(seen[0]!.op, 'pause');
  assert.ok(side.peer.socket.isPaused());
  assert.is(side.messages.length, 3, 'what arrived before the pause is delivered');
  now += 1_000; // the budget is full again when reading resumes
  raw.write(gossip(Uint8Array.of(4)));
  await until(() => side.messages.length === 4, 'the message sent while paused delivered after the pause', 2_000);
  assert.equal(seen.map((f) => f.op), ['pause', 'resume'], 'within the refilled budget: not paused again');
  assert.ok(seen[1]!.at - seen[0]!.at >= 195, `paused for ${seen[1]!.at - seen[0]!.at} ms (200 ms due)`);
  assert.ok(delivered[3]! >= seen[1]!.at, 'delivered once resumed');
  assert.not.ok(side.peer.socket.isPaused());
  assert.is(side.peer.closed, false, 'throttled, not dropped');
  side.peer.close('test over');
});

test('inbound bytes over the budget pause the socket, then it resumes', async () => {
  let now = Date.now();
  const { side, raw } = await rawPeer({ now: () => now, limits: { inboundBytesPerSecond: 2_000, inboundBytesBurst: 200 } });
  const seen = flow(side.peer.socket);
  // About 700 bytes against a 200-byte burst at 2,000 bytes/s: a pause of about 250 ms.
  const first = Buffer.concat([version(), gossip(new Uint8Array(600))]);
  raw.write(first);
  await until(() => seen.length === 1, 'the socket paused');
  assert.is(side.messages.length, 1);
  now += 1_000;
  raw.write(gossip(Uint8Array.of(4)));
  await until(() => side.messages.length === 2, 'resumed', 2_000);
  assert.equal(seen.map((f) => f.op), ['pause', 'resume']);
  const due = Math.ceil(((first.length - 200) / 2_000) * 1000);
  assert.ok(seen[1]!.at - seen[0]!.at >= due - 5, `paused for ${seen[1]!.at - seen[0]!.at} ms (${due} ms due)`);
  side.peer.close('test over');
});

test('within the budget the socket is never paused', async () => {
  const { side, raw } = await rawPeer({ limits: { inboundMessagesPerSecond: 1_000, inboundMessagesBurst: 100 } });
  const seen = flow(side.peer.socket);
  raw.write(Buffer.concat([version(), ...Array.from({ length: 20 }, () => gossip())]));
  await until(() => side.messages.length === 20, 'all delivered');
  await new Promise((r) => setImmediate(r));
  assert.equal(seen, []);
  side.peer.close('test over');
});

test('send: beyond maxPendingSendBytes unsent, messages are dropped (false) and counted, never queued', async () => {
  const { side, raw } = await rawPeer({ limits: { maxPendingSendBytes: 64 * 1024 } });
  raw.pause(); // the other side reads nothing: the kernel buffers fill, then the socket's own buffer
  const big: Message = { op: 'Gossip', chainId: CHAIN, payload: new Uint8Array(256 * 1024) };
  let sent = 0;
  while (sent < 400 && side.peer.send(big)) sent++;
  assert.ok(sent < 400, 'a send was refused');
  assert.is(side.peer.droppedSends, 1);
  assert.ok(side.peer.socket.writableLength > 64 * 1024);
  assert.not.ok(side.peer.send({ op: 'Ping' }));
  assert.is(side.peer.droppedSends, 2);
  assert.ok(side.peer.ready === false && !side.peer.closed, 'still connected (the handshake never came)');
  side.peer.close('test over');
});

test.run();
