/**
 * The Network in-process, over real TLS on 127.0.0.1 (port 0, small limits): connecting to
 * bootstrap nodes, one connection per pair, advertised addresses, peer-list gossip, refused
 * bootstrap identities, dialling again after a loss, health, stop; then routing through
 * open(chainId). Some tests play the other node by hand (a TLS server and client with its
 * certificate, writing Versions when the test says) to order the two connections of a pair.
 */
import { createServer as createNetServer, connect as netConnect, type AddressInfo, type Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Id, ShortId } from '@cornice/sdk';
import type { BootstrapTarget } from '../../src/consensus/bootstrap/types.js';
import type { LoopbackTarget } from '../../src/consensus/index.js';
import { decodeMessage } from '../../src/network/codec.js';
import { FrameDecoder } from '../../src/network/framing.js';
import { signIp } from '../../src/network/signed-ip.js';
import { DEFAULT_REQUEST_BUDGET } from '../../src/network/request-budget.js';
import { GOSSIP_REQUEST_ID, Network, type BootstrapPeer, type NetworkLimits } from '../../src/network/network.js';
import type { ChainLink } from '../../src/network/types.js';
import type { PeerInfo } from '../../src/network/messages.js';
import type { StakingCert } from '../../src/staking/cert.js';
import { captureLog } from '../helpers/log.js';
import { freePort, plain, testCerts, tlsConnect, tlsServer, until, wire } from './helpers.js';

const test = suite('network');

const NETWORK_ID = 12345;
const VERSION = 'cornice/0.1.0';
const LIMITS_WINDOW = 10_000;
const LIMITS: Partial<NetworkLimits> = { dialBackoffMs: 20, maxDialBackoffMs: 200, dialTimeoutMs: 2_000, handshakeTimeoutMs: 2_000, simultaneousDialWindowMs: LIMITS_WINDOW };

interface Node {
  net: Network;
  cert: StakingCert;
  id: ShortId;
  port: number;
  log: ReturnType<typeof captureLog>;
}

/** Everything a test started, stopped after it (networks, and closers of hand-made servers). */
const running: Array<{ stop(): Promise<void> }> = [];
test.after.each(async () => {
  for (const r of running.splice(0).reverse()) await r.stop();
});

async function startNode(
  cert: StakingCert,
  o: { bootstrappers?: readonly Node[] | readonly BootstrapPeer[]; port?: number; publicIp?: string; limits?: Partial<NetworkLimits>; now?: () => number } = {},
): Promise<Node> {
  const log = captureLog();
  const bootstrappers = (o.bootstrappers ?? []).map((b) => ('net' in b ? beacon(b) : b));
  const net = new Network({
    networkId: NETWORK_ID,
    nodeId: cert.nodeId,
    cert,
    host: '127.0.0.1',
    port: o.port ?? 0,
    ...(o.publicIp ? { publicIp: o.publicIp } : {}),
    bootstrappers,
    version: VERSION,
    log,
    limits: { ...LIMITS, ...o.limits },
    ...(o.now ? { now: o.now } : {}),
  });
  const { port } = await net.start();
  running.push(net);
  return { net, cert, id: cert.nodeId, port, log };
}

const beacon = (n: Node): BootstrapPeer => ({ ip: '127.0.0.1', port: n.port, nodeId: n.id });
const keys = (ids: readonly ShortId[]) => ids.map((id) => id.toString()).sort();
const linked = (a: Node, b: Node) => a.net.isConnected(b.id) && b.net.isConnected(a.id);
const logged = (n: Node, msg: string) => n.log.lines.filter((l) => l.msg === msg);
/** A node ID no test node has. */
const STRANGER = ShortId.fromBytes(new Uint8Array(20).fill(0xee));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A clock a test moves: starts at the real time, `advance(ms)` moves it on. */
function testClock() {
  let t = Date.now();
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}
/** Resolves once `s` is closed; fails after `ms`. */
async function closedSocket(s: Socket, ms = 5_000): Promise<void> {
  let closed = s.destroyed;
  s.once('close', () => void (closed = true));
  await until(() => closed, 'the connection closed by the node', ms);
}

/** A and B connected, B having dialled its bootstrap node A. */
async function connectedPair(): Promise<[Node, Node]> {
  const [ca, cb] = await testCerts(2);
  const a = await startNode(ca!);
  const b = await startNode(cb!, { bootstrappers: [a] });
  await until(() => linked(a, b), 'A and B connected');
  return [a, b];
}

// ---- connections -----------------------------------------------------------------------------

test('two nodes: B dials its bootstrap node A; connected(), isConnected, peers(), health() on both', async () => {
  const [a, b] = await connectedPair();
  assert.equal(keys(a.net.connected()), keys([a.id, b.id]));
  assert.equal(keys(b.net.connected()), keys([a.id, b.id]));
  assert.ok(a.net.isConnected(a.id), 'a node is connected to itself');
  assert.not.ok(a.net.isConnected(STRANGER));
  const [toA] = b.net.peers();
  assert.is(toA?.ip, `127.0.0.1:${a.port}`);
  assert.is(toA?.nodeID, a.id.toString());
  assert.is(toA?.version, VERSION);
  assert.is(toA?.direction, 'outbound');
  assert.ok(Date.parse(toA!.lastReceived) > 0 && Date.parse(toA!.lastSent) > 0);
  const [toB] = a.net.peers();
  assert.is(toB?.ip, `127.0.0.1:${b.port}`, 'the port B listens on, not the one it dialled from');
  assert.is(toB?.direction, 'inbound');
  assert.equal(b.net.health(), { peers: 1, bootstrapNodes: 1, bootstrapNodesConnected: 1 });
  assert.equal(a.net.health(), { peers: 1, bootstrapNodes: 0, bootstrapNodesConnected: 0 });
  assert.is(logged(a, 'peer connected').length, 1);
  assert.is(logged(b, 'peer connected')[0]?.fields?.nodeId, a.id.toString());
});

