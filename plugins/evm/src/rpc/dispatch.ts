/**
 * JSON-RPC 2.0 for the Ethereum front end (HTTP bodies and WebSocket messages alike): envelope
 * checks, batches with geth's limits, positional argument parsing with geth's texts ("invalid
 * argument 0: ...", "missing value for required argument 1", "too many arguments, want at most 2"),
 * and error mapping. A reply is written once, as text: `{"jsonrpc":"2.0","id":..,"result":..}`.
 */
import { hasErrorCode, isInvalidParamsError, isNodeError, type Logger } from '@cornice/sdk';
import { EvmRpcError } from '../backend.js';
import { ArgumentError, hexData, quantity } from './hex.js';

/** One positional argument: its parser (throws ArgumentError) and whether it may be absent or null. */
export interface Arg {
  readonly parse: (v: unknown) => unknown;
  readonly optional?: boolean;
}

export const required = (parse: (v: unknown) => unknown): Arg => ({ parse });
export const optional = (parse: (v: unknown) => unknown): Arg => ({ parse, optional: true });

/**
 * A method: `args` parse the positional params (absent ones are undefined); without `args` the method
 * receives the params as sent (extensions).
 */
export interface MethodSpec {
  readonly args?: readonly Arg[];
  run(args: readonly unknown[]): unknown;
}

export type MethodTable = ReadonlyMap<string, MethodSpec>;

export const RpcCode = {
  Parse: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  Internal: -32603,
  Server: -32000,
  Timeout: -32002,
  ResponseTooLarge: -32003,
} as const;

export interface DispatchLimits {
  /** Most requests in one batch (geth: 1,000). */
  readonly maxBatchItems: number;
  /** Largest reply, single or batch, in characters (geth: 25 MB). */
  readonly maxResponseChars: number;
  /** Longest a method may run before its caller gets -32002 "request timed out". */
  readonly callTimeoutMs: number;
}

export const DEFAULT_DISPATCH_LIMITS: DispatchLimits = {
  maxBatchItems: 1_000,
  maxResponseChars: 25_000_000,
  callTimeoutMs: 30_000,
};

const NO_ARGS: readonly unknown[] = [];
const MAX_ID_CHARS = 256;

/** The body of an error reply after the id: `"error":{...}`. */
function errorPiece(code: number, message: string, data?: unknown): string {
  const error: { code: number; message: string; data?: unknown } = { code, message };
  if (data !== undefined) error.data = data;
  return '"error":' + JSON.stringify(error);
}

function reply(idText: string, piece: string): string {
  return '{"jsonrpc":"2.0","id":' + idText + ',' + piece + '}';
}

/** Error data as JSON: bytes as 0x-hex, bigints as quantities. */
function jsonData(data: unknown): unknown {
  if (data instanceof Uint8Array) return hexData(data);
  if (typeof data === 'bigint') return quantity(data);
  return data;
}

function shortName(method: string): string {
  return method.length > 64 ? method.slice(0, 64) + '…' : method;
}

/** The id to echo as JSON text; undefined when the id is of a kind JSON-RPC forbids. */
function idTextOf(msg: Record<string, unknown>): string | undefined {
  const id = msg.id;
  if (id === null || id === undefined) return 'null';
  if (typeof id === 'number') return JSON.stringify(id);
  if (typeof id === 'string') return id.length <= MAX_ID_CHARS ? JSON.stringify(id) : undefined;
  return undefined;
}

export class RpcDispatcher {
  constructor(
    private readonly methods: MethodTable,
    private readonly limits: DispatchLimits,
    private readonly log: Logger,
  ) {}

  /**
   * One HTTP body or WebSocket message: the reply text, or undefined when none is owed (notifications
   * only). `local` adds per-connection methods (eth_subscribe over WebSocket). Never throws.
   */
  async handle(text: string, local?: MethodTable): Promise<string | undefined> {
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch {
      return reply('null', errorPiece(RpcCode.Parse, 'parse error'));
    }
    if (Array.isArray(msg)) return this.#batch(msg, local);
    const out = await this.#one(msg, local);
    if (out !== undefined && out.length > this.limits.maxResponseChars) return this.#tooLarge(msg);
    return out;
  }

