/**
 * JSON-RPC 2.0 for the Ethereum front end (HTTP bodies and WebSocket messages alike): envelope
 * checks, batches with geth's limits, positional argument parsing with geth's texts ("invalid
 * argument 0: ...", "missing value for required argument 1", "too many arguments, want at most 2"),
 * and error mapping. A reply is written once, as text: `{"jsonrpc":"2.0","id":..,"result":..}`.
 *
 * Why a JSON-RPC stack of its own (this file, http.ts, args.ts, hex.ts) beside the node's (core's
 * api/ on jayson, methods declared with the sdk's `defineService` and `p.*` parsers): Ethereum's
 * params are positional arrays, and wallets and libraries match geth's texts that name an argument
 * by its position, while the sdk's services take one object of named params (`defineService`
 * refuses any other kind), and a plugin imports only the sdk, never core. The node's api/ still
 * checks Host and Origin and owns the connections; this stack gets the request from the route
 * `/ext/bc/<chain>/rpc` (or a WebSocket message) and does the rest: envelopes, batches, positional
 * arguments, geth's hex formats (hex.ts, args.ts), its own bounds (API.md "Bounds"). What it needs
 * of the shared code it takes from the sdk (hex, error brands, the HTTP and WebSocket handler
 * types); json-depth.ts is the one piece doubled with core (api/json-limits.ts), until that check
 * is in the sdk.
 *
 * Bounds (tests: rpc-limits.test.ts):
 * - a text nested deeper than `maxJsonDepth` is refused before it is parsed (json-depth.ts);
 * - a request, or a whole batch, has one deadline (`callTimeoutMs`) and one reply budget
 *   (`maxResponseChars`): a batch's items run one after another (so at most one item's work and
 *   memory at a time), and once the deadline or the budget is spent the remaining items are not
 *   run, each answered -32002 "request timed out" or -32003 "response too large" (geth's texts);
 * - the replies being built over all requests take from one pool (`maxReplyCharsInFlight`): past
 *   it -32005, and the rest of the batch is not run;
 * - every method gets a signal (request.ts Cancel) that aborts at the deadline and when the client
 *   goes away (HTTP connection closed, WebSocket closed): the work stops, nothing more of the batch
 *   runs, no reply is written;
 * - a batch gives the event loop a turn every SLICE_MS of its work.
 */
import { hasErrorCode, isInvalidParamsError, isNodeError, type Logger } from '@cornice/sdk';
import { EvmRpcError } from '../evm-backend.js';
import { ArgumentError, hexData, quantity } from './hex.js';
import { nestedDeeperThan } from './json-depth.js';
import { Cancel, LOCAL_CLIENT, poolFull, RawJson, ReplyBudget, ReplyPool, Slicer, type CallContext, type RpcClient, type Spent } from './request.js';

/** One positional argument: its parser (throws ArgumentError) and whether it may be absent or null. */
export interface Arg {
  readonly parse: (v: unknown) => unknown;
  readonly optional?: boolean;
}

export const required = (parse: (v: unknown) => unknown): Arg => ({ parse });
export const optional = (parse: (v: unknown) => unknown): Arg => ({ parse, optional: true });

/**
 * A method: `args` parse the positional params (absent ones are undefined); without `args` the method
 * receives the params as sent (extensions). `ctx` says who asked, when to stop and how much reply is
 * left (request.ts); a result may be a RawJson (JSON text already).
 */
export interface MethodSpec {
  readonly args?: readonly Arg[];
  run(args: readonly unknown[], ctx: CallContext): unknown;
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
  /** Longest a request (a whole batch) may run before what is left gets -32002 "request timed out". */
  readonly callTimeoutMs: number;
  /** Deepest nesting of arrays and objects in a request's JSON (json-depth.ts). */
  readonly maxJsonDepth: number;
  /** Characters of replies being built over all requests at once (request.ts ReplyPool). */
  readonly maxReplyCharsInFlight: number;
}

export const DEFAULT_DISPATCH_LIMITS: DispatchLimits = {
  maxBatchItems: 1_000,
  maxResponseChars: 25_000_000,
  callTimeoutMs: 30_000,
  maxJsonDepth: 32,
  maxReplyCharsInFlight: 100_000_000,
};

