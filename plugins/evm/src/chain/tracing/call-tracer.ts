/**
 * geth's callTracer: the tx's call tree, one frame per CALL, CALLCODE, DELEGATECALL, STATICCALL,
 * CREATE, CREATE2 and SELFDESTRUCT, precompile calls included (geth makes a frame for every call it
 * enters). Config (`tracerConfig`): `onlyTopCall` (the top frame alone), `withLog` (each frame's logs
 * with their `position`: how many inner frames came before them; a failed frame's logs and those of
 * the frames inside it are dropped, as geth drops them).
 *
 * Gas as geth counts it: the top frame's `gas` is the tx's gas limit and its `gasUsed` the receipt's
 * (intrinsic gas and refund included); an inner frame's `gas` is what its opcode passed it (the
 * stipend of a call with value included) and `gasUsed` what it consumed (all of it on an exceptional
 * halt; a create's code deposit included). A call or create the EVM refuses before entering it
 * (call depth, balance, nonce) is a frame with gasUsed 0 and geth's error.
 * Test: tracing.test.ts "callTracer".
 */
import type { EVMResult, Message } from '@ethereumjs/evm';
import type { RunTxResult } from '@ethereumjs/vm';
import { listenToEvm } from '../evm-events.js';
import { gethError, hex, quantity, revertReason, REVERTED } from './geth-text.js';
import { attachSink, detachSink, messageBegun, type FrameRequest, type InterpreterSink } from './interpreter-hooks.js';
import { flag } from './options.js';
import type { EvmTracer, TraceContext, TracerFactory } from './tracer.js';

interface CallLog {
  readonly address: Uint8Array;
  readonly topics: readonly Uint8Array[];
  readonly data: Uint8Array;
  readonly position: number;
}

interface CallFrame {
  readonly type: string;
  readonly from: Uint8Array;
  gas: bigint;
  gasUsed: bigint;
  to?: Uint8Array;
  readonly input: Uint8Array;
  output?: Uint8Array;
  error?: string;
  revertReason?: string;
  readonly calls: CallFrame[];
  logs: CallLog[];
  readonly value?: bigint;
}

/** Characters of a frame's JSON besides its input and output (addresses, quantities, keys). */
const FRAME_CHARS = 260;
const LOG_CHARS = 120;

function frameJson(f: CallFrame): Record<string, unknown> {
  const out: Record<string, unknown> = { from: hex(f.from), gas: quantity(f.gas), gasUsed: quantity(f.gasUsed) };
  if (f.to) out.to = hex(f.to);
  out.input = hex(f.input);
  if (f.output && f.output.length > 0) out.output = hex(f.output);
  if (f.error) out.error = f.error;
  if (f.revertReason) out.revertReason = f.revertReason;
  if (f.calls.length > 0) out.calls = f.calls.map(frameJson);
  if (f.logs.length > 0) out.logs = f.logs.map((l) => ({ address: hex(l.address), topics: l.topics.map(hex), data: hex(l.data), position: quantity(l.position) }));
  if (f.value !== undefined) out.value = quantity(f.value);
  out.type = f.type;
  return out;
}

/** geth's: a failed frame keeps no logs, nor do the frames inside it. */
function clearFailedLogs(f: CallFrame, parentFailed: boolean): void {
  const failed = parentFailed || f.error !== undefined;
  if (failed) f.logs = [];
  for (const c of f.calls) clearFailedLogs(c, failed);
}

/** Sets a finished frame's output, error and revert reason as geth does. */
function settle(f: CallFrame, output: Uint8Array, error: string | undefined): void {
  if (error === undefined) {
    f.output = output;
    return;
  }
  f.error = error;
  if (f.type === 'CREATE' || f.type === 'CREATE2') f.to = undefined;
  if (error !== REVERTED || output.length === 0) return;
  f.output = output;
  const reason = revertReason(output);
  if (reason !== undefined) f.revertReason = reason;
}

export class CallTracer implements EvmTracer, InterpreterSink {
  #ctx: TraceContext | undefined;
  #unlisten: (() => void) | undefined;
  readonly #stack: CallFrame[] = [];
  #root: CallFrame | undefined;
  /** The frame the last opcode asked for, until its message begins. */
  #pending: FrameRequest | undefined;
  /** Frames entered below the top while onlyTopCall keeps none. */
  #hidden = 0;

  constructor(
    private readonly onlyTopCall: boolean,
    private readonly withLog: boolean,
  ) {}

  async start(ctx: TraceContext): Promise<void> {
    this.#ctx = ctx;
    await attachSink(ctx.vm.evm, this);
    this.#unlisten = listenToEvm(ctx.vm.evm, { beforeMessage: this.#enter, afterMessage: this.#exit });
  }

