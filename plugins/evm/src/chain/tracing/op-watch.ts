/**
 * The EVM's events as the tracers that read state need them: each listener is awaited by the EVM
 * (its two-argument form), and what an opcode touches counts only once the opcode has run, as geth
 * reports an opcode to its tracers only after its gas is paid.
 *
 * @ethereumjs emits `step` before it charges an opcode's gas, also for an opcode that then fails on
 * it (out of gas, a stack underflow). So a step's effect waits for the next event: another step, a
 * frame entered (a call or create the opcode made) or a frame left without an error mean the opcode
 * ran; the frame left with an error right after it means the opcode failed, and the effect is
 * dropped. A write in a static frame (SSTORE, CALL with value, CREATE, SELFDESTRUCT) counts as run:
 * geth refuses it inside the opcode, after its tracers saw it.
 * Tests: tracers.test.ts "prestateTracer … out of gas at the SLOAD".
 */
import type { EVMResult, InterpreterStep, Message } from '@ethereumjs/evm';
import type { VM } from '@ethereumjs/vm';
import { listenToEvm } from '../evm-events.js';

/** Runs once the opcode ran; `entered`: the next event was a frame the opcode entered. */
export type OpEffect = (entered: boolean) => void;

export interface OpHandlers {
  /** An opcode about to run: what it would touch, read now (the state before it runs). */
  step?(s: InterpreterStep): OpEffect | undefined | Promise<OpEffect | undefined>;
  enter?(m: Message): void | Promise<void>;
  exit?(r: EVMResult): void | Promise<void>;
}

/** @ethereumjs' text of a write refused in a static frame. */
const STATIC_STATE_CHANGE = 'static state change';

/** The EVM passes `done` to a listener of two parameters. */
type Done = ((result?: unknown) => void) | undefined;

export class OpWatch {
  #pending: OpEffect | undefined;
  readonly #unlisten: () => void;

  constructor(
    vm: VM,
    private readonly handlers: OpHandlers,
  ) {
    this.#unlisten = listenToEvm(vm.evm, { step: handlers.step && this.#onStep, beforeMessage: this.#onEnter, afterMessage: this.#onExit });
  }

  close(): void {
    this.#unlisten();
    this.#settle(false, false);
  }

  #settle(ran: boolean, entered: boolean): void {
    const effect = this.#pending;
    this.#pending = undefined;
    if (effect && ran) effect(entered);
  }

  // Two arguments: the EVM awaits the listener until `done`; `done(promise)` passes a rejection on.
  readonly #onStep = (s: InterpreterStep, done: Done): void => done?.(this.#step(s));
  readonly #onEnter = (m: Message, done: Done): void => done?.(this.#enter(m));
  readonly #onExit = (r: EVMResult, done: Done): void => done?.(this.#exit(r));

  async #step(s: InterpreterStep): Promise<void> {
    this.#settle(true, false);
    this.#pending = await this.handlers.step!(s);
  }

  async #enter(m: Message): Promise<void> {
    this.#settle(true, true);
    await this.handlers.enter?.(m);
  }

  async #exit(r: EVMResult): Promise<void> {
    const error = r.execResult.exceptionError;
    this.#settle(error === undefined || error.error === STATIC_STATE_CHANGE, false);
    await this.handlers.exit?.(r);
  }
}
