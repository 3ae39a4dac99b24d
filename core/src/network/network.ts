/**
 * The node's peer-to-peer network: a TLS server on the staking port and TLS connections
 * to other nodes, both with the staking certificate (mutual; no CA: a peer is who its certificate's
 * node ID says, and TLS proves it holds the key). One connection per node; peers learned from
 * `--bootstrap-ips` and then from peer lists; lost connections are dialled again with backoff.
 *
 * Each chain opens a ChainLink: its engine's, bootstrapper's and VM's messages go to the peers
 * they name (messages to this node itself come back on a later turn, as with the loopback), and
 * messages from peers for that chain are delivered to it. Messages for a chain this node does not
 * run are ignored.
 *
 * Nothing here assumes loopback: a node advertises `--public-ip` when given, otherwise the
 * unspecified address, which a receiver replaces with the address it sees the node connect from.
 * The advertised address is signed with the staking key (signed-ip.ts): peers relay it in their
 * PeerLists, and only signed addresses are dialled (address-book.ts, peer-list.ts).
 *
 * Parts: inbound.ts (which inbound connections are taken on), peer.ts (one connection),
 * address-book.ts (what is dialled, with backoff), peer-list.ts (what is relayed and believed),
 * chain-router.ts (each chain's messages), log-limit.ts (warn lines a flood cannot multiply).
 *
 * One piece (past 600 lines) because accepting, dialling, refusing, replacing and closing a
 * connection all change one table (one peer per node ID) and the address book together, and must
 * see each other's changes at once: what stands apart is in the parts above.
 */
import { randomBytes } from 'node:crypto';
import { isIP, type Socket } from 'node:net';
import { createServer, connect, type Server, type TLSSocket } from 'node:tls';
import type { Id, Logger, ShortId } from '@cornice/sdk';
import { peerCertificate, type PeerCertificate, type StakingCert } from '../staking/cert.js';
import { AddressBook, type Known } from './address-book.js';
import { ChainRouter, GOSSIP_REQUEST_ID } from './chain-router.js';
import { MAX_PAYLOAD_BYTES } from './framing.js';
import { DEFAULT_INBOUND_LIMITS, InboundGate, type Handshake, type InboundLimits } from './inbound.js';
import { limitWarnings } from './log-limit.js';
import type { IpPort, Message, MessageOf } from './messages.js';
import { DEFAULT_PEER_LIMITS, Peer, type LocalIdentity, type PeerLimits } from './peer.js';
import { ClaimVerifier, peerListEntries } from './peer-list.js';
import { DEFAULT_REQUEST_BUDGET, RequestBudget, type RequestBudgetLimits } from './request-budget.js';
import { signIp, verifyIp } from './signed-ip.js';
import type { ChainLink, EngineNetwork, PeerSummary } from './types.js';

export { GOSSIP_REQUEST_ID };

export interface BootstrapPeer extends IpPort {
  nodeId: ShortId;
}

export interface NetworkOptions {
  networkId: number;
  nodeId: ShortId;
  cert: Pick<StakingCert, 'certPem' | 'keyPem'>;
  /** Where to listen ('' or '0.0.0.0' for every interface). */
  host: string;
  port: number;
  /** The IP other nodes should dial (default: what they see this node connect from). */
  publicIp?: string;
  /** Nodes to connect to first (and always again when lost). */
  bootstrappers: readonly BootstrapPeer[];
  /** `cornice/<major>.<minor>.<patch>` */
  version: string;
  log: Logger;
  limits?: Partial<NetworkLimits>;
  now?: () => number;
  /**
   * Whether a node validates (the primary network): its requests get the validator allocation of
   * the request budget, others the at-large one; and when given, only validators' addresses learned
   * from PeerLists are dialled (avalanchego tracks validators' IPs only: otherwise anyone could make
   * this node dial any address by signing it with a fresh certificate). Default: nobody validates and
   * every signed address is dialled. Called per request: keep it cheap.
   */
  isValidator?: (nodeId: ShortId) => boolean;
}

