/**
 * WebSocket upgrades for routes of kind 'websocket' (the asset VM's pubsub, later the EVM's /ws),
 * on the ws library in noServer mode behind our own checks: the Host header as for every request,
 * and the Origin header — browsers do not apply CORS to WebSockets, so a page on any site could
 * otherwise talk to a local node — against --http-allowed-origins. Messages are text only and at
 * most `maxMessageBytes`; a client that does not read (more than `maxBufferedBytes` waiting) is
 * disconnected rather than buffered without end.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Logger, WebSocketConnection } from '@cornice/sdk';

export interface WebSocketLimits {
  maxMessageBytes: number;
  maxBufferedBytes: number;
}

export const DEFAULT_WEBSOCKET_LIMITS: Readonly<WebSocketLimits> = { maxMessageBytes: 1 << 20, maxBufferedBytes: 4 << 20 };

/** Close codes (RFC 6455). */
const POLICY_VIOLATION = 1008;
const UNSUPPORTED_DATA = 1003;
const INTERNAL_ERROR = 1011;

export class WebSocketUpgrader {
  readonly #wss: WebSocketServer;
  readonly #open = new Set<WebSocket>();

  constructor(
    private readonly limits: WebSocketLimits,
    private readonly log: Logger,
  ) {
    this.#wss = new WebSocketServer({ noServer: true, maxPayload: limits.maxMessageBytes, perMessageDeflate: false });
  }

  /** Completes the upgrade and hands the connection to `accept`; a throwing handler closes it (1011). */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, accept: (conn: WebSocketConnection) => void): void {
    this.#wss.handleUpgrade(req, socket, head, (ws) => {
      this.#open.add(ws);
      const conn = this.#wrap(ws);
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
    for (const ws of this.#open) ws.terminate();
    this.#open.clear();
    this.#wss.close();
  }

  #wrap(ws: WebSocket): WebSocketConnection {
    const { maxBufferedBytes } = this.limits;
    const log = this.log;
    const messageListeners: Array<(text: string) => void> = [];
    const closeListeners: Array<() => void> = [];
    let closed = false;
    let corked = false;
    // ws keeps its socket private; it is pinned, and without one sends go uncorked.
    const socket = (ws as unknown as { _socket?: { cork(): void; uncork(): void } })._socket;
    ws.on('message', (data, isBinary) => {
      if (isBinary) return ws.close(UNSUPPORTED_DATA, 'text messages only');
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
        if (ws.bufferedAmount > maxBufferedBytes) {
          ws.close(POLICY_VIOLATION, 'client is not reading');
          return;
        }
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
