/**
 * A guarded VM's heavy precompiles (chain/call-guard.ts: the reading and the executing VM) run off the
 * event loop. @ethereumjs computes a precompile in one synchronous call: the BN254 pairing check of
 * the ~1,470 pairs eth_call's gas cap allows, a MODEXP of a long exponent or many BLAKE2F rounds
 * take seconds during which the node answers nothing, a KZG proof tens of ms
 * (bench/evm-heavy-calls.mjs).
 * Such work runs on one worker thread (offload-worker.ts) with the same code, so results and errors
 * are the stock precompile's; a call with a deadline waits for it at most until then, and a hung
 * worker is bounded by the stall bound (the work is then redone in process). Light inputs stay in
 * process (pairing.ts, modexp.ts, blake2f.ts, kzg.ts); guarded.ts puts them in a VM.
 */
import { Worker } from 'node:worker_threads';
import { EVMError, type ExecResult, type PrecompileInput } from '@ethereumjs/evm';
import type { CallGuard } from '../call-guard.js';
import type { OffloadJob, OffloadKind, OffloadResult } from './offload-protocol.js';

export type Precompile = (opts: PrecompileInput) => Promise<ExecResult> | ExecResult;

const WORKER_URL = new URL('./offload-worker.js', import.meta.url);

/** How long the worker may take for a job expected to take `expectedMs` before it is taken as hung. */
export const defaultStallMs = (expectedMs: number): number => 2_000 + 8 * expectedMs;

export interface PrecompileWorkerOptions {
  /** The worker script (default offload-worker.js); tests give one that never answers. */
  readonly url?: URL;
  /** See defaultStallMs. */
  readonly stallMs?: (expectedMs: number) => number;
}

interface Job {
  readonly seq: number;
  readonly kind: OffloadKind;
  readonly input: Uint8Array;
  readonly expectedMs: number;
  readonly resolve: (r: OffloadResult | 'late') => void;
  readonly reject: (e: Error) => void;
  deadline?: ReturnType<typeof setTimeout>;
  stall?: ReturnType<typeof setTimeout>;
}

const unref = (t: ReturnType<typeof setTimeout>) => (t.unref?.(), t);

/**
 * The precompile worker: one job at a time, the others queued here (so a job past its deadline
 * leaves nothing behind it), jobs without a deadline (a block's) before those with one (calls').
 * A job whose deadline passes while queued is dropped; while running, the worker is ended with it
 * (its work is not wanted), and the next job starts a new one. A job that outlasts its stall bound,
 * or a worker that fails, fails the job: its caller computes in process. The worker keeps the
 * process alive only while a job is pending.
 */
export class PrecompileWorker {
  readonly #url: URL;
  readonly #stallMs: (expectedMs: number) => number;
  #worker: Worker | undefined;
  #seq = 0;
  readonly #queue: Job[] = [];
  #running: Job | undefined;

  constructor(opts: PrecompileWorkerOptions = {}) {
    this.#url = opts.url ?? WORKER_URL;
    this.#stallMs = opts.stallMs ?? defaultStallMs;
  }

  /** The job's result, or 'late' when `deadlineMs` passed first; rejects when the worker failed or stalled. */
  check(kind: OffloadKind, input: Uint8Array, { expectedMs = 0, deadlineMs = Number.POSITIVE_INFINITY } = {}): Promise<OffloadResult | 'late'> {
    return new Promise((resolve, reject) => {
      const job: Job = { seq: ++this.#seq, kind, input, expectedMs, resolve, reject };
      if (Number.isFinite(deadlineMs)) {
        job.deadline = unref(setTimeout(() => this.#late(job), Math.max(0, deadlineMs)));
        this.#queue.push(job);
      } else {
        // A block's work (no deadline) goes before calls' work: every node waits for the block.
        const firstCall = this.#queue.findIndex((j) => j.deadline !== undefined);
        this.#queue.splice(firstCall < 0 ? this.#queue.length : firstCall, 0, job);
      }
      this.#next();
    });
  }

  /** Ends the worker: the running job fails (its caller computes in process); the next job starts a new worker. */
  async stop(): Promise<void> {
    await this.#worker?.terminate();
  }

  #next(): void {
    while (!this.#running) {
      const job = this.#queue.shift();
      if (!job) {
        this.#worker?.unref();
        return;
      }
      let worker: Worker;
      try {
        worker = this.#start();
      } catch (e) {
        // No thread to be had (a resource limit): this job, and the next, are computed in process.
        this.#settle(job);
        job.reject(new Error(`precompile worker could not start: ${(e as Error).message}`));
        continue;
      }
      this.#running = job;
      worker.ref();
      const ms = Math.ceil(this.#stallMs(job.expectedMs));
      job.stall = unref(setTimeout(() => this.#fail(job, `did not answer within ${ms} ms`), ms));
      try {
        worker.postMessage({ seq: job.seq, kind: job.kind, input: job.input } satisfies OffloadJob);
      } catch (e) {
        this.#fail(job, `refused the job: ${(e as Error).message}`);
      }
    }
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
    job.reject(new Error(`precompile worker ${why}`));
    this.#next();
  }

  /** Ends the current worker without failing anything (the caller settles the running job). */
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
    worker.on('message', (r: OffloadResult) => {
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

/** The one worker of the process, for every guarded VM. */
export const sharedPrecompileWorker = new PrecompileWorker();

/** Ends the shared precompile worker (see PrecompileWorker.stop); for tests of a worker lost mid-job. */
export function stopPrecompileWorker(): Promise<void> {
  return sharedPrecompileWorker.stop();
}

/** A precompile that halts with `error`, all gas used (as the stock ones do). */
export function halted(error: EVMError, gasLimit: bigint): ExecResult {
  return { returnValue: new Uint8Array(0), executionGasUsed: gasLimit, exceptionError: error };
}

/** A precompile out of gas: all of it used. */
export function outOfGas(gasLimit: bigint): ExecResult {
  return halted(new EVMError(EVMError.errorMessages.OUT_OF_GAS), gasLimit);
}

/**
 * `kind`'s work on `worker` within the time `guard` leaves the call: the worker's result; 'late' when
 * the deadline passed first (the caller halts with `guard.expire()`); undefined when the worker
 * failed or hung, and the caller must compute in process (a block's result must not depend on it).
 */
export async function offThread(guard: CallGuard, worker: PrecompileWorker, kind: OffloadKind, input: Uint8Array, expectedMs: number): Promise<OffloadResult | 'late' | undefined> {
  const left = guard.remainingMs();
  if (left <= 0) return 'late';
  try {
    return await worker.check(kind, input, { expectedMs, deadlineMs: left });
  } catch {
    return undefined;
  }
}
