/**
 * One TLS connection to another node, after the TLS handshake proved who it is (its node ID comes
 * from its certificate). The peer handshake follows: both sides send Version at once; the other's is
 * checked (network ID, clock skew, version, self-connection) before anything else is accepted.
 *
 * Frames are decoded as they arrive (framing.ts: the length is checked before anything is
 * buffered); a refused Version, no Version in time, a frame that does not decode, an oversized one,
 * a message before the handshake or a second Version drops the peer with a log line naming why.
 * Reading is throttled per peer (bytes and messages per second, throttle.ts). Outgoing messages
 * beyond the socket's buffer bound are dropped (a request then times out at the sender), never
 * queued without limit.
 */
import type { TLSSocket } from 'node:tls';
import type { Logger, ShortId } from '@cornice/sdk';
import { decodeMessage, encodeMessage } from './codec.js';
import { FrameDecoder, frame } from './framing.js';
import { MAX_MESSAGE_BYTES, type IpPort, type Message, type MessageOf } from './messages.js';
import { TokenBucket } from './throttle.js';

export interface PeerLimits {
  /** Longest wait for the other side's Version (ms). */
  handshakeTimeoutMs: number;
  /** Most clock difference accepted in the handshake (seconds). */
  maxClockSkewSeconds: number;
  /** Bytes the socket may hold unsent before new messages are dropped. */
  maxPendingSendBytes: number;
  /** Inbound bytes per second (and burst) a peer may use. */
  inboundBytesPerSecond: number;
  inboundBytesBurst: number;
  /** Inbound messages per second (and burst). */
  inboundMessagesPerSecond: number;
  inboundMessagesBurst: number;
  maxMessageBytes: number;
}

export const DEFAULT_PEER_LIMITS: PeerLimits = {
  handshakeTimeoutMs: 10_000,
  maxClockSkewSeconds: 60,
  maxPendingSendBytes: 16 * 1024 * 1024,
  inboundBytesPerSecond: 32 * 1024 * 1024,
  inboundBytesBurst: 4 * MAX_MESSAGE_BYTES,
  inboundMessagesPerSecond: 20_000,
  inboundMessagesBurst: 40_000,
  maxMessageBytes: MAX_MESSAGE_BYTES,
};

/** What this node says about itself in its Version. */
export interface LocalIdentity {
  networkId: number;
  nonce: bigint;
  listen: IpPort;
  /** When this node signed `listen` (unix seconds) and the signature (signed-ip.ts). */
  ipTime: bigint;
  ipSignature: Uint8Array;
  version: string;
}

export interface PeerEvents {
  /** The peer handshake succeeded (its Version is in `peer.info`). */
  ready(peer: Peer): void;
  /** A message after the handshake. Must not throw (the peer is dropped if it does). */
  message(peer: Peer, m: Message): void;
  /** The connection is gone (`reason` says why). */
  closed(peer: Peer, reason: string): void;
  /** A message left for the peer (`bytes`: its frame's size). */
  sent?(peer: Peer, m: Message, bytes: number): void;
  /** Why the other side's Version is refused beyond this layer's checks (its signed address), or undefined. */
  checkVersion?(peer: Peer, v: MessageOf<'Version'>): string | undefined;
}

export type Direction = 'inbound' | 'outbound';