  #grow(chars: number): void {
    this.#ctx!.grow(chars);
  }

  readonly #enter = (m: Message): void => {
    const ctx = this.#ctx!;
    messageBegun(ctx.vm.evm);
    if (m.depth === 0) {
      const tx = ctx.tx;
      const frame: CallFrame = { type: tx.to ? 'CALL' : 'CREATE', from: m.caller.bytes, gas: tx.gasLimit, gasUsed: 0n, input: m.data, calls: [], logs: [], value: m.value, ...(m.to ? { to: m.to.bytes } : {}) };
      this.#root = frame;
      this.#stack.push(frame);
      this.#grow(FRAME_CHARS + 2 * m.data.length);
      return;
    }
    const req = this.#pending;
    this.#pending = undefined;
    if (this.onlyTopCall) {
      this.#hidden++;
      return;
    }
    const frame: CallFrame = req
      ? { type: req.type, from: req.from, gas: m.gasLimit, gasUsed: 0n, input: req.input, calls: [], logs: [], ...(req.to ? { to: req.to } : {}), ...(req.type === 'STATICCALL' ? {} : { value: req.value }) }
      : // A message no opcode asked for (none on this chain's EVM): described from the message alone.
        { type: m.to ? 'CALL' : 'CREATE', from: m.caller.bytes, gas: m.gasLimit, gasUsed: 0n, input: m.data, calls: [], logs: [], value: m.value, ...(m.to ? { to: m.to.bytes } : {}) };
    this.#stack[this.#stack.length - 1]!.calls.push(frame);
    this.#stack.push(frame);
    this.#grow(FRAME_CHARS + 2 * frame.input.length);
  };

  readonly #exit = (r: EVMResult): void => {
    if (this.#hidden > 0 && this.#stack.length === 1) {
      this.#hidden--;
      return;
    }
    const frame = this.#stack.pop();
    if (!frame) return;
    const er = r.execResult;
    if (frame !== this.#root) frame.gasUsed = er.executionGasUsed;
    if (r.createdAddress && !er.exceptionError) frame.to = r.createdAddress.bytes;
    settle(frame, er.returnValue, er.exceptionError ? gethError(er.exceptionError.error) : undefined);
    if (frame.output) this.#grow(2 * frame.output.length);
  };

  request(req: FrameRequest): void {
    this.#pending = req;
  }

  done(req: FrameRequest, refused: string | undefined): void {
    if (this.#pending === req) this.#pending = undefined;
    if (refused === undefined || this.onlyTopCall || this.#stack.length === 0) return;
    const frame: CallFrame = { type: req.type, from: req.from, gas: req.gas, gasUsed: 0n, input: req.input, calls: [], logs: [], ...(req.to ? { to: req.to } : {}), ...(req.type === 'STATICCALL' ? {} : { value: req.value }) };
    settle(frame, new Uint8Array(), refused);
    this.#stack[this.#stack.length - 1]!.calls.push(frame);
    this.#grow(FRAME_CHARS + 2 * frame.input.length);
  }

  log(address: Uint8Array, topics: readonly Uint8Array[], data: Uint8Array): void {
    if (!this.withLog || this.#hidden > 0) return;
    const frame = this.#stack[this.#stack.length - 1];
    if (!frame) return;
    frame.logs.push({ address, topics: [...topics], data, position: frame.calls.length });
    this.#grow(LOG_CHARS + 70 * topics.length + 2 * data.length);
  }

  selfDestruct(from: Uint8Array, to: Uint8Array, value: bigint): void {
    if (this.onlyTopCall) return;
    const frame = this.#stack[this.#stack.length - 1];
    if (!frame) return;
    frame.calls.push({ type: 'SELFDESTRUCT', from, to, gas: 0n, gasUsed: 0n, input: new Uint8Array(), calls: [], logs: [], value });
    this.#grow(FRAME_CHARS);
  }

  finish(result: RunTxResult): unknown {
    this.#detach();
    const root = this.#root;
    if (!root) throw new Error('the traced transaction entered no frame');
    root.gasUsed = result.totalGasSpent;
    if (this.withLog) clearFailedLogs(root, false);
    return frameJson(root);
  }

  /** Stops listening (also after a failed run: the replay calls `abort`). */
  abort(): void {
    if (this.#ctx) this.#detach();
  }

  #detach(): void {
    this.#unlisten?.();
    detachSink(this.#ctx!.vm.evm, this);
  }
}

export const callTracer: TracerFactory = (config) => new CallTracer(flag(config, 'onlyTopCall', 'tracerConfig.'), flag(config, 'withLog', 'tracerConfig.'));
