/**
 * Traces every tx of the sequence (src/trace-sequence.ts) with geth's tracers on two targets and
 * compares the answers field by field. A mismatch names the tx, the tracer and the JSON path of the
 * first differing fields (with the opcode of a struct log step), e.g.
 * `[16] Top.run: … / callTracer{withLog} $.calls[0].calls[0].error: "execution reverted" != "Reverted"`.
 *
 * Only the differences in ALLOWED_DIFFERENCES are removed before comparing (from both sides, so
 * the list cannot hide a difference in anything else); each says why the two chains may differ.
 */
import type { RpcReply } from '@cornice/core/testing';
import type { Rpc, SequenceResult } from './trace-sequence.js';

/** One debug_traceTransaction config of the comparison, named as the reports name it. */
export interface TraceVariant {
  readonly name: string;
  readonly config: Readonly<Record<string, unknown>>;
}

export const TRACE_VARIANTS: readonly TraceVariant[] = [
  { name: 'structLogger', config: {} },
  { name: 'structLogger{enableMemory,enableReturnData}', config: { enableMemory: true, enableReturnData: true } },
  { name: 'structLogger{disableStack}', config: { disableStack: true } },
  { name: 'callTracer', config: { tracer: 'callTracer' } },
  { name: 'callTracer{withLog}', config: { tracer: 'callTracer', tracerConfig: { withLog: true } } },
  { name: 'callTracer{onlyTopCall}', config: { tracer: 'callTracer', tracerConfig: { onlyTopCall: true } } },
  { name: 'prestateTracer', config: { tracer: 'prestateTracer' } },
  { name: 'prestateTracer{diffMode}', config: { tracer: 'prestateTracer', tracerConfig: { diffMode: true } } },
  { name: '4byteTracer', config: { tracer: '4byteTracer' } },
];

/** What a trace is compared in: the block's coinbase (from eth_getBlockByNumber) on each side. */
export interface TraceContext {
  readonly coinbase: string;
}

