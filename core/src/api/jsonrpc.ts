/**
 * The JSON-RPC 2.0 layer of one endpoint: envelope checks, batches, dispatch through jayson's
 * `Server.call`, and encoding of results (jsonReplacer: bigint -> decimal string, bytes -> cb58); ids
 * are echoed exactly as written (raw-ids.ts). HTTP concerns live in server.ts.
 */
import jayson from 'jayson/promise/index.js';
import { jsonReplacer, type BoundService, type Logger } from '@cornice/sdk';
import { RpcCode, toRpcError, type RpcErrorObject } from './errors.js';
import { DEFAULT_MAX_JSON_DEPTH, parseJsonBounded } from './json-limits.js';
import { rawIds } from './raw-ids.js';
import type { ApiMetrics } from '../metrics/metrics.js';

interface Envelope {
  jsonrpc: '2.0';
  method: string;
  params?: unknown;
  id?: string | number | null;
}

/** A reply without its id: the id is written from the request's source text (see encodeReply). */
type Outcome = { result: unknown } | { error: RpcErrorObject };

function failure(code: number, message: string, data?: unknown): Outcome {
  return { error: data === undefined ? { code, message } : { code, message, data } };
}

/** Longest id echoed (string or number source text); longer ids are refused. */
const MAX_ID_CHARS = 256;

export interface JsonRpcOptions {
  maxBatchSize: number;
  /** Deepest nesting of a body (default DEFAULT_MAX_JSON_DEPTH); deeper gets -32700 unparsed. */
  maxJsonDepth?: number;
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
      parsed = parseJsonBounded(body, this.#opts.maxJsonDepth ?? DEFAULT_MAX_JSON_DEPTH);
    } catch (e) {
      return encodeReply('null', failure(RpcCode.ParseError, (e as Error).message));
    }
    const ids = rawIds(body);
    if (Array.isArray(parsed)) {
      if (parsed.length === 0) return encodeReply('null', failure(RpcCode.InvalidRequest, 'empty batch'));
      if (parsed.length > this.#opts.maxBatchSize) {
        return encodeReply(
          'null',
          failure(RpcCode.InvalidRequest, `batch of ${parsed.length} requests exceeds the limit of ${this.#opts.maxBatchSize}`),
        );
      }
      const replies = (await Promise.all(parsed.map((r, i) => this.#one(r, ids[i])))).filter((r) => r !== undefined);
      return replies.length ? `[${replies.join(',')}]` : undefined;
    }
    return this.#one(parsed, ids[0]);
  }

  /** One request; `rawId` is the source text of its id. Returns the reply text (none for notifications). */
  async #one(req: unknown, rawId: string | undefined): Promise<string | undefined> {
    const id = echoedId(req, rawId);
    const invalid = checkEnvelope(req, rawId);
    if (invalid) return encodeReply(id, failure(RpcCode.InvalidRequest, invalid));
    const env = req as Envelope;
    const isNotification = !('id' in env);
    const started = process.hrtime.bigint();
    let outcome: Outcome;
    if (!this.#methods.has(env.method)) {
      outcome = failure(RpcCode.MethodNotFound, methodNotFoundMessage(env.method, this.#methods));
    } else {
      // jayson treats a request without id as a notification; we want every outcome (metrics), so
      // it always gets a stand-in id; the reply carries the request's id as written (encodeReply).
      const call = { jsonrpc: '2.0', method: env.method, params: env.params ?? {}, id: 0 };
      const response = await new Promise<{ result?: unknown; error?: RpcErrorObject }>((resolve) => {
        this.#server.call(call, (err: unknown, res: unknown) => resolve((err ?? res) as { result?: unknown; error?: RpcErrorObject }));
      });
      outcome = response.error ? { error: response.error } : { result: response.result ?? null };
    }
    const reply = this.#encode(id, outcome, env.method);
    this.#opts.metrics?.observe(this.#methods.has(env.method) ? env.method : 'unknown', started, reply.code);
    return isNotification ? undefined : reply.text;
  }

  /**
   * Encodes a reply. A result that cannot be encoded (bytes too long for cb58, a cycle, a throwing
   * getter) becomes that request's error reply instead.
   */
  #encode(id: string, outcome: Outcome, method: string): { text: string; code: number } {
    try {
      return { text: encodeReply(id, outcome), code: 'error' in outcome ? outcome.error.code : 0 };
    } catch (e) {
      const error = toRpcError(e, this.#opts.log, method);
      return { text: encodeReply(id, { error }), code: error.code };
    }
  }
}

/** The reply text: the id as given (JSON text), then the result or error. */
function encodeReply(idText: string, outcome: Outcome): string {
  return `{"jsonrpc":"2.0","id":${idText},${JSON.stringify(outcome, jsonReplacer).slice(1)}`;
}

/**
 * The id to echo, as JSON text: the request's id exactly as written when it is a string or number
 * of at most MAX_ID_CHARS characters, else null.
 */
function echoedId(req: unknown, rawId: string | undefined): string {
  const id = (req as { id?: unknown } | null)?.id;
  if (typeof id !== 'string' && typeof id !== 'number') return 'null';
  const text = rawId ?? JSON.stringify(id);
  return text.length <= MAX_ID_CHARS ? text : 'null';
}

function checkEnvelope(req: unknown, rawId: string | undefined): string | undefined {
  if (req === null || typeof req !== 'object' || Array.isArray(req)) return 'request must be a JSON object';
  const r = req as Record<string, unknown>;
  if (r.jsonrpc !== '2.0') return 'jsonrpc must be 2.0';
  if (typeof r.method !== 'string' || r.method.length === 0) return 'method must be a non-empty string';
  if (r.method.length > 256) return 'method name is too long';
  if ('id' in r && r.id !== null && typeof r.id !== 'string' && typeof r.id !== 'number') return 'id must be a string, a number or null';
  if ((typeof r.id === 'string' && r.id.length > MAX_ID_CHARS) || (rawId !== undefined && rawId.length > MAX_ID_CHARS)) return 'id is too long';
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
