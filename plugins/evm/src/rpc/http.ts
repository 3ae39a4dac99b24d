/**
 * HTTP `/rpc`: POST with a JSON body of at most `maxBodyBytes` (read with the bound before parsing),
 * answered with the dispatcher's reply. The node has already checked Host and set CORS headers;
 * a CORS preflight (OPTIONS) is answered here with 204. Each request is dispatched with its client
 * (the TCP connection and its remote address: fair queues, per-address quotas) and a signal that
 * aborts when the client goes away before its answer is written, which stops the work done for it
 * (test: rpc-limits.test.ts "a batch whose client went away stops").
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { HttpHandler, Logger } from '@cornice/sdk';
import { BatchReply, RpcCode, type Origin, type RpcDispatcher } from './dispatch.js';
import { Cancel, Slicer } from './request.js';

export interface HttpLimits {
  /** Largest request body (geth: 5 MiB). */
  readonly maxBodyBytes: number;
}

export const DEFAULT_HTTP_LIMITS: HttpLimits = { maxBodyBytes: 5 * 1024 * 1024 };

/** Content types geth accepts for JSON-RPC. */
const JSON_TYPES = new Set(['application/json', 'application/json-rpc', 'application/jsonrequest']);

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function sendJson(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/**
 * The first answer in a turn of the event loop is written at once; those ready after it in the same
 * turn are written together when the turn ends (setImmediate). Each write to a client that is
 * waiting wakes it, and the wake-up costs the write several times its own work; written together,
 * the client wakes once for the lot (Redis writes its replies the same way, before it next waits;
 * bench/evm.mjs's read figures show it). Test: rpc-http.test.ts "the first answer of a turn is
 * written at once". A lone request is never held: the work its answer would wait behind (a
 * block built on the tx it sent, say) can take milliseconds.
 */
class AnswerBatch {
  #held: Array<[ServerResponse, string]> = [];
  #answeredThisTurn = false;

  send(res: ServerResponse, text: string): void {
    if (this.#answeredThisTurn) {
      this.#held.push([res, text]);
      return;
    }
    this.#answeredThisTurn = true;
    setImmediate(this.#flush);
    sendJson(res, 200, text);
  }

  readonly #flush = (): void => {
    this.#answeredThisTurn = false;
    const held = this.#held;
    this.#held = [];
    for (const [res, text] of held) {
      // A client that went away in the meantime gets nothing (writing to a closed response is a no-op).
      if (!res.destroyed) sendJson(res, 200, text);
    }
  };
}

/** A batch reply of more characters is streamed item by item, not joined into one text. */
const STREAM_CHARS = 1 << 20;
/** Most characters given to one write of a streamed reply. */
const WRITE_CHARS = 256 * 1024;
/** Longest wait for a client to take more of a streamed reply before it is dropped. */
const DRAIN_MS = 30_000;

/** Resolves when `res` can take more (or is gone); a client that takes nothing for DRAIN_MS is dropped. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    const timer = setTimeout(() => {
      res.destroy();
      done();
    }, DRAIN_MS);
    timer.unref();
    res.once('drain', done);
    res.once('close', done);
  });
}

/**
 * A large batch reply, written item by item as a JSON array (chunked): each write waits until the
 * client took the previous ones (backpressure), and the event loop gets a turn every SLICE_MS. As
 * one text, a reply of many MB held the event loop while its byte length and write were made, and
 * its bytes were a second copy in memory (test: rpc-limits.test.ts "a large batch reply is streamed").
 */
async function streamBatch(res: ServerResponse, items: readonly string[]): Promise<void> {
  res.writeHead(200, { 'content-type': 'application/json' });
  const slicer = new Slicer();
  for (let i = 0; i < items.length; i++) {
    const item = (i === 0 ? '[' : ',') + items[i];
    // An item of megabytes (an eth_getLogs) goes in pieces: each write encodes its piece at once.
    for (let at = 0; at < item.length; at += WRITE_CHARS) {
      if (res.destroyed) return;
      if (!res.write(item.length <= WRITE_CHARS ? item : item.slice(at, at + WRITE_CHARS))) await drained(res);
      await slicer.pause();
    }
  }
  if (!res.destroyed) res.end(']');
}

function sendError(res: ServerResponse, status: number, code: number, message: string): void {
  sendJson(res, status, JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } }));
}

