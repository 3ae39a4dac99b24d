/**
 * A typed JSON-RPC client generated from a service declaration. Results arrive in wire form:
 * 64-bit integers as decimal strings, IDs and bytes as cb58 strings.
 */
import { NodeError } from '../errors/errors.js';
import type { ParamsOf, ResultOf, ServiceDef } from './service.js';

/** How a value looks on the wire (after JSON encoding by the server). */
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

export function jsonReplacer(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
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
