/**
 * The objects @ethereumjs/evm copies in every frame, made cheap for the EVMs marked here (makeVM's).
 *
 * On Node 20's V8 (11.3), adding a property to an object that a spread made (`{ ...a, ...b }`, or
 * `{ ...a, k: v }` with `k` not in `a`) is slow, far slower than on Node 22's V8.
 * Every frame makes three such objects:
 * - `_executeCall` hands `runInterpreter` `{ ...{ codeAddress }, ...message, gasLimit }`: the
 *   message's 18 fields are added to a copy (a fifth of an `eth_call`'s CPU on Node 20:
 *   plugins/evm/bench/call-bench.mjs);
 * - `runInterpreter` returns `{ ...result, runState: { ...runState, ...result, ...env }, exceptionError,
 *   gas, executionGasUsed, gasRefund, stateGasSpilled, returnValue }`: the interpreter's 18-field run
 *   state and the 19-field environment are copied into an object nothing reads, and six fields are
 *   added to the copy of the result.
 *
 * So, for marked EVMs:
 * - `_executeCall` is given a view of the message, whose fields are accessors on its prototype
 *   (reads and writes reach the message) and whose one own field names the view. The spread copies
 *   that one field; `runInterpreter` then gets the object the stock spread would have made, built
 *   from the message as a literal, which adds no field to a copy.
 * - The interpreter's `run` hands back, in place of its run state, a view with the three fields the
 *   EVM reads from it (gasLeft, gasRefund, stateGasSpilled) as prototype getters, and gives the
 *   frame's result the keys the returned literal sets, so that these are stores, not additions.
 *
 * What a frame returns is unchanged (test/frame-copies.test.ts compares with a stock VM). The
 * interpreter is not exported by @ethereumjs/evm: its module is loaded by file (evm-internals.ts).
 * Other EVMs get the stock behaviour, and so do ours when this version keeps a message field the
 * view does not know.
 */
import { Message } from '@ethereumjs/evm';
import { wrapInterpreterMethod } from './evm-internals.js';

// ------------------------------------------------------------------ the message

/** The view's one own field: a spread of the view copies it, and `runInterpreter` finds the view by it. */
const VIEW = Symbol('cornice.messageView');

/** A Message's fields as accessors that read and write the message: a spread copies only `[VIEW]`. */
class MessageView {
  readonly #m: Message;
  readonly [VIEW]: MessageView;

  constructor(message: Message) {
    this.#m = message;
    this[VIEW] = this;
  }

  static messageOf(view: MessageView): Message {
    return view.#m;
  }

