/**
 * The node's peer-to-peer network (DESIGN §5): a TLS server on the staking port and TLS connections
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
 */
import { randomBytes } from 'node:crypto';
import { isIP, type Socket } from 'node:net';
import { createServer, connect, type Server, type TLSSocket } from 'node:tls';
import type { Id, Logger, ShortId } from '@cornice/sdk';
import type { BootstrapTarget, BootstrapTransport } from '../consensus/bootstrap/types.js';
import type { EngineTransport, LoopbackTarget } from '../consensus/index.js';
import { peerCertificate, type StakingCert } from '../staking/cert.js';
import { DEFAULT_INBOUND_LIMITS, InboundGate, type Handshake, type InboundLimits } from './inbound.js';
import { limitWarnings } from './log-limit.js';
import { MAX_PEERS, type ChainMessage, type IpPort, type Message, type PeerInfo } from './messages.js';
import { DEFAULT_PEER_LIMITS, Peer, type LocalIdentity, type PeerLimits } from './peer.js';
import type { ChainLink, EngineNetwork, PeerSummary } from './types.js';

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
  /**
   * A connection from a node already connected is refused, except while the existing connection is
   * younger than this (ms): both nodes dialling each other at once, where the tie rule picks one.
   */
  simultaneousDialWindowMs: number;
  /** A peer that sent nothing for this long is sent a Ping (ms). */
  pingIntervalMs: number;
  /** A peer that sent nothing for this long (not even a Pong) is dropped (ms). */
  peerIdleTimeoutMs: number;
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
  simultaneousDialWindowMs: 10_000,
  pingIntervalMs: 20_000,
  peerIdleTimeoutMs: 60_000,
};

/** An address worth dialling. */
interface Known {
  ip: string;
  port: number;
  nodeId: ShortId | undefined;
  bootstrap: boolean;
  failures: number;
  timer: ReturnType<typeof setTimeout> | undefined;
  dialling: boolean;
}

/** A chain's receivers. */
interface ChainTargets {
  engine: LoopbackTarget | undefined;
  bootstrap: BootstrapTarget | undefined;
  gossip: ((from: ShortId, payload: Uint8Array) => void) | undefined;
}

