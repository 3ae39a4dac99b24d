/**
 * geth's flatCallTracer (the parity `trace_` shape) made from callTracer's tree: one entry per
 * frame, depth first, each with its `traceAddress` (the child indexes from the top call), its
 * `subtraces` (children) and the block and tx it belongs to.
 *
 * As geth makes it:
 * - a CALL, CALLCODE, DELEGATECALL or STATICCALL is `type: "call"` with `action: {callType, from,
 *   gas, input, to, value}` and `result: {gasUsed, output}`; a CREATE or CREATE2 is `type: "create"`
 *   with `action: {from, gas, init, value}` and `result: {address, code, gasUsed}` (no
 *   `creationMethod`: geth never sets it); a SELFDESTRUCT is `type: "suicide"` with `action:
 *   {address, balance, refundAddress}` and no result;
 * - gas and gasUsed are callTracer's (the top call's gas is the tx's gas limit, its gasUsed the
 *   receipt's): geth adjusts neither;
 * - an inner frame without a value (a STATICCALL) gets `0x0`; the top call keeps callTracer's;
 * - a frame that failed keeps `error` and loses its result, unless it reverted (its output is the
 *   revert data); with `convertParityErrors` the error is parity's text ("Reverted", "Out of gas", …);
 * - an inner CALL or STATICCALL to a precompile is left out (with its place in the parent's
 *   children) unless `includePrecompiles`; DELEGATECALL and CALLCODE to one stay;
 * - `blockHash` is null for a traced call (it has no block), as geth answers.
 * Tests: flat-call.test.ts.
 */
import type { TypedTransaction } from '@ethereumjs/tx';
import { callTxHash } from '../call-tx.js';
import { boolConfig } from './config-fields.js';
import { precompileCheck } from './four-byte-tracer.js';
import type { EvmTracer, TraceContext, TracerFactory } from './tracer.js';

/** A frame of callTracer's output (geth's field names and encodings). */
export interface CallFrameJson {
  readonly type: string;
  readonly from: string;
  readonly to?: string;
  readonly gas: string;
  readonly gasUsed: string;
  readonly input?: string;
  readonly output?: string;
  readonly error?: string;
  readonly revertReason?: string;
  readonly value?: string;
  readonly calls?: readonly CallFrameJson[];
}

export interface FlatContext {
  readonly blockHash: string | null;
  readonly blockNumber: number;
  readonly transactionHash: string | null;
  readonly transactionPosition: number;
  /** True for a precompile's address (lower-case hex without 0x). */
  readonly isPrecompile: (unprefixedHex: string) => boolean;
}

export interface FlatCallOptions {
  readonly convertParityErrors: boolean;
  readonly includePrecompiles: boolean;
}

export interface FlatCallFrame {
  action: Record<string, string>;
  blockHash: string | null;
  blockNumber: number;
  error?: string;
  result?: Record<string, string>;
  subtraces: number;
  traceAddress: number[];
  transactionHash: string | null;
  transactionPosition: number;
  type: string;
}

/** flatCallTracer's tracerConfig (geth's decoding: unknown keys ignored, a non-boolean refused naming the field). */
export function flatCallConfig(config: Readonly<Record<string, unknown>>): FlatCallOptions {
  return boolConfig(config, 'flatCallTracerConfig', ['convertParityErrors', 'includePrecompiles']);
}

/** geth's error texts as parity words them (an error not here stays geth's). */
const PARITY_ERRORS = new Map([
  ['contract creation code storage out of gas', 'Out of gas'],
  ['out of gas', 'Out of gas'],
  ['gas uint64 overflow', 'Out of gas'],
  ['max code size exceeded', 'Out of gas'],
  ['invalid jump destination', 'Bad jump destination'],
  ['execution reverted', 'Reverted'],
  ['return data out of bounds', 'Out of bounds'],
  ['stack limit reached 1024 (1023)', 'Out of stack'],
  ['precompiled failed', 'Built-in failed'],
  ['invalid input length', 'Built-in failed'],
]);
const PARITY_ERROR_PREFIXES: ReadonlyArray<[string, string]> = [
  ['invalid opcode:', 'Bad instruction'],
  ['stack underflow', 'Stack underflow'],
];
const REVERTED = 'execution reverted';
const CALL_TYPES = new Set(['CALL', 'STATICCALL', 'CALLCODE', 'DELEGATECALL']);

function parityError(error: string): string {
  return PARITY_ERRORS.get(error) ?? PARITY_ERROR_PREFIXES.find(([prefix]) => error.startsWith(prefix))?.[1] ?? error;
}

function isPrecompileCall(frame: CallFrameJson, isPrecompile: FlatContext['isPrecompile']): boolean {
  return (frame.type === 'CALL' || frame.type === 'STATICCALL') && frame.to !== undefined && isPrecompile(frame.to.slice(2).toLowerCase());
}

