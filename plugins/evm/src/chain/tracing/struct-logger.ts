/**
 * geth's struct logger, the default tracer: `{gas, failed, returnValue, structLogs}` with one log per
 * opcode run, `{pc, op, gas, gasCost, depth, error?, stack?, returnData?, memory?, storage?, refund?}`
 * in geth's encodings: stack items as 0x quantities, memory as 32-byte words in hex without 0x,
 * storage (on SLOAD and SSTORE only: every slot of the running contract the tx touched so far) as
 * 64-digit hex without 0x, keys sorted, returnData (the last inner call's) as 0x hex, refund (the
 * tx's refund counter) left out at 0. Options (the request's top-level fields, as geth's): disableStack,
 * disableStorage, enableMemory, enableReturnData, limit (logs kept at most; 0: all).
 *
 * - `depth` starts at 1; `gas` is the gas left before the opcode; `gasCost` its cost, for a CALL,
 *   CALLCODE, DELEGATECALL or STATICCALL with the gas it passes (geth's, without the stipend).
 * - An opcode that halts its frame before running (out of gas, stack under- or overflow) carries
 *   geth's `error`; one that fails while running (REVERT, a bad jump) does not, as geth logs it.
 * - Each log is rendered as JSON text when the next one comes and counted against the trace's output
 *   bound (`grow`): a 30M-gas loop's log is refused once past it, never built whole first.
 * Test: tracing.test.ts "struct logger".
 */
import { toHex } from '@cornice/sdk';
import type { EVMResult, Message } from '@ethereumjs/evm';
import type { Address } from '@ethereumjs/util';
import type { RunTxResult } from '@ethereumjs/vm';
import { listenToEvm } from '../evm-events.js';
import { hex, opName } from './geth-text.js';
import { count, flag, JsonText } from './options.js';
import type { EvmTracer, TraceContext, TracerFactory } from './tracer.js';
import { attachStepSink, detachStepSink, type StepView } from './lean-step.js';
import { loadStackTable, stackInputsOutputs } from './stack-table.js';

export interface StructLoggerConfig {
  readonly disableStack: boolean;
  readonly disableStorage: boolean;
  readonly enableMemory: boolean;
  readonly enableReturnData: boolean;
  readonly limit: number;
}

const SLOAD = 0x54;
const SSTORE = 0x55;
const CALL = 0xf1;
const CALLCODE = 0xf2;
const DELEGATECALL = 0xf4;
const STATICCALL = 0xfa;
const EMPTY = new Uint8Array();
const EMPTY_STACK: readonly bigint[] = [];
/** Logs joined into one flat text at a time (#recent). */
const CHUNK_LOGS = 256;

/** A log not rendered yet: an SLOAD's value is on the stack at the next step; a halt's error comes with its frame's end. */
interface PendingLog {
  readonly pc: number;
  readonly op: string;
  readonly code: number;
  readonly gas: bigint;
  readonly gasCost: bigint;
  /** geth's (from 1). */
  readonly depth: number;
  readonly stackLength: number;
  readonly stack?: string;
  readonly returnData?: string;
  readonly memory?: string;
  readonly refund: bigint;
  readonly address: string;
  storage?: boolean;
  sloadSlot?: string;
  /** An SLOAD's contract: the slot's value is read from its state if the SLOAD fails. */
  sloadAddress?: Address;
  error?: string;
}

const word = (n: bigint): string => n.toString(16).padStart(64, '0');

export class StructLogger implements EvmTracer {
  #ctx: TraceContext | undefined;
  #unlisten: (() => void) | undefined;
  /**
   * The logs' JSON: the latest ones each as rendered (a string built by concatenation, a tree of
   * pieces for the collector to walk), the earlier ones joined CHUNK_LOGS at a time into flat text.
   * A 30M-gas loop's log kept as 250,000 such trees till its bound spent a third of the run in the
   * collector and held the event loop for 100 ms at a time.
   */
  readonly #recent: string[] = [];
  readonly #chunks: string[] = [];
  #count = 0;
  #pending: PendingLog | undefined;
  /** Slots the tx touched, per storage address (hex). */
  readonly #storage = new Map<string, Map<string, string>>();
  /** The return data each running frame last got from an inner call, by @ethereumjs depth. */
  readonly #returnData: Uint8Array[] = [];
  readonly #depths: number[] = [];

  constructor(private readonly config: StructLoggerConfig) {}