  get to() { return this.#m.to; }
  set to(v) { this.#m.to = v; }
  get value() { return this.#m.value; }
  set value(v) { this.#m.value = v; }
  get caller() { return this.#m.caller; }
  set caller(v) { this.#m.caller = v; }
  get gasLimit() { return this.#m.gasLimit; }
  set gasLimit(v) { this.#m.gasLimit = v; }
  get data() { return this.#m.data; }
  set data(v) { this.#m.data = v; }
  get eofCallData() { return this.#m.eofCallData; }
  set eofCallData(v) { this.#m.eofCallData = v; }
  get isCreate() { return this.#m.isCreate; }
  set isCreate(v) { this.#m.isCreate = v; }
  get depth() { return this.#m.depth; }
  set depth(v) { this.#m.depth = v; }
  get code() { return this.#m.code; }
  set code(v) { this.#m.code = v; }
  get _codeAddress() { return this.#m._codeAddress; }
  set _codeAddress(v) { this.#m._codeAddress = v; }
  get codeAddress() { return this.#m.codeAddress; }
  get isStatic() { return this.#m.isStatic; }
  set isStatic(v) { this.#m.isStatic = v; }
  get isCompiled() { return this.#m.isCompiled; }
  set isCompiled(v) { this.#m.isCompiled = v; }
  get salt() { return this.#m.salt; }
  set salt(v) { this.#m.salt = v; }
  get eof() { return this.#m.eof; }
  set eof(v) { this.#m.eof = v; }
  get chargeCodeAccesses() { return this.#m.chargeCodeAccesses; }
  set chargeCodeAccesses(v) { this.#m.chargeCodeAccesses = v; }
  get selfdestruct() { return this.#m.selfdestruct; }
  set selfdestruct(v) { this.#m.selfdestruct = v; }
  get createdAddresses() { return this.#m.createdAddresses; }
  set createdAddresses(v) { this.#m.createdAddresses = v; }
  get delegatecall() { return this.#m.delegatecall; }
  set delegatecall(v) { this.#m.delegatecall = v; }
  get gasRefund() { return this.#m.gasRefund; }
  set gasRefund(v) { this.#m.gasRefund = v; }
  get blobVersionedHashes() { return this.#m.blobVersionedHashes; }
  set blobVersionedHashes(v) { this.#m.blobVersionedHashes = v; }
  get accessWitness() { return this.#m.accessWitness; }
  set accessWitness(v) { this.#m.accessWitness = v; }
  get createdTargetAlive() { return this.#m.createdTargetAlive; }
  set createdTargetAlive(v) { this.#m.createdTargetAlive = v; }
}

/** True when the view forwards every field a Message of this @ethereumjs version has. */
const viewFitsMessage = Object.keys(new Message({ gasLimit: 0n })).every((key) => Object.getOwnPropertyDescriptor(MessageView.prototype, key)?.set);

type Spread = Record<string | symbol, unknown> & { codeAddress?: unknown; gasLimit?: bigint };

/** What `{ ...{ codeAddress }, ...message, gasLimit }` makes of the message behind the view, without adding to a copy. */
function spreadOf(view: MessageView, spread: Spread): Spread {
  const plain: Spread = { codeAddress: spread.codeAddress, ...(MessageView.messageOf(view) as object), gasLimit: spread.gasLimit };
  // A field the view does not forward, written during the frame, became the view's own.
  for (const key of Object.keys(spread)) if (key !== 'codeAddress' && key !== 'gasLimit') plain[key] = spread[key];
  return plain;
}

interface FrameMethods {
  _executeCall(message: unknown): Promise<unknown>;
  runInterpreter(message: unknown, opts?: unknown): Promise<unknown>;
}

function viewMessages(evm: FrameMethods): void {
  const executeCall = evm._executeCall;
  const runInterpreter = evm.runInterpreter;
  evm._executeCall = function (message) {
    return executeCall.call(this, message instanceof Message ? new MessageView(message) : message);
  };
  evm.runInterpreter = function (message, opts) {
    const view = (message as Spread | undefined)?.[VIEW];
    return runInterpreter.call(this, view instanceof MessageView ? spreadOf(view, message as Spread) : message, opts);
  };
}

// ------------------------------------------------------------------ the result

interface RunState {
  readonly gasLeft: bigint;
  readonly gasRefund: bigint;
  readonly stateGasSpilled: bigint;
}

interface RunResult {
  runState: RunState;
  exceptionError?: unknown;
}

type Run = (this: { readonly _evm: object; _result?: Record<string, unknown> }, code: Uint8Array, opts?: unknown) => Promise<RunResult>;

/** The fields of a run state the EVM reads after a frame, as prototype getters (no own fields). */
class RunStateView implements RunState {
  readonly #state: RunState;

  constructor(state: RunState) {
    this.#state = state;
  }

  get gasLeft(): bigint {
    return this.#state.gasLeft;
  }

  get gasRefund(): bigint {
    return this.#state.gasRefund;
  }

  get stateGasSpilled(): bigint {
    return this.#state.stateGasSpilled;
  }
}

/** Gives the frame's result the keys `runInterpreter`'s returned literal sets after spreading it (all overwritten there). */
function shapeLikeReturned(result: Record<string, unknown>): void {
  if ('executionGasUsed' in result) return;
  result.runState = undefined;
  result.exceptionError = undefined;
  result.gas = undefined;
  result.executionGasUsed = undefined;
  result.gasRefund = undefined;
  result.stateGasSpilled = undefined;
}

/** The EVMs whose frames are made light. */
const marked = new WeakSet<object>();

/**
 * Makes the frames of `evm` copy little (resolves false when the interpreter could not be found:
 * nothing changes then).
 */
export async function lightFrames(evm: object): Promise<boolean> {
  const ok = await wrapInterpreterMethod<Run>('run', (run) =>
    async function (this: { readonly _evm: object; _result?: Record<string, unknown> }, code: Uint8Array, opts?: unknown): Promise<RunResult> {
      const result = await run.call(this, code, opts);
      if (!marked.has(this._evm) || !result?.runState) return result;
      if (this._result) shapeLikeReturned(this._result);
      return { runState: new RunStateView(result.runState), exceptionError: result.exceptionError };
    },
  );
  if (!ok) return false;
  marked.add(evm);
  if (viewFitsMessage) viewMessages(evm as FrameMethods);
  return true;
}