test('peers(): the address a peer advertises (its --public-ip), not the one it is dialled at', async () => {
  const [ca, cb] = await testCerts(2);
  // Two nodes only: nobody hears of 10.1.2.3 in a peer list, so nothing dials it.
  const a = await startNode(ca!, { publicIp: '10.1.2.3' });
  const b = await startNode(cb!, { bootstrappers: [a] });
  await until(() => linked(a, b), 'A and B connected');
  assert.is(b.net.peers()[0]?.ip, `10.1.2.3:${a.port}`);
});

test('peers(): an unspecified advertised address is replaced by the address the peer connects from', async () => {
  const [ca, cb] = await testCerts(2);
  const a = await startNode(ca!);
  // B advertises 0.0.0.0, as a node with no --public-ip listening on every interface does.
  const b = await startNode(cb!, { publicIp: '0.0.0.0', bootstrappers: [a] });
  await until(() => linked(a, b), 'A and B connected');
  assert.is(a.net.peers()[0]?.ip, `127.0.0.1:${b.port}`);
});

test('both nodes dial each other: one connection per pair, the same one on both sides, and it stays', async () => {
  const [ca, cb] = await testCerts(2);
  for (let round = 0; round < 3; round++) {
    const [pa, pb] = [await freePort(), await freePort()];
    const [a, b] = await Promise.all([
      startNode(ca!, { port: pa, bootstrappers: [{ ip: '127.0.0.1', port: pb, nodeId: cb!.nodeId }] }),
      startNode(cb!, { port: pb, bootstrappers: [{ ip: '127.0.0.1', port: pa, nodeId: ca!.nodeId }] }),
    ]);
    await until(() => linked(a, b), 'A and B connected');
    await sleep(100);
    assert.is(a.net.peers().length, 1);
    assert.is(b.net.peers().length, 1);
    const dirs = [a.net.peers()[0]!.direction, b.net.peers()[0]!.direction].sort();
    assert.equal(dirs, ['inbound', 'outbound'], 'both ends of one connection');
    assert.is(logged(a, 'peer disconnected').length + logged(b, 'peer disconnected').length, 0, 'no connected peer was lost');
    for (const r of running.splice(0)) await r.stop();
  }
});

/** Another node played by the test: a TLS server with its certificate, and Versions written on command. */
async function handNode(cert: StakingCert) {
  const srv = await tlsServer(cert);
  running.push({ stop: srv.close });
  let tcpConnections = 0;
  srv.server.on('connection', () => void tcpConnections++);
  srv.server.on('secureConnection', (s) => s.resume()); // reads (and drops) what A says, so that its closing is seen
  let nonce = 0x5eedn;
  const version = () => {
    const time = BigInt(Math.floor(Date.now() / 1000));
    const claim = signIp(cert.keyPem, { ip: '127.0.0.1', port: srv.port, time });
    return wire({ op: 'Version', networkId: NETWORK_ID, nonce: nonce++, time, listen: { ip: '127.0.0.1', port: srv.port }, ipTime: time, ipSignature: claim.signature, version: VERSION });
  };
  return {
    port: srv.port,
    accepted: srv.accepted,
    tcpConnections: () => tcpConnections,
    /** Dials `to` as this node (the TLS handshake only). */
    dial: async (to: Node): Promise<TLSSocket> => {
      const s = await tlsConnect(cert, to.port);
      s.on('error', () => {});
      s.resume();
      running.push({ stop: async () => void s.destroy() });
      return s;
    },
    version,
  };
}

/** A node (certificate `mine`) whose bootstrap node is played by hand (`theirs`), once it has dialled it. */
async function dialsHandNode(mine: StakingCert, theirs: StakingCert) {
  const other = await handNode(theirs);
  const a = await startNode(mine, { bootstrappers: [{ ip: '127.0.0.1', port: other.port, nodeId: theirs.nodeId }] });
  await until(() => other.accepted.length === 1, 'A dialled the other node');
  return { a, other, outbound: other.accepted[0]! };
}

test('both dial: the connection dialled by the smaller node ID wins at the smaller node, even when the other was ready first; no dial follows', async () => {
  const [small, big] = await testCerts(2);
  const { a, other, outbound } = await dialsHandNode(small!, big!);
  // The other node dials A too, and its connection is ready first.
  const inbound = await other.dial(a);
  inbound.write(other.version());
  await until(() => a.net.isConnected(big!.nodeId), 'the inbound connection ready');
  assert.is(a.net.peers()[0]?.direction, 'inbound');
  let inboundClosed = false;
  inbound.on('close', () => void (inboundClosed = true));
  outbound.write(other.version());
  await until(() => inboundClosed, 'A closed the inbound connection');
  assert.is(a.net.peers().length, 1);
  assert.is(a.net.peers()[0]?.direction, 'outbound');
  assert.not.ok(outbound.destroyed);
  await sleep(100);
  assert.is(other.tcpConnections(), 1, 'A did not dial again when it closed the duplicate');
  assert.is(logged(a, 'peer disconnected').length, 0);
});

