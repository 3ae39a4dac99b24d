/**
 * WebSocket upgrades for routes of kind 'websocket' (the asset VM's pubsub, later the EVM's /ws),
 * on the ws library in noServer mode behind our own checks: the Host header as for every request,
 * and the Origin header — browsers do not apply CORS to WebSockets, so a page on any site could
 * otherwise talk to a local node — against --http-allowed-origins. Messages are text only and at
 * most `maxMessageBytes`.
 *
 * What a WebSocket may hold is bounded:
 * - a client that does not read (more than `maxBufferedBytes` waiting on its socket) is terminated
 *   at once: a close frame would never be read, and waiting for it kept the buffers for 30 s;
 * - a message that would take the node over --http-max-buffered-bytes (the connection table's
 *   `admit`, shared with HTTP replies) terminates the connection instead of being queued;
 * - every `pingIntervalMs` each socket is pinged, and one that did not answer the previous ping is
 *   terminated (a dead peer); one with no message either way for `idleTimeoutMs` is closed (1001).
 * Tests: core/test/api/websocket.test.ts, test/e2e/api-abuse.test.ts.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Logger, WebSocketConnection } from '@cornice/sdk';

export interface WebSocketLimits {
  maxMessageBytes: number;
  /** Bytes waiting on one socket beyond which its client counts as not reading. */
  maxBufferedBytes: number;
  /** Ping period; a socket that did not answer the previous ping is terminated, ms. */
  pingIntervalMs: number;
  /** A socket with no message either way for this long is closed (1001), ms. */
  idleTimeoutMs: number;
}

export const DEFAULT_WEBSOCKET_LIMITS: Readonly<WebSocketLimits> = {
  maxMessageBytes: 1 << 20,
  maxBufferedBytes: 4 << 20,
  pingIntervalMs: 30_000,
  idleTimeoutMs: 600_000,
};

/** What the upgrader tells the HTTP server's connection table (connections.ts). */
export interface WebSocketHooks {
  upgraded(socket: Socket): void;
  touch(socket: Socket): void;
  admit(socket: Socket, bytes: number): boolean;
}

const NO_HOOKS: WebSocketHooks = { upgraded: () => undefined, touch: () => undefined, admit: () => true };

interface Tracked {
  socket: Socket;
  /** Answered the last ping (or none was sent yet). */
  alive: boolean;
  /** Last message either way, ms (performance.now()). */
  lastMessage: number;
}

/** Close codes (RFC 6455). */
const UNSUPPORTED_DATA = 1003;
const INTERNAL_ERROR = 1011;
const GOING_AWAY = 1001;

export class WebSocketUpgrader {
  readonly #wss: WebSocketServer;
  readonly #open = new Map<WebSocket, Tracked>();
  readonly #timer: NodeJS.Timeout;

  constructor(
    private readonly limits: WebSocketLimits,
    private readonly log: Logger,
    private readonly hooks: WebSocketHooks = NO_HOOKS,
  ) {
    this.#wss = new WebSocketServer({ noServer: true, maxPayload: limits.maxMessageBytes, perMessageDeflate: false });
    this.#timer = setInterval(() => this.#heartbeat(), limits.pingIntervalMs);
    this.#timer.unref();
  }

  /** Completes the upgrade and hands the connection to `accept`; a throwing handler closes it (1011). */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, accept: (conn: WebSocketConnection) => void): void {
    this.#wss.handleUpgrade(req, socket, head, (ws) => {
      const tracked: Tracked = { socket: socket as Socket, alive: true, lastMessage: performance.now() };
      this.#open.set(ws, tracked);
      this.hooks.upgraded(tracked.socket);
      ws.on('pong', () => (tracked.alive = true));
      const conn = this.#wrap(ws, tracked);
      try {
        accept(conn);
      } catch (e) {
        this.log.warn('websocket handler failed', { url: req.url?.slice(0, 256), error: e });
        conn.close(INTERNAL_ERROR, 'handler failed');
      }
    });
  }

  /** Open connections right now. */
  get connections(): number {
    return this.#open.size;
  }

  /** Closes every open connection (node shutdown). */
  close(): void {
    clearInterval(this.#timer);
    for (const ws of this.#open.keys()) ws.terminate();
    this.#open.clear();
    this.#wss.close();
  }

  /** Pings every socket; ends the ones that did not answer the last ping or were idle too long. */
  #heartbeat(): void {
    const now = performance.now();
    for (const [ws, t] of this.#open) {
      if (!t.alive) {
        ws.terminate();
        continue;
      }
      if (now - t.lastMessage >= this.limits.idleTimeoutMs) {
        ws.close(GOING_AWAY, 'idle');
        continue;
      }
      t.alive = false;
      ws.ping();
    }
  }

  #wrap(ws: WebSocket, tracked: Tracked): WebSocketConnection {
    const { maxBufferedBytes } = this.limits;
    const log = this.log;
    const hooks = this.hooks;
    const active = () => {
      tracked.lastMessage = performance.now();
      hooks.touch(tracked.socket);
    };
    const messageListeners: Array<(text: string) => void> = [];
    const closeListeners: Array<() => void> = [];
    let closed = false;
    let corked = false;
    // ws keeps its socket private; it is pinned, and without one sends go uncorked.
    const socket = (ws as unknown as { _socket?: { cork(): void; uncork(): void } })._socket;
    ws.on('message', (data, isBinary) => {
      if (isBinary) return ws.close(UNSUPPORTED_DATA, 'text messages only');
      active();
      const text = data.toString();
      for (const l of messageListeners) {
        try {
          l(text);
        } catch (e) {
          log.warn('websocket message listener failed', { error: e });
        }
      }
    });
    ws.on('error', () => ws.terminate());
    ws.on('close', () => {
      closed = true;
      this.#open.delete(ws);
      for (const l of closeListeners.splice(0)) {
        try {
          l();
        } catch (e) {
          log.warn('websocket close listener failed', { error: e });
        }
      }
    });
    return {
      send(text) {
        if (closed || ws.readyState !== ws.OPEN) return;
        // A client that does not read gets no close frame (it would not read it either): its
        // buffers go at once. Test: websocket.test.ts "a client that does not read".
        if (ws.bufferedAmount > maxBufferedBytes) {
          log.info('websocket terminated: client is not reading', { buffered: ws.bufferedAmount });
          ws.terminate();
          return;
        }
        if (!hooks.admit(tracked.socket, Buffer.byteLength(text))) {
          ws.terminate();
          return;
        }
        active();
        // Messages sent in one turn (say, the txs of one accepted block) leave in one write.
        if (!corked && socket && typeof socket.cork === 'function') {
          corked = true;
          socket.cork();
          process.nextTick(() => {
            corked = false;
            socket.uncork();
          });
        }
        ws.send(text);
      },
      close(code, reason) {
        if (!closed) ws.close(code, reason?.slice(0, 120));
      },
      onMessage(listener) {
        messageListeners.push(listener);
      },
      onClose(listener) {
        if (closed) listener();
        else closeListeners.push(listener);
      },
      get closed() {
        return closed;
      },
    };
  }
}
