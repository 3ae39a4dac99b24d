/**
 * The HTTP server's table of open connections (HTTP and WebSocket): what each costs and which one
 * goes when something must.
 *
 * - **A full table evicts, it does not refuse.** At `maxConnections`, a new connection closes the
 *   one idle the longest: an HTTP connection with no request in progress (before its first
 *   request, or between keep-alive requests) or a WebSocket, ranked by their last activity (a
 *   request finished, a message either way). Only when every connection is in the middle of a
 *   request is the new one closed instead. So idle sockets — 1,024 idle WebSockets, reconnecting
 *   idle TCP sockets — cannot keep new clients (and /ext/health) out. Test:
 *   test/e2e/api-abuse.test.ts "a full connection table evicts", core/test/api/connections.test.ts.
 * - **Pending reply bytes are bounded.** A connection's waiting bytes are what its socket has not
 *   yet handed to the kernel plus what reply writers (reply-writer.ts) still hold for it. A
 *   connection whose waiting bytes make no progress for `writeTimeoutMs` is closed (its client
 *   stopped reading), and the total over all connections stays under `maxBufferedBytes`: past it,
 *   the connections making no progress are closed, largest first, and a new reply that still does
 *   not fit is refused (`admit`). Checked every `sweepIntervalMs` and on each reply. Test:
 *   core/test/api/write-bounds.test.ts, test/e2e/api-abuse.test.ts "clients that do not read".
 */
import type { Socket } from 'node:net';
import type { Logger } from '@cornice/sdk';

export interface ConnectionLimits {
  /** Open connections (HTTP and WebSocket) at most. */
  maxConnections: number;
  /** Reply bytes waiting for clients, over every connection. */
  maxBufferedBytes: number;
  /** A connection whose waiting bytes make no progress this long is closed, ms. */
  writeTimeoutMs: number;
  /** How often stalls and the total are checked, ms. */
  sweepIntervalMs: number;
}

export const DEFAULT_CONNECTION_LIMITS: Readonly<Omit<ConnectionLimits, 'maxConnections'>> = {
  maxBufferedBytes: 64 * 1024 * 1024,
  writeTimeoutMs: 10_000,
  sweepIntervalMs: 500,
};

/** At most one log line of a kind per this many ms (a flood must not flood the log). */
const LOG_INTERVAL_MS = 10_000;

interface Conn {
  readonly socket: Socket;
  /** Requests received (headers in) and not yet answered; >0 means busy. */
  inFlight: number;
  websocket: boolean;
  /** Last request finished, message, or connect time (ms): eviction picks the smallest. */
  lastActive: number;
  /** Bytes reply writers still hold for this connection. */
  held: number;
  /** Bytes the socket had handed to the kernel at the last check. */
  flushed: number;
  /** When the waiting bytes last made progress (or started waiting); undefined when none wait. */
  progressAt: number | undefined;
}

export class ConnectionTable {
  readonly #conns = new Map<Socket, Conn>();
  readonly #limits: ConnectionLimits;
  readonly #log: Logger;
  readonly #now: () => number;
  readonly #timer: NodeJS.Timeout | undefined;
  readonly #lastLog = new Map<string, number>();
  readonly #counts = new Map<string, number>();
  /**
   * An upper bound of bufferedBytes: the exact sum at the last full count plus every byte admitted
   * since (sockets only ever flush in between), so most admits cost O(1), not a walk of the table.
   */
  #upperBound = 0;

  constructor(limits: ConnectionLimits, log: Logger, opts: { now?: () => number; sweep?: boolean } = {}) {
    this.#limits = limits;
    this.#log = log;
    this.#now = opts.now ?? (() => performance.now());
    if (opts.sweep !== false) {
      this.#timer = setInterval(() => this.sweep(), limits.sweepIntervalMs);
      this.#timer.unref();
    }
  }