test('both dial: the connection dialled by the smaller node ID wins at the bigger node; its own dial is closed without a redial', async () => {
  const [small, big] = await testCerts(2);
  const { a, other, outbound } = await dialsHandNode(big!, small!);
  let outboundClosed = false;
  outbound.on('close', () => void (outboundClosed = true));
  outbound.write(other.version());
  await until(() => a.net.isConnected(small!.nodeId), 'the outbound connection ready');
  const inbound = await other.dial(a);
  inbound.write(other.version());
  await until(() => outboundClosed, 'A closed its own dial');
  assert.is(a.net.peers()[0]?.direction, 'inbound');
  assert.not.ok(inbound.destroyed);
  await sleep(100);
  assert.is(other.tcpConnections(), 1);
  assert.equal(logged(a, 'will dial again'), [], 'the duplicate is not a lost connection');
  assert.is(logged(a, 'peer disconnected').length, 0);
});

test('refused: a connection whose certificate is this node\'s own node ID (not listed in peers(), logged at warn)', async () => {
  const [ca, cb] = await testCerts(2);
  const a = await startNode(ca!);
  const b = await startNode(cb!, { bootstrappers: [a] });
  await until(() => linked(a, b), 'B connected');
  // Someone holding A's key (the local stakers' keys are public) connects to A as A.
  const impostor = await handNode(ca!);
  const s = await impostor.dial(a);
  s.write(impostor.version());
  await closedSocket(s);
  assert.equal(keys(a.net.connected()), keys([a.id, b.id]));
  assert.equal(a.net.peers().map((p) => p.nodeID), [b.id.toString()]);
  const line = logged(a, 'refusing peer')[0];
  assert.is(line?.level, 'warn');
  assert.match(String(line?.fields?.reason), /own node ID/);
});

test('refused: a node that dials this node at its own address sees its own node ID and never dials it again', async () => {
  const [ca] = await testCerts(1);
  const port = await freePort();
  const a = await startNode(ca!, { port, bootstrappers: [{ ip: '127.0.0.1', port, nodeId: STRANGER }] });
  await until(() => logged(a, 'refusing peer').length >= 1, 'the dial to itself refused');
  await sleep(100);
  assert.is(a.net.peers().length, 0);
  assert.is(logged(a, 'will dial again').length, 0, 'not dialled again');
});

test('refused: a second connection from a connected node, once the first is older than the simultaneous-dial window; the first stays', async () => {
  const [small, big] = await testCerts(2);
  const clock = testClock();
  // A (the bigger ID) dials the other node: at A the preferred direction is inbound (dialled by the
  // smaller ID), so the tie rule alone would let a later inbound connection replace this one.
  const other = await handNode(small!);
  const a = await startNode(big!, { bootstrappers: [{ ip: '127.0.0.1', port: other.port, nodeId: small!.nodeId }], now: clock.now });
  await until(() => other.accepted.length === 1, 'A dialled the other node');
  const outbound = other.accepted[0]!;
  outbound.write(other.version());
  await until(() => a.net.isConnected(small!.nodeId), 'the outbound connection ready');
  clock.advance(LIMITS_WINDOW + 1);
  const second = await other.dial(a);
  second.write(other.version());
  await closedSocket(second);
  assert.not.ok(outbound.destroyed, 'the first connection stays');
  assert.equal(a.net.peers().map((p) => p.direction), ['outbound']);
  const line = logged(a, 'refusing peer')[0];
  assert.is(line?.level, 'warn');
  assert.is(line?.fields?.reason, 'already connected');
  assert.is(logged(a, 'peer disconnected').length, 0);
});

test('refused: a second inbound connection from a connected node, at once (before its Version)', async () => {
  const [ca, cb] = await testCerts(2);
  const a = await startNode(ca!);
  const other = await handNode(cb!);
  const first = await other.dial(a);
  first.write(other.version());
  await until(() => a.net.isConnected(cb!.nodeId), 'the first connection ready');
  const second = await other.dial(a);
  await closedSocket(second); // no Version written: refused on its certificate alone
  assert.not.ok(first.destroyed);
  assert.is(a.net.peers().length, 1);
  assert.is(logged(a, 'refusing peer')[0]?.fields?.reason, 'already connected');
});

test('a peer silent for peerIdleTimeoutMs is pinged, then dropped (logged at warn); one that answers stays', async () => {
  const [ca, cb, cc] = await testCerts(3);
  const clock = testClock();
  const a = await startNode(ca!, { now: clock.now, limits: { pingIntervalMs: 10, peerIdleTimeoutMs: 1_000 } });
  const live = await startNode(cc!, { bootstrappers: [a] });
  await until(() => linked(a, live), 'a live peer connected');
  const other = await handNode(cb!);
  const mute = await other.dial(a);
  let pinged = false;
  const frames = new FrameDecoder();
  mute.on('data', (d: Buffer) => {
    for (const f of frames.push(new Uint8Array(d))) if (decodeMessage(f).op === 'Ping') pinged = true;
  });
  mute.write(other.version());
  await until(() => a.net.isConnected(cb!.nodeId), 'the mute peer ready');
  clock.advance(500);
  await until(() => pinged, 'the mute peer pinged');
  assert.ok(a.net.isConnected(cb!.nodeId));
  // The live peer answers its pings (Pong); the mute one never does.
  await sleep(50);
  clock.advance(600);
  await closedSocket(mute);
  assert.not.ok(a.net.isConnected(cb!.nodeId));
  assert.match(String(logged(a, 'dropping peer')[0]?.fields?.reason), /^nothing received for \d+ ms$/);
  assert.is(logged(a, 'dropping peer')[0]?.level, 'warn');
  assert.ok(a.net.isConnected(live.id), 'the live peer stays');
});

/** TCP listeners on 127.0.0.1 that count the connections they get (closing each at once). */
async function listeners(n: number): Promise<{ ports: number[]; hits: number[] }> {
  const hits = new Array<number>(n).fill(0);
  const ports: number[] = [];
  for (let i = 0; i < n; i++) {
    const srv = createNetServer((s) => {
      hits[i]!++;
      s.destroy();
    });
    await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
    ports.push((srv.address() as AddressInfo).port);
    running.push({ stop: () => new Promise((resolve) => srv.close(() => resolve())) });
  }
  return { ports, hits };
}

