import { InvalidParamsError, NodeError, type Logger } from '@cornice/sdk';

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

/**
 * The one mapping from thrown errors to JSON-RPC errors: bad params -> -32602 naming the field,
 * any other typed NodeError -> -32000 with its message, anything unexpected -> -32603 (logged,
 * with no internals in the reply).
 */
export function toRpcError(err: unknown, log: Logger, method: string): RpcErrorObject {
  if (err instanceof InvalidParamsError) return { code: RpcCode.InvalidParams, message: err.message, data: { field: err.field } };
  if (err instanceof NodeError) {
    return { code: RpcCode.Server, message: err.message, data: err.data ?? { code: err.code } };
  }
  log.error('unexpected error in method', { method, error: err });
  return { code: RpcCode.Internal, message: 'internal error' };
}
