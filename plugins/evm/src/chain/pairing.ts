/**
 * The BN254 pairing check (precompile 0x08) of a guarded VM (call-guard.ts: the reading and the
 * executing VM), off the event loop. In JS it costs ~6 ms per pair here, and the gas cap of eth_call
 * allows ~1,470 pairs: ~9 s during which the node answered nothing. A check of more than
 * IN_PROCESS_PAIRS pairs runs on a worker thread instead, with the same library (pairing-worker.ts),
 * so its result and its errors are the stock precompile's; a call with a deadline waits for it at
 * most until then, and a hung worker is bounded by defaultStallMs (the check is then redone in
 * process). Smaller checks, wrong input lengths and inputs the gas does not cover go to the stock
 * precompile unchanged.
 */
import { Worker } from 'node:worker_threads';
import type { Common } from '@ethereumjs/common';
import { EVMError, getActivePrecompiles, type ExecResult, type PrecompileInput } from '@ethereumjs/evm';
import { Address, hexToBytes } from '@ethereumjs/util';
import type { CallGuard } from './call-guard.js';
import type { CustomPrecompiles } from './executor.js';
import type { PairingJob, PairingResult } from './pairing-worker.js';

/** Pairs checked in process (~25 ms). */
export const IN_PROCESS_PAIRS = 4;
const PAIR_BYTES = 192;
export const PAIRING_ADDRESS = '0000000000000000000000000000000000000008';

const WORKER_URL = new URL('./pairing-worker.js', import.meta.url);

/** How long the worker may take for a check of `pairs` pairs before it is taken as hung (~6 ms a pair here). */
export const defaultStallMs = (pairs: number): number => 2_000 + 50 * pairs;

export interface PairingWorkerOptions {
  /** The worker script (default pairing-worker.js); tests give one that never answers. */
  readonly url?: URL;
  /** See defaultStallMs. */
  readonly stallMs?: (pairs: number) => number;
}

interface Job {
  readonly seq: number;
  readonly input: Uint8Array;
  readonly resolve: (r: PairingResult | 'late') => void;
  readonly reject: (e: Error) => void;
  deadline?: ReturnType<typeof setTimeout>;
  stall?: ReturnType<typeof setTimeout>;
}

const unref = (t: ReturnType<typeof setTimeout>) => (t.unref?.(), t);

/**
 * The pairing worker: one check at a time, the others queued here (so a check past its deadline
 * leaves nothing behind it). A check whose deadline passes while queued is dropped; while running,
 * the worker is ended with it (its work is not wanted), and the next check starts a new one. A check
 * that outlasts stallMs, or a worker that fails, fails the check: its caller checks in process.
 * The worker keeps the process alive only while a check is pending.
 */
export class PairingWorker {
  readonly #url: URL;
  readonly #stallMs: (pairs: number) => number;
  #worker: Worker | undefined;
  #seq = 0;
  readonly #queue: Job[] = [];
  #running: Job | undefined;

  constructor(opts: PairingWorkerOptions = {}) {
    this.#url = opts.url ?? WORKER_URL;
    this.#stallMs = opts.stallMs ?? defaultStallMs;
  }