/** A PeerList entry for `cert`'s node at 127.0.0.1:`port`, signed by `signer` (default: that node). */
function signedEntry(cert: StakingCert, port: number, o: { time?: bigint; signer?: StakingCert; signedPort?: number } = {}): PeerInfo {
  const time = o.time ?? BigInt(Math.floor(Date.now() / 1000));
  const signature = signIp((o.signer ?? cert).keyPem, { ip: '127.0.0.1', port: o.signedPort ?? port, time }).signature;
  return { cert: cert.certDer, ip: '127.0.0.1', port, time, signature };
}

/** A node played by hand, connected to `a` (its Version written), to send what the test says. */
async function handPeerOf(a: Node, cert: StakingCert): Promise<TLSSocket> {
  const other = await handNode(cert);
  const s = await other.dial(a);
  s.write(other.version());
  await until(() => a.net.isConnected(cert.nodeId), 'the hand-played peer connected');
  return s;
}

test('a PeerList of addresses not signed by the nodes claiming them is never dialled (warned once); a signed one is', async () => {
  const certs = await testCerts(14);
  const [ca, cb, cc, ...fakes] = certs;
  const a = await startNode(ca!);
  const made = await listeners(11);
  const real = await handNode(cc!); // a real node C, listening; only its signed address should be dialled
  const peer = await handPeerOf(a, cb!);
  const entries: PeerInfo[] = [
    ...fakes.slice(0, 4).map((f, i) => signedEntry(f, made.ports[i]!, { signer: fakes[i + 1] })), // signed by another node
    ...fakes.slice(4, 8).map((f, i) => signedEntry(f, made.ports[i + 4]!, { signedPort: 1 })), // signed for another address
    ...fakes.slice(8, 10).map((f, i) => ({ ...signedEntry(f, made.ports[i + 8]!), cert: Uint8Array.of(0x30, 0x00) })), // no certificate
    { ...signedEntry(fakes[10]!, made.ports[10]!), signature: new Uint8Array(0) }, // unsigned
    signedEntry(cc!, real.port),
  ];
  peer.write(wire({ op: 'PeerList', peers: entries }));
  await until(() => real.accepted.length === 1, 'the signed address dialled');
  await sleep(300); // the dials of a PeerList start together: any other would have arrived by now
  assert.equal(made.hits, new Array(11).fill(0), 'no made-up address dialled');
  const warned = logged(a, 'ignoring peer list entries');
  assert.is(warned.length, 1);
  assert.equal({ ...warned[0]?.fields, nodeId: undefined }, { nodeId: undefined, notSigned: 11, overBudget: 0 });
  assert.is(warned[0]?.level, 'warn');
});

test('with a validator check, only validators\' signed addresses learned from a PeerList are dialled (a fresh certificate signs any address)', async () => {
  const [ca, cb, validator, sybil] = await testCerts(4);
  const log = captureLog();
  const net = new Network({
    networkId: NETWORK_ID,
    nodeId: ca!.nodeId,
    cert: ca!,
    host: '127.0.0.1',
    port: 0,
    bootstrappers: [],
    version: VERSION,
    log,
    limits: LIMITS,
    isValidator: (id) => id.equals(validator!.nodeId),
  });
  const { port } = await net.start();
  running.push(net);
  const a: Node = { net, cert: ca!, id: ca!.nodeId, port, log };
  const made = await listeners(2);
  const peer = await handPeerOf(a, cb!);
  peer.write(wire({ op: 'PeerList', peers: [signedEntry(sybil!, made.ports[0]!), signedEntry(validator!, made.ports[1]!)] }));
  await until(() => made.hits[1]! >= 1, 'the validator\'s address dialled');
  await sleep(200);
  assert.is(made.hits[0], 0, 'a non-validator\'s signed address is not dialled');
  assert.is(logged(a, 'ignoring peer list entries').length, 0, 'not a fault of the sender');
});

test('signed addresses: a newer claim replaces an older one, an older one changes nothing; a failing address is dialled with backoff, then forgotten', async () => {
  const [ca, cb, cc] = await testCerts(3);
  const a = await startNode(ca!, { limits: { minPeerListSpacingMs: 0, maxDialFailures: 3, dialBackoffMs: 20, maxDialBackoffMs: 40 } });
  const made = await listeners(2); // [0]: the older claim's address, [1]: the newer's
  const peer = await handPeerOf(a, cb!);
  const now = BigInt(Math.floor(Date.now() / 1000));
  peer.write(wire({ op: 'PeerList', peers: [signedEntry(cc!, made.ports[1]!, { time: now })] }));
  await until(() => made.hits[1]! >= 1, 'the newer address dialled');
  peer.write(wire({ op: 'PeerList', peers: [signedEntry(cc!, made.ports[0]!, { time: now - 10n })] }));
  // Each dial of the newer address fails (the listener closes it): 1 dial + 3 again with backoff, then forgotten.
  await until(() => made.hits[1]! === 4, 'dialled again with backoff', 3_000);
  await sleep(300);
  assert.is(made.hits[1], 4, 'forgotten after maxDialFailures');
  assert.is(made.hits[0], 0, 'the older claim was never dialled');
});