/** Where a request comes from: who, what tells when it goes away, its own methods (WebSocket). */
export interface Origin {
  readonly client: RpcClient;
  /** Called off when the client went away (connection closed): nothing more is run for it. */
  readonly gone?: Cancel;
  /** Per-connection methods (eth_subscribe over WebSocket). */
  readonly local?: MethodTable;
}

/**
 * A batch's reply: its items' replies, written as one JSON array. The HTTP front end writes them
 * one by one with backpressure (http.ts), never as one string: turning a reply of many MB into
 * bytes at once holds the event loop (test: rpc-limits.test.ts "a large batch reply is streamed").
 */
export class BatchReply {
  constructor(readonly items: readonly string[]) {}

  /** The whole array as one text (WebSocket messages). */
  text(): string {
    return '[' + this.items.join(',') + ']';
  }
}

/** What a request gets back: one reply text, or a batch's. */
export type Reply = string | BatchReply;

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

/** Whether `msg` is a notification (a request object without an id: no reply is owed). */
function isNotification(msg: unknown): boolean {
  return msg !== null && typeof msg === 'object' && !Array.isArray(msg) && (msg as Record<string, unknown>).id === undefined && typeof (msg as Record<string, unknown>).method === 'string';
}

const TIMED_OUT = (): EvmRpcError => new EvmRpcError(-32002, 'request timed out');
const GONE = (): EvmRpcError => new EvmRpcError(-32002, 'request cancelled: the client went away');

/**
 * One request or batch: its deadline, its reply budget and what calls its methods off, at the
 * deadline or when the client goes away. Cheap when nothing goes wrong: a timer and a listener in a
 * Set.
 */
class Scope {
  readonly budget: ReplyBudget;
  readonly cancel = new Cancel();
  readonly #timer: NodeJS.Timeout;
  readonly #unlink: (() => void) | undefined;

  constructor(
    readonly origin: Origin,
    limits: DispatchLimits,
    pool: ReplyPool,
  ) {
    this.budget = new ReplyBudget(limits.maxResponseChars, pool);
    this.#timer = setTimeout(() => this.cancel.abort(TIMED_OUT()), limits.callTimeoutMs);
    // The deadline alone never keeps the process alive.
    this.#timer.unref();
    this.#unlink = origin.gone?.onAbort(() => this.cancel.abort(GONE()));
  }

  /** The client went away: nobody reads a reply. */
  get gone(): boolean {
    return this.origin.gone?.aborted === true;
  }

  context(): CallContext {
    return { client: this.origin.client, signal: this.cancel, budget: this.budget };
  }

  end(): void {
    clearTimeout(this.#timer);
    this.#unlink?.();
    this.budget.release();
  }
}

export class RpcDispatcher {
  /** The replies being built over all requests. */
  readonly #pool: ReplyPool;

  constructor(
    private readonly methods: MethodTable,
    private readonly limits: DispatchLimits,
    private readonly log: Logger,
  ) {
    this.#pool = new ReplyPool(limits.maxReplyCharsInFlight);
  }

