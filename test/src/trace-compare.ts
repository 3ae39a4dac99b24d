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
import type { Rpc } from './evm.js';
import type { SequenceResult } from './trace-sequence.js';

/** One debug_traceTransaction config of the comparison, named as the reports name it. */
export interface TraceVariant {
  readonly name: string;
  readonly config: Readonly<Record<string, unknown>>;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

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

/**
 * What a trace is compared in, on each side: the block's coinbase (from eth_getBlockByNumber), and
 * what the side's own callTracer answer for the tx shows (the accounts the tx created, its calls to
 * precompiles), for the allowances that need them.
 */
export interface TraceContext {
  readonly coinbase: string;
  /** Addresses (lower case) of the contracts the tx created (its CREATE/CREATE2 frames and a deploy's top frame). */
  readonly created?: readonly string[];
  /** 4byteTracer keys (`0x<selector>-<size>`) of the tx's calls to precompiles, with their counts. */
  readonly precompileCalls?: Readonly<Record<string, number>>;
}

/** The Ethereum precompiles of cancun, the fork both chains run: 0x01 to 0x0a. */
const isPrecompile = (address: unknown): boolean => typeof address === 'string' && /^0x0{38}(0[1-9a])$/i.test(address);

/** The created accounts and precompile calls of a callTracer answer (TraceContext's facts). */
export function callTreeFacts(tree: unknown): Pick<TraceContext, 'created' | 'precompileCalls'> {
  const created: string[] = [];
  const precompileCalls: Record<string, number> = {};
  const visit = (f: any): void => {
    if (!isObject(f)) return;
    if ((f.type === 'CREATE' || f.type === 'CREATE2') && typeof f.to === 'string') created.push(f.to.toLowerCase());
    const input = typeof f.input === 'string' ? f.input : '';
    if (['CALL', 'CALLCODE', 'DELEGATECALL', 'STATICCALL'].includes(String(f.type)) && isPrecompile(f.to) && input.length >= 10) {
      const key = `${input.slice(0, 10).toLowerCase()}-${(input.length - 10) / 2}`;
      precompileCalls[key] = (precompileCalls[key] ?? 0) + 1;
    }
    if (Array.isArray(f.calls)) f.calls.forEach(visit);
  };
  visit(tree);
  return { created, precompileCalls };
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
  if (Array.isArray(step.memory) && step.memory.length === 0) delete out.memory;
  else if (Array.isArray(step.memory)) out.memory = step.memory.map(strip0x);
  if (isObject(step.storage)) out.storage = Object.fromEntries(Object.entries(step.storage).map(([k, v]) => [strip0x(k), strip0x(v)]));
  if (step.refund === 0) delete out.refund;
  if (step.returnData === '0x' || step.returnData === '') delete out.returnData;
  if (typeof step.error === 'string' && ANVIL_STEP_ERRORS[step.error]) out.error = ANVIL_STEP_ERRORS[step.error];
  return out;
}

/** Drops `field` of the struct log steps `which` picks (given the step and the one after it). */
function withoutStepField(trace: any, field: string, which: (step: any, next: any) => boolean): any {
  if (!isObject(trace) || !Array.isArray(trace.structLogs)) return trace;
  const logs: unknown[] = trace.structLogs;
  return {
    ...trace,
    structLogs: logs.map((step: any, i) => {
      if (!isObject(step) || !which(step, logs[i + 1])) return step;
      const { [field]: _dropped, ...rest } = step;
      return rest;
    }),
  };
}

/** An account as geth's prestateTracer finds one that did not exist: no balance, nonce or code (storage all zero). */
function emptyAccount(account: any): boolean {
  if (!isObject(account)) return false;
  if (account.balance !== undefined && BigInt(String(account.balance)) !== 0n) return false;
  if (account.nonce !== undefined && Number(account.nonce) !== 0) return false;
  if (account.code !== undefined && account.code !== '0x') return false;
  const storage = isObject(account.storage) ? Object.values(account.storage) : [];
  return storage.every((v) => /^0x0*$/.test(String(v)));
}

/**
 * The allowed differences: keep this list minimal, each with its reason. They apply in this order
 * (the struct logger's later ones read a step's error in geth's words, as the encoding one leaves it). The anvil-vs-anvil test
 * (e2e/evm-trace-anvil.test.ts) passes with or without them; they exist for the node, which answers
 * as geth where anvil departs from geth.
 *
 * - coinbase balance: both chains have the same coinbase (anvil's is set to the C-Chain's) and the
 *   same tx price, but the tip the coinbase receives is price - base fee, and the base fee is each
 *   chain's own (the C-Chain's floor is 25 gwei, anvil's EIP-1559 base fee falls block by block),
 *   so the coinbase's pre- and post-balances differ. Its nonce, code and storage are compared.
 * - struct logger encoding: anvil encodes memory words and storage slots with a 0x prefix, writes
 *   `refund: 0`, `returnData: "0x"` and `memory: []` (enableMemory, before the first MSTORE) on
 *   every step, and words a failed step's error in Rust's debug form (`Some(OutOfGas)`); geth
 *   writes memory words and slots bare, omits a zero refund, empty return data and empty memory
 *   (omitempty), and says `out of gas`. Both sides are brought to geth's form, so the values
 *   themselves are still compared.
 * - struct logger CREATE cost: geth's `gasCost` of a CREATE or CREATE2 is the opcode's own cost
 *   (32,000, the init code's words, memory); the gas it passes to the init code is taken inside the
 *   opcode and not counted (unlike a CALL's). anvil adds the passed gas, which is the `gas` of the
 *   init code's first step: that step's gas is taken back out of anvil's cost. A cost below 32,000
 *   plus that gas cannot hold it, and is left as it is.
 * - struct logger out-of-gas step: geth logs a step that runs out of gas with the opcode's full cost
 *   (more than the gas left, which is why it failed); anvil logs the gas left. That step's `gasCost`
 *   is dropped on both sides; its `gas`, `op` and `error` are compared.
 * - struct logger failed SLOAD's storage: geth reads the slot an SLOAD would load when it logs the
 *   opcode, also one that then runs out of gas, so that step's `storage` holds the slot; anvil logs
 *   `{}`. That step's `storage` is dropped on both sides.
 * - callTracer top frame's gas: geth's top frame carries the tx's gas limit; anvil's carries the gas
 *   left after the intrinsic gas. The top frame's `gas` is dropped; its `gasUsed` (the receipt's, in
 *   both) and every inner frame's `gas` are compared.
 * - callTracer log index: geth's callTracer logs have `address`, `topics`, `data` and `position`;
 *   anvil adds `index` (the log's index in the tx). It is dropped from every log.
 * - callTracer onlyTopCall: geth keeps no inner frame with onlyTopCall, a SELFDESTRUCT's neither
 *   (it enters at depth 1); anvil keeps the top frame's SELFDESTRUCT frames. A top frame's `calls`
 *   made of SELFDESTRUCT frames only is dropped under onlyTopCall.
 * - prestateTracer created accounts: geth removes from `pre` an account the tx created that was
 *   empty before it (no balance, nonce or code), in both modes; anvil keeps it in the default mode
 *   (balance 0x0 and the slots the constructor wrote, as zeros). Such an account is dropped from the
 *   default mode's answer when the side's callTracer shows the tx created it.
 * - 4byteTracer precompile calls: geth's 4byteTracer skips calls to precompiles; anvil counts them.
 *   The counts of the side's own precompile calls (from its callTracer answer) are taken out of its
 *   4byteTracer answer.
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
    why: "anvil's 0x-prefixed memory words and slots, zero refunds, empty return data and memory, and Rust-worded step errors where geth writes bare hex, omits the empty fields and says `out of gas`",
    variants: /^structLogger/,
    normalise: (trace) => {
      if (!isObject(trace) || !Array.isArray(trace.structLogs)) return trace;
      return { ...trace, structLogs: trace.structLogs.map(gethStep) };
    },
  },
  {
    name: 'struct logger CREATE cost',
    why: "geth's CREATE/CREATE2 gasCost leaves out the gas passed to the init code; anvil's includes it",
    variants: /^structLogger/,
    normalise: (trace) => {
      if (!isObject(trace) || !Array.isArray(trace.structLogs)) return trace;
      const logs: any[] = trace.structLogs;
      return {
        ...trace,
        structLogs: logs.map((step, i) => {
          const next = logs[i + 1];
          if (!isObject(step) || (step.op !== 'CREATE' && step.op !== 'CREATE2') || !isObject(next) || next.depth !== Number(step.depth) + 1) return step;
          const passed = Number(next.gas);
          return Number(step.gasCost) >= 32_000 + passed ? { ...step, gasCost: Number(step.gasCost) - passed } : step;
        }),
      };
    },
  },
  {
    name: 'struct logger out-of-gas step cost',
    why: "geth's step that runs out of gas costs the opcode's full cost; anvil's costs the gas left",
    variants: /^structLogger/,
    normalise: (trace) => withoutStepField(trace, 'gasCost', (step) => step.error === 'out of gas'),
  },
  {
    name: 'struct logger failed SLOAD storage',
    why: "geth logs the slot an SLOAD that runs out of gas would read; anvil logs {}",
    variants: /^structLogger/,
    normalise: (trace) => withoutStepField(trace, 'storage', (step) => step.op === 'SLOAD' && step.error !== undefined),
  },
  {
    name: 'callTracer top frame gas',
    why: "geth's top frame gas is the tx's gas limit; anvil's is the gas left after the intrinsic gas",
    variants: /^callTracer/,
    normalise: (trace) => {
      if (!isObject(trace)) return trace;
      const { gas: _dropped, ...rest } = trace;
      return rest;
    },
  },
  {
    name: 'callTracer log index',
    why: "geth's callTracer logs have no index; anvil adds one",
    variants: /^callTracer\{withLog\}$/,
    normalise: (trace) => {
      const visit = (f: any): any => {
        if (!isObject(f)) return f;
        const out: Record<string, unknown> = { ...f };
        if (Array.isArray(f.logs)) out.logs = f.logs.map((l: any) => (isObject(l) ? (({ index: _dropped, ...rest }) => rest)(l) : l));
        if (Array.isArray(f.calls)) out.calls = f.calls.map(visit);
        return out;
      };
      return visit(trace);
    },
  },
  {
    name: 'callTracer onlyTopCall SELFDESTRUCT',
    why: 'geth keeps no inner frame under onlyTopCall; anvil keeps the SELFDESTRUCT frames',
    variants: /^callTracer\{onlyTopCall\}$/,
    normalise: (trace) => {
      if (!isObject(trace) || !Array.isArray(trace.calls) || !trace.calls.every((c: any) => isObject(c) && c.type === 'SELFDESTRUCT')) return trace;
      const { calls: _dropped, ...rest } = trace;
      return rest;
    },
  },
  {
    name: 'prestateTracer created accounts',
    why: 'geth drops from pre an account the tx created that was empty before it; anvil keeps it in the default mode',
    variants: /^prestateTracer$/,
    normalise: (trace, ctx) => {
      if (!isObject(trace)) return trace;
      const created = new Set(ctx.created ?? []);
      return Object.fromEntries(Object.entries(trace).filter(([addr, account]) => !(created.has(addr.toLowerCase()) && emptyAccount(account))));
    },
  },
  {
    name: '4byteTracer precompile calls',
    why: "geth's 4byteTracer skips calls to precompiles; anvil counts them",
    variants: /^4byteTracer$/,
    normalise: (trace, ctx) => {
      if (!isObject(trace)) return trace;
      const out: Record<string, unknown> = {};
      for (const [key, count] of Object.entries(trace)) {
        const left = Number(count) - (ctx.precompileCalls?.[key] ?? 0);
        if (left > 0) out[key] = left;
      }
      return out;
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
    const tree = answers.callTracer;
    out.push({ label: tx.label, hash: tx.hash, ctx: { coinbase, ...(tree && 'result' in tree ? callTreeFacts(tree.result) : {}) }, answers });
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