/** A difference the comparison removes from both sides, with why two honest chains differ there. */
export interface AllowedDifference {
  readonly name: string;
  readonly why: string;
  /** The variants it applies to (by TraceVariant.name). */
  readonly variants: RegExp;
  /** Returns the trace without the allowed field (never mutates `trace`). */
  normalise(trace: any, ctx: TraceContext): any;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Removes `field` of the account `address` (any hex case) of a prestate map, keeping the entry. */
function withoutAccountField(accounts: any, address: string, field: string): any {
  if (accounts === null || typeof accounts !== 'object') return accounts;
  const out: Record<string, unknown> = {};
  for (const [addr, account] of Object.entries<any>(accounts)) {
    if (addr.toLowerCase() === address.toLowerCase() && account && typeof account === 'object') {
      const { [field]: _dropped, ...rest } = account;
      out[addr] = rest;
    } else out[addr] = account;
  }
  return out;
}

const strip0x = (v: unknown): unknown => (typeof v === 'string' && v.startsWith('0x') ? v.slice(2) : v);

/** anvil's struct-log step errors in Rust's debug form, as geth words them (the ones the sequence hits). */
const ANVIL_STEP_ERRORS: Readonly<Record<string, string>> = { 'Some(OutOfGas)': 'out of gas' };

/** One struct log step in geth's encoding (see 'struct logger encoding' below). */
function gethStep(step: any): any {
  if (!isObject(step)) return step;
  const out: Record<string, unknown> = { ...step };
  if (Array.isArray(step.memory)) out.memory = step.memory.map(strip0x);
  if (isObject(step.storage)) out.storage = Object.fromEntries(Object.entries(step.storage).map(([k, v]) => [strip0x(k), strip0x(v)]));
  if (step.refund === 0) delete out.refund;
  if (step.returnData === '0x' || step.returnData === '') delete out.returnData;
  if (typeof step.error === 'string' && ANVIL_STEP_ERRORS[step.error]) out.error = ANVIL_STEP_ERRORS[step.error];
  return out;
}

/**
 * The allowed differences: keep this list minimal, each with its reason. The anvil-vs-anvil test
 * (e2e/evm-trace-anvil.test.ts) passes with or without them; they exist for the node, which answers
 * as geth where anvil departs from geth.
 *
 * - coinbase balance: both chains have the same coinbase (anvil's is set to the C-Chain's) and the
 *   same tx price, but the tip the coinbase receives is price - base fee, and the base fee is each
 *   chain's own (the C-Chain's floor is 25 gwei, anvil's EIP-1559 base fee falls block by block),
 *   so the coinbase's pre- and post-balances differ. Its nonce, code and storage are compared.
 * - struct logger encoding: anvil encodes `returnValue`, memory words and storage slots with a 0x
 *   prefix, writes `refund: 0` and `returnData: "0x"` on every step, and words a failed step's
 *   error in Rust's debug form (`Some(OutOfGas)`); geth writes them bare, omits a zero refund and
 *   empty return data (omitempty), and says `out of gas`. Both sides are brought to geth's form, so
 *   the values themselves are still compared.
 */
export const ALLOWED_DIFFERENCES: readonly AllowedDifference[] = [
  {
    name: 'coinbase balance',
    why: "the coinbase's tip is price - base fee, and each chain has its own base fee",
    variants: /^prestateTracer/,
    normalise: (trace, ctx) => {
      if (trace === null || typeof trace !== 'object') return trace;
      if ('pre' in trace && 'post' in trace) return { ...trace, pre: withoutAccountField(trace.pre, ctx.coinbase, 'balance'), post: withoutAccountField(trace.post, ctx.coinbase, 'balance') };
      return withoutAccountField(trace, ctx.coinbase, 'balance');
    },
  },
  {
    name: 'struct logger encoding',
    why: "anvil's 0x prefixes, zero refunds, empty return data and Rust-worded step errors where geth writes bare hex, omits the empty fields and says `out of gas`",
    variants: /^structLogger/,
    normalise: (trace) => {
      if (!isObject(trace)) return trace;
      return { ...trace, returnValue: strip0x(trace.returnValue), ...(Array.isArray(trace.structLogs) ? { structLogs: trace.structLogs.map(gethStep) } : {}) };
    },
  },
];

/** A trace as answered: its result, or the JSON-RPC error. */
export type TraceAnswer = { result: unknown } | { error: NonNullable<RpcReply['error']> };

export interface TracedTx {
  readonly label: string;
  readonly hash: string;
  readonly ctx: TraceContext;
  /** By TraceVariant.name. */
  readonly answers: Readonly<Record<string, TraceAnswer>>;
}

/** A target that answers -32601 to debug_traceTransaction: tracing is not served there. */
export class TracingNotServedError extends Error {
  constructor(target: string, error: NonNullable<RpcReply['error']>) {
    super(`${target} does not serve tracing: debug_traceTransaction answered -32601 (${error.message}); the comparison needs issue 35's debug_trace* methods`);
  }
}

/** Traces every tx of the sequence with every variant on `rpc` (one request at a time). */
export async function traceSequence(rpc: Rpc, seq: SequenceResult, target: string, variants: readonly TraceVariant[] = TRACE_VARIANTS): Promise<TracedTx[]> {
  const out: TracedTx[] = [];
  const miners = new Map<string, string>();
  for (const tx of seq.txs) {
    let coinbase = miners.get(tx.blockNumber);
    if (coinbase === undefined) {
      const block = await rpc.call('eth_getBlockByNumber', [tx.blockNumber, false]);
      if (block.error || !block.result) throw new Error(`${target}: eth_getBlockByNumber ${tx.blockNumber}: ${JSON.stringify(block.error ?? null)}`);
      coinbase = String(block.result.miner);
      miners.set(tx.blockNumber, coinbase);
    }
    const answers: Record<string, TraceAnswer> = {};
    for (const v of variants) {
      const r = await rpc.call('debug_traceTransaction', [tx.hash, v.config]);
      if (r.error?.code === -32601) throw new TracingNotServedError(target, r.error);
      answers[v.name] = r.error ? { error: r.error } : { result: r.result };
    }
    out.push({ label: tx.label, hash: tx.hash, ctx: { coinbase }, answers });
  }
  return out;
}

export interface Mismatch {
  /** `[index] label`. */
  readonly tx: string;
  readonly variant: string;
  /** JSON path from the trace's root, `$` for the whole answer. */
  readonly path: string;
  readonly left: unknown;
  readonly right: unknown;
}

/** Most differences recorded per trace: past the first few, the rest follow from them. */
const MAX_PER_TRACE = 5;

/** A path step into an array: a struct log step carries its pc and opcode to find it by. */
function indexStep(parentKey: string, i: number, item: unknown): string {
  if (parentKey === 'structLogs' && isObject(item)) return `[${i}](pc ${String(item.pc)} ${String(item.op)})`;
  return `[${i}]`;
}

/** Records the differences between `a` and `b` (JSON values), depth first, at most `max`. */
export function diffJson(a: unknown, b: unknown, path = '$', out: Array<{ path: string; left: unknown; right: unknown }> = [], max = MAX_PER_TRACE, key = ''): typeof out {
  if (out.length >= max) return out;
  if (Array.isArray(a) && Array.isArray(b)) {
    const n = Math.min(a.length, b.length);
    for (let i = 0; i < n && out.length < max; i++) diffJson(a[i], b[i], `${path}${indexStep(key, i, a[i])}`, out, max);
    if (a.length !== b.length && out.length < max) out.push({ path: `${path}.length`, left: a.length, right: b.length });
    return out;
  }
  if (isObject(a) && isObject(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    for (const k of keys) {
      if (out.length >= max) break;
      const p = /^[A-Za-z_$][\w$]*$/.test(k) ? `${path}.${k}` : `${path}[${JSON.stringify(k)}]`;
      if (!(k in a)) out.push({ path: p, left: '<absent>', right: b[k] });
      else if (!(k in b)) out.push({ path: p, left: a[k], right: '<absent>' });
      else diffJson(a[k], b[k], p, out, max, k);
    }
    return out;
  }
  if (a !== b) out.push({ path, left: a, right: b });
  return out;
}

/** Applies the allowed differences that concern `variant` to one answer. */
export function normaliseAnswer(answer: TraceAnswer, variant: string, ctx: TraceContext, allowed: readonly AllowedDifference[] = ALLOWED_DIFFERENCES): unknown {
  if ('error' in answer) return { error: answer.error };
  let r = answer.result;
  for (const d of allowed) if (d.variants.test(variant)) r = d.normalise(r, ctx);
  return r;
}

/** Compares two targets' traces of the same sequence; an empty list means they are equal. */
export function compareTraces(left: readonly TracedTx[], right: readonly TracedTx[], allowed: readonly AllowedDifference[] = ALLOWED_DIFFERENCES): Mismatch[] {
  const out: Mismatch[] = [];
  if (left.length !== right.length) return [{ tx: '-', variant: '-', path: 'txs.length', left: left.length, right: right.length }];
  left.forEach((l, i) => {
    const r = right[i]!;
    const tx = `[${i}] ${l.label}`;
    if (l.hash !== r.hash) out.push({ tx, variant: '-', path: 'hash', left: l.hash, right: r.hash });
    for (const variant of new Set([...Object.keys(l.answers), ...Object.keys(r.answers)])) {
      const la = l.answers[variant];
      const ra = r.answers[variant];
      if (!la || !ra) {
        out.push({ tx, variant, path: '$', left: la ? 'traced' : '<not traced>', right: ra ? 'traced' : '<not traced>' });
        continue;
      }
      for (const d of diffJson(normaliseAnswer(la, variant, l.ctx, allowed), normaliseAnswer(ra, variant, r.ctx, allowed))) out.push({ tx, variant, ...d });
    }
  });
  return out;
}

const show = (v: unknown): string => {
  const s = JSON.stringify(v);
  return s === undefined ? String(v) : s.length > 200 ? `${s.slice(0, 200)}…` : s;
};

/** The mismatches as lines for an assertion message: at most `max`, then a count of the rest. */
export function formatMismatches(ms: readonly Mismatch[], leftName: string, rightName: string, max = 40): string {
  const lines = ms.slice(0, max).map((m) => `${m.tx} / ${m.variant} ${m.path}: ${leftName} ${show(m.left)} != ${rightName} ${show(m.right)}`);
  if (ms.length > max) lines.push(`… and ${ms.length - max} more`);
  return lines.join('\n');
}
