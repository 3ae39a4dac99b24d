import { isNodeError, jsonReplacer, type Logger } from '@cornice/sdk';

/** A JSON-RPC error object. Plain object on purpose: jayson drops the message of Error instances. */
export interface RpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

export const RpcCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  Internal: -32603,
  Server: -32000,
} as const;

/** Bounds on what a thrown error puts into a reply (errors may come from an untrusted plugin). */
export const ERROR_LIMITS = {
  /** Characters of the message; longer ones are cut and end with `…`. */
  message: 1024,
  /** Characters of the code and of the field name. */
  code: 128,
  /** Characters of `data` as JSON; larger (or unserialisable) data is replaced by `{code}`. */
  dataJson: 4096,
} as const;

/** What a reply may carry of a NodeError, read once and bounded. */
interface ErrorFacts {
  code: string;
  message: string;
  field: string | undefined;
  data: unknown;
}

const cut = (s: string, max: number): string => (s.length > max ? `${s.slice(0, max - 1)}…` : s);

/**
 * Reads a NodeError (from any copy of the sdk) into plain bounded values; undefined for anything
 * else, including an error whose properties cannot be read (a throwing getter, a hostile proxy).
 */
function readNodeError(err: unknown): ErrorFacts | undefined {
  if (!isNodeError(err)) return undefined;
  try {
    const code: unknown = err.code;
    const message: unknown = err.message;
    const field: unknown = (err as { field?: unknown }).field;
    const data: unknown = err.data;
    if (typeof code !== 'string') return undefined;
    return {
      code: cut(code, ERROR_LIMITS.code),
      message: typeof message === 'string' ? cut(message, ERROR_LIMITS.message) : cut(code, ERROR_LIMITS.code),
      field: typeof field === 'string' ? cut(field, ERROR_LIMITS.code) : undefined,
      data: boundedData(data),
    };
  } catch {
    return undefined;
  }
}

/** `data` as plain JSON when it serialises within the bound; undefined otherwise. */
function boundedData(data: unknown): unknown {
  if (data === undefined) return undefined;
  try {
    const text = JSON.stringify(data, jsonReplacer);
    return text === undefined || text.length > ERROR_LIMITS.dataJson ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The one mapping from thrown errors to JSON-RPC errors: bad params -> -32602 naming the field,
 * any other typed NodeError -> -32000 with its message, anything unexpected -> -32603 (logged,
 * with no internals in the reply). Errors are recognised by the sdk's brand and their code, never
 * by `instanceof`: a plugin's own copy of the sdk makes errors of other classes.
 */
export function toRpcError(err: unknown, log: Logger, method: string): RpcErrorObject {
  const e = readNodeError(err);
  if (e?.code === 'InvalidParams') return { code: RpcCode.InvalidParams, message: e.message, data: { field: e.field ?? '' } };
  if (e) return { code: RpcCode.Server, message: e.message, data: e.data ?? { code: e.code } };
  log.error('unexpected error in method', { method, error: err });
  return { code: RpcCode.Internal, message: 'internal error' };
}
