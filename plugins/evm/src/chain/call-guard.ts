/**
 * Keeps an eth_call or eth_estimateGas from holding the node, and bounds it in time (geth's
 * `--rpc.evmtimeout`). @ethereumjs' interpreter awaits every opcode, but on promises already
 * resolved, so a whole call runs in one turn of the event loop: a 50M-gas loop, or a call of 1,400
 * BN254 pairings (precompile 0x08, in JS), held every chain's API, /ext/health and consensus for
 * seconds, from one unauthenticated request (bench/evm-heavy-calls.mjs shows health's wait).
 *
 * So the VMs of a chain run under a CallGuard:
 * - it looks at the clock at JUMP and JUMPI, which every loop goes through, every CHECK_EVERY jumps,
 *   and at each CALL, CALLCODE, DELEGATECALL, STATICCALL, CREATE and CREATE2, before the inner frame
 *   and after it returns (code without a jump that calls itself runs hundreds of frames deep, each
 *   running its code, up to 24 KB, on the way down and again on the way back: seconds for one call
 *   with no look on a VM over an in-memory store; on a node the frames' reads from disk happened to
 *   give the event loop turns. Test: call-guard.test.ts "code without a jump that calls itself"). At a look: a turn of the event loop once
 *   SLICE_MS of the call ran since the last one, and, for a call with a deadline (the reading VM's
 *   eth_call and eth_estimateGas, reader.ts), past it the frame halts with
 *   `execution aborted (timeout = …)` (each enclosing frame halts at its next look);
 * - heavy precompile work (large pairing checks, costly MODEXPs) runs on a worker thread (precompiles/offload.ts),
 *   waited for until the deadline if any.
 * The executing VM (blocks) gets the turns and the worker but no deadline: a block's txs must run to
 * the same end on every node (a tx of 650 pairings fits the 128 KiB tx size). Test: call-guard.test.ts
 * "a block whose tx runs a large pairing check".
 */
import { EVMError } from '@ethereumjs/evm';
import type { VM } from '@ethereumjs/vm';
import type { StopSignal } from '../evm-backend.js';
import { importEvmInternal } from './patches/evm-internals.js';

/**
 * Jumps between two looks at the clock: few enough that a loop with a costly body (a LOG1 each:
 * bench/evm-abuse.mjs logtx) still looks within a slice, many enough that a look stays a small
 * part of the cheapest loop's cost (bench/evm.mjs).
 */
const CHECK_EVERY = 64;
/** Longest run of a call between two turns of the event loop, ms. */
export const SLICE_MS = 4;
/** geth's default --rpc.evmtimeout. */
export const DEFAULT_CALL_TIMEOUT_MS = 5_000;

const JUMP = 0x56;
const JUMPI = 0x57;
/** CREATE, CALL, CALLCODE, DELEGATECALL, CREATE2, STATICCALL: the opcodes that run an inner frame. */
const FRAME_OPS = [0xf0, 0xf1, 0xf2, 0xf4, 0xf5, 0xfa];

export interface CallGuardClock {
  now(): number;
  /** A turn of the event loop. */
  yieldTurn(): Promise<void>;
}

/**
 * Guarded runs waiting for their next slice, resumed one per turn of the event loop: a run resuming
 * on its own setImmediate would run in the same turn as every other run in flight (the call VMs and
 * the executing VM), so a turn would last a slice per run. One slice per turn keeps the time between
 * two looks at the network near SLICE_MS; the runs share it in turn (test "guarded runs in flight
 * share one slice per turn of the event loop"; bench/attack.mjs).
 */
export class SliceQueue {
  readonly #waiting: Array<() => void> = [];
  #scheduled = false;

  /** Resolves on a later turn, when it is this run's turn. */
  next(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.#waiting.push(resolve);
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#scheduled || this.#waiting.length === 0) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#waiting.shift()?.();
      this.#schedule();
    });
  }
}

const slices = new SliceQueue();

const systemClock: CallGuardClock = {
  now: () => performance.now(),
  yieldTurn: () => slices.next(),
};

/** The time bound of the call running on one VM (calls on it run one at a time: reader.ts). */
export class CallGuard {
  #deadline = Infinity;
  #timeoutMs = 0;
  #lastTurn = 0;
  #expired = false;

  constructor(readonly clock: CallGuardClock = systemClock) {}

  /** Whether the call running (or the last one) ran past its deadline. */
  get expired(): boolean {
    return this.#expired;
  }

