/**
 * The node's one HTTP server (node:http): checks the Host header (DNS rebinding) and answers CORS
 * only for allowed origins (access.ts), routes /ext/*, enforces POST, content type, body limit and
 * UTF-8 for JSON-RPC routes, and hands bodies to the endpoint's JSON-RPC layer. Every JSON-RPC reply
 * is HTTP 200; transport-level refusals use 403/404/405/413/415 with a JSON-RPC error body so
 * clients always get a readable reason.
 *
 * Connections are bounded: at most `maxConnections` are open (beyond it Node closes new sockets at
 * accept, before any JS object exists for them), a request must send its headers and body within
 * the timeouts, and a socket that fails to do so (or sends garbage) is answered and then destroyed —
 * never left half-open for a client that does not read. Idle keep-alive sockets close after
 * `keepAliveMs`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { NodeError, type Logger } from '@cornice/sdk';
import { CorsPolicy, DEFAULT_ALLOWED_HOSTS, HostCheck } from './access.js';
import { RpcCode } from './errors.js';
import type { RouteTable } from './routes.js';
import { DEFAULT_WEBSOCKET_LIMITS, WebSocketUpgrader, type WebSocketLimits } from './websocket.js';

export interface HttpTimeouts {
  /** To receive a request's headers. */
  headersMs: number;
  /** To receive a whole request (headers and body). */
  requestMs: number;
  /** An idle keep-alive connection is closed after this. */
  keepAliveMs: number;
  /** How often the timeouts above are checked (their precision). */
  checkIntervalMs: number;
}

export const DEFAULT_HTTP_TIMEOUTS: Readonly<HttpTimeouts> = {
  headersMs: 30_000,
  requestMs: 60_000,
  keepAliveMs: 65_000,
  checkIntervalMs: 5_000,
};

export interface HttpServerOptions {
  host: string;
  port: number;
  maxBodyBytes: number;
  /** Origins that get CORS headers (`*`: any); none by default. */
  allowedOrigins?: readonly string[];
  /** Host names served (`*`: any); IP literals always are. Default: localhost names. */
  allowedHosts?: readonly string[];
  /** Open connections beyond which new ones are closed at once. */
  maxConnections: number;
  /** Defaults: DEFAULT_HTTP_TIMEOUTS (tests shorten them). */
  timeouts?: Partial<HttpTimeouts>;
  /** Defaults: DEFAULT_WEBSOCKET_LIMITS. */
  websocket?: Partial<WebSocketLimits>;
  log: Logger;
}

export class HttpError extends NodeError<'Listen'> {}

const JSON_TYPE = 'application/json';
/** At most one "connections refused" log line per this many ms (a flood must not flood the log). */
const REFUSED_LOG_INTERVAL_MS = 10_000;
/** A refused socket whose reply cannot be flushed (a peer that does not read) is destroyed after this. */
const REFUSE_FLUSH_MS = 1_000;

function send(res: ServerResponse, status: number, body: string, type = JSON_TYPE): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function sendRpcError(res: ServerResponse, status: number, code: number, message: string): void {
  send(res, status, JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } }));
}

/** Status lines for sockets the HTTP parser gave up on. */
const CLIENT_ERROR_STATUS: Readonly<Record<string, string>> = {
  ERR_HTTP_REQUEST_TIMEOUT: '408 Request Timeout',
  HPE_HEADER_OVERFLOW: '431 Request Header Fields Too Large',
};

/** Writes a bare HTTP error reply and destroys the socket once it is flushed (or after REFUSE_FLUSH_MS). */
function refuseSocket(socket: Duplex, status: string): void {
  if (!socket.writable) return void socket.destroy();
  const timer = setTimeout(() => socket.destroy(), REFUSE_FLUSH_MS);
  timer.unref();
  socket.end(`HTTP/1.1 ${status}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`, () => {
    clearTimeout(timer);
    socket.destroy();
  });
}