export class Peer {
  /** The other side's Version, once received. */
  info: MessageOf<'Version'> | undefined;
  lastSent = 0;
  lastReceived = 0;
  /** When the handshake finished (this node's clock), 0 before. */
  readyAt = 0;
  /** Messages dropped because the socket's send buffer was full. */
  droppedSends = 0;
  #closed = false;
  #corked = false;
  readonly #decoder: FrameDecoder;
  readonly #bytes: TokenBucket;
  readonly #messages: TokenBucket;
  #handshakeTimer: ReturnType<typeof setTimeout> | undefined;
  #resumeTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    readonly socket: TLSSocket,
    readonly nodeId: ShortId,
    readonly direction: Direction,
    /** host:port of the socket's other end. */
    readonly remote: IpPort,
    private readonly self: LocalIdentity,
    private readonly events: PeerEvents,
    private readonly log: Logger,
    private readonly limits: PeerLimits = DEFAULT_PEER_LIMITS,
    private readonly now: () => number = Date.now,
  ) {
    this.#decoder = new FrameDecoder({ maxFrameBytes: limits.maxMessageBytes });
    this.#bytes = new TokenBucket(limits.inboundBytesPerSecond, limits.inboundBytesBurst, now);
    this.#messages = new TokenBucket(limits.inboundMessagesPerSecond, limits.inboundMessagesBurst, now);
    socket.setNoDelay(true);
    socket.setKeepAlive(true, 30_000);
    socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    socket.on('error', (e) => this.close(`socket error: ${e.message}`));
    socket.on('close', () => this.close('connection closed'));
    this.#handshakeTimer = setTimeout(() => this.drop(`no Version within ${limits.handshakeTimeoutMs} ms`), limits.handshakeTimeoutMs);
    this.#handshakeTimer.unref?.();
    this.send({
      op: 'Version',
      networkId: self.networkId,
      nonce: self.nonce,
      time: BigInt(Math.floor(now() / 1000)),
      listen: self.listen,
      ipTime: self.ipTime,
      ipSignature: self.ipSignature,
      version: self.version,
    });
  }

  get ready(): boolean {
    return this.info !== undefined && !this.#closed;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Sends a message; false when it was dropped (closed, or the send buffer is full). */
  send(m: Message): boolean {
    if (this.#closed) return false;
    if (this.socket.writableLength > this.limits.maxPendingSendBytes) {
      this.droppedSends += 1;
      return false;
    }
    let bytes: Uint8Array;
    try {
      bytes = frame(encodeMessage(m));
    } catch (e) {
      this.log.warn('message not sent: it does not encode', { op: m.op, error: (e as Error).message });
      return false;
    }
    // Messages of one turn of the event loop leave in one write (one TLS record): a poll's queries, a
    // burst of gossip, the answers to queries read from several sockets in one go. Uncorking on the
    // next tick instead wrote once per I/O callback, more CPU per transfer (bench/network.mjs
    // nodeCpuMsPerTx). Test: peer.test.ts "messages sent in one turn of the event loop … leave in one write".
    if (!this.#corked) {
      this.#corked = true;
      this.socket.cork();
      setImmediate(() => {
        this.#corked = false;
        this.socket.uncork();
      });
    }
    this.socket.write(bytes);
    this.lastSent = this.now();
    this.events.sent?.(this, m, bytes.length);
    return true;
  }

  /** Ends the connection once; `closed` is told why. */
  close(reason: string): void {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#handshakeTimer);
    clearTimeout(this.#resumeTimer);
    this.socket.destroy();
    this.events.closed(this, reason);
  }

  #onData(chunk: Buffer): void {
    if (this.#closed) return;
    let payloads: Uint8Array[];
    try {
      payloads = this.#decoder.push(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    } catch (e) {
      return this.drop(`malformed frame: ${(e as Error).message}`);
    }
    for (const p of payloads) {
      if (this.#closed) return;
      let m: Message;
      try {
        m = decodeMessage(p);
      } catch (e) {
        return this.drop(`malformed message: ${(e as Error).message}`);
      }
      this.lastReceived = this.now();
      this.#handle(m);
    }
    // Over budget: stop reading until it refills (the sender's TCP window fills up meanwhile).
    const wait = Math.max(this.#bytes.take(chunk.byteLength), this.#messages.take(payloads.length));
    if (wait > 0 && !this.#closed && !this.#resumeTimer) {
      this.socket.pause();
      this.#resumeTimer = setTimeout(() => {
        this.#resumeTimer = undefined;
        if (!this.#closed) this.socket.resume();
      }, wait);
    }
  }

  #handle(m: Message): void {
    if (m.op === 'Version') {
      if (this.info) return this.drop('a second Version');
      const problem = this.#checkVersion(m);
      if (problem) return this.drop(problem);
      this.info = m;
      this.readyAt = this.now();
      clearTimeout(this.#handshakeTimer);
      this.events.ready(this);
      return;
    }
    if (!this.info) return this.drop(`${m.op} before the handshake`);
    if (m.op === 'Ping') {
      this.send({ op: 'Pong' });
      return;
    }
    if (m.op === 'Pong' || m.op === 'GetVersion') return;
    try {
      this.events.message(this, m);
    } catch (e) {
      this.log.warn('peer message handler failed', { nodeId: this.nodeId.toString(), op: m.op, error: (e as Error).message });
    }
  }

  /** Why a Version is refused, or undefined. */
  #checkVersion(v: MessageOf<'Version'>): string | undefined {
    if (v.nonce === this.self.nonce) return 'self-connection';
    if (v.networkId !== this.self.networkId) return `wrong network: peer is on network ${v.networkId}, this node on ${this.self.networkId}`;
    const skew = Number(v.time) - Math.floor(this.now() / 1000);
    if (Math.abs(skew) > this.limits.maxClockSkewSeconds) return `clock skew of ${skew} s exceeds ${this.limits.maxClockSkewSeconds} s`;
    if (!compatibleVersion(v.version, this.self.version)) return `incompatible version ${JSON.stringify(v.version)} (this node: ${this.self.version})`;
    return this.events.checkVersion?.(this, v);
  }

  /** Closes the connection for something the peer did; logged at warn (the Network's logger limits how often). */
  drop(reason: string): void {
    if (this.#closed) return;
    this.log.warn('dropping peer', { nodeId: this.nodeId.toString(), reason });
    this.close(reason);
  }
}

/** Same application and same major.minor (the reference node's compatibility rule). */
export function compatibleVersion(theirs: string, ours: string): boolean {
  const parse = (v: string) => /^([a-z]+)\/(\d+)\.(\d+)\.(\d+)$/.exec(v);
  const a = parse(theirs);
  const b = parse(ours);
  return a !== null && b !== null && a[1] === b[1] && a[2] === b[2] && a[3] === b[3];
}