  async start(ctx: TraceContext): Promise<void> {
    await loadStackTable();
    this.#ctx = ctx;
    const lean = await attachStepSink(ctx.vm.evm, this.#step);
    this.#unlisten = listenToEvm(ctx.vm.evm, { step: lean ? undefined : this.#step, beforeMessage: this.#enter, afterMessage: this.#exit });
  }

  readonly #enter = (m: Message): void => {
    this.#depths.push(m.depth);
    this.#returnData[m.depth] = EMPTY;
  };

  // Two parameters: the EVM awaits the listener until `done` (a failed SLOAD's slot is read from the state).
  readonly #exit = (r: EVMResult, done?: (result?: unknown) => void): void => {
    const read = this.#exitFrame(r);
    if (done) done(read);
  };

  async #exitFrame(r: EVMResult): Promise<void> {
    const depth = this.#depths.pop();
    if (depth === undefined) return;
    const err = r.execResult.exceptionError?.error;
    const p = this.#pending;
    // A halt before the opcode ran is the frame's last log's error in geth's log.
    if (err !== undefined && p && p.depth === depth + 1 && p.error === undefined) {
      if (err === 'out of gas') p.error = 'out of gas';
      else if (err === 'stack underflow' || err === 'stack overflow') {
        const { inputs, outputs } = stackInputsOutputs(p.code);
        p.error = err === 'stack underflow' ? `stack underflow (${p.stackLength} <=> ${inputs})` : `stack limit reached ${p.stackLength} (${1024 + inputs - outputs})`;
      }
      if (p.error !== undefined && p.sloadSlot !== undefined && p.sloadAddress) await this.#readFailedSload(p, p.sloadAddress, p.sloadSlot);
    }
    if (depth > 0) {
      const created = r.createdAddress !== undefined && err === undefined;
      this.#returnData[depth - 1] = created || (err !== undefined && err !== 'revert') ? EMPTY : r.execResult.returnValue;
    }
  }

  /**
   * geth logs the slot an SLOAD reads also when the SLOAD then fails (out of gas): it reads the
   * value from the state when it logs the opcode. No next step shows it on the stack here, so it is
   * read now. A slot this tx wrote is in the logger's map already; any other holds its value from
   * before the tx, which the frame's revert (done by now) does not change.
   * Test: tracing.test.ts "struct logger: an SLOAD out of gas logs the slot it would read".
   */
  async #readFailedSload(p: PendingLog, address: Address, slot: string): Promise<void> {
    const slots = this.#slots(p.address);
    if (slots.has(slot)) return;
    const value = await this.#ctx!.vm.stateManager.getStorage(address, Buffer.from(slot, 'hex'));
    slots.set(slot, Buffer.from(value).toString('hex').padStart(64, '0'));
  }

  // The stack is read (copied) only when logged or when the opcode's log needs its top.
  readonly #step = (e: StepView): void => {
    this.#flush(e);
    const cfg = this.config;
    if (cfg.limit !== 0 && this.#count >= cfg.limit) return;
    const code = e.opcode.code;
    const isCall = code === CALL || code === CALLCODE || code === DELEGATECALL || code === STATICCALL;
    const storageOp = !cfg.disableStorage && (code === SLOAD || code === SSTORE);
    const stack = !cfg.disableStack || isCall || storageOp ? e.stack : EMPTY_STACK;
    let gasCost = e.opcode.dynamicFee ?? BigInt(e.opcode.fee);
    if (isCall && stack.length > 0) {
      // geth counts the gas the call passes in its cost (the 63/64 rule on what is left after the opcode's own cost).
      const available = e.gasLeft - gasCost;
      if (available > 0n) {
        const allButOne = available - available / 64n;
        const asked = stack[stack.length - 1]!;
        gasCost += asked < allButOne ? asked : allButOne;
      }
    }
    const address = this.#addressHex(e.address);
    const p: PendingLog = {
      pc: e.pc,
      op: opName(code, e.opcode.name),
      code,
      gas: e.gasLeft,
      gasCost,
      depth: e.depth + 1,
      stackLength: e.stackHeight ?? e.stack.length,
      refund: e.gasRefund,
      address,
      ...(!cfg.disableStack && { stack: stackText(stack) }),
      ...(cfg.enableMemory && e.memory.length > 0 && { memory: memoryText(e.memory) }),
      ...(cfg.enableReturnData && (this.#returnData[e.depth]?.length ?? 0) > 0 && { returnData: hex(this.#returnData[e.depth]!) }),
    };
    if (storageOp) {
      if (code === SLOAD && stack.length >= 1) {
        p.storage = true;
        p.sloadSlot = word(stack[stack.length - 1]!);
        p.sloadAddress = e.address;
      } else if (code === SSTORE && stack.length >= 2) {
        this.#slots(address).set(word(stack[stack.length - 1]!), word(stack[stack.length - 2]!));
        p.storage = true;
      }
    }
    this.#pending = p;
  };

  /** The running frame's address object, and its hex: a frame's steps share the object. */
  #lastAddress: Address | undefined;
  #lastAddressHex = '';

  #addressHex(a: Address): string {
    if (a !== this.#lastAddress) {
      this.#lastAddress = a;
      this.#lastAddressHex = toHex(a.bytes);
    }
    return this.#lastAddressHex;
  }

  #slots(address: string): Map<string, string> {
    let slots = this.#storage.get(address);
    if (!slots) this.#storage.set(address, (slots = new Map()));
    return slots;
  }

  /** Renders the pending log; `next` (the following step) holds an SLOAD's value on its stack. */
  #flush(next?: StepView): void {
    const p = this.#pending;
    if (!p) return;
    this.#pending = undefined;
    if (p.sloadSlot !== undefined && next && next.depth + 1 === p.depth) {
      const stack = next.stack;
      if (stack.length > 0) this.#slots(p.address).set(p.sloadSlot, word(stack[stack.length - 1]!));
    }
    let text = `{"pc":${p.pc},"op":"${p.op}","gas":${p.gas},"gasCost":${p.gasCost},"depth":${p.depth}`;
    if (p.error !== undefined) text += `,"error":${JSON.stringify(p.error)}`;
    if (p.stack !== undefined) text += `,"stack":${p.stack}`;
    if (p.returnData !== undefined) text += `,"returnData":"${p.returnData}"`;
    if (p.memory !== undefined) text += `,"memory":${p.memory}`;
    if (p.storage) text += `,"storage":${storageText(this.#storage.get(p.address))}`;
    if (p.refund !== 0n) text += `,"refund":${p.refund}`;
    text += '}';
    this.#ctx!.grow(text.length + 1);
    this.#count++;
    this.#recent.push(text);
    if (this.#recent.length >= CHUNK_LOGS) {
      this.#chunks.push(this.#recent.join(','));
      this.#recent.length = 0;
    }
  }

  finish(result: RunTxResult): unknown {
    this.#detach();
    this.#flush();
    const er = result.execResult;
    const err = er.exceptionError?.error;
    const returnValue = err !== undefined && err !== 'revert' ? '0x' : hex(er.returnValue);
    return new JsonText(`{"gas":${result.totalGasSpent},"failed":${err !== undefined},"returnValue":"${returnValue}","structLogs":[${[...this.#chunks, ...this.#recent].join(',')}]}`);
  }

  abort(): void {
    if (this.#ctx) this.#detach();
  }

  #detach(): void {
    detachStepSink(this.#ctx!.vm.evm, this.#step);
    this.#unlisten?.();
  }
}

