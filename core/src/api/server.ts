/**
 * The node's one HTTP server (node:http): checks the Host header (DNS rebinding) and answers CORS
 * only for allowed origins (access.ts), routes /ext/*, enforces POST, content type, body limit and
 * UTF-8 for JSON-RPC routes, and hands bodies to the endpoint's JSON-RPC layer. Every JSON-RPC reply
 * is HTTP 200; transport-level refusals use 403/404/405/413/415 with a JSON-RPC error body so
 * clients always get a readable reason.
 *
 * Connections are bounded (connections.ts): at most `maxConnections` are open, and a new one beyond
 * that closes the connection idle the longest rather than being refused (only when all are busy
 * with a request is the new one closed); a request must send its headers and body within the
 * timeouts, and a socket that fails to do so (or sends garbage) is answered and then destroyed —
 * never left half-open for a client that does not read. Idle keep-alive sockets close after
 * `keepAliveMs`. Replies are written with backpressure (reply-writer.ts); a client that stops
 * reading is dropped after `writeTimeoutMs`, and reply bytes waiting over all connections stay
 * under `maxBufferedBytes`. JSON-RPC bodies are bounded in size (`maxBodyBytes`) and in nesting
 * (json-limits.ts, in the endpoint). Each request runs with its client's key (request-context.ts).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { NodeError, type Logger } from '@cornice/sdk';
import { CorsPolicy, DEFAULT_ALLOWED_HOSTS, HostCheck } from './access.js';
import { ConnectionTable, DEFAULT_CONNECTION_LIMITS } from './connections.js';
import { RpcCode } from './errors.js';
import { lingerWhileBodyArrives } from './linger.js';
import { writeReply } from './reply-writer.js';
import { clientKey, withClient } from './request-context.js';
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
  /** Open connections (HTTP and WebSocket); beyond it the longest idle one is closed for a new one. */
  maxConnections: number;
  /** Reply bytes waiting for clients over all connections (default DEFAULT_CONNECTION_LIMITS). */
  maxBufferedBytes?: number;
  /** A connection whose waiting reply bytes make no progress this long is closed, ms. */
  writeTimeoutMs?: number;
  /** How often stalled writes are checked, ms (tests shorten it). */
  sweepIntervalMs?: number;
  /** Defaults: DEFAULT_HTTP_TIMEOUTS (tests shorten them). */
  timeouts?: Partial<HttpTimeouts>;
  /** Defaults: DEFAULT_WEBSOCKET_LIMITS. */
  websocket?: Partial<WebSocketLimits>;
  log: Logger;
}

export class HttpError extends NodeError<'Listen'> {}

const JSON_TYPE = 'application/json';
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
  readonly #opts: HttpServerOptions;
  readonly #hosts: HostCheck;
  readonly #cors: CorsPolicy;
  readonly #table: ConnectionTable;
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
        const socket = req.socket;
        this.#table.requestStarted(socket);
        lingerWhileBodyArrives(req);
        res.once('close', () => this.#table.requestFinished(socket));
        this.#handle(req, res).catch((e: unknown) => {
          opts.log.error('http handler failed', { error: e, url: req.url?.slice(0, 256) });
          if (!res.headersSent) sendRpcError(res, 500, RpcCode.Internal, 'internal error');
          else res.destroy();
        });
      },
    );
    this.#server.keepAliveTimeout = t.keepAliveMs;
    this.#table = new ConnectionTable(
      {
        maxConnections: opts.maxConnections,
        maxBufferedBytes: opts.maxBufferedBytes ?? DEFAULT_CONNECTION_LIMITS.maxBufferedBytes,
        writeTimeoutMs: opts.writeTimeoutMs ?? DEFAULT_CONNECTION_LIMITS.writeTimeoutMs,
        sweepIntervalMs: opts.sweepIntervalMs ?? DEFAULT_CONNECTION_LIMITS.sweepIntervalMs,
      },
      opts.log,
    );
    // No server.maxConnections: Node would refuse the newest socket; the table evicts the longest idle.
    this.#server.on('connection', (s: Socket) => {
      if (!this.#table.add(s)) s.destroy();
    });
    this.#server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
      refuseSocket(socket, CLIENT_ERROR_STATUS[err.code ?? ''] ?? '400 Bad Request');
    });
    this.#ws = new WebSocketUpgrader({ ...DEFAULT_WEBSOCKET_LIMITS, ...opts.websocket }, opts.log, this.#table);
    this.#server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => this.#upgrade(req, socket, head));
  }

  /**
   * A WebSocket upgrade: the Host check of every request, then the Origin (browsers apply no CORS to
   * WebSockets: a page on any site could reach a local node), then a route of kind 'websocket'.
   */
  #upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    this.#table.requestStarted(socket as Socket); // busy until it is a WebSocket (or closed)
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

  /** Open connections right now (HTTP and WebSocket). */
  get connections(): number {
    return this.#table.size;
  }

  /** The connection table (tests, metrics). */
  get table(): ConnectionTable {
    return this.#table;
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
    this.#table.close();
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    this.#server.closeIdleConnections();
    const timer = setTimeout(() => this.#server.closeAllConnections(), 2_000);
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
    const client = clientKey(req.socket.remoteAddress, req.socket.remotePort);
    if (route.kind === 'http') return withClient(client, () => route.handle(req, res));
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
    const reply = await withClient(client, () => route.endpoint.handle(text));
    if (reply === undefined) {
      res.writeHead(200, { 'content-length': 0 });
      return void res.end();
    }
    // Returned, not awaited: this frame lets go of the reply text while it waits for its reader.
    return this.#sendReply(req.socket, res, reply);
  }

  /** A JSON-RPC reply through the write bounds; 503 when it does not fit (connections.ts). */
  #sendReply(socket: Socket, res: ServerResponse, reply: string): Promise<void> {
    // No async frame here either: nothing but writeReply keeps the text.
    return writeReply(this.#table, socket, res, 200, { 'content-type': JSON_TYPE }, reply).then((sent) => {
      if (sent) return;
      res.setHeader('retry-after', '1');
      const limit = this.#opts.maxBufferedBytes ?? DEFAULT_CONNECTION_LIMITS.maxBufferedBytes;
      sendRpcError(res, 503, RpcCode.Server, `server busy: replies waiting for clients that read slowly exceed ${limit} bytes (--http-max-buffered-bytes); try again`);
    });
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