const addrKey = (ip: string, port: number) => `${ip}|${port}`;
/** A Put under this request ID is an accepted block sent unasked (the reference's GossipMsgRequestID); engines never use it. */
export const GOSSIP_REQUEST_ID = 0xffff_ffff;
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
  readonly #known = new Map<string, Known>();
  /** Addresses that turned out to be this node. */
  readonly #selfAddrs = new Set<string>();
  readonly #chains = new Map<string, ChainTargets>();
  /** Every open socket, inbound or dialled, handshaking or not: stop() ends them all. */
  readonly #sockets = new Set<Socket>();
  #server: Server | undefined;
  #listen: IpPort = { ip: '0.0.0.0', port: 0 };
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
    for (const b of this.#o.bootstrappers) this.#learn({ ip: b.ip, port: b.port, nodeId: b.nodeId }, true);
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
    for (const k of this.#known.values()) clearTimeout(k.timer);
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
    const targets: ChainTargets = { engine: undefined, bootstrap: undefined, gossip: undefined };
    this.#chains.set(chainId.key, targets);
    const self = this.#o.nodeId;
    const later = (fn: () => void) => void setImmediate(fn);
    /** Sends to each peer in `to`; delivers to this node on a later turn. */
    const each = (to: readonly ShortId[], toSelf: () => void, m: () => Message) => {
      let msg: Message | undefined;
      for (const node of to) {
        if (node.equals(self)) later(toSelf);
        else this.#peers.get(node.key)?.send((msg ??= m()));
      }
    };
    const transport: EngineTransport = {
      pushQuery: (to, requestId, block) =>
        each(to, () => void targets.engine?.onPushQuery(self, requestId, block), () => ({ op: 'PushQuery', chainId, requestId, container: block })),
      pullQuery: (to, requestId, blockId) =>
        each(to, () => void targets.engine?.onPullQuery?.(self, requestId, blockId), () => ({ op: 'PullQuery', chainId, requestId, containerId: blockId })),
      chits: (to, requestId, preferred) =>
        each([to], () => targets.engine?.onChits(self, requestId, preferred), () => ({ op: 'Chits', chainId, requestId, containerIds: [preferred] })),
      get: (to, requestId, blockId) =>
        each([to], () => void targets.engine?.onGet(self, requestId, blockId), () => ({ op: 'Get', chainId, requestId, containerId: blockId })),
      put: (to, requestId, block) => each([to], () => void targets.engine?.onPut(self, requestId, block), () => ({ op: 'Put', chainId, requestId, container: block })),
    };
    const bootstrap: BootstrapTransport = {
      getAcceptedFrontier: (to, requestId) =>
        each(to, () => void targets.bootstrap?.onGetAcceptedFrontier(self, requestId), () => ({ op: 'GetAcceptedFrontier', chainId, requestId })),
      getAccepted: (to, requestId, ids) =>
        each(to, () => void targets.bootstrap?.onGetAccepted(self, requestId, ids), () => ({ op: 'GetAccepted', chainId, requestId, containerIds: [...ids] })),
      getAncestors: (to, requestId, blockId) =>
        each([to], () => void targets.bootstrap?.onGetAncestors(self, requestId, blockId), () => ({ op: 'GetAncestors', chainId, requestId, containerId: blockId })),
      acceptedFrontier: (to, requestId, ids) =>
        each([to], () => targets.bootstrap?.onAcceptedFrontier(self, requestId, ids), () => ({ op: 'AcceptedFrontier', chainId, requestId, containerIds: [...ids] })),
      accepted: (to, requestId, ids) =>
        each([to], () => targets.bootstrap?.onAccepted(self, requestId, ids), () => ({ op: 'Accepted', chainId, requestId, containerIds: [...ids] })),
      ancestors: (to, requestId, blocks) =>
        each([to], () => targets.bootstrap?.onAncestors(self, requestId, blocks), () => ({ op: 'Ancestors', chainId, requestId, containers: [...blocks] })),
    };
    return {
      transport,
      attach: (target) => (targets.engine = target),
      bootstrap,
      attachBootstrap: (target) => (targets.bootstrap = target),
      gossipAccepted: (to, block) => {
        let m: Message | undefined;
        for (const node of to) this.#peers.get(node.key)?.send((m ??= { op: 'Put', chainId, requestId: GOSSIP_REQUEST_ID, container: block }));
      },
      gossip: (payload) => {
        const m: Message = { op: 'Gossip', chainId, payload };
        for (const p of this.#peers.values()) p.send(m);
      },
      attachGossip: (receive) => (targets.gossip = receive),
      close: () => {
        if (this.#chains.get(chainId.key) === targets) this.#chains.delete(chainId.key);
      },
    };
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
    return { networkId: this.#o.networkId, nonce: this.#nonce, listen: this.#listen, version: this.#o.version };
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
   * Tests: network.test.ts 'refused: our own node ID', 'refused: a second connection'.
   */
  #accepted(socket: TLSSocket): void {
    if (this.#stopped) return void socket.destroy();
    const nodeId = this.#certNodeId(socket);
    if (!nodeId) return;
    const refusal = this.#refusal(nodeId, 'inbound');
    if (refusal) {
      this.#warn.warn('refusing peer', { nodeId: nodeId.toString(), remote: `${normalizeIp(socket.remoteAddress ?? '')}:${socket.remotePort}`, reason: refusal });
      socket.destroy();
      return;
    }
    this.#startPeer(socket, nodeId, 'inbound', { ip: normalizeIp(socket.remoteAddress ?? ''), port: socket.remotePort ?? 0 }, undefined);
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

  #certNodeId(socket: TLSSocket): ShortId | undefined {
    try {
      const raw = socket.getPeerCertificate(true)?.raw;
      if (!raw || raw.length === 0) throw new Error('no certificate');
      return peerCertificate(new Uint8Array(raw)).nodeId;
    } catch (e) {
      this.#warn.warn('dropping connection: unusable peer certificate', { remote: `${socket.remoteAddress}:${socket.remotePort}`, error: (e as Error).message });
      socket.destroy();
      return undefined;
    }
  }

  #startPeer(socket: TLSSocket, nodeId: ShortId, direction: 'inbound' | 'outbound', remote: IpPort, dialled: Known | undefined): void {
    const peer = new Peer(
      socket,
      nodeId,
      direction,
      remote,
      this.#identity(),
      {
        ready: (p) => this.#ready(p, dialled),
        message: (p, m) => this.#message(p, m),
        closed: (p, reason) => this.#closed(p, reason, dialled),
      },
      this.#warn,
      this.#limits,
      this.#now,
    );
    if (!peer.closed) this.#pending.add(peer);
  }

  #ready(peer: Peer, dialled: Known | undefined): void {
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
    if (dialled) dialled.failures = 0;
    const listen = this.#listenOf(peer);
    const known = this.#known.get(addrKey(listen.ip, listen.port));
    if (known) known.nodeId ??= peer.nodeId;
    this.#log.info('peer connected', { nodeId: peer.nodeId.toString(), ip: `${listen.ip}:${listen.port}`, direction: peer.direction, version: peer.info!.version });
    peer.send({ op: 'PeerList', peers: this.#peerList(peer) });
  }

  #closed(peer: Peer, reason: string, dialled: Known | undefined): void {
    this.#pending.delete(peer);
    if (this.#peers.get(peer.nodeId.key) === peer) {
      this.#peers.delete(peer.nodeId.key);
      // At warn (a runner's nodes log at warn): a lost peer is worth seeing; limited like every drop.
      if (reason === 'node stopping' || reason === 'duplicate connection') this.#log.info('peer disconnected', { nodeId: peer.nodeId.toString(), reason });
      else this.#warn.warn('peer disconnected', { nodeId: peer.nodeId.toString(), reason });
    }
    if (reason === 'self-connection' && dialled) {
      this.#selfAddrs.add(addrKey(dialled.ip, dialled.port));
      this.#known.delete(addrKey(dialled.ip, dialled.port));
      return;
    }
    if (dialled && !this.#stopped) {
      if (!this.#peers.has(peer.nodeId.key)) this.#scheduleDial(dialled, reason);
    } else if (!this.#stopped && peer.info) {
      // An inbound peer went away: dial it back at the address it listens on.
      const listen = this.#listenOf(peer);
      this.#learn({ ip: listen.ip, port: listen.port, nodeId: peer.nodeId }, false);
    }
  }

  /** Where a peer accepts connections: its advertised address, or the IP it connected from. */
  #listenOf(peer: Peer): IpPort {
    const listen = peer.info?.listen;
    if (!listen) return peer.remote;
    return { ip: UNSPECIFIED.has(listen.ip) ? peer.remote.ip : listen.ip, port: listen.port };
  }

  #peerList(to: Peer): PeerInfo[] {
    const out: PeerInfo[] = [];
    for (const p of this.#peers.values()) {
      if (p === to || out.length >= MAX_PEERS) continue;
      out.push({ ...this.#listenOf(p), nodeId: p.nodeId });
    }
    return out;
  }

  #askForPeers(): void {
    const peers = [...this.#peers.values()];
    const p = peers[Math.floor(Math.random() * peers.length)];
    p?.send({ op: 'GetPeerList' });
  }

  /** Remembers an address and dials it unless connected to it already. */
  #learn(addr: { ip: string; port: number; nodeId: ShortId | undefined }, bootstrap: boolean): void {
    if (this.#stopped || !isIP(addr.ip) || UNSPECIFIED.has(addr.ip) || addr.port <= 0) return;
    if (addr.nodeId?.equals(this.#o.nodeId)) return;
    const key = addrKey(addr.ip, addr.port);
    if (this.#selfAddrs.has(key)) return;
    let k = this.#known.get(key);
    if (!k) {
      if (!bootstrap && this.#known.size >= this.#limits.maxPeers * 4) return;
      k = { ip: addr.ip, port: addr.port, nodeId: addr.nodeId, bootstrap, failures: 0, timer: undefined, dialling: false };
      this.#known.set(key, k);
    }
    if (k.nodeId && this.#peers.has(k.nodeId.key)) return;
    if (!k.timer && !k.dialling) this.#dial(k);
  }

  #scheduleDial(k: Known, reason: string): void {
    if (this.#stopped || k.timer) return;
    k.failures += 1;
    if (!k.bootstrap && k.failures > this.#limits.maxDialFailures) {
      this.#known.delete(addrKey(k.ip, k.port));
      this.#log.debug('forgetting peer address', { ip: `${k.ip}:${k.port}`, reason });
      return;
    }
    const delay = Math.min(this.#limits.maxDialBackoffMs, this.#limits.dialBackoffMs * 2 ** Math.min(16, k.failures - 1));
    this.#log.debug('will dial again', { ip: `${k.ip}:${k.port}`, inMs: delay, reason });
    k.timer = setTimeout(() => {
      k.timer = undefined;
      if (!(k.nodeId && this.#peers.has(k.nodeId.key))) this.#dial(k);
    }, delay);
    k.timer.unref?.();
  }

  #dial(k: Known): void {
    if (this.#stopped) return;
    if (this.#peers.size >= this.#limits.maxPeers) return this.#scheduleDial(k, 'too many peers');
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
      this.#scheduleDial(k, e.message);
    };
    socket.once('error', failed);
    socket.once('secureConnect', () => {
      clearTimeout(timer);
      socket.off('error', failed);
      k.dialling = false;
      if (this.#stopped) return void socket.destroy();
      const nodeId = this.#certNodeId(socket);
      if (!nodeId) return this.#scheduleDial(k, 'unusable certificate');
      if (nodeId.equals(this.#o.nodeId)) {
        // This node's own address (or its key in other hands): never dialled again.
        this.#warn.warn('refusing peer', { ip: `${k.ip}:${k.port}`, reason: 'its certificate is this node\'s own node ID' });
        socket.destroy();
        this.#selfAddrs.add(addrKey(k.ip, k.port));
        this.#known.delete(addrKey(k.ip, k.port));
        return;
      }
      if (k.nodeId && !k.nodeId.equals(nodeId)) {
        this.#log.warn('peer at a bootstrap address has another node ID', { ip: `${k.ip}:${k.port}`, expected: k.nodeId.toString(), got: nodeId.toString() });
        socket.destroy();
        return this.#scheduleDial(k, 'unexpected node ID');
      }
      if (this.#peers.has(nodeId.key)) {
        socket.destroy(); // connected meanwhile (it dialled us)
        return;
      }
      this.#startPeer(socket, nodeId, 'outbound', { ip: k.ip, port: k.port }, k);
    });
  }

  /**
   * Pings the peers that sent nothing for pingIntervalMs and drops those silent for peerIdleTimeoutMs:
   * a connection whose other end is gone without a FIN (a crashed machine, a cut link) does not hold
   * the node ID's place, which a restarted node needs now that second connections are refused.
   * Test: network.test.ts 'a peer silent for peerIdleTimeoutMs is dropped'.
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

  #message(peer: Peer, m: Message): void {
    switch (m.op) {
      case 'GetPeerList':
        peer.send({ op: 'PeerList', peers: this.#peerList(peer) });
        return;
      case 'PeerList':
        for (const info of m.peers) this.#learn(info, false);
        return;
      case 'Version':
      case 'GetVersion':
      case 'Ping':
      case 'Pong':
        return;
      default:
        this.#route(peer.nodeId, m);
    }
  }

  /** Delivers a chain's message to its engine, bootstrapper or VM. */
  #route(from: ShortId, m: ChainMessage): void {
    const t = this.#chains.get(m.chainId.key);
    if (!t) {
      this.#log.debug('message for a chain this node does not run', { op: m.op, chainId: m.chainId.toString() });
      return;
    }
    switch (m.op) {
      case 'PushQuery':
        void t.engine?.onPushQuery(from, m.requestId, m.container);
        return;
      case 'PullQuery':
        void t.engine?.onPullQuery?.(from, m.requestId, m.containerId);
        return;
      case 'Chits':
        if (m.containerIds.length >= 1) t.engine?.onChits(from, m.requestId, m.containerIds[0]!);
        return;
      case 'Get':
        void t.engine?.onGet(from, m.requestId, m.containerId);
        return;
      case 'Put':
        if (m.requestId === GOSSIP_REQUEST_ID) void t.engine?.onGossipedBlock?.(from, m.container);
        else void t.engine?.onPut(from, m.requestId, m.container);
        return;
      case 'GetAcceptedFrontier':
        void t.bootstrap?.onGetAcceptedFrontier(from, m.requestId);
        return;
      case 'AcceptedFrontier':
        t.bootstrap?.onAcceptedFrontier(from, m.requestId, m.containerIds);
        return;
      case 'GetAccepted':
        void t.bootstrap?.onGetAccepted(from, m.requestId, m.containerIds);
        return;
      case 'Accepted':
        t.bootstrap?.onAccepted(from, m.requestId, m.containerIds);
        return;
      case 'GetAncestors':
        void t.bootstrap?.onGetAncestors(from, m.requestId, m.containerId);
        return;
      case 'Ancestors':
        t.bootstrap?.onAncestors(from, m.requestId, m.containers);
        return;
      case 'Gossip':
        t.gossip?.(from, m.payload);
        return;
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
