/**
 * What a call tracer needs to know that @ethereumjs' message events do not say: which opcode made
 * an inner frame (a CALL and a STATICCALL in a static context make the same message), the calls
 * and creates the interpreter refuses before making a message (call depth, balance: geth shows
 * them as frames with their error), the LOGs each frame emits and each SELFDESTRUCT.
 *
 * The interpreter's `call`, `callCode`, `callStatic`, `callDelegate`, `create`, `selfDestruct` and
 * `log` methods are wrapped once per process on its (unexported) prototype; a wrapper does nothing
 * but a WeakMap lookup for an EVM without a sink, so untraced VMs pay next to nothing. The methods are
 * wrapped, not the opcode table's entries: the jump analysis cache (patches/jump-analysis.ts) keeps a
 * table's entries per code array, so entries changed on a VM that already ran code would be missed.
 * Test: tracing.test.ts "callTracer".
 */
import type { Address } from '@ethereumjs/util';
import { wrapInterpreterMethod } from '../patches/evm-internals.js';

export type FrameType = 'CALL' | 'CALLCODE' | 'DELEGATECALL' | 'STATICCALL' | 'CREATE' | 'CREATE2';

/** An inner frame as its opcode asked for it (before the message, if any, is made). */
export interface FrameRequest {
  readonly type: FrameType;
  /** The frame's caller as geth names it (the running contract). */
  readonly from: Uint8Array;
  /** The callee (the code's address for CALLCODE and DELEGATECALL); undefined for a create. */
  readonly to?: Uint8Array;
  readonly value: bigint;
  /** The call's input or the create's init code, as the opcode read it (a copy, not a view of memory). */
  readonly input: Uint8Array;
  readonly gas: bigint;
}

export interface InterpreterSink {
  /** An opcode is about to make an inner frame; `done` follows when the opcode's call returns. */
  request(req: FrameRequest): void;
  /** The opcode's call returned; `refused` when the interpreter made no message (geth's error text). */
  done(req: FrameRequest, refused: string | undefined): void;
  log(address: Uint8Array, topics: readonly Uint8Array[], data: Uint8Array): void;
  selfDestruct(from: Uint8Array, to: Uint8Array, value: bigint): void;
}

interface Env {
  readonly address: Address;
  readonly caller: Address;
  readonly depth: number;
  readonly callValue: bigint;
  readonly contract: { readonly balance: bigint; readonly nonce: bigint };
}

interface InterpreterThis {
  readonly _evm: object;
  readonly _env: Env;
  readonly _result: { readonly logs: ReadonlyArray<[Uint8Array, Uint8Array[], Uint8Array]> };
}

type CallMethod = (this: InterpreterThis, gasLimit: bigint, address: Address, value: bigint, data: Uint8Array) => Promise<bigint>;
type CreateMethod = (this: InterpreterThis, gasLimit: bigint, value: bigint, code: Uint8Array, salt?: Uint8Array, eofCallData?: Uint8Array) => Promise<bigint>;
type SelfDestructMethod = (this: InterpreterThis, to: Address) => Promise<void>;
type LogMethod = (this: InterpreterThis, data: Uint8Array, topicCount: number, topics: Uint8Array[]) => void;

const sinks = new WeakMap<object, InterpreterSink>();
/** Messages begun since the last request, per EVM: none means the interpreter refused the frame. */
const begun = new WeakMap<object, number>();

/** The call depth limit (geth's and @ethereumjs' stackLimit param). */
const MAX_DEPTH = 1024;
const MAX_UINT64 = 2n ** 64n - 1n;

/** Counts a message beginning on `evm` (the tracer's beforeMessage listener calls it). */
export function messageBegun(evm: object): void {
  begun.set(evm, (begun.get(evm) ?? 0) + 1);
}

function callWrapper(type: Exclude<FrameType, 'CREATE' | 'CREATE2'>) {
  return (original: CallMethod): CallMethod =>
    async function (this: InterpreterThis, gasLimit, address, value, data) {
      const sink = sinks.get(this._evm);
      if (!sink) return original.call(this, gasLimit, address, value, data);
      const env = this._env;
      // geth's frame: a DELEGATECALL carries its caller's value; a STATICCALL has none. The input is
      // copied: `data` is a view of the caller's memory, which the call's output overwrites.
      const req: FrameRequest = { type, from: env.address.bytes, to: address.bytes, value: type === 'DELEGATECALL' ? env.callValue : value, input: data.slice(), gas: gasLimit };
      let refused: string | undefined;
      if (env.depth >= MAX_DEPTH) refused = 'max call depth exceeded';
      else if (type !== 'DELEGATECALL' && type !== 'STATICCALL' && env.contract.balance < value) refused = 'insufficient balance for transfer';
      sink.request(req);
      const before = begun.get(this._evm) ?? 0;
      try {
        return await original.call(this, gasLimit, address, value, data);
      } finally {
        sink.done(req, (begun.get(this._evm) ?? 0) === before ? (refused ?? 'max call depth exceeded') : undefined);
      }
    };
}