export interface NetworkLimits extends PeerLimits, InboundLimits {
  /** Most peers connected at once (handshaking connections are bounded apart: maxHandshaking). */
  maxPeers: number;
  /** TCP+TLS connect bound when dialling (ms). */
  dialTimeoutMs: number;
  /** Backoff between dials of one address: first, then doubled up to the max (ms). */
  dialBackoffMs: number;
  maxDialBackoffMs: number;
  /** A learned (non-bootstrap) address is forgotten after this many failed dials in a row. */
  maxDialFailures: number;
  /** How often a peer is asked for its peers (ms). */
  peerListIntervalMs: number;
  /** Signed addresses checked per PeerList received (each costs a signature check). */
  maxPeerListVerifications: number;
  /** A peer's PeerLists beyond one per this many ms are ignored. */
  minPeerListSpacingMs: number;
  /**
   * A connection from a node already connected is refused, except while the existing connection is
   * younger than this (ms): both nodes dialling each other at once, where the tie rule picks one.
   */
  simultaneousDialWindowMs: number;
  /** A peer that sent nothing for this long is sent a Ping (ms). */
  pingIntervalMs: number;
  /** A peer that sent nothing for this long (not even a Pong) is dropped (ms). */
  peerIdleTimeoutMs: number;
  /** What each peer's requests may cost (request-budget.ts). */
  requestBudget: RequestBudgetLimits;
}

export const DEFAULT_NETWORK_LIMITS: NetworkLimits = {
  ...DEFAULT_PEER_LIMITS,
  ...DEFAULT_INBOUND_LIMITS,
  maxPeers: 256,
  dialTimeoutMs: 10_000,
  dialBackoffMs: 1_000,
  maxDialBackoffMs: 60_000,
  maxDialFailures: 10,
  peerListIntervalMs: 60_000,
  maxPeerListVerifications: 128,
  minPeerListSpacingMs: 1_000,
  simultaneousDialWindowMs: 10_000,
  pingIntervalMs: 20_000,
  peerIdleTimeoutMs: 60_000,
  requestBudget: DEFAULT_REQUEST_BUDGET,
};

/** Messages that ask this node for work: admitted by the request budget, or dropped. */
const REQUESTS = new Set<Message['op']>(['GetAcceptedFrontier', 'GetAccepted', 'GetAncestors', 'Get', 'PushQuery', 'PullQuery', 'Gossip', 'GetPeerList', 'PeerList']);
/** Messages this node sends in answer to a peer's requests: their bytes are charged to that peer. */
const REPLIES = new Set<Message['op']>(['AcceptedFrontier', 'Accepted', 'Ancestors', 'Chits', 'Put', 'PeerList']);

const UNSPECIFIED = new Set(['0.0.0.0', '::', '']);

export class Network implements EngineNetwork {
  readonly #o: NetworkOptions;
  readonly #limits: NetworkLimits;
  readonly #log: Logger;
  /** The same, with warn lines (drops, refusals, throttling) limited per message: a flood does not flood the log. */
  readonly #warn: Logger;
  readonly #now: () => number;
  readonly #gate: InboundGate;
  /** Inbound connections in their handshake, by `address|port` (the TCP socket's and the TLS socket's). */
  readonly #handshakes = new Map<string, { h: Handshake; deadline: ReturnType<typeof setTimeout> }>();
  readonly #nonce = randomBytes(8).readBigUInt64BE();
  /** Ready peers by node ID key. */
  readonly #peers = new Map<string, Peer>();
  /** Connections not through the handshake yet. */
  readonly #pending = new Set<Peer>();
  /** Each peer's certificate (its DER is relayed in PeerLists; its key checks the peer's signed address). */
  readonly #certs = new WeakMap<Peer, PeerCertificate>();
  /** When each connected node's last PeerList was taken (this node's clock). */
  readonly #peerListAt = new Map<string, number>();
  readonly #book: AddressBook;
  readonly #claims: ClaimVerifier;
  readonly #router: ChainRouter;
  readonly #budget: RequestBudget;
  readonly #isValidator: (nodeId: ShortId) => boolean;
  /** Every open socket, inbound or dialled, handshaking or not: stop() ends them all. */
  readonly #sockets = new Set<Socket>();
  #server: Server | undefined;
  #listen: IpPort = { ip: '0.0.0.0', port: 0 };
  /** The signed claim of #listen (start() signs it). */
  #listenClaim: { ipTime: bigint; ipSignature: Uint8Array } = { ipTime: 0n, ipSignature: new Uint8Array(0) };
  #peerListTimer: ReturnType<typeof setInterval> | undefined;
  #pingTimer: ReturnType<typeof setInterval> | undefined;
  #stopped = false;

