import { jsonReplacer } from '@cornice/sdk';

/** A JSON-RPC reply as it arrives (result or error). */
export interface RpcReply {
  jsonrpc: string;
  id: unknown;
  // biome-ignore lint/suspicious/noExplicitAny: a test reads any result's fields without casts
  result?: any;
  error?: { code: number; message: string; data?: unknown };
}

/** POSTs any JSON body (well-formed or not, for envelope tests) and returns the parsed reply. */
export async function postJson(url: string, body: unknown): Promise<RpcReply> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body, jsonReplacer),
  });
  return (await res.json()) as RpcReply;
}

let nextId = 1;

/** One JSON-RPC call; unlike the sdk's httpTransport it returns errors as data instead of throwing. */
export function postRpc(url: string, method: string, params?: unknown): Promise<RpcReply> {
  return postJson(url, { jsonrpc: '2.0', id: nextId++, method, params });
}