  /** The check's result, or 'late' when `deadlineMs` passed first; rejects when the worker failed or stalled. */
  check(input: Uint8Array, deadlineMs = Number.POSITIVE_INFINITY): Promise<PairingResult | 'late'> {
    return new Promise((resolve, reject) => {
      const job: Job = { seq: ++this.#seq, input, resolve, reject };
      if (Number.isFinite(deadlineMs)) job.deadline = unref(setTimeout(() => this.#late(job), Math.max(0, deadlineMs)));
      this.#queue.push(job);
      this.#next();
    });
  }

  /** Ends the worker: the running check fails (its caller checks in process); the next check starts a new worker. */
  async stop(): Promise<void> {
    await this.#worker?.terminate();
  }

  #next(): void {
    if (this.#running) return;
    const job = this.#queue.shift();
    if (!job) {
      this.#worker?.unref();
      return;
    }
    this.#running = job;
    const worker = this.#start();
    worker.ref();
    const ms = this.#stallMs(job.input.length / PAIR_BYTES);
    job.stall = unref(setTimeout(() => this.#fail(job, `did not answer within ${ms} ms`), ms));
    worker.postMessage({ seq: job.seq, input: job.input } satisfies PairingJob);
  }

  #settle(job: Job): void {
    clearTimeout(job.deadline);
    clearTimeout(job.stall);
    if (this.#running === job) this.#running = undefined;
  }

  #late(job: Job): void {
    const queued = this.#queue.indexOf(job);
    if (queued >= 0) this.#queue.splice(queued, 1);
    else if (this.#running === job) this.#end();
    else return;
    this.#settle(job);
    job.resolve('late');
    this.#next();
  }

  #fail(job: Job, why: string): void {
    if (this.#running !== job) return;
    this.#end();
    this.#settle(job);
    job.reject(new Error(`pairing worker ${why}`));
    this.#next();
  }

  /** Ends the current worker without failing anything (the caller settles the running check). */
  #end(): void {
    const worker = this.#worker;
    this.#worker = undefined;
    void worker?.terminate();
  }

  #start(): Worker {
    if (this.#worker) return this.#worker;
    const worker = new Worker(this.#url);
    worker.unref();
    const lost = (why: string) => {
      if (this.#worker !== worker) return; // ended on purpose
      this.#worker = undefined;
      if (this.#running) this.#fail(this.#running, why);
    };
    worker.on('message', (r: PairingResult) => {
      const job = this.#running;
      if (this.#worker !== worker || !job || r.seq !== job.seq) return;
      this.#settle(job);
      job.resolve(r);
      this.#next();
    });
    worker.on('error', (e) => lost(`failed: ${e.message}`));
    worker.on('exit', (code) => lost(`exited (${code})`));
    this.#worker = worker;
    return worker;
  }
}

const shared = new PairingWorker();

/** Ends the shared pairing worker (see PairingWorker.stop); for tests of a worker lost mid-check. */
export function stopPairingWorker(): Promise<void> {
  return shared.stop();
}

/** A precompile that halts with `error`, all gas used (as the stock ones do). */
function halted(error: EVMError, gasLimit: bigint): ExecResult {
  return { returnValue: new Uint8Array(0), executionGasUsed: gasLimit, exceptionError: error };
}

/**
 * A guarded VM's custom precompiles: `custom` plus the off-thread pairing check at 0x08, unless
 * `custom` sets 0x08 itself or this hardfork has no pairing precompile.
 */
export function withOffThreadPairing(common: Common, custom: CustomPrecompiles | undefined, guard: CallGuard, worker: PairingWorker = shared): CustomPrecompiles | undefined {
  const overridden = custom?.some((p) => p.address.toString().toLowerCase() === `0x${PAIRING_ADDRESS}`);
  const stock = overridden ? undefined : getActivePrecompiles(common).get(PAIRING_ADDRESS);
  if (!stock) return custom;
  const pairing = async (opts: PrecompileInput): Promise<ExecResult> => {
    const length = opts.data.length;
    if (length % PAIR_BYTES !== 0 || length / PAIR_BYTES <= IN_PROCESS_PAIRS) return await stock(opts);
    const gasUsed = opts.common.param('bn254PairingGas') + BigInt(length / PAIR_BYTES) * opts.common.param('bn254PairingWordGas');
    if (opts.gasLimit < gasUsed) return await stock(opts); // out of gas, before any work
    const left = guard.remainingMs();
    if (left <= 0) return halted(guard.expire(), opts.gasLimit);
    let result: PairingResult | 'late';
    try {
      result = await worker.check(opts.data, left);
    } catch {
      return await stock(opts); // no worker, or a hung one: checked in process (a block's result must not depend on it)
    }
    if (result === 'late') return halted(guard.expire(), opts.gasLimit);
    if (!('output' in result)) return halted(new EVMError((result.error ?? EVMError.errorMessages.REVERT) as never), opts.gasLimit);
    if (result.output.length !== 32) return halted(new EVMError(EVMError.errorMessages.OUT_OF_GAS), opts.gasLimit);
    return { executionGasUsed: gasUsed, returnValue: result.output };
  };
  return [...(custom ?? []), { address: new Address(hexToBytes(`0x${PAIRING_ADDRESS}`)), function: pairing }];
}