  /** geth's text for a call past its deadline. */
  get message(): string {
    return `execution aborted (timeout = ${formatMs(this.#timeoutMs)})`;
  }

  /**
   * Runs `fn` (one call on the guarded VM) with `timeoutMs` to finish (0: no bound, still yielding
   * turns). When `signal` aborts (the request's client went away, or its deadline passed) the call
   * halts at its next look, as past its deadline: an abandoned call stops within a slice instead of
   * running to its deadline (test: call-guard.test.ts "an aborted call halts at its next look").
   */
  async run<T>(timeoutMs: number, fn: () => Promise<T>, signal?: StopSignal): Promise<T> {
    const now = this.clock.now();
    this.#timeoutMs = timeoutMs;
    this.#deadline = timeoutMs > 0 ? now + timeoutMs : Infinity;
    this.#lastTurn = now;
    this.#expired = signal?.aborted === true;
    const onAbort = (): void => {
      this.#expired = true;
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      return await fn();
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.#deadline = Infinity;
    }
  }

  /** Ms left before the deadline (Infinity when unbounded; 0 once halted). */
  remainingMs(): number {
    return this.#expired ? 0 : this.#deadline - this.clock.now();
  }

  /** Halts the frame once the call is past its deadline; gives the event loop a turn now and then. */
  async check(): Promise<void> {
    if (this.#expired) throw this.timeoutError();
    const now = this.clock.now();
    if (now > this.#deadline) {
      this.#expired = true;
      throw this.timeoutError();
    }
    if (now - this.#lastTurn >= SLICE_MS) {
      await this.clock.yieldTurn();
      this.#lastTurn = this.clock.now();
    }
  }

  /** Marks the call as past its deadline (a precompile that lost the race). */
  expire(): EVMError {
    this.#expired = true;
    return this.timeoutError();
  }

  timeoutError(): EVMError {
    return new EVMError(this.message as never);
  }
}

function formatMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

interface OpcodeInfo {
  readonly code: number;
  readonly name: string;
  readonly fullName: string;
  readonly fee: number;
  readonly isAsync: boolean;
  readonly dynamicGas: boolean;
}
interface OpcodeEntry {
  readonly opcodeInfo: OpcodeInfo;
  readonly opHandler: (runState: unknown, common: unknown) => void;
  readonly gasHandler?: unknown;
}
type OpcodeClass = new (fields: OpcodeInfo) => OpcodeInfo;

/**
 * Puts `guard` on `vm`'s JUMP, JUMPI and frame opcodes (this VM's opcode table only: each EVM has its
 * own copy). Must run before the VM runs any code (the jump analysis keeps the table's entries). False
 * when the table is not where @ethereumjs keeps it: nothing changes then.
 */
export async function installCallGuard(vm: VM, guard: CallGuard): Promise<boolean> {
  const map = (vm.evm as unknown as { _opcodeMap?: OpcodeEntry[] })._opcodeMap;
  const { Opcode } = await importEvmInternal<{ Opcode?: OpcodeClass }>('opcodes/codes.js');
  if (!Array.isArray(map) || typeof Opcode !== 'function') return false;
  for (const op of [JUMP, JUMPI, ...FRAME_OPS]) {
    const entry = map[op];
    if (!entry || entry.opcodeInfo.code !== op || typeof entry.opHandler !== 'function') return false;
  }
  /** `op`'s entry with `handler` in place of its own, marked async (the interpreter awaits it). */
  const replace = (op: number, handler: (run: OpcodeEntry['opHandler']) => OpcodeEntry['opHandler']): void => {
    const { opcodeInfo: info, opHandler, gasHandler } = map[op]!;
    const asyncInfo = new Opcode({ code: info.code, name: info.name, fullName: info.fullName, fee: info.fee, isAsync: true, dynamicGas: info.dynamicGas });
    map[op] = { opcodeInfo: asyncInfo, opHandler: handler(opHandler), gasHandler };
  };
  let countdown = CHECK_EVERY;
  // A jump returns a promise only when it looks at the clock.
  for (const op of [JUMP, JUMPI]) {
    replace(op, (jump) => (runState, common) => {
      jump(runState, common);
      if (--countdown > 0 && !guard.expired) return undefined;
      countdown = CHECK_EVERY;
      return guard.check();
    });
  }
  // A frame opcode is async already and costs far more than a look.
  for (const op of FRAME_OPS) {
    replace(op, (enter) => async (runState, common) => {
      await guard.check();
      await enter(runState, common);
      await guard.check();
    });
  }
  return true;
}