export class HttpApiServer {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  readonly #opts: HttpServerOptions;
  readonly #hosts: HostCheck;
  readonly #cors: CorsPolicy;
  #refused = 0;
  #refusedLoggedAt = -Infinity;
  readonly #ws: WebSocketUpgrader;

  constructor(
    private readonly routes: RouteTable,
    opts: HttpServerOptions,
  ) {
    this.#opts = opts;
    this.#hosts = new HostCheck(opts.allowedHosts ?? DEFAULT_ALLOWED_HOSTS);
    this.#cors = new CorsPolicy(opts.allowedOrigins ?? []);
    const t = { ...DEFAULT_HTTP_TIMEOUTS, ...opts.timeouts };
    this.#server = createServer(
      { keepAlive: true, headersTimeout: t.headersMs, requestTimeout: t.requestMs, connectionsCheckingInterval: t.checkIntervalMs },
      (req, res) => {
        this.#handle(req, res).catch((e: unknown) => {
          opts.log.error('http handler failed', { error: e, url: req.url?.slice(0, 256) });
          if (!res.headersSent) sendRpcError(res, 500, RpcCode.Internal, 'internal error');
          else res.destroy();
        });
      },
    );
    this.#server.keepAliveTimeout = t.keepAliveMs;
    this.#server.maxConnections = opts.maxConnections;
    this.#server.on('drop', () => this.#onRefused());
    this.#server.on('connection', (s: Socket) => {
      this.#sockets.add(s);
      s.on('close', () => this.#sockets.delete(s));
    });
    this.#server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
      refuseSocket(socket, CLIENT_ERROR_STATUS[err.code ?? ''] ?? '400 Bad Request');
    });
    this.#ws = new WebSocketUpgrader({ ...DEFAULT_WEBSOCKET_LIMITS, ...opts.websocket }, opts.log);
    this.#server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => this.#upgrade(req, socket, head));
  }

  /**
   * A WebSocket upgrade: the Host check of every request, then the Origin (browsers apply no CORS to
   * WebSockets: a page on any site could reach a local node), then a route of kind 'websocket'.
   */
  #upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    const badHost = this.#hosts.refused(req.headers.host);
    if (badHost !== undefined) return refuseSocket(socket, '403 Forbidden');
    if (!this.#cors.allows(req.headers.origin)) {
      this.#opts.log.info('websocket refused: origin not allowed', { origin: req.headers.origin?.slice(0, 128) });
      return refuseSocket(socket, '403 Forbidden');
    }
    let path: string;
    try {
      path = decodeURIComponent((req.url ?? '/').split('?')[0]!);
    } catch {
      return refuseSocket(socket, '400 Bad Request');
    }
    const route = path.startsWith('/ext/') ? this.routes.lookup(path.slice(5).replace(/\/+$/, '')) : undefined;
    if (route?.kind !== 'websocket') return refuseSocket(socket, '404 Not Found');
    this.#ws.upgrade(req, socket, head, (conn) => route.accept(conn));
  }

  /** Open connections right now. */
  get connections(): number {
    return this.#sockets.size;
  }

  #onRefused(): void {
    this.#refused++;
    const now = performance.now();
    if (now - this.#refusedLoggedAt < REFUSED_LOG_INTERVAL_MS) return;
    this.#opts.log.warn('http connections refused: limit reached', { limit: this.#opts.maxConnections, refused: this.#refused });
    this.#refusedLoggedAt = now;
    this.#refused = 0;
  }

  /** Starts listening; resolves with the bound address (port 0 picks a free port). */
  listen(): Promise<AddressInfo> {
    return new Promise((resolve, reject) => {
      const onError = (e: NodeJS.ErrnoException) =>
        reject(new HttpError('Listen', `cannot listen on ${this.#opts.host}:${this.#opts.port}: ${e.code ?? e.message}`));
      this.#server.once('error', onError);
      this.#server.listen(this.#opts.port, this.#opts.host, () => {
        this.#server.off('error', onError);
        resolve(this.#server.address() as AddressInfo);
      });
    });
  }

  /** Stops accepting, lets in-flight requests finish briefly, then drops idle connections. */
  async close(): Promise<void> {
    if (!this.#server.listening) return;
    this.#ws.close();
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    this.#server.closeIdleConnections();
    const timer = setTimeout(() => {
      for (const s of this.#sockets) s.destroy();
    }, 2_000);
    timer.unref();
    await closed;
    clearTimeout(timer);
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const badHost = this.#hosts.refused(req.headers.host);
    if (badHost !== undefined) {
      req.resume();
      const shown = JSON.stringify(badHost.slice(0, 128));
      return sendRpcError(res, 403, RpcCode.InvalidRequest, `host ${shown} is not allowed: add it to --http-allowed-hosts to serve it`);
    }
    const preflight = req.method === 'OPTIONS';
    for (const [name, value] of Object.entries(this.#cors.headers(req.headers.origin, preflight))) res.setHeader(name, value);
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const pathname = q < 0 ? url : url.slice(0, q);
    let path: string;
    try {
      path = decodeURIComponent(pathname);
    } catch {
      return sendRpcError(res, 400, RpcCode.InvalidRequest, 'malformed URL');
    }
    const route = path.startsWith('/ext/') ? this.routes.lookup(path.slice(5).replace(/\/+$/, '')) : undefined;
    if (!route) {
      req.resume();
      return sendRpcError(res, 404, RpcCode.InvalidRequest, `no API at ${path.slice(0, 256)}`);
    }
    if (route.kind === 'http') return route.handle(req, res);
    if (route.kind === 'websocket') {
      req.resume();
      res.setHeader('upgrade', 'websocket');
      return sendRpcError(res, 426, RpcCode.InvalidRequest, `${path.slice(0, 256)} is a WebSocket endpoint: connect with a WebSocket client`);
    }

    if (req.method === 'GET' && route.get) return route.get(req, res);
    if (preflight) {
      req.resume();
      res.writeHead(204);
      return void res.end();
    }
    if (req.method !== 'POST') {
      req.resume();
      res.setHeader('allow', 'POST');
      return sendRpcError(res, 405, RpcCode.InvalidRequest, `JSON-RPC needs POST, received ${req.method}`);
    }
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== JSON_TYPE) {
      req.resume();
      return sendRpcError(res, 415, RpcCode.InvalidRequest, `content-type must be ${JSON_TYPE} (got "${type.slice(0, 64)}")`);
    }
    const body = await readBody(req, this.#opts.maxBodyBytes);
    if (body === undefined) {
      res.setHeader('connection', 'close');
      return sendRpcError(res, 413, RpcCode.InvalidRequest, `request body exceeds ${this.#opts.maxBodyBytes} bytes`);
    }
    let text: string;
    try {
      text = utf8.decode(body);
    } catch {
      return sendRpcError(res, 200, RpcCode.ParseError, 'request body is not valid UTF-8');
    }
    const reply = await route.endpoint.handle(text);
    if (reply === undefined) {
      res.writeHead(200, { 'content-length': 0 });
      return void res.end();
    }
    send(res, 200, reply);
  }
}

/**
 * Refuses what is not UTF-8 instead of replacing it with U+FFFD, so no method ever sees a name that
 * differs from the bytes sent. A leading BOM is kept (JSON.parse then refuses it, as before).
 */
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The body's bytes, or undefined when it exceeds `limit` bytes (checked before buffering more). */
function readBody(req: IncomingMessage, limit: number): Promise<Uint8Array | undefined> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) {
    req.resume();
    return Promise.resolve(undefined);
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (c: Buffer) => {
      if (over) return;
      size += c.length;
      if (size > limit) {
        over = true;
        chunks.length = 0;
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(over ? undefined : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