test('a Version whose listen address is not signed by the peer\'s key is refused', async () => {
  const [ca, cb, cc] = await testCerts(3);
  const a = await startNode(ca!);
  const other = await handNode(cb!);
  const s = await other.dial(a);
  const time = BigInt(Math.floor(Date.now() / 1000));
  const forged = signIp(cc!.keyPem, { ip: '127.0.0.1', port: other.port, time }).signature;
  s.write(wire({ op: 'Version', networkId: NETWORK_ID, nonce: 7n, time, listen: { ip: '127.0.0.1', port: other.port }, ipTime: time, ipSignature: forged, version: VERSION }));
  await closedSocket(s);
  assert.not.ok(a.net.isConnected(cb!.nodeId));
  assert.is(logged(a, 'dropping peer')[0]?.fields?.reason, 'its listen address is not signed by its staking key');
});

test('a peer\'s PeerLists beyond one per minPeerListSpacingMs are ignored', async () => {
  const [ca, cb, cc] = await testCerts(3);
  const a = await startNode(ca!, { limits: { minPeerListSpacingMs: 60_000 } });
  const peer = await handPeerOf(a, cb!);
  const made = await listeners(1);
  peer.write(wire({ op: 'PeerList', peers: [] }));
  peer.write(wire({ op: 'PeerList', peers: [signedEntry(cc!, made.ports[0]!)] }));
  await until(() => logged(a, 'ignoring peer list').length === 1, 'the second PeerList ignored');
  await sleep(100);
  assert.is(made.hits[0], 0);
});

test('peer lists: C knows only A, learns B from A\'s PeerList and connects to it', async () => {
  const [ca, cb, cc] = await testCerts(3);
  const a = await startNode(ca!);
  const b = await startNode(cb!, { bootstrappers: [a] });
  await until(() => linked(a, b), 'A and B connected');
  const c = await startNode(cc!, { bootstrappers: [a] });
  await until(() => linked(c, a) && linked(c, b), 'C connected to A and B');
  assert.equal(keys(c.net.connected()), keys([a.id, b.id, c.id]));
  assert.equal(c.net.peers().map((p) => p.ip).sort(), [`127.0.0.1:${a.port}`, `127.0.0.1:${b.port}`].sort());
  assert.is(c.net.peers().find((p) => p.nodeID === b.id.toString())?.direction, 'outbound', 'C dialled B');
});

test('a bootstrap address whose node ID is not the expected one is refused, logged, and tried again later', async () => {
  const [ca, cb, cc] = await testCerts(3);
  const a = await startNode(ca!);
  const b = await startNode(cb!, { bootstrappers: [{ ip: '127.0.0.1', port: a.port, nodeId: cc!.nodeId }] });
  await until(() => logged(b, 'peer at a bootstrap address has another node ID').length >= 2, 'two refusals');
  const line = logged(b, 'peer at a bootstrap address has another node ID')[0]!;
  assert.is(line.level, 'warn');
  assert.equal(line.fields, { ip: `127.0.0.1:${a.port}`, expected: cc!.nodeId.toString(), got: a.id.toString() });
  assert.not.ok(b.net.isConnected(a.id));
  assert.not.ok(a.net.isConnected(b.id));
  assert.throws(() => b.net.health(), /not connected to any of the 1 bootstrap node\(s\)/);
});

test('health() is red while no bootstrap node is connected; a bootstrap node that comes up later is dialled with backoff', async () => {
  const [ca, cb] = await testCerts(2);
  const port = await freePort();
  const b = await startNode(cb!, { bootstrappers: [{ ip: '127.0.0.1', port, nodeId: ca!.nodeId }] });
  let err: (Error & { details?: unknown }) | undefined;
  try {
    b.net.health();
  } catch (e) {
    err = e as Error & { details?: unknown };
  }
  assert.is(err?.message, 'not connected to any of the 1 bootstrap node(s)');
  assert.equal(err?.details, { peers: 0, bootstrapNodes: 1, bootstrapNodesConnected: 0 });
  // Refused dials back off: 20, 40, 80 ms...
  await until(() => logged(b, 'will dial again').some((l) => l.fields?.inMs === 80), 'the backoff doubled twice');
  assert.equal(logged(b, 'will dial again').slice(0, 3).map((l) => l.fields?.inMs), [20, 40, 80]);
  const a = await startNode(ca!, { port });
  await until(() => linked(a, b), 'B connected to A once it is up');
  assert.equal(b.net.health(), { peers: 1, bootstrapNodes: 1, bootstrapNodesConnected: 1 });
});

/** Stops `n`; once `other` saw it go, runs `meanwhile`, then starts `n` again on its port, with no bootstrap nodes. */
async function restart(n: Node, other: Node, meanwhile = async () => {}): Promise<Node> {
  await n.net.stop();
  await until(() => !other.net.isConnected(n.id), 'the other node saw it go');
  await meanwhile();
  return startNode(n.cert, { port: n.port });
}

test('a lost connection is dialled again (with backoff) after the other side restarts on the same port', async () => {
  const [a, b] = await connectedPair();
  const a2 = await restart(a, b, async () => {
    assert.is(logged(b, 'peer disconnected')[0]?.fields?.nodeId, a.id.toString());
    assert.throws(() => b.net.health());
    await until(() => logged(b, 'will dial again').length >= 2, 'B dialled A again and failed');
  });
  await until(() => linked(a2, b), 'connected again');
  assert.equal(b.net.health(), { peers: 1, bootstrapNodes: 1, bootstrapNodesConnected: 1 });
});

test('an inbound peer that goes away is dialled back at the address it listens on', async () => {
  const [a, b] = await connectedPair();
  const b2 = await restart(b, a); // no bootstrap nodes: only A's dial can connect them
  await until(() => linked(a, b2), 'A dialled B back');
  assert.is(a.net.peers()[0]?.direction, 'outbound');
});