  async #batch(msgs: unknown[], local: MethodTable | undefined): Promise<string | undefined> {
    if (msgs.length === 0) return reply('null', errorPiece(RpcCode.InvalidRequest, 'empty batch'));
    if (msgs.length > this.limits.maxBatchItems) return '[' + reply('null', errorPiece(RpcCode.InvalidRequest, 'batch too large')) + ']';
    const replies = await Promise.all(msgs.map((m) => this.#one(m, local)));
    let out = '';
    let size = 2;
    for (let i = 0; i < replies.length; i++) {
      let r = replies[i];
      if (r === undefined) continue;
      // As geth: once the batch's reply reaches the bound, the remaining calls get an error instead.
      if (size + r.length > this.limits.maxResponseChars) r = this.#tooLarge(msgs[i]);
      size += r.length + 1;
      out = out.length === 0 ? r : out + ',' + r;
    }
    return out.length === 0 ? undefined : '[' + out + ']';
  }

  #tooLarge(msg: unknown): string {
    const idText = (msg !== null && typeof msg === 'object' && idTextOf(msg as Record<string, unknown>)) || 'null';
    return reply(idText, errorPiece(RpcCode.ResponseTooLarge, 'response too large'));
  }

  /** One request object: its reply text, or undefined for a notification. */
  async #one(msg: unknown, local: MethodTable | undefined): Promise<string | undefined> {
    if (msg === null || typeof msg !== 'object' || Array.isArray(msg)) {
      return reply('null', errorPiece(RpcCode.InvalidRequest, 'invalid request: a request must be a JSON object'));
    }
    const m = msg as Record<string, unknown>;
    const idText = idTextOf(m);
    if (idText === undefined) return reply('null', errorPiece(RpcCode.InvalidRequest, 'invalid request: id must be a string, a number or null'));
    if (m.jsonrpc !== '2.0') return reply(idText, errorPiece(RpcCode.InvalidRequest, 'invalid request: jsonrpc must be "2.0"'));
    const method = m.method;
    if (typeof method !== 'string' || method.length === 0) {
      return reply(idText, errorPiece(RpcCode.InvalidRequest, 'invalid request: method must be a non-empty string'));
    }
    const piece = await this.call(method, m.params, local);
    return m.id === undefined ? undefined : reply(idText, piece);
  }

  /** Runs one method; `"result":..` or `"error":..`. */
  async call(method: string, params: unknown, local?: MethodTable): Promise<string> {
    const spec = local?.get(method) ?? this.methods.get(method);
    if (spec === undefined) return errorPiece(RpcCode.MethodNotFound, `the method ${shortName(method)} does not exist/is not available`);
    let raw: readonly unknown[];
    if (params === undefined || params === null) raw = NO_ARGS;
    else if (Array.isArray(params)) raw = params;
    else return errorPiece(RpcCode.InvalidParams, 'non-array args');
    try {
      let result = spec.run(spec.args ? parseArgs(spec.args, raw) : raw);
      if (result instanceof Promise) result = await this.#bounded(result);
      return '"result":' + (result === undefined ? 'null' : JSON.stringify(result));
    } catch (e) {
      return this.#errorOf(e, method);
    }
  }

  #bounded(p: Promise<unknown>): Promise<unknown> {
    const ms = this.limits.callTimeoutMs;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new EvmRpcError(-32002, 'request timed out')), ms);
      // The deadline alone never keeps the process alive.
      timer.unref();
      p.then(
        (v) => {
          clearTimeout(timer);
          resolve(v);
        },
        (e: unknown) => {
          clearTimeout(timer);
          reject(e);
        },
      );
    });
  }

  #errorOf(e: unknown, method: string): string {
    if (hasErrorCode(e, 'EvmRpc')) {
      const err = e as EvmRpcError;
      return errorPiece(err.rpcCode, err.message, jsonData(err.rpcData));
    }
    if (e instanceof ArgumentError || isInvalidParamsError(e)) return errorPiece(RpcCode.InvalidParams, (e as Error).message);
    if (isNodeError(e)) return errorPiece(RpcCode.Server, e.message);
    this.log.error('eth rpc method failed', { method: shortName(method), error: e });
    return errorPiece(RpcCode.Internal, 'internal error');
  }
}

function invalidParams(message: string): EvmRpcError {
  return new EvmRpcError(-32602, message);
}

/** Positional params -> parsed arguments (absent optional ones undefined). */
export function parseArgs(specs: readonly Arg[], raw: readonly unknown[]): unknown[] {
  if (raw.length > specs.length) throw invalidParams(`too many arguments, want at most ${specs.length}`);
  const out: unknown[] = new Array(specs.length);
  for (let i = 0; i < specs.length; i++) {
    const v = raw[i];
    const spec = specs[i]!;
    if (v === undefined || v === null) {
      if (!spec.optional) throw invalidParams(`missing value for required argument ${i}`);
      continue;
    }
    try {
      out[i] = spec.parse(v);
    } catch (e) {
      if (e instanceof ArgumentError) throw invalidParams(`invalid argument ${i}: ${e.message}`);
      throw e;
    }
  }
  return out;
}
