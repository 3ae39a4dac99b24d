/**
 * The debug_ methods, as geth serves them: debug_traceTransaction, debug_traceCall,
 * debug_traceBlockByNumber, debug_traceBlockByHash, debug_traceBlock (a block's RLP) with geth's
 * trace config (`{tracer, tracerConfig, timeout, disableStack, disableStorage, enableMemory,
 * enableReturnData, limit}`; debug_traceCall's also `stateOverrides` and `blockOverrides`), and
 * debug_getRawTransaction, debug_getRawReceipts, debug_getRawBlock, debug_getRawHeader; and behind
 * the same switch trace_transaction and trace_block (rpc/trace.ts).
 *
 * Traces run in a lane of their own (bounded, fair between clients, like eth_call's), within the
 * request's `timeout` (geth's duration text, default 5 s) and an output bound: the smaller of
 * `maxTraceChars` (64 MiB) and what is left of the request's reply budget. A trace is JSON text
 * built by the chain (RawJson). Off (`enabled` false): each answers -32601 naming the node flag and
 * the chain config key.
 * Tests: rpc-debug.test.ts.
 */
import { EvmRpcError, type BlockOverrides, type BlockRef, type CallRequest, type EvmBackend, type StateOverrides, type TraceRequest } from '../evm-backend.js';
import { parseBlockOverrides } from './block-overrides.js';
import { parseCallRequest, parseStateOverrides } from './args.js';
import { optional, required, type MethodSpec } from './dispatch.js';
import { ArgumentError, hexData, kindOf, parseBlockNumber, parseBlockRef, parseData, parseHash } from './hex.js';
import { Lane, type LaneLimits } from './lanes.js';
import { RawJson, type CallContext } from './request.js';
import { parityTraceMethods } from './trace.js';

export interface TraceLimits {
  /** Traces running at once and waiting (debug_trace*). */
  readonly traceLane: LaneLimits;
  /** Most characters of one request's traces (past it: -32003 with the options that make it smaller). */
  readonly maxTraceChars: number;
}

export const DEFAULT_TRACE_LIMITS: TraceLimits = {
  traceLane: { concurrency: 2, perConnectionQueue: 16, queue: 256 },
  maxTraceChars: 64 * 1024 * 1024,
};

/** geth's default trace timeout. */
export const DEFAULT_TRACE_TIMEOUT_MS = 5_000;

/** The node flag and the chain config key that turn the debug API on (API.md "Tracing"). */
export const DEBUG_API_HINT = 'the debug API is off on this chain (start the node with --evm-debug-api, or list "debug-tracer" in the chain config key "eth-apis")';

/** A trace config as the front end checked it (the chain checks the tracer and its config). */
interface TraceConfig {
  readonly trace: Omit<TraceRequest, 'maxChars'>;
  readonly stateOverrides?: StateOverrides;
  readonly blockOverrides?: BlockOverrides;
}