test('stop(): closes every connection and the port; connected() is this node only; a second stop is harmless', async () => {
  const [a, b] = await connectedPair();
  await b.net.stop();
  assert.equal(keys(b.net.connected()), keys([b.id]));
  assert.equal(b.net.peers(), []);
  await until(() => !a.net.isConnected(b.id), 'A saw B go');
  const refused = await new Promise<boolean>((resolve) => {
    const s = netConnect(b.port, '127.0.0.1');
    s.on('connect', () => (s.destroy(), resolve(false)));
    s.on('error', () => resolve(true));
  });
  assert.ok(refused, 'the staking port is closed');
  await b.net.stop();
});

/** A TCP connection to `n`'s staking port that never starts TLS; `closed()` once the node closed it. */
async function silentClient(n: Node): Promise<{ closed: () => boolean }> {
  const s: Socket = netConnect(n.port, '127.0.0.1').resume();
  s.on('error', () => {});
  running.push({ stop: async () => void s.destroy() });
  let closed = false;
  s.on('close', () => void (closed = true));
  await new Promise((r) => s.once('connect', r));
  return { closed: () => closed };
}

test('a connection that never starts its TLS handshake is closed after handshakeTimeoutMs (logged at warn)', async () => {
  const [ca] = await testCerts(1);
  const a = await startNode(ca!, { limits: { handshakeTimeoutMs: 100 } });
  const silent = await silentClient(a);
  await until(silent.closed, 'the connection closed by the node', 2_000);
  const line = logged(a, 'closing inbound connection')[0];
  assert.is(line?.fields?.reason, 'no handshake (TLS and Version) within 100 ms');
  assert.is(line?.level, 'warn');
});

test('connections in their handshake are bounded (maxHandshaking): a new one over it evicts the oldest', async () => {
  const [ca] = await testCerts(1);
  const a = await startNode(ca!, { limits: { handshakeTimeoutMs: 10_000, maxHandshaking: 2 } });
  const first = await silentClient(a);
  const second = await silentClient(a);
  await sleep(20);
  const third = await silentClient(a);
  await until(first.closed, 'the oldest connection evicted', 2_000);
  await sleep(100);
  assert.not.ok(second.closed() || third.closed(), 'the two newest wait for their handshake');
  assert.match(String(logged(a, 'closing inbound connection')[0]?.fields?.reason), /^evicted: 2 connections in their handshake/);
});

test('stop() does not wait for a connection that never finishes its TLS handshake', async () => {
  const [ca] = await testCerts(1);
  const a = await startNode(ca!, { limits: { handshakeTimeoutMs: 10_000 } });
  const silent = await silentClient(a);
  const stopped = await Promise.race([a.net.stop().then(() => true), sleep(1_000).then(() => false)]);
  assert.ok(stopped, 'stop() resolved within 1 s');
  await until(silent.closed, 'the half-open connection closed', 1_000);
});

test('stop() ends a dial still in its TLS handshake', async () => {
  const [ca, cb] = await testCerts(2);
  // A TCP server that accepts and then says nothing: the dial waits in the TLS handshake.
  const sockets: Socket[] = [];
  const mute = createNetServer((s) => void sockets.push(s.resume()));
  await new Promise<void>((resolve) => mute.listen(0, '127.0.0.1', resolve));
  running.push({ stop: () => new Promise((resolve) => (sockets.forEach((s) => s.destroy()), mute.close(() => resolve()))) });
  const port = (mute.address() as AddressInfo).port;
  const a = await startNode(ca!, { bootstrappers: [{ ip: '127.0.0.1', port, nodeId: cb!.nodeId }], limits: { dialTimeoutMs: 10_000 } });
  await until(() => sockets.length === 1, 'A dialled');
  let closed = false;
  sockets[0]!.on('close', () => void (closed = true));
  const stopped = await Promise.race([a.net.stop().then(() => true), sleep(1_000).then(() => false)]);
  assert.ok(stopped, 'stop() resolved within 1 s');
  await until(() => closed, 'the dial ended by stop()', 1_000);
});

test('maxPeers: a connection over the limit is closed at once', async () => {
  const [ca, cb, cc] = await testCerts(3);
  const a = await startNode(ca!, { limits: { maxPeers: 1 } });
  const b = await startNode(cb!, { bootstrappers: [a] });
  await until(() => linked(a, b), 'B connected');
  const c = await startNode(cc!, { bootstrappers: [a] });
  await until(() => logged(c, 'will dial again').length >= 1, 'C refused');
  assert.not.ok(a.net.isConnected(c.id));
  assert.is(a.net.peers().length, 1);
});

// ---- routing through open(chainId) -------------------------------------------------------------

interface Call {
  to: string;
  m: string;
  from: string;
  args: unknown[];
}

/** Attaches recording engine, bootstrap and gossip targets to `link`; calls land in `calls`, tagged `to`. */
function record(link: ChainLink, to: string, calls: Call[]): void {
  const rec =
    (m: string) =>
    async (from: ShortId, ...args: unknown[]): Promise<void> =>
      void calls.push({ to, m, from: from.toString(), args: args.map(plain) });
  const engine: LoopbackTarget = {
    onPushQuery: rec('onPushQuery'),
    onChits: rec('onChits'),
    onQueryFailed: rec('onQueryFailed'),
    onGet: rec('onGet'),
    onPut: rec('onPut'),
    onGossipedBlock: rec('onGossipedBlock'),
  };
  const bootstrap: BootstrapTarget = {
    onGetAcceptedFrontier: rec('onGetAcceptedFrontier'),
    onAcceptedFrontier: rec('onAcceptedFrontier'),
    onGetAccepted: rec('onGetAccepted'),
    onAccepted: rec('onAccepted'),
    onGetAncestors: rec('onGetAncestors'),
    onAncestors: rec('onAncestors'),
    onBootstrapRequestFailed: rec('onBootstrapRequestFailed'),
  };
  link.attach(engine);
  link.attachBootstrap(bootstrap);
  link.attachGossip((from, payload) => void rec('gossip')(from, payload));
}