const createWrapper = (original: CreateMethod): CreateMethod =>
  async function (this: InterpreterThis, gasLimit, value, code, salt, eofCallData) {
    const sink = sinks.get(this._evm);
    if (!sink) return original.call(this, gasLimit, value, code, salt, eofCallData);
    const env = this._env;
    // The init code is copied: `code` is a view of the creator's memory, which it may write after.
    const req: FrameRequest = { type: salt ? 'CREATE2' : 'CREATE', from: env.address.bytes, value, input: code.slice(), gas: gasLimit };
    let refused: string | undefined;
    if (env.depth >= MAX_DEPTH) refused = 'max call depth exceeded';
    else if (env.contract.balance < value) refused = 'insufficient balance for transfer';
    else if (env.contract.nonce >= MAX_UINT64) refused = 'nonce uint64 overflow';
    sink.request(req);
    const before = begun.get(this._evm) ?? 0;
    try {
      return await original.call(this, gasLimit, value, code, salt, eofCallData);
    } finally {
      // A create refused after its checks (an address collision) made no message either: geth's text.
      sink.done(req, (begun.get(this._evm) ?? 0) === before ? (refused ?? 'contract address collision') : undefined);
    }
  };

const selfDestructWrapper = (original: SelfDestructMethod): SelfDestructMethod =>
  async function (this: InterpreterThis, to) {
    const sink = sinks.get(this._evm);
    if (sink) sink.selfDestruct(this._env.address.bytes, to.bytes, this._env.contract.balance);
    return original.call(this, to);
  };

const logWrapper = (original: LogMethod): LogMethod =>
  function (this: InterpreterThis, data, topicCount, topics) {
    original.call(this, data, topicCount, topics);
    const sink = sinks.get(this._evm);
    if (sink) {
      const log = this._result.logs[this._result.logs.length - 1]!;
      sink.log(log[0], log[1], log[2]);
    }
  };

let installed: Promise<boolean> | undefined;

/** Wraps the interpreter's methods once (false when this @ethereumjs version keeps them elsewhere). */
export function installInterpreterHooks(): Promise<boolean> {
  return (installed ??= (async () => {
    const results = await Promise.all([
      wrapInterpreterMethod<CallMethod>('call', callWrapper('CALL')),
      wrapInterpreterMethod<CallMethod>('callCode', callWrapper('CALLCODE')),
      wrapInterpreterMethod<CallMethod>('callStatic', callWrapper('STATICCALL')),
      wrapInterpreterMethod<CallMethod>('callDelegate', callWrapper('DELEGATECALL')),
      wrapInterpreterMethod<CreateMethod>('create', createWrapper),
      wrapInterpreterMethod<SelfDestructMethod>('selfDestruct', selfDestructWrapper),
      wrapInterpreterMethod<LogMethod>('log', logWrapper),
    ]);
    return results.every(Boolean);
  })());
}

/** Sends `evm`'s interpreter events to `sink` until `detach`. */
export async function attachSink(evm: object, sink: InterpreterSink): Promise<void> {
  if (!(await installInterpreterHooks())) throw new Error('the EVM interpreter cannot be traced: its methods are not where this version keeps them');
  sinks.set(evm, sink);
}

/**
 * The logs a stateful precompile emits (they never pass the interpreter's LOG method): sent to
 * `evm`'s sink while the precompile's frame is the innermost one, as geth's tracer sees a
 * precompile's logs. Called by the chain's stateful precompile runner (chain/hooks.ts). Test:
 * subnet-evm trace-precompile.test.ts.
 */
export function precompileLogs(evm: object, logs: ReadonlyArray<readonly [Uint8Array, Uint8Array[], Uint8Array]>): void {
  const sink = sinks.get(evm);
  if (sink) for (const [address, topics, data] of logs) sink.log(address, topics, data);
}

export function detachSink(evm: object, sink: InterpreterSink): void {
  if (sinks.get(evm) === sink) sinks.delete(evm);
}
