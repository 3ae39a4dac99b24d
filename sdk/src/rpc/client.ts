/**
 * A typed JSON-RPC client generated from a service declaration. Results arrive in wire form, the
 * one encoding `jsonReplacer` applies on both ends: bigints as decimal strings, IDs (their toJSON)
 * and bytes (Uint8Array, Buffer) as cb58 strings.
 */
import { EncodingError, NodeError } from '../errors/errors.js';
import { cb58Encode } from '../encoding/cb58.js';
import type { ParamsOf, ResultOf, ServiceDef } from './service.js';

/**
 * How a value looks on the wire (after JSON encoding by `jsonReplacer`): bigint -> decimal string,
 * Uint8Array (Buffer too) -> cb58 string, a value with toJSON -> its JSON (Id -> cb58).
 */
export type Wire<T> = T extends bigint
  ? string
  : T extends Uint8Array
    ? string
    : T extends { toJSON(): infer J }
      ? J
      : T extends ReadonlyArray<infer E>
        ? Wire<E>[]
        : T extends object
          ? { [K in keyof T]: Wire<T[K]> }
          : T;

/** What a client may send for a param: the domain value or its wire form. */
export type Input<T> = T extends bigint
  ? bigint | number | string
  : T extends Uint8Array
    ? string
    : T extends { toJSON(): infer J }
      ? T | J
      : T extends ReadonlyArray<infer E>
        ? Input<E>[]
        : T extends object
          ? { [K in keyof T]: Input<T[K]> }
          : T;

export type Client<S extends ServiceDef> = {
  [K in keyof S['methods']]: (params?: Input<ParamsOf<S['methods'][K]>>) => Promise<Wire<ResultOf<S['methods'][K]>>>;
};

/** Sends one JSON-RPC call and returns its `result`, or throws RpcCallError. */
export type Transport = (method: string, params: unknown) => Promise<unknown>;

/** A JSON-RPC error answered by a server. */
export class RpcCallError extends NodeError<'RpcError'> {
  constructor(
    readonly rpcCode: number,
    message: string,
    data?: unknown,
  ) {
    super('RpcError', message, data);
  }
}

export function createClient<S extends ServiceDef>(def: S, transport: Transport): Client<S> {
  const client: Record<string, (params?: unknown) => Promise<unknown>> = {};
  for (const name of Object.keys(def.methods)) {
    client[name] = (params) => transport(`${def.name}.${name}`, params ?? {});
  }
  return client as Client<S>;
}

/**
 * The largest byte value written as cb58: 16 KiB. Base 58 costs time quadratic in the length, so a
 * longer Uint8Array in a result is an error, before it holds the event loop; a service that returns
 * bulk bytes encodes them itself (e.g. hex). Test: client.test.ts 'a byte value longer than
 * MAX_WIRE_BYTES is refused (cb58 is quadratic), …'.
 */
export const MAX_WIRE_BYTES = 16 * 1024;

/** The wire form of bytes: cb58, as the reference node writes bytes in requests and responses. */
export function bytesToWire(bytes: Uint8Array): string {
  if (bytes.length > MAX_WIRE_BYTES) {
    throw new EncodingError('BadLength', `a byte value of ${bytes.length} bytes is too long to send as cb58 (at most ${MAX_WIRE_BYTES})`);
  }
  return cb58Encode(bytes);
}

/**
 * The JSON.stringify replacer of both ends (results on the node, params in the client): bigint ->
 * decimal string, Uint8Array -> cb58 (`bytesToWire`). A Buffer's toJSON runs before the replacer
 * and hides its bytes as `{type: 'Buffer', data}`, so for that shape the holder's value is read.
 */
export function jsonReplacer(this: unknown, key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Uint8Array) return bytesToWire(value);
  if (isBufferJson(value)) {
    const raw = (this as Record<string, unknown> | undefined)?.[key];
    if (raw instanceof Uint8Array) return bytesToWire(raw);
  }
  return value;
}

function isBufferJson(v: unknown): boolean {
  return typeof v === 'object' && v !== null && (v as { type?: unknown }).type === 'Buffer' && Array.isArray((v as { data?: unknown }).data);
}

/** A transport over HTTP POST (global fetch) to a node endpoint such as `http://127.0.0.1:9650/ext/admin`. */
export function httpTransport(url: string): Transport {
  let nextId = 1;
  return async (method, params) => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }, jsonReplacer),
    });
    const text = await res.text();
    let body: { result?: unknown; error?: { code: number; message: string; data?: unknown } };
    try {
      body = JSON.parse(text);
    } catch {
      throw new RpcCallError(-32700, `HTTP ${res.status}: ${text.slice(0, 200)}`);
    }
    if (body.error) throw new RpcCallError(body.error.code, body.error.message, body.error.data);
    return body.result;
  };
}