const CHAIN_X = Id.fromBytes(new Uint8Array(32).fill(0x11));
const CHAIN_Y = Id.fromBytes(new Uint8Array(32).fill(0x22));
const BLOCK_1 = Id.fromBytes(new Uint8Array(32).fill(1));
const BLOCK_2 = Id.fromBytes(new Uint8Array(32).fill(2));
const bytes = (...b: number[]) => Uint8Array.from(b);

/** Sends one of each message on `link` to `to` (the link's own node or a peer). */
function sendAll(link: ChainLink, to: ShortId): void {
  link.transport.pushQuery([to], 1, bytes(1));
  link.transport.chits(to, 2, BLOCK_1, BLOCK_2); // the voter's last accepted block rides second
  link.transport.get(to, 3, BLOCK_2);
  link.transport.put(to, 4, bytes(4));
  link.bootstrap.getAcceptedFrontier([to], 5);
  link.bootstrap.getAccepted([to], 6, [BLOCK_1, BLOCK_2]);
  link.bootstrap.getAncestors(to, 7, BLOCK_1);
  link.bootstrap.acceptedFrontier(to, 8, [BLOCK_2]);
  link.bootstrap.accepted(to, 9, []);
  link.bootstrap.ancestors(to, 10, [bytes(10), bytes(11)]);
}

/** What sendAll delivers, from `from`, to the node tagged `to`. */
const allCalls = (to: string, from: ShortId): Call[] =>
  (
    [
      ['onPushQuery', [1, bytes(1)]],
      ['onChits', [2, BLOCK_1, BLOCK_2]],
      ['onGet', [3, BLOCK_2]],
      ['onPut', [4, bytes(4)]],
      ['onGetAcceptedFrontier', [5]],
      ['onGetAccepted', [6, [BLOCK_1, BLOCK_2]]],
      ['onGetAncestors', [7, BLOCK_1]],
      ['onAcceptedFrontier', [8, [BLOCK_2]]],
      ['onAccepted', [9, []]],
      ['onAncestors', [10, [bytes(10), bytes(11)]]],
    ] as const
  ).map(([m, args]) => ({ to, m, from: from.toString(), args: args.map(plain) }));

/** A and B connected, both running CHAIN_X with recording targets (tagged 'A' and 'B'); A's link. */
async function chainOnPair(): Promise<{ a: Node; b: Node; la: ChainLink; calls: Call[] }> {
  const [a, b] = await connectedPair();
  const calls: Call[] = [];
  const la = a.net.open(CHAIN_X);
  record(la, 'A', calls);
  record(b.net.open(CHAIN_X), 'B', calls);
  return { a, b, la, calls };
}

test('open(): messages to this node itself come back on a later turn, from itself', async () => {
  const [a] = await connectedPair();
  const calls: Call[] = [];
  const link = a.net.open(CHAIN_X);
  record(link, 'A', calls);
  sendAll(link, a.id);
  assert.equal(calls, [], 'nothing delivered on the same turn');
  await new Promise((r) => setImmediate(r));
  assert.equal(calls, allCalls('A', a.id));
});

test('open(): each engine and bootstrap message to a peer reaches that peer\'s targets, from the sender', async () => {
  const { a, b, la, calls } = await chainOnPair();
  sendAll(la, b.id);
  await until(() => calls.length === 10, 'all delivered');
  assert.equal(calls, allCalls('B', a.id));
});

test('open(): a push query to this node and a peer reaches both; a node not connected gets nothing (no throw)', async () => {
  const { a, b, la, calls } = await chainOnPair();
  la.transport.pushQuery([a.id, b.id, STRANGER], 1, bytes(9));
  la.transport.chits(STRANGER, 2, BLOCK_1);
  await until(() => calls.length === 2, 'both delivered');
  await sleep(50);
  assert.equal(calls.map((c) => `${c.to}:${c.m}`).sort(), ['A:onPushQuery', 'B:onPushQuery']);
});

test('open(): an accepted block sent with gossipAccepted reaches onGossipedBlock; a VM\'s gossip reaches every peer\'s gossip target', async () => {
  const { a, b, la, calls } = await chainOnPair();
  la.gossipAccepted([b.id], bytes(7, 7));
  la.transport.put(b.id, GOSSIP_REQUEST_ID, bytes(8, 8)); // the same wire message
  la.gossip(bytes(1, 2, 3));
  await until(() => calls.length === 3, 'all delivered');
  assert.equal(calls, [
    { to: 'B', m: 'onGossipedBlock', from: a.id.toString(), args: [plain(bytes(7, 7))] },
    { to: 'B', m: 'onGossipedBlock', from: a.id.toString(), args: [plain(bytes(8, 8))] },
    { to: 'B', m: 'gossip', from: a.id.toString(), args: [plain(bytes(1, 2, 3))] },
  ]);
});