  /**
   * One HTTP body or WebSocket message: the reply text, or undefined when none is owed (notifications
   * only, or the client went away). Never throws.
   */
  async handle(text: string, origin: Origin = { client: LOCAL_CLIENT }): Promise<Reply | undefined> {
    if (nestedDeeperThan(text, this.limits.maxJsonDepth)) {
      return reply('null', errorPiece(RpcCode.InvalidRequest, `invalid request: JSON nested deeper than ${this.limits.maxJsonDepth} levels`));
    }
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch {
      return reply('null', errorPiece(RpcCode.Parse, 'parse error'));
    }
    const scope = new Scope(origin, this.limits, this.#pool);
    try {
      if (Array.isArray(msg)) return await this.#batch(msg, scope);
      let out = await this.#one(msg, scope);
      if (scope.gone) return undefined;
      if (out !== undefined && !scope.budget.take(out.length)) out = this.#spentReply(msg, scope.budget.spent!);
      return out;
    } finally {
      scope.end();
    }
  }

  async #batch(msgs: unknown[], scope: Scope): Promise<Reply | undefined> {
    if (msgs.length === 0) return reply('null', errorPiece(RpcCode.InvalidRequest, 'empty batch'));
    if (msgs.length > this.limits.maxBatchItems) return new BatchReply([reply('null', errorPiece(RpcCode.InvalidRequest, 'batch too large'))]);
    const slicer = new Slicer();
    const budget = scope.budget;
    // The brackets and the commas between replies.
    budget.charge(2);
    const replies: string[] = [];
    for (const m of msgs) {
      if (scope.gone) return undefined;
      let r: string | undefined;
      // Past the deadline or the budget the rest is not run (as geth): each gets the error, notifications nothing.
      if (scope.cancel.aborted) r = isNotification(m) ? undefined : this.#errorReply(m, RpcCode.Timeout, 'request timed out');
      else if (budget.spent) r = isNotification(m) ? undefined : this.#spentReply(m, budget.spent);
      else {
        r = await this.#one(m, scope);
        // A reply that does not fit spends the budget: the rest is not run (geth stops there too).
        if (r !== undefined && !budget.take(r.length)) r = this.#spentReply(m, budget.spent!);
      }
      if (r !== undefined) {
        budget.charge(1);
        replies.push(r);
      }
      await slicer.pause();
    }
    if (scope.gone) return undefined;
    return replies.length === 0 ? undefined : new BatchReply(replies);
  }

  /** The error of a request whose reply the spent budget has no room for. */
  #spentReply(msg: unknown, why: Spent): string {
    if (why === 'size') return this.#tooLarge(msg);
    return this.#errorReply(msg, -32005, poolFull(this.#pool.size).message);
  }

  #errorReply(msg: unknown, code: number, message: string): string {
    const idText = (msg !== null && typeof msg === 'object' && !Array.isArray(msg) && idTextOf(msg as Record<string, unknown>)) || 'null';
    return reply(idText, errorPiece(code, message));
  }

  #tooLarge(msg: unknown): string {
    return this.#errorReply(msg, RpcCode.ResponseTooLarge, 'response too large');
  }

  /** One request object: its reply text, or undefined for a notification. */
  async #one(msg: unknown, scope: Scope): Promise<string | undefined> {
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
    const piece = await this.#call(method, m.params, scope);
    return m.id === undefined ? undefined : reply(idText, piece);
  }

  /** Runs one method within `scope`; `"result":..` or `"error":..`. */
  async #call(method: string, params: unknown, scope: Scope): Promise<string> {
    const spec = scope.origin.local?.get(method) ?? this.methods.get(method);
    if (spec === undefined) return errorPiece(RpcCode.MethodNotFound, `the method ${shortName(method)} does not exist/is not available`);
    let raw: readonly unknown[];
    if (params === undefined || params === null) raw = NO_ARGS;
    else if (Array.isArray(params)) raw = params;
    else return errorPiece(RpcCode.InvalidParams, 'non-array args');
    try {
      const ctx = scope.context();
      let result = spec.run(spec.args ? parseArgs(spec.args, raw) : raw, ctx);
      if (result instanceof Promise) result = await bounded(result, ctx.signal);
      if (result instanceof RawJson) return '"result":' + result.text;
      return '"result":' + (result === undefined ? 'null' : JSON.stringify(result));
    } catch (e) {
      return this.#errorOf(e, method);
    }
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

/** `p`, or the reason `cancel` is called off with when that comes first (the method was told to stop by the same). */
function bounded(p: Promise<unknown>, cancel: Cancel): Promise<unknown> {
  if (cancel.aborted) {
    p.catch(() => undefined);
    return Promise.reject(cancel.reason);
  }
  return new Promise((resolve, reject) => {
    const stop = cancel.onAbort(() => reject(cancel.reason));
    p.then(
      (v) => {
        stop();
        resolve(v);
      },
      (e: unknown) => {
        stop();
        reject(e);
      },
    );
  });
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
