/**
 * Each opcode as the struct logger reads it, without @ethereumjs' `step` event: for every opcode its
 * interpreter builds an event holding a copy of the frame's memory and one of its stack, then emits
 * it through an async event emitter that awaits each listener. In a struct log of a storage loop
 * (bench/trace.mjs's 1M-gas loop) that was a quarter of the time, and a copy of the memory per
 * opcode even for a log without memory (geth's default).
 *
 * An EVM given a step sink here gets instead, synchronously, a LeanStep whose `stack` and `memory`
 * are copied when first read (the sink reads them before it returns: the opcode has not run yet),
 * and no `step` event: one tracer watches a VM at a time (tracer.ts). The interpreter's
 * `_runStepHook` is wrapped once per process; for an EVM without a sink the wrapper calls the stock
 * hook. Tests: tracing.test.ts "struct logger: …" (the outputs as before, by hand), tracers.test.ts.
 */
import type { Address } from '@ethereumjs/util';
import { wrapInterpreterMethod } from '../patches/evm-internals.js';

/** What the struct logger reads of an opcode about to run (the fields of @ethereumjs' step event it uses). */
export interface StepView {
  readonly pc: number;
  readonly opcode: { readonly code: number; readonly name: string; readonly fee: number; readonly dynamicFee?: bigint };
  readonly gasLeft: bigint;
  readonly gasRefund: bigint;
  readonly depth: number;
  readonly address: Address;
  /** The frame's stack, bottom first (a copy). */
  readonly stack: readonly bigint[];
  /** Its height (undefined: `stack.length`). */
  readonly stackHeight?: number;
  /** The frame's memory as far as it is sized (a copy). */
  readonly memory: Uint8Array;
}

export type StepSink = (step: StepView) => void;

interface OpcodeInfo {
  readonly code: number;
  readonly fullName: string;
  readonly fee: number;
}

interface InterpreterThis {
  readonly _evm: { readonly _opcodeMap: ReadonlyArray<{ readonly opcodeInfo: OpcodeInfo }> };
  readonly _env: { readonly depth: number; readonly address: Address };
  readonly _runState: {
    readonly opCode: number;
    readonly programCounter: number;
    readonly gasRefund: bigint;
    readonly stack: { getStack(): bigint[]; readonly length: number };
    readonly memory: { readonly _store: Uint8Array };
  };
}

type StepHook = (this: InterpreterThis, dynamicFee: bigint, gasLeft: bigint, memorySize: bigint | number) => Promise<void> | undefined;

class LeanStep implements StepView {
  #stack: bigint[] | undefined;
  #memory: Uint8Array | undefined;
  readonly pc: number;
  readonly opcode: StepView['opcode'];
  readonly gasRefund: bigint;
  readonly depth: number;
  readonly address: Address;

  constructor(
    private readonly interp: InterpreterThis,
    dynamicFee: bigint,
    readonly gasLeft: bigint,
    private readonly memorySize: bigint | number,
  ) {
    const rs = interp._runState;
    const info = interp._evm._opcodeMap[rs.opCode]!.opcodeInfo;
    this.pc = rs.programCounter;
    this.opcode = { code: info.code, name: info.fullName, fee: info.fee, dynamicFee };
    this.gasRefund = rs.gasRefund;
    this.depth = interp._env.depth;
    this.address = interp._env.address;
  }

  get stack(): readonly bigint[] {
    return (this.#stack ??= this.interp._runState.stack.getStack());
  }

  get stackHeight(): number {
    return this.interp._runState.stack.length;
  }

  get memory(): Uint8Array {
    return (this.#memory ??= this.interp._runState.memory._store.slice(0, Number(this.memorySize) * 32));
  }
}

const sinks = new WeakMap<object, StepSink>();

const leanHook = (original: StepHook): StepHook =>
  function (this: InterpreterThis, dynamicFee, gasLeft, memorySize) {
    const sink = sinks.get(this._evm);
    if (!sink) return original.call(this, dynamicFee, gasLeft, memorySize);
    sink(new LeanStep(this, dynamicFee, gasLeft, memorySize));
    return undefined;
  };

/** The interpreter calls its step hook only while `step` has a listener: this one stands for the sink. */
const standIn = (): void => {};

/**
 * Sends each opcode `evm` runs to `sink` instead of its `step` event, until detachStepSink. False
 * when this @ethereumjs version keeps its step hook elsewhere: the caller listens to `step` then.
 */
export async function attachStepSink(evm: { events?: { on(e: 'step', f: () => void): unknown } }, sink: StepSink): Promise<boolean> {
  if (!(await wrapInterpreterMethod<StepHook>('_runStepHook', leanHook))) return false;
  if (!evm.events) throw new TypeError('the EVM has no events');
  sinks.set(evm, sink);
  evm.events.on('step', standIn);
  return true;
}

export function detachStepSink(evm: { events?: { off(e: 'step', f: () => void): unknown } }, sink: StepSink): void {
  if (sinks.get(evm) !== sink) return;
  sinks.delete(evm);
  evm.events?.off('step', standIn);
}