function flatAction(frame: CallFrameJson, value: string | undefined): { type: string; action: Record<string, string>; result?: Record<string, string> } {
  const withValue = (o: Record<string, string>) => (value === undefined ? o : { ...o, value });
  if (frame.type === 'CREATE' || frame.type === 'CREATE2') {
    return {
      type: 'create',
      action: withValue({ from: frame.from, gas: frame.gas, init: frame.input ?? '0x' }),
      result: { ...(frame.to !== undefined ? { address: frame.to } : {}), code: frame.output ?? '0x', gasUsed: frame.gasUsed },
    };
  }
  if (frame.type === 'SELFDESTRUCT') {
    const action: Record<string, string> = { address: frame.from };
    if (value !== undefined) action.balance = value;
    if (frame.to !== undefined) action.refundAddress = frame.to;
    return { type: 'suicide', action };
  }
  if (CALL_TYPES.has(frame.type)) {
    const action: Record<string, string> = { callType: frame.type.toLowerCase(), from: frame.from, gas: frame.gas, input: frame.input ?? '0x' };
    if (frame.to !== undefined) action.to = frame.to;
    return { type: 'call', action: withValue(action), result: { gasUsed: frame.gasUsed, output: frame.output ?? '0x' } };
  }
  throw new Error(`unrecognized call frame type: ${frame.type}`);
}

/** The flat list of `top` (callTracer's output for one tx), as geth's flatCallTracer answers. */
export function flatten(top: CallFrameJson, ctx: FlatContext, options: FlatCallOptions = { convertParityErrors: false, includePrecompiles: false }): FlatCallFrame[] {
  const out: FlatCallFrame[] = [];
  const visit = (frame: CallFrameJson, traceAddress: number[]) => {
    const inner = traceAddress.length > 0;
    const { type, action, result } = flatAction(frame, inner ? (frame.value ?? '0x0') : frame.value);
    const children = (frame.calls ?? []).filter((c) => options.includePrecompiles || !isPrecompileCall(c, ctx.isPrecompile));
    const entry: FlatCallFrame = { action, blockHash: ctx.blockHash, blockNumber: ctx.blockNumber, subtraces: children.length, traceAddress, transactionHash: ctx.transactionHash, transactionPosition: ctx.transactionPosition, type };
    const error = frame.error !== undefined && frame.error !== '' ? frame.error : undefined;
    if (error !== undefined) entry.error = options.convertParityErrors ? parityError(error) : error;
    if (result && (error === undefined || error === REVERTED)) entry.result = result;
    out.push(ordered(entry));
    children.forEach((child, i) => visit(child, [...traceAddress, i]));
  };
  visit(top, []);
  return out;
}

/** geth's field order (its struct's). */
function ordered(e: FlatCallFrame): FlatCallFrame {
  return {
    action: e.action,
    blockHash: e.blockHash,
    blockNumber: e.blockNumber,
    ...(e.error !== undefined ? { error: e.error } : {}),
    ...(e.result !== undefined ? { result: e.result } : {}),
    subtraces: e.subtraces,
    traceAddress: e.traceAddress,
    transactionHash: e.transactionHash,
    transactionPosition: e.transactionPosition,
    type: e.type,
  };
}

function hex(b: Uint8Array): string {
  return `0x${Buffer.from(b).toString('hex')}`;
}

/** A traced call's tx is unsigned: its hash is that of its encoding, as eth_simulateV1 names it. */
function txHash(tx: TypedTransaction): string {
  return hex(tx.isSigned() ? tx.hash() : callTxHash(tx));
}

/**
 * The block and tx a trace belongs to. For a tx of a block (`txIndex` given) `ctx.block` must be the
 * block itself (its hash is the entry's blockHash); a traced call has no block hash, as geth answers.
 */
export function flatContextOf(ctx: TraceContext): FlatContext {
  return {
    blockHash: ctx.txIndex !== undefined ? hex(ctx.block.hash()) : null,
    blockNumber: Number(ctx.block.header.number),
    transactionHash: txHash(ctx.tx),
    transactionPosition: ctx.txIndex ?? 0,
    isPrecompile: precompileCheck(ctx.vm),
  };
}

/**
 * flatCallTracer over a callTracer: the callTracer runs with its default config (geth passes it
 * none of the flat tracer's options) and its tree is flattened at the end.
 */
export function flatCallTracerOver(callTracer: TracerFactory): TracerFactory {
  return (config) => {
    const options = flatCallConfig(config);
    const inner = callTracer({});
    let context: FlatContext | undefined;
    const tracer: EvmTracer = {
      start(ctx) {
        context = flatContextOf(ctx);
        return inner.start(ctx);
      },
      async finish(result) {
        const top = (await inner.finish(result)) as CallFrameJson;
        return flatten(top, context!, options);
      },
    };
    return tracer;
  };
}