  constructor(opts: NetworkOptions) {
    this.#o = opts;
    this.#limits = { ...DEFAULT_NETWORK_LIMITS, ...opts.limits };
    this.#log = opts.log;
    this.#now = opts.now ?? Date.now;
    this.#warn = limitWarnings(opts.log, this.#now);
    this.#gate = new InboundGate(this.#limits, this.#now);
    this.#budget = new RequestBudget(this.#limits.requestBudget, this.#now);
    this.#isValidator = opts.isValidator ?? (() => false);
    this.#book = new AddressBook(
      { ...this.#limits, maxKnown: this.#limits.maxPeers * 4 },
      { selfId: opts.nodeId, isConnected: (id) => this.#peers.has(id.key), dial: (k) => this.#dial(k), log: opts.log },
    );
    this.#claims = new ClaimVerifier({
      selfId: opts.nodeId,
      now: this.#now,
      maxClockSkewSeconds: this.#limits.maxClockSkewSeconds,
      maxVerifications: this.#limits.maxPeerListVerifications,
    });
    this.#router = new ChainRouter({
      self: opts.nodeId,
      send: (to, m) => void this.#peers.get(to.key)?.send(m),
      broadcast: (m) => {
        for (const p of this.#peers.values()) p.send(m);
      },
      log: opts.log,
    });
  }

  /** Listens, then dials the bootstrap nodes; resolves with the port listened on. */
  async start(): Promise<IpPort> {
    const server = createServer({
      cert: this.#o.cert.certPem,
      key: this.#o.cert.keyPem,
      requestCert: true,
      rejectUnauthorized: false,
      minVersion: 'TLSv1.3',
      // TLS and Version together have one deadline, set per connection in #inbound.
    });
    server.on('connection', (socket: Socket) => this.#inbound(socket));
    server.on('secureConnection', (socket) => this.#accepted(socket));
    server.on('tlsClientError', (e, socket) => {
      this.#log.debug('inbound TLS handshake failed', { error: e.message });
      socket.destroy(); // node leaves it open once this event has a listener (handshakeTimeout included)
    });
    server.on('error', (e) => this.#log.error('staking server error', { error: e.message }));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.#o.port, this.#o.host || undefined, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.#server = server;
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : this.#o.port;
    this.#listen = { ip: this.#o.publicIp ?? (this.#o.host && !UNSPECIFIED.has(this.#o.host) ? this.#o.host : '0.0.0.0'), port };
    // Signed once: the address does not change while the node runs; a restart signs a newer claim.
    const claim = signIp(this.#o.cert.keyPem, { ...this.#listen, time: BigInt(Math.floor(this.#now() / 1000)) });
    this.#listenClaim = { ipTime: claim.time, ipSignature: claim.signature };
    for (const b of this.#o.bootstrappers) this.#book.learn({ nodeId: b.nodeId, ip: b.ip, port: b.port, time: 0n }, true);
    this.#peerListTimer = setInterval(() => this.#askForPeers(), this.#limits.peerListIntervalMs);
    this.#peerListTimer.unref?.();
    this.#pingTimer = setInterval(() => this.#checkLiveness(), this.#limits.pingIntervalMs);
    this.#pingTimer.unref?.();
    this.#log.info('staking server listening', { host: this.#o.host || '0.0.0.0', port, advertised: `${this.#listen.ip}:${port}` });
    return { ip: this.#listen.ip, port };
  }

  /** Closes every connection (handshaking ones too) and the staking port; nothing is dialled after. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#peerListTimer);
    clearInterval(this.#pingTimer);
    this.#book.stop();
    for (const p of [...this.#peers.values(), ...this.#pending]) p.close('node stopping');
    // Dials and inbound connections still in their TLS handshake (server.close waits for those).
    for (const s of this.#sockets) s.destroy();
    const server = this.#server;
    this.#server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  #track(socket: Socket): void {
    this.#sockets.add(socket);
    socket.once('close', () => this.#sockets.delete(socket));
  }

  // ---- EngineNetwork ---------------------------------------------------------------------------

  connected(): readonly ShortId[] {
    return [this.#o.nodeId, ...[...this.#peers.values()].map((p) => p.nodeId)];
  }

  isConnected(node: ShortId): boolean {
    return node.equals(this.#o.nodeId) || this.#peers.has(node.key);
  }

  open(chainId: Id): ChainLink {
    return this.#router.open(chainId);
  }

  /**
   * The `network` health check: connected peers and bootstrap nodes; unhealthy while this node has
   * bootstrap nodes and is connected to none of them.
   */
  health(): { peers: number; bootstrapNodes: number; bootstrapNodesConnected: number } {
    const bootstrapNodesConnected = this.#o.bootstrappers.filter((b) => this.#peers.has(b.nodeId.key)).length;
    const status = { peers: this.#peers.size, bootstrapNodes: this.#o.bootstrappers.length, bootstrapNodesConnected };
    if (status.bootstrapNodes > 0 && bootstrapNodesConnected === 0) {
      throw Object.assign(new Error(`not connected to any of the ${status.bootstrapNodes} bootstrap node(s)`), { details: status });
    }
    return status;
  }

  /** Connected peers, for admin.peers. */
  peers(): PeerSummary[] {
    return [...this.#peers.values()].map((p) => {
      const listen = this.#listenOf(p);
      return {
        ip: `${formatIp(listen.ip)}:${listen.port}`,
        nodeID: p.nodeId.toString(),
        version: p.info?.version ?? '',
        direction: p.direction,
        lastSent: new Date(p.lastSent).toISOString(),
        lastReceived: new Date(p.lastReceived).toISOString(),
      };
    });
  }

  // ---- connections -----------------------------------------------------------------------------

  #identity(): LocalIdentity {
    return { networkId: this.#o.networkId, nonce: this.#nonce, listen: this.#listen, ...this.#listenClaim, version: this.#o.version };
  }

  /**
   * A new TCP connection on the staking port: admitted by the inbound gate (per-IP cooldown, a bound
   * on connections in their handshake, oldest evicted) with a deadline for TLS and Version together,
   * or closed at once. Tests: network/flood.test.ts.
   */
  #inbound(socket: Socket): void {
    if (this.#stopped) return void socket.destroy();
    const key = `${socket.remoteAddress}|${socket.remotePort}`;
    const remote = `${normalizeIp(socket.remoteAddress ?? '')}:${socket.remotePort}`;
    const end = (reason: string) => {
      this.#warn.warn('closing inbound connection', { remote, reason });
      socket.destroy();
    };
    const h = this.#gate.admit(normalizeIp(socket.remoteAddress ?? ''), end);
    if (typeof h === 'string') return end(h);
    this.#track(socket);
    const deadline = setTimeout(() => end(`no handshake (TLS and Version) within ${this.#limits.handshakeTimeoutMs} ms`), this.#limits.handshakeTimeoutMs);
    deadline.unref?.();
    this.#handshakes.set(key, { h, deadline });
    socket.once('close', () => {
      clearTimeout(deadline);
      if (this.#handshakes.get(key)?.h === h) this.#handshakes.delete(key);
      this.#gate.done(h, false);
    });
  }

  /** The handshake of an inbound connection is over (`ok`: it is a peer now): its deadline and slot are released. */
  #handshakeDone(socket: TLSSocket, ok: boolean): void {
    const key = `${socket.remoteAddress}|${socket.remotePort}`;
    const entry = this.#handshakes.get(key);
    if (!entry) return;
    this.#handshakes.delete(key);
    clearTimeout(entry.deadline);
    this.#gate.done(entry.h, ok);
  }

  /**
   * An inbound connection through TLS. Refused at once (before Version): a certificate with this
   * node's own node ID, a node already connected (unless both dialled each other at once: the tie
   * rule in #ready decides), a node with another connection in its handshake, or too many peers.
   * Tests: network.test.ts 'refused: a connection whose certificate is this node\'s own node ID…',
   * 'refused: a second connection from a connected node…', 'refused: a second inbound connection…'.
   */
  #accepted(socket: TLSSocket): void {
    if (this.#stopped) return void socket.destroy();
    const cert = this.#peerCert(socket);
    if (!cert) return;
    const nodeId = cert.nodeId;
    const refusal = this.#refusal(nodeId, 'inbound');
    if (refusal) {
      this.#warn.warn('refusing peer', { nodeId: nodeId.toString(), remote: `${normalizeIp(socket.remoteAddress ?? '')}:${socket.remotePort}`, reason: refusal });
      socket.destroy();
      return;
    }
    this.#startPeer(socket, cert, 'inbound', { ip: normalizeIp(socket.remoteAddress ?? ''), port: socket.remotePort ?? 0 }, undefined);
  }

  /** Why a connection of `nodeId` in `direction` is not wanted now, or undefined. */
  #refusal(nodeId: ShortId, direction: 'inbound' | 'outbound'): string | undefined {
    if (nodeId.equals(this.#o.nodeId)) return 'its certificate is this node\'s own node ID';
    const existing = this.#peers.get(nodeId.key);
    if (existing && !this.#mayReplace(existing, direction)) return 'already connected';
    for (const p of this.#pending) if (p.direction === direction && p.nodeId.equals(nodeId)) return 'another connection of this node is in its handshake';
    if (!existing && this.#peers.size >= this.#limits.maxPeers) return `${this.#limits.maxPeers} peers connected already`;
    return undefined;
  }

  /**
   * Whether a new connection in `direction` may still take the place of `existing`: only in the other
   * direction, and only while `existing` is younger than simultaneousDialWindowMs (both nodes dialled
   * each other at once). Outside that window a second connection is refused: it could only come from
   * the holder of that node's key, and taking it would drop a working connection.
   */
  #mayReplace(existing: Peer, direction: 'inbound' | 'outbound'): boolean {
    return existing.direction !== direction && this.#now() - existing.readyAt < this.#limits.simultaneousDialWindowMs;
  }

  #peerCert(socket: TLSSocket): PeerCertificate | undefined {
    try {
      const raw = socket.getPeerCertificate(true)?.raw;
      if (!raw || raw.length === 0) throw new Error('no certificate');
      return peerCertificate(new Uint8Array(raw));
    } catch (e) {
      this.#warn.warn('dropping connection: unusable peer certificate', { remote: `${socket.remoteAddress}:${socket.remotePort}`, error: (e as Error).message });
      socket.destroy();
      return undefined;
    }
  }

  #startPeer(socket: TLSSocket, cert: PeerCertificate, direction: 'inbound' | 'outbound', remote: IpPort, dialled: Known | undefined): void {
    const peer = new Peer(
      socket,
      cert.nodeId,
      direction,
      remote,
      this.#identity(),
      {
        ready: (p) => this.#ready(p),
        message: (p, m) => this.#message(p, m),
        closed: (p, reason) => this.#closed(p, reason, dialled),
        checkVersion: (p, v) => this.#checkClaim(p, v),
        sent: (p, m, bytes) => this.#sent(p, m, bytes),
      },
      this.#warn,
      this.#limits,
      this.#now,
    );
    this.#certs.set(peer, cert);
    if (!peer.closed) this.#pending.add(peer);
  }

  /**
   * A Version's listen address must be signed by the peer's staking key, at a time not ahead of this
   * node's clock by more than the allowed skew: that claim is what this node relays for it.
   * Test: network.test.ts 'a Version whose listen address is not signed by the peer\'s key is refused'.
   */
  #checkClaim(peer: Peer, v: MessageOf<'Version'>): string | undefined {
    const latest = BigInt(Math.floor(this.#now() / 1000) + this.#limits.maxClockSkewSeconds);
    if (v.ipTime > latest) return `its address was signed at ${v.ipTime}, ahead of this node's clock`;
    const claim = { ip: v.listen.ip, port: v.listen.port, time: v.ipTime, signature: v.ipSignature };
    if (!verifyIp(this.#certs.get(peer)?.publicKey, claim)) return 'its listen address is not signed by its staking key';
    return undefined;
  }

  #ready(peer: Peer): void {
    this.#pending.delete(peer);
    if (peer.direction === 'inbound') this.#handshakeDone(peer.socket, true);
    if (this.#stopped) return peer.close('node stopping');
    const existing = this.#peers.get(peer.nodeId.key);
    if (existing) {
      // Both dialled each other at once: keep the connection dialled by the smaller node ID (both
      // sides agree). Any other second connection is refused (#mayReplace).
      const preferred = this.#o.nodeId.compare(peer.nodeId) < 0 ? 'outbound' : 'inbound';
      const keepNew = this.#mayReplace(existing, peer.direction) && peer.direction === preferred;
      if (!keepNew) {
        if (!this.#mayReplace(existing, peer.direction)) this.#warn.warn('refusing peer', { nodeId: peer.nodeId.toString(), reason: 'already connected' });
        return peer.close('duplicate connection');
      }
    }
    // Before the old connection closes: its closing must not look like a lost peer (to be dialled again).
    this.#peers.set(peer.nodeId.key, peer);
    existing?.close('duplicate connection');
    this.#book.connected(peer.nodeId);
    const listen = this.#listenOf(peer);
    this.#log.info('peer connected', { nodeId: peer.nodeId.toString(), ip: `${listen.ip}:${listen.port}`, direction: peer.direction, version: peer.info!.version });
    peer.send(this.#peerList(peer));
  }

  #closed(peer: Peer, reason: string, dialled: Known | undefined): void {
    this.#pending.delete(peer);
    if (this.#peers.get(peer.nodeId.key) === peer) {
      this.#peers.delete(peer.nodeId.key);
      this.#peerListAt.delete(peer.nodeId.key);
      this.#budget.forget(peer.nodeId.key);
      // At warn (a runner's nodes log at warn): a lost peer is worth seeing; limited like every drop.
      if (reason === 'node stopping' || reason === 'duplicate connection') this.#log.info('peer disconnected', { nodeId: peer.nodeId.toString(), reason });
      else this.#warn.warn('peer disconnected', { nodeId: peer.nodeId.toString(), reason });
    }
    if (reason === 'self-connection' && dialled) return this.#book.isSelf(dialled);
    if (dialled && !this.#stopped) {
      if (!this.#peers.has(peer.nodeId.key)) this.#book.failed(dialled, reason);
    } else if (!this.#stopped && peer.info && !this.#peers.has(peer.nodeId.key)) {
      // An inbound peer went away: dial it back at the address it listens on (the one it signed, or
      // the IP it connected from when it signed the unspecified address).
      const listen = this.#listenOf(peer);
      this.#book.learn({ nodeId: peer.nodeId, ip: listen.ip, port: listen.port, time: peer.info.ipTime }, false);
    }
  }

  /** Where a peer accepts connections: its advertised address, or the IP it connected from. */
  #listenOf(peer: Peer): IpPort {
    const listen = peer.info?.listen;
    if (!listen) return peer.remote;
    return { ip: UNSPECIFIED.has(listen.ip) ? peer.remote.ip : listen.ip, port: listen.port };
  }

  /** What this node relays to `to`: its other peers' signed addresses (peer-list.ts). */
  #peerList(to: Peer): MessageOf<'PeerList'> {
    const relayed = [];
    for (const p of this.#peers.values()) {
      const cert = this.#certs.get(p);
      if (p !== to && p.info && cert) relayed.push({ nodeId: p.nodeId, certDer: cert.der, info: p.info });
    }
    return { op: 'PeerList', peers: peerListEntries(relayed, MAX_PAYLOAD_BYTES) };
  }

  #askForPeers(): void {
    const peers = [...this.#peers.values()];
    const p = peers[Math.floor(Math.random() * peers.length)];
    p?.send({ op: 'GetPeerList' });
  }

  /**
   * A peer's PeerList: the addresses whose claims verify (and are newer than what is known, and are
   * validators' when the network knows validators) are learned and dialled; the rest is ignored,
   * never dialled. At most one PeerList per peer per minPeerListSpacingMs is looked at.
   * Tests: network.test.ts 'a PeerList of addresses not signed by the nodes claiming them…',
   * 'with a validator check, only validators\' signed addresses…', 'a peer\'s PeerLists beyond one per…'.
   */
  #onPeerList(peer: Peer, m: MessageOf<'PeerList'>): void {
    const t = this.#now();
    const last = this.#peerListAt.get(peer.nodeId.key);
    if (last !== undefined && t - last < this.#limits.minPeerListSpacingMs) {
      this.#warn.warn('ignoring peer list', { nodeId: peer.nodeId.toString(), reason: `more than one per ${this.#limits.minPeerListSpacingMs} ms` });
      return;
    }
    this.#peerListAt.set(peer.nodeId.key, t);
    const wanted = this.#o.isValidator ?? (() => true);
    const check = this.#claims.check(m.peers, (id, time) => !this.#peers.has(id.key) && wanted(id) && this.#book.isNewer(id, time));
    if (check.invalid > 0 || check.skipped > 0) {
      this.#warn.warn('ignoring peer list entries', { nodeId: peer.nodeId.toString(), notSigned: check.invalid, overBudget: check.skipped });
    }
    for (const c of check.believed) this.#book.learn(c, false);
  }

  #dial(k: Known): void {
    if (this.#stopped) return;
    if (this.#peers.size >= this.#limits.maxPeers) return this.#book.failed(k, 'too many peers');
    k.dialling = true;
    const socket = connect({
      host: k.ip,
      port: k.port,
      cert: this.#o.cert.certPem,
      key: this.#o.cert.keyPem,
      rejectUnauthorized: false,
      minVersion: 'TLSv1.3',
    });
    this.#track(socket);
    const timer = setTimeout(() => socket.destroy(new Error(`no TLS connection within ${this.#limits.dialTimeoutMs} ms`)), this.#limits.dialTimeoutMs);
    timer.unref?.();
    const failed = (e: Error) => {
      clearTimeout(timer);
      k.dialling = false;
      this.#book.failed(k, e.message);
    };
    socket.once('error', failed);
    socket.once('secureConnect', () => {
      clearTimeout(timer);
      socket.off('error', failed);
      k.dialling = false;
      if (this.#stopped) return void socket.destroy();
      const cert = this.#peerCert(socket);
      if (!cert) return this.#book.failed(k, 'unusable certificate');
      const nodeId = cert.nodeId;
      if (nodeId.equals(this.#o.nodeId)) {
        // This node's own address (or its key in other hands): never dialled again.
        this.#warn.warn('refusing peer', { ip: `${k.ip}:${k.port}`, reason: 'its certificate is this node\'s own node ID' });
        socket.destroy();
        return this.#book.isSelf(k);
      }
      if (!k.nodeId.equals(nodeId)) {
        socket.destroy();
        if (k.bootstrap) {
          this.#warn.warn('peer at a bootstrap address has another node ID', { ip: `${k.ip}:${k.port}`, expected: k.nodeId.toString(), got: nodeId.toString() });
          return this.#book.failed(k, 'unexpected node ID');
        }
        return this.#book.forget(k, `another node (${nodeId.toString()}) listens there`);
      }
      if (this.#peers.has(nodeId.key)) {
        socket.destroy(); // connected meanwhile (it dialled us)
        return;
      }
      this.#startPeer(socket, cert, 'outbound', { ip: k.ip, port: k.port }, k);
    });
  }

  /**
   * Pings the peers that sent nothing for pingIntervalMs and drops those silent for peerIdleTimeoutMs:
   * a connection whose other end is gone without a FIN (a crashed machine, a cut link) does not hold
   * the node ID's place, which a restarted node needs now that second connections are refused.
   * Test: network.test.ts 'a peer silent for peerIdleTimeoutMs is pinged, then dropped…'.
   */
  #checkLiveness(): void {
    const t = this.#now();
    for (const p of [...this.#peers.values()]) {
      const idle = t - Math.max(p.lastReceived, p.readyAt);
      if (idle >= this.#limits.peerIdleTimeoutMs) p.drop(`nothing received for ${idle} ms`);
      else if (idle >= this.#limits.pingIntervalMs) p.send({ op: 'Ping' });
    }
  }

  // ---- messages --------------------------------------------------------------------------------

  /**
   * A peer's message. Requests pass the peer's request budget first (request-budget.ts): beyond it
   * they are dropped and the asker times out; the drop is logged at warn, rate-limited. How long each
   * admitted request keeps the node busy is metered until its handler is done.
   * Tests: network.test.ts 'requests beyond a peer\'s budget are dropped…', 'reply bytes: …',
   * 'a validator gets the validator allocation…'.
   */
  #message(peer: Peer, m: Message): void {
    if (!REQUESTS.has(m.op) && !(m.op === 'Put' && m.requestId === GOSSIP_REQUEST_ID)) return void this.#handle(peer, m);
    const validator = this.#isValidator(peer.nodeId);
    const ticket = this.#budget.admit(peer.nodeId.key, validator);
    if ('refused' in ticket) {
      this.#warn.warn('throttling peer', { nodeId: peer.nodeId.toString(), op: m.op, validator, over: ticket.pool ? `${ticket.refused} of all non-validators` : ticket.refused });
      return;
    }
    let result: Promise<void> | void;
    try {
      result = this.#handle(peer, m);
    } catch (e) {
      ticket.finish();
      throw e;
    }
    if (result instanceof Promise) result.then(ticket.finish, ticket.finish);
    else ticket.finish();
  }

  /** Bytes sent in answer to a peer's requests count against its budget (a gossiped block does not). */
  #sent(peer: Peer, m: Message, bytes: number): void {
    if (!REPLIES.has(m.op) || (m.op === 'Put' && m.requestId === GOSSIP_REQUEST_ID)) return;
    this.#budget.replied(peer.nodeId.key, this.#isValidator(peer.nodeId), bytes);
  }

  #handle(peer: Peer, m: Message): Promise<void> | void {
    switch (m.op) {
      case 'GetPeerList':
        peer.send(this.#peerList(peer));
        return;
      case 'PeerList':
        this.#onPeerList(peer, m);
        return;
      case 'Version':
      case 'GetVersion':
      case 'Ping':
      case 'Pong':
        return;
      default:
        return this.#router.route(peer.nodeId, m);
    }
  }
}

/** node:net prints IPv4 peers on a dual-stack socket as `::ffff:a.b.c.d`. */
function normalizeIp(ip: string): string {
  return ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip;
}

function formatIp(ip: string): string {
  return isIP(ip) === 6 ? `[${ip}]` : ip;
}