function contentTypeOf(req: IncomingMessage): string {
  const raw = req.headers['content-type'];
  if (raw === undefined) return '';
  const semi = raw.indexOf(';');
  return (semi < 0 ? raw : raw.slice(0, semi)).trim().toLowerCase();
}

/**
 * The body, or 'too large' once it exceeds `limit` (nothing more is buffered), or undefined when the
 * request is aborted.
 */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer | 'too large' | undefined> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) return Promise.resolve('too large');
  return new Promise((resolve) => {
    let first: Buffer | undefined;
    let rest: Buffer[] | undefined;
    let size = 0;
    let done = false;
    const finish = (v: Buffer | 'too large' | undefined): void => {
      if (done) return;
      done = true;
      resolve(v);
    };
    req.on('data', (c: Buffer) => {
      if (done) return;
      size += c.length;
      if (size > limit) {
        first = undefined;
        rest = undefined;
        return finish('too large');
      }
      if (first === undefined) first = c;
      else (rest ??= [first]).push(c);
    });
    req.on('end', () => finish(rest ? Buffer.concat(rest) : (first ?? Buffer.alloc(0))));
    req.on('error', () => finish(undefined));
    req.on('close', () => finish(undefined));
  });
}

/**
 * Who sent the requests of a TCP connection (a keep-alive connection carries many, one after
 * another), and what is called off when it closes: a request still being worked on then has lost
 * its client. Made once per connection.
 */
const origins = new WeakMap<Socket, Origin>();
let connectionSeq = 0;

function originOf(req: IncomingMessage, res: ServerResponse): Origin {
  const socket = req.socket as Socket | undefined;
  let origin = socket && origins.get(socket);
  if (origin !== undefined) return origin;
  const connection = `http:${++connectionSeq}`;
  const gone = new Cancel();
  const client = { connection, address: socket?.remoteAddress ?? connection };
  if (typeof socket?.once === 'function') {
    socket.once('close', () => gone.abort(new Error('connection closed')));
    origin = { client, gone };
    origins.set(socket, origin);
  } else {
    // No socket of its own (a VM in a worker thread gets the request copied, --vm-isolation): the
    // response closing before it was written is the client gone.
    res.once('close', () => {
      if (!res.writableFinished) gone.abort(new Error('connection closed'));
    });
    origin = { client, gone };
  }
  return origin;
}

export function createHttpHandler(dispatcher: RpcDispatcher, limits: HttpLimits, log: Logger): HttpHandler {
  const answers = new AnswerBatch();
  return async (req, res) => {
    if (req.method === 'OPTIONS') {
      req.resume();
      res.writeHead(204);
      return void res.end();
    }
    if (req.method !== 'POST') {
      req.resume();
      res.setHeader('allow', 'POST, OPTIONS');
      return sendError(res, 405, RpcCode.InvalidRequest, `method not allowed: JSON-RPC needs POST, received ${String(req.method).slice(0, 16)}`);
    }
    const type = contentTypeOf(req);
    if (!JSON_TYPES.has(type)) {
      req.resume();
      return sendError(res, 415, RpcCode.InvalidRequest, `invalid content type "${type.slice(0, 64)}", only application/json is supported`);
    }
    const body = await readBody(req, limits.maxBodyBytes);
    if (body === undefined) return void res.destroy();
    if (body === 'too large') {
      req.resume();
      res.setHeader('connection', 'close');
      return sendError(res, 413, RpcCode.InvalidRequest, `request body too large: more than ${limits.maxBodyBytes} bytes`);
    }
    let text: string;
    try {
      text = utf8.decode(body);
    } catch {
      return sendError(res, 200, RpcCode.Parse, 'parse error: body is not valid UTF-8');
    }
    let out: Awaited<ReturnType<RpcDispatcher['handle']>>;
    try {
      out = await dispatcher.handle(text, originOf(req, res));
    } catch (e) {
      // The dispatcher does not throw; if it ever does, the client still gets an answer.
      log.error('eth rpc request failed', { error: e });
      return sendError(res, 500, RpcCode.Internal, 'internal error');
    }
    if (res.destroyed) return;
    if (out === undefined) {
      res.writeHead(200, { 'content-length': 0 });
      return void res.end();
    }
    if (out instanceof BatchReply) {
      let chars = 0;
      for (const item of out.items) chars += item.length;
      if (chars > STREAM_CHARS) return streamBatch(res, out.items);
      out = out.text();
    }
    answers.send(res, out);
  };
}