test('open(): messages for a chain the receiver does not run are ignored; close() stops delivery; opening again delivers to the new link', async () => {
  const [a, b] = await connectedPair();
  const calls: Call[] = [];
  const ax = a.net.open(CHAIN_X);
  const ay = a.net.open(CHAIN_Y);
  const bx = b.net.open(CHAIN_X);
  record(bx, 'B', calls);
  // B does not run Y: ignored (logged at debug); the X message after it arrives (one TCP stream, in order).
  ay.gossip(bytes(1));
  ax.gossip(bytes(2));
  await until(() => calls.length === 1, 'the X gossip delivered');
  assert.equal(calls[0]?.args, [plain(bytes(2))]);
  assert.is(logged(b, 'message for a chain this node does not run')[0]?.fields?.chainId, CHAIN_Y.toString());
  assert.ok(b.net.isConnected(a.id), 'not a reason to drop the peer');
  // B closes X, opens Y: X messages are ignored now, the Y one after them is delivered.
  bx.close();
  record(b.net.open(CHAIN_Y), 'B-Y', calls);
  sendAll(ax, b.id);
  ax.gossip(bytes(3));
  ay.gossip(bytes(4));
  await until(() => calls.length === 2, 'the Y gossip delivered');
  assert.equal(calls[1], { to: 'B-Y', m: 'gossip', from: a.id.toString(), args: [plain(bytes(4))] });
  // An old link's close() does not close the chain opened again.
  const calls2: Call[] = [];
  record(b.net.open(CHAIN_X), 'B-X2', calls2);
  bx.close();
  ax.gossip(bytes(5));
  await until(() => calls2.length === 1, 'delivered to the new X link');
});

/**
 * A hand-played peer (non-validator unless `validator`) connected to A, which runs CHAIN_X with a
 * bootstrap target whose GetAncestors costs `costMs` of A's (injected) clock and replies `replyBytes`.
 */
async function costlyAncestors(o: { validator?: boolean; costMs: number; replyBytes: number; limits?: Partial<NetworkLimits> }) {
  const [ca, cb] = await testCerts(2);
  const clock = testClock();
  const log = captureLog();
  const net = new Network({
    networkId: NETWORK_ID,
    nodeId: ca!.nodeId,
    cert: ca!,
    host: '127.0.0.1',
    port: 0,
    bootstrappers: [],
    version: VERSION,
    log,
    limits: { ...LIMITS, ...o.limits },
    now: clock.now,
    isValidator: (id) => o.validator === true && id.equals(cb!.nodeId),
  });
  const { port } = await net.start();
  running.push(net);
  const a: Node = { net, cert: ca!, id: ca!.nodeId, port, log };
  const link = net.open(CHAIN_X);
  let handled = 0;
  const calls: Call[] = [];
  record(link, 'A', calls);
  link.attachBootstrap({
    ...({} as BootstrapTarget),
    onGetAncestors: async (from, requestId) => {
      handled++;
      clock.advance(o.costMs); // the work this request costs, on A's clock
      await new Promise((r) => setImmediate(r));
      link.bootstrap.ancestors(from, requestId, [new Uint8Array(o.replyBytes)]);
    },
  });
  const peer = await handPeerOf(a, cb!);
  let ancestors = 0;
  const frames = new FrameDecoder();
  peer.on('data', (d: Buffer) => {
    for (const f of frames.push(new Uint8Array(d))) if (decodeMessage(f).op === 'Ancestors') ancestors++;
  });
  const ask = (n: number, from = 0) => {
    const bytes: Uint8Array[] = [];
    for (let i = 0; i < n; i++) bytes.push(wire({ op: 'GetAncestors', chainId: CHAIN_X, requestId: from + i, containerId: BLOCK_1 }));
    peer.write(Buffer.concat(bytes));
  };
  return { a, clock, ask, handled: () => handled, ancestors: () => ancestors };
}

const SMALL_BUDGET = {
  ...DEFAULT_REQUEST_BUDGET,
  atLarge: { requestsPerSecond: 10_000, requestsBurst: 10_000, maxInFlight: 4, replyBytesPerSecond: 100_000, replyBytesBurst: 200_000, busyShare: 0.25, busyBurstMs: 200 },
};

test('requests beyond a peer\'s budget are dropped (busy time, requests in progress): warned a few times, not per request; served again once it refills', async () => {
  const h = await costlyAncestors({ costMs: 50, replyBytes: 1_000, limits: { requestBudget: SMALL_BUDGET } });
  h.ask(100);
  await until(() => h.ancestors() === h.handled() && logged(h.a, 'throttling peer').length > 0, 'the admitted ones answered');
  await sleep(100);
  // 4 in progress at once at most, and 200 ms of busy time (+ the one that crosses it) at 50 ms each.
  assert.ok(h.handled() >= 4 && h.handled() <= 5, `${h.handled()} of 100 handled`);
  const warned = logged(h.a, 'throttling peer');
  assert.ok(warned.length <= 5, `${warned.length} warn lines`);
  assert.is(warned[0]?.level, 'warn');
  assert.is(warned[0]?.fields?.op, 'GetAncestors');
  assert.ok(h.a.net.peers().length === 1, 'throttled, not dropped');
  const before = h.handled();
  h.clock.advance(10_000);
  h.ask(1, 1_000);
  await until(() => h.handled() === before + 1, 'served again after the budget refilled');
});

test('reply bytes: a peer that was sent its byte allowance gets nothing more until it refills', async () => {
  const h = await costlyAncestors({ costMs: 0, replyBytes: 50_000, limits: { requestBudget: SMALL_BUDGET } });
  for (let i = 0; i < 10; i++) {
    h.ask(1, i);
    await until(() => h.ancestors() === h.handled() && (h.handled() === i + 1 || logged(h.a, 'throttling peer').length > 0), `request ${i}`);
  }
  // 200,000 bytes of burst: the fourth reply (with its frame, 4 x 50,051 bytes) puts the peer in debt; the rest are dropped.
  assert.is(h.handled(), 4);
  assert.is(logged(h.a, 'throttling peer')[0]?.fields?.over, 'reply bytes');
});

test('a validator gets the validator allocation: the same 100 requests are all served', async () => {
  const h = await costlyAncestors({ validator: true, costMs: 50, replyBytes: 1_000, limits: { requestBudget: SMALL_BUDGET } });
  h.ask(100);
  await until(() => h.ancestors() === 100, 'all answered');
  assert.is(logged(h.a, 'throttling peer').length, 0);
});

test.run();
