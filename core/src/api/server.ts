/**
 * The node's one HTTP server (node:http): routes /ext/*, enforces POST, content type and body limit
 * for JSON-RPC routes, answers CORS preflights, and hands bodies to the endpoint's JSON-RPC layer.
 * Every JSON-RPC reply is HTTP 200; transport-level refusals use 404/405/413/415 with a JSON-RPC
 * error body so clients always get a readable reason.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { NodeError, type Logger } from '@cornice/sdk';
import { RpcCode } from './errors.js';
import type { RouteTable } from './routes.js';

export interface HttpServerOptions {
  host: string;
  port: number;
  maxBodyBytes: number;
  log: Logger;
}

export class HttpError extends NodeError<'Listen'> {}

const JSON_TYPE = 'application/json';

function send(res: ServerResponse, status: number, body: string, type = JSON_TYPE): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body), 'access-control-allow-origin': '*' });
  res.end(body);
}

function sendRpcError(res: ServerResponse, status: number, code: number, message: string): void {
  send(res, status, JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } }));
}

export class HttpApiServer {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  readonly #opts: HttpServerOptions;

  constructor(
    private readonly routes: RouteTable,
    opts: HttpServerOptions,
  ) {
    this.#opts = opts;
    this.#server = createServer({ keepAlive: true }, (req, res) => {
      this.#handle(req, res).catch((e: unknown) => {
        opts.log.error('http handler failed', { error: e, url: req.url?.slice(0, 256) });
        if (!res.headersSent) sendRpcError(res, 500, RpcCode.Internal, 'internal error');
        else res.destroy();
      });
    });
    this.#server.keepAliveTimeout = 65_000;
    this.#server.on('connection', (s: Socket) => {
      this.#sockets.add(s);
      s.on('close', () => this.#sockets.delete(s));
    });
    this.#server.on('clientError', (_err, socket) => {
      if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
      else socket.destroy();
    });
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

    if (req.method === 'GET' && route.get) return route.get(req, res);
    if (req.method === 'OPTIONS') {
      res.writeHead(204, {
        'access-control-allow-origin': '*',
        'access-control-allow-methods': 'POST, OPTIONS',
        'access-control-allow-headers': 'content-type',
        'access-control-max-age': '86400',
      });
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
      res.writeHead(200, { 'content-length': 0, 'access-control-allow-origin': '*' });
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
