/**
 * The JSON-RPC 2.0 layer of one endpoint: envelope checks, batches, dispatch through jayson's
 * `Server.call`, and encoding of results (jsonReplacer: bigint -> decimal string, bytes -> cb58).
 * HTTP concerns live in server.ts.
 */
import jayson from 'jayson/promise/index.js';
import { jsonReplacer, type BoundService, type Logger } from '@cornice/sdk';
import { RpcCode, toRpcError, type RpcErrorObject } from './errors.js';
import type { ApiMetrics } from './metrics/metrics.js';

interface Envelope {
  jsonrpc: '2.0';
  method: string;
  params?: unknown;
  id?: string | number | null;
}

type Response = { jsonrpc: '2.0'; id: string | number | null } & ({ result: unknown } | { error: RpcErrorObject });

function errorResponse(id: string | number | null, code: number, message: string, data?: unknown): Response {
  return { jsonrpc: '2.0', id, error: data === undefined ? { code, message } : { code, message, data } };
}

export interface JsonRpcOptions {
  maxBatchSize: number;
  log: Logger;
  metrics?: ApiMetrics;
}

export class JsonRpcEndpoint {
  readonly #server: InstanceType<typeof jayson.Server>;
  readonly #methods = new Set<string>();
  readonly #opts: JsonRpcOptions;

  constructor(
    /** The services served here (their declarations drive docs and conformance sweeps). */
    readonly services: readonly BoundService[],
    opts: JsonRpcOptions,
  ) {
    this.#opts = opts;
    const methods: Record<string, (params: unknown) => Promise<unknown>> = {};
    for (const service of services) {
      for (const [name, bound] of service.methods) {
        this.#methods.add(name);
        methods[name] = async (params) => {
          try {
            return await bound(params);
          } catch (e) {
            throw toRpcError(e, opts.log, name);
          }
        };
      }
    }
    this.#server = new jayson.Server(methods, { useContext: false });
  }

  /**
   * Handles one HTTP body; returns the JSON text to send, or undefined when nothing is owed
   * (notifications only).
   */
  async handle(body: string): Promise<string | undefined> {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch (e) {
      return JSON.stringify(errorResponse(null, RpcCode.ParseError, `parse error: ${(e as Error).message}`));
    }
    if (Array.isArray(parsed)) {
      if (parsed.length === 0) return JSON.stringify(errorResponse(null, RpcCode.InvalidRequest, 'empty batch'));
      if (parsed.length > this.#opts.maxBatchSize) {
        return JSON.stringify(
          errorResponse(null, RpcCode.InvalidRequest, `batch of ${parsed.length} requests exceeds the limit of ${this.#opts.maxBatchSize}`),
        );
      }
      const replies = (await Promise.all(parsed.map((r) => this.#one(r)))).filter((r) => r !== undefined);
      return replies.length ? `[${replies.join(',')}]` : undefined;
    }
    return this.#one(parsed);
  }

  /** One request's reply as JSON text; undefined for a notification. */
  async #one(req: unknown): Promise<string | undefined> {
    const invalid = checkEnvelope(req);
    if (invalid) return JSON.stringify(errorResponse(idOf(req), RpcCode.InvalidRequest, invalid));
    const env = req as Envelope;
    const isNotification = !('id' in env);
    const started = process.hrtime.bigint();
    let response: Response;
    if (!this.#methods.has(env.method)) {
      response = errorResponse(env.id ?? null, RpcCode.MethodNotFound, methodNotFoundMessage(env.method, this.#methods));
    } else {
      // jayson treats a request without id as a notification; we want its outcome for metrics,
      // so it always gets an id here and the reply is dropped afterwards.
      const call = { jsonrpc: '2.0', method: env.method, params: env.params ?? {}, id: isNotification ? 0 : env.id };
      response = await new Promise<Response>((resolve) => {
        this.#server.call(call, (err: unknown, res: unknown) => resolve((err ?? res) as Response));
      });
      if (isNotification) response.id = null;
    }
    const encoded = this.#encode(response, env.method);
    this.#opts.metrics?.observe(this.#methods.has(env.method) ? env.method : 'unknown', started, encoded.code);
    return isNotification ? undefined : encoded.text;
  }

  /**
   * Encodes a reply (bigint, bytes: jsonReplacer). A result that cannot be encoded (bytes too long
   * for cb58, a cycle, a throwing getter) becomes that request's error reply instead.
   */
  #encode(response: Response, method: string): { text: string; code: number } {
    try {
      return { text: JSON.stringify(response, jsonReplacer), code: 'error' in response ? response.error.code : 0 };
    } catch (e) {
      const error = toRpcError(e, this.#opts.log, method);
      return { text: JSON.stringify(errorResponse(response.id, error.code, error.message, error.data)), code: error.code };
    }
  }
}

function idOf(req: unknown): string | number | null {
  const id = (req as { id?: unknown } | null)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

function checkEnvelope(req: unknown): string | undefined {
  if (req === null || typeof req !== 'object' || Array.isArray(req)) return 'request must be a JSON object';
  const r = req as Record<string, unknown>;
  if (r.jsonrpc !== '2.0') return 'jsonrpc must be 2.0';
  if (typeof r.method !== 'string' || r.method.length === 0) return 'method must be a non-empty string';
  if (r.method.length > 256) return 'method name is too long';
  if ('id' in r && r.id !== null && typeof r.id !== 'string' && typeof r.id !== 'number') return 'id must be a string, a number or null';
  if (typeof r.id === 'string' && r.id.length > 256) return 'id is too long';
  if ('params' in r && r.params !== null && typeof r.params !== 'object') return 'params must be an object or an array';
  for (const key of Object.keys(r)) {
    if (key !== 'jsonrpc' && key !== 'method' && key !== 'params' && key !== 'id') return `unknown member "${key.slice(0, 64)}"`;
  }
  return undefined;
}

function methodNotFoundMessage(method: string, known: Set<string>): string {
  const shown = method.length > 64 ? `${method.slice(0, 64)}…` : method;
  const [service, name] = method.split('.', 2);
  if (name && /^[A-Z]/.test(name) && known.has(`${service}.${name[0]!.toLowerCase()}${name.slice(1)}`)) {
    return `the method ${shown} does not exist: method must start with a non-uppercase letter`;
  }
  return `the method ${shown} does not exist on this endpoint`;
}