const DURATION_UNITS: Readonly<Record<string, number>> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, 'μs': 1e-3, ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** Go's time.ParseDuration, in ms ("5s", "300ms", "1m30s", "1.5h"); a negative or malformed one is refused. */
export function parseDuration(v: unknown): number {
  if (typeof v !== 'string') throw new ArgumentError(`timeout: want a duration string such as "10s", got ${kindOf(v)}`);
  if (v.length > 64 || !/^((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$|^0$/.test(v)) {
    throw new ArgumentError(`timeout: time: invalid duration ${JSON.stringify(v.slice(0, 64))}`);
  }
  if (v === '0') return 0;
  let ms = 0;
  for (const m of v.matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g)) ms += Number(m[1]) * DURATION_UNITS[m[2]!]!;
  return Math.ceil(ms);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** geth's TraceConfig (and TraceCallConfig with `forCall`): the shapes of its fields checked. */
function traceConfig(forCall: boolean) {
  return (v: unknown): TraceConfig => {
    if (!isObject(v)) throw new ArgumentError(`cannot unmarshal ${kindOf(v)} into trace config`);
    const tracer = v.tracer;
    if (tracer !== undefined && tracer !== null && typeof tracer !== 'string') throw new ArgumentError(`tracer: want a string, got ${kindOf(tracer)}`);
    const cfg = v.tracerConfig;
    if (cfg !== undefined && cfg !== null && !isObject(cfg)) throw new ArgumentError(`tracerConfig: want an object, got ${kindOf(cfg)}`);
    const timeoutMs = v.timeout === undefined || v.timeout === null ? DEFAULT_TRACE_TIMEOUT_MS : parseDuration(v.timeout);
    if (v.reexec !== undefined && v.reexec !== null && (typeof v.reexec !== 'number' || !Number.isSafeInteger(v.reexec) || v.reexec < 0)) {
      throw new ArgumentError(`reexec: want a non-negative integer, got ${kindOf(v.reexec)}`);
    }
    const out: { trace: TraceConfig['trace']; stateOverrides?: StateOverrides; blockOverrides?: BlockOverrides } = {
      trace: { ...(typeof tracer === 'string' && tracer !== '' ? { tracer } : {}), ...(isObject(cfg) ? { tracerConfig: cfg } : {}), logger: v, timeoutMs },
    };
    if (forCall) {
      if (v.stateOverrides !== undefined && v.stateOverrides !== null) out.stateOverrides = withField('stateOverrides', () => parseStateOverrides(v.stateOverrides));
      if (v.blockOverrides !== undefined && v.blockOverrides !== null) out.blockOverrides = withField('blockOverrides', () => parseBlockOverrides(v.blockOverrides));
    }
    return out;
  };
}

function withField<T>(field: string, parse: () => T): T {
  try {
    return parse();
  } catch (e) {
    if (e instanceof ArgumentError) throw new ArgumentError(`${field}: ${e.message}`);
    throw e;
  }
}

const NO_CONFIG: TraceConfig = { trace: { logger: {}, timeoutMs: DEFAULT_TRACE_TIMEOUT_MS } };

export interface DebugMethodsOptions {
  readonly enabled: boolean;
  readonly limits: TraceLimits;
}

export function debugMethods(backend: EvmBackend, opts: DebugMethodsOptions): { methods: Map<string, MethodSpec>; lane: Lane } {
  const m = new Map<string, MethodSpec>();
  const lane = new Lane('debug_trace', opts.limits.traceLane);
  const def = (name: string, args: MethodSpec['args'], run: MethodSpec['run']): void => {
    if (opts.enabled) m.set(name, { args, run });
    else
      m.set(name, {
        run: () => {
          throw new EvmRpcError(-32601, `the method ${name} does not exist/is not available: ${DEBUG_API_HINT}`);
        },
      });
  };
  const request = (c: TraceConfig | undefined, ctx: CallContext): TraceRequest => ({ ...(c ?? NO_CONFIG).trace, maxChars: Math.max(0, Math.min(opts.limits.maxTraceChars, ctx.budget.remaining)) });
  const inLane = <T>(ctx: CallContext, fn: () => Promise<T>): Promise<T> => lane.run(ctx.client, ctx.signal, fn);

  def('debug_traceTransaction', [required(parseHash), optional(traceConfig(false))], async (a, ctx) => {
    const json = await inLane(ctx, () => backend.traceTransaction(a[0] as Uint8Array, request(a[1] as TraceConfig | undefined, ctx), ctx.signal));
    return new RawJson(json);
  });
  def('debug_traceCall', [required(parseCallRequest), optional(parseBlockRef), optional(traceConfig(true))], async (a, ctx) => {
    const c = a[2] as TraceConfig | undefined;
    const ref = (a[1] as BlockRef | undefined) ?? 'latest';
    const o = c?.blockOverrides;
    if (o?.beaconRoot !== undefined) throw new EvmRpcError(-32000, 'block override "beaconRoot" is not supported for this RPC method');
    if (o?.withdrawals !== undefined) throw new EvmRpcError(-32000, 'block override "withdrawals" is not supported for this RPC method');
    const json = await inLane(ctx, () => backend.traceCall(a[0] as CallRequest, ref, request(c, ctx), c?.stateOverrides, o, ctx.signal));
    return new RawJson(json);
  });
  const blockTraces = async (ref: Parameters<EvmBackend['traceBlock']>[0], c: TraceConfig | undefined, ctx: CallContext): Promise<RawJson> => {
    const traces = await inLane(ctx, () => backend.traceBlock(ref, request(c, ctx), ctx.signal));
    return new RawJson('[' + traces.map((t) => `{"txHash":"${hexData(t.txHash)}","result":${t.json}}`).join(',') + ']');
  };
  def('debug_traceBlockByNumber', [required(parseBlockNumber), optional(traceConfig(false))], (a, ctx) => blockTraces(a[0] as BlockRef, a[1] as TraceConfig | undefined, ctx));
  def('debug_traceBlockByHash', [required(parseHash), optional(traceConfig(false))], (a, ctx) => blockTraces({ hash: a[0] as Uint8Array }, a[1] as TraceConfig | undefined, ctx));
  def('debug_traceBlock', [required(parseData), optional(traceConfig(false))], (a, ctx) => blockTraces({ rlp: a[0] as Uint8Array }, a[1] as TraceConfig | undefined, ctx));

  // trace_transaction and trace_block: flatCallTracer in the same lane and bounds (rpc/trace.ts).
  const traceRunner = { inLane, request: (choice: Pick<TraceRequest, 'tracer' | 'tracerConfig'>, ctx: CallContext) => request({ trace: { ...choice, logger: {}, timeoutMs: DEFAULT_TRACE_TIMEOUT_MS } }, ctx) };
  for (const [name, spec] of parityTraceMethods(backend, traceRunner)) def(name, spec.args, spec.run);

  def('debug_getRawTransaction', [required(parseHash)], async (a) => {
    const raw = await backend.rawTransaction(a[0] as Uint8Array);
    return raw ? hexData(raw) : null;
  });
  const notFound = (what: string, ref: BlockRef): EvmRpcError =>
    new EvmRpcError(-32000, typeof ref === 'object' ? `${what} 0x${Buffer.from(ref.hash).toString('hex')} not found` : `${what} #${String(ref)} not found`);
  def('debug_getRawHeader', [required(parseBlockRef)], async (a) => {
    const raw = await backend.rawHeader(a[0] as BlockRef);
    if (!raw) throw notFound('header', a[0] as BlockRef);
    return hexData(raw);
  });
  def('debug_getRawBlock', [required(parseBlockRef)], async (a) => {
    const raw = await backend.rawBlock(a[0] as BlockRef);
    if (!raw) throw notFound('block', a[0] as BlockRef);
    return hexData(raw);
  });
  def('debug_getRawReceipts', [required(parseBlockRef)], async (a) => {
    const raws = await backend.rawReceipts(a[0] as BlockRef);
    if (!raws) throw notFound('block', a[0] as BlockRef);
    return raws.map(hexData);
  });
  return { methods: m, lane };
}