  /** A new connection: true when it may stay (room made by evicting an idle one if needed). */
  add(socket: Socket): boolean {
    if (this.#conns.size >= this.#limits.maxConnections && !this.#evictIdle()) {
      this.#note('refused', 'http connection refused: every connection is busy with a request', { limit: this.#limits.maxConnections });
      return false;
    }
    const now = this.#now();
    this.#conns.set(socket, { socket, inFlight: 0, websocket: false, lastActive: now, held: 0, flushed: flushedOf(socket), progressAt: undefined });
    socket.once('close', () => this.#conns.delete(socket));
    return true;
  }

  requestStarted(socket: Socket): void {
    const c = this.#conns.get(socket);
    if (c) c.inFlight++;
  }

  requestFinished(socket: Socket): void {
    const c = this.#conns.get(socket);
    if (!c) return;
    c.inFlight = Math.max(0, c.inFlight - 1);
    c.lastActive = this.#now();
  }

  /** The connection is now a WebSocket (evictable by its last message). */
  upgraded(socket: Socket): void {
    const c = this.#conns.get(socket);
    if (!c) return;
    c.websocket = true;
    c.inFlight = 0;
    c.lastActive = this.#now();
  }

  /** A WebSocket message went either way. */
  touch(socket: Socket): void {
    const c = this.#conns.get(socket);
    if (c) c.lastActive = this.#now();
  }

  /**
   * Room for `bytes` more reply bytes on `socket`: connections making no progress are closed
   * (largest first) while the total would exceed the bound; false when it still would (the
   * caller refuses the reply).
   */
  admit(socket: Socket, bytes: number): boolean {
    if (this.#upperBound + bytes <= this.#limits.maxBufferedBytes) {
      this.#upperBound += bytes;
      return true;
    }
    this.#check();
    this.#shedStalled(bytes, socket);
    this.#upperBound = this.bufferedBytes;
    if (this.#upperBound + bytes <= this.#limits.maxBufferedBytes) {
      this.#upperBound += bytes;
      return true;
    }
    this.#note('full', 'http reply refused: too many bytes wait for clients that read slowly', {
      limit: this.#limits.maxBufferedBytes,
      waiting: this.bufferedBytes,
    });
    return false;
  }

  /** A reply writer holds `delta` more (or fewer, when negative) bytes for `socket`. */
  hold(socket: Socket, delta: number): void {
    const c = this.#conns.get(socket);
    if (!c) return;
    c.held = Math.max(0, c.held + delta);
  }

  /** Closes stalled readers: no progress for writeTimeoutMs, or none since the last check while over the total. */
  sweep(): void {
    this.#check();
    const now = this.#now();
    for (const c of this.#conns.values()) {
      if (c.progressAt !== undefined && now - c.progressAt >= this.#limits.writeTimeoutMs) {
        this.#drop(c, 'stalled', 'http connection closed: its client stopped reading', { waiting: waiting(c), timeoutMs: this.#limits.writeTimeoutMs });
      }
    }
    if (this.bufferedBytes > this.#limits.maxBufferedBytes) this.#shedStalled(0, undefined);
    this.#upperBound = this.bufferedBytes;
  }

  get size(): number {
    return this.#conns.size;
  }

  /** Reply bytes waiting over every connection. */
  get bufferedBytes(): number {
    let total = 0;
    for (const c of this.#conns.values()) total += waiting(c);
    return total;
  }

  /** Connections closed so far, by reason (tests, metrics): evicted, stalled, shed, refused. */
  count(reason: string): number {
    return this.#counts.get(reason) ?? 0;
  }

  close(): void {
    if (this.#timer) clearInterval(this.#timer);
  }

  /** Updates each connection's progress mark. */
  #check(): void {
    const now = this.#now();
    for (const c of this.#conns.values()) {
      const flushed = flushedOf(c.socket);
      if (waiting(c) === 0) c.progressAt = undefined;
      else if (c.progressAt === undefined || flushed > c.flushed) c.progressAt = now;
      c.flushed = flushed;
    }
  }

  /**
   * Closes connections whose waiting bytes made no progress for at least a sweep interval (a reader
   * that is merely slow makes some), largest first, until `extra` more bytes fit.
   */
  #shedStalled(extra: number, except: Socket | undefined): void {
    const now = this.#now();
    const stalled = [...this.#conns.values()]
      .filter((c) => c.socket !== except && c.progressAt !== undefined && now - c.progressAt >= this.#limits.sweepIntervalMs && waiting(c) > 0)
      .sort((a, b) => waiting(b) - waiting(a));
    for (const c of stalled) {
      if (this.bufferedBytes + extra <= this.#limits.maxBufferedBytes) return;
      this.#drop(c, 'shed', 'http connection closed: over --http-max-buffered-bytes and its client is not reading', {
        waiting: waiting(c),
        limit: this.#limits.maxBufferedBytes,
      });
    }
  }

  /** Closes the connection idle the longest; false when every connection is busy with a request. */
  #evictIdle(): boolean {
    let oldest: Conn | undefined;
    for (const c of this.#conns.values()) {
      if (c.inFlight > 0 && !c.websocket) continue;
      if (!oldest || c.lastActive < oldest.lastActive) oldest = c;
    }
    if (!oldest) return false;
    this.#drop(oldest, 'evicted', 'http connection table full: closed the connection idle the longest', {
      limit: this.#limits.maxConnections,
      websocket: oldest.websocket,
    });
    return true;
  }

  #drop(c: Conn, reason: string, msg: string, fields: Record<string, unknown>): void {
    this.#conns.delete(c.socket);
    c.socket.destroy();
    this.#note(reason, msg, fields);
  }

  /** Counts an event and logs it, at most once per LOG_INTERVAL_MS per reason (with the count since). */
  #note(reason: string, msg: string, fields: Record<string, unknown>): void {
    this.#counts.set(reason, (this.#counts.get(reason) ?? 0) + 1);
    const now = this.#now();
    const last = this.#lastLog.get(reason) ?? -Infinity;
    if (now - last < LOG_INTERVAL_MS) return;
    this.#lastLog.set(reason, now);
    this.#log.warn(msg, { ...fields, total: this.#counts.get(reason) });
  }
}

/** Bytes the socket has handed to the kernel so far (written, minus what it still queues). */
function flushedOf(socket: Socket): number {
  return (socket.bytesWritten ?? 0) - socket.writableLength;
}

function waiting(c: Conn): number {
  return (c.socket.destroyed ? 0 : c.socket.writableLength) + c.held;
}
