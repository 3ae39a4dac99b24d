/**
 * At the end of every frame, @ethereumjs/evm's `runInterpreter` copies the interpreter's whole run
 * state (18 fields), the frame's result and its environment (19 fields) into one new object, the
 * result's `runState`, which neither @ethereumjs/vm nor this plugin reads. That one copy was nearly
 * half of each eth_call here: a call to a contract whose code is one STOP cost ~248 µs of CPU with it
 * and ~140 µs without, and the scavenges promoted 2.9 MB each instead of 1.3 MB (their pauses went
 * from ~11 ms to ~5 ms).
 *
 * So, for the EVMs marked here (makeVM's), the interpreter's `run` hands back in place of its run
 * state a view whose three fields the EVM reads from it (gasLeft, gasRefund, stateGasSpilled) are
 * getters on the view's prototype: the copy finds no own field in it. Everything else the frame
 * returns is unchanged. The interpreter is not exported by @ethereumjs/evm: its module is loaded by
 * file (evm-internals.ts) and its prototype method wrapped once; other EVMs get the stock result.
 */
import { wrapInterpreterMethod } from './evm-internals.js';

interface RunState {
  readonly gasLeft: bigint;
  readonly gasRefund: bigint;
  readonly stateGasSpilled: bigint;
}

interface RunResult {
  runState: RunState;
  exceptionError?: unknown;
}

type Run = (this: { readonly _evm: object }, code: Uint8Array, opts?: unknown) => Promise<RunResult>;

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

/** The EVMs whose frames return the view. */
const marked = new WeakSet<object>();

/**
 * Has the frames of `evm` return the light run state (resolves false when the interpreter could not
 * be found: nothing changes then).
 */
export async function lightFrameResults(evm: object): Promise<boolean> {
  const ok = await wrapInterpreterMethod<Run>('run', (run) =>
    async function (this: { readonly _evm: object }, code: Uint8Array, opts?: unknown): Promise<RunResult> {
      const result = await run.call(this, code, opts);
      if (!marked.has(this._evm) || !result?.runState) return result;
      return { runState: new RunStateView(result.runState), exceptionError: result.exceptionError };
    },
  );
  if (ok) marked.add(evm);
  return ok;
}