function stackText(stack: readonly bigint[]): string {
  let s = '[';
  for (let i = 0; i < stack.length; i++) s += `${i === 0 ? '' : ','}"0x${stack[i]!.toString(16)}"`;
  return s + ']';
}

function memoryText(memory: Uint8Array): string {
  let s = '[';
  for (let i = 0; i < memory.length; i += 32) s += `${i === 0 ? '' : ','}"${toHex(memory.subarray(i, i + 32))}"`;
  return s + ']';
}

/** geth marshals the map with its keys sorted. */
function storageText(slots: ReadonlyMap<string, string> | undefined): string {
  if (!slots || slots.size === 0) return '{}';
  const keys = [...slots.keys()].sort();
  return '{' + keys.map((k) => `"${k}":"${slots.get(k)}"`).join(',') + '}';
}

/** The struct logger's options from the request's top-level fields (geth's logger.Config). */
export function structLoggerConfig(options: Readonly<Record<string, unknown>>): StructLoggerConfig {
  return {
    disableStack: flag(options, 'disableStack', ''),
    disableStorage: flag(options, 'disableStorage', ''),
    enableMemory: flag(options, 'enableMemory', ''),
    enableReturnData: flag(options, 'enableReturnData', ''),
    limit: count(options, 'limit', ''),
  };
}

export const structLogger: TracerFactory = (options) => new StructLogger(structLoggerConfig(options));
