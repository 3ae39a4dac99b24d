/**
 * Signature recovery ahead of time, on worker threads. Recovery is the costly part of checking a
 * signed tx (bench/machine.mjs measures recoveries per second on one core), and it needs nothing but the tx:
 * a VM hands a tx's (hash, signature) pairs to `prerecoverSigners` before its ordered, stateful
 * checks, and `recoverSigner` then finds each signer already known. Pairs asked for within one turn
 * of the event loop (say, the calls of one JSON-RPC batch) travel to a worker as one message.
 *
 * Only ever an optimisation: a pair the workers could not recover (an invalid signature, a worker
 * that died or took longer than its bound) is simply not remembered, and recoverSigner recovers it
 * (and reports its error) itself. With one CPU the pool is off.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { bytesEqual } from '../encoding/bytes.js';
import { ShortId } from '../ids/id.js';
import { recoveredSigners } from './signer-cache.js';
import type { RecoveryJob, RecoveryResult } from './recovery-worker.js';

export interface RecoveryPoolOptions {
  /** Worker threads (default: one fewer than the CPUs, at most 4; 0 turns the pool off). */
  workers?: number;
  /** Longest a job may take before its callers go on without it (default 5 s). */
  jobTimeoutMs?: number;
}

interface Pending {
  hash: Uint8Array;
  sig: Uint8Array;
}

interface Job {
  items: Pending[];
  done: () => void;
  timer: ReturnType<typeof setTimeout>;
}

const DEFAULT_JOB_TIMEOUT_MS = 5_000;
/**
 * Most pairs in one job. A turn's pairs (a JSON-RPC batch of 100 txs) go as several jobs, and each
 * caller is released as soon as the jobs up to its pairs are back, so the VM checks the first txs
 * while the worker recovers the next instead of waiting for all of them. Test: recovery-pool.test.ts
 * 'a turn of 100 callers goes as several jobs: …'.
 */
export const MAX_JOB_PAIRS = 16;
const WORKER_URL = new URL('./recovery-worker.js', import.meta.url);

class RecoveryPool {
  readonly #size: number;
  readonly #jobTimeoutMs: number;
  readonly #workers: Array<Worker | undefined> = [];
  /** Jobs sent to each worker, by sequence number. */
  readonly #jobs: Array<Map<number, Job>> = [];
  #next = 0;
  #seq = 0;
  #queue: Pending[] = [];
  /** The callers of this turn, each with the queue length after its pairs (they are contiguous). */
  #waiters: Array<{ release: () => void; end: number }> = [];
  #flushScheduled = false;
  #broken = false;

  constructor(opts: RecoveryPoolOptions) {
    this.#size = Math.max(0, Math.floor(opts.workers ?? Math.min(4, availableParallelism() - 1)));
    this.#jobTimeoutMs = opts.jobTimeoutMs ?? DEFAULT_JOB_TIMEOUT_MS;
  }

  get enabled(): boolean {
    return this.#size > 0 && !this.#broken;
  }

  add(pairs: readonly Pending[]): Promise<void> {
    const todo = pairs.filter(({ hash, sig }) => hash.length === 32 && sig.length === 65 && !isKnown(hash, sig));
    if (!this.enabled || todo.length === 0) return Promise.resolve();
    for (const p of todo) this.#queue.push(p);
    const done = new Promise<void>((release) => this.#waiters.push({ release, end: this.#queue.length }));
    if (!this.#flushScheduled) {
      this.#flushScheduled = true;
      setImmediate(() => this.#flush());
    }
    return done;
  }

  async close(): Promise<void> {
    const workers = this.#workers.splice(0);
    for (const jobs of this.#jobs.splice(0)) for (const job of jobs.values()) finish(job);
    await Promise.all(workers.map((w) => w?.terminate()));
  }

  /**
   * Sends what was queued this turn as jobs of at most MAX_JOB_PAIRS, spread over the workers; a
   * caller is released once every job up to its last pair is back (so callers are released in the
   * order they asked, as jobs return).
   */
  #flush(): void {
    this.#flushScheduled = false;
    const items = this.#queue;
    const waiters = this.#waiters;
    this.#queue = [];
    this.#waiters = [];
    if (!this.enabled) return waiters.forEach((w) => w.release());
    const jobs = Math.ceil(items.length / MAX_JOB_PAIRS);
    const back = new Array<boolean>(jobs).fill(false);
    let through = 0; // jobs 0..through-1 are back
    let next = 0; // first waiter not yet released
    const jobDone = (k: number) => {
      back[k] = true;
      while (through < jobs && back[through]) through++;
      const covered = through === jobs ? items.length : through * MAX_JOB_PAIRS;
      while (next < waiters.length && waiters[next]!.end <= covered) waiters[next++]!.release();
    };
    for (let k = 0; k < jobs; k++) this.#send(items.slice(k * MAX_JOB_PAIRS, (k + 1) * MAX_JOB_PAIRS), () => jobDone(k));
  }

  #send(items: Pending[], done: () => void): void {
    const index = this.#next++ % this.#size;
    let worker: Worker;
    try {
      worker = this.#worker(index);
    } catch {
      this.#broken = true;
      return done();
    }
    const seq = this.#seq++;
    const hashes = new Uint8Array(items.length * 32);
    const sigs = new Uint8Array(items.length * 65);
    items.forEach((p, i) => (hashes.set(p.hash, i * 32), sigs.set(p.sig, i * 65)));
    const jobs = this.#jobs[index]!;
    const timer = setTimeout(() => {
      jobs.delete(seq);
      this.#idle(index);
      done();
    }, this.#jobTimeoutMs);
    jobs.set(seq, { items, done, timer });
    worker.ref();
    const job: RecoveryJob = { seq, hashes, sigs };
    worker.postMessage(job, [hashes.buffer, sigs.buffer]);
  }

  #worker(index: number): Worker {
    const existing = this.#workers[index];
    if (existing) return existing;
    const worker = new Worker(WORKER_URL);
    const jobs = new Map<number, Job>();
    this.#workers[index] = worker;
    this.#jobs[index] = jobs;
    worker.unref();
    worker.on('message', ({ seq, addresses, ok }: RecoveryResult) => {
      const job = jobs.get(seq);
      if (!job) return;
      jobs.delete(seq);
      job.items.forEach((p, i) => {
        if (ok[i]) recoveredSigners.set(p.sig, { hash: p.hash, signer: ShortId.fromBytes(addresses.slice(i * 20, i * 20 + 20)) });
      });
      finish(job);
      this.#idle(index);
    });
    const lost = () => {
      if (this.#workers[index] !== worker) return;
      this.#workers[index] = undefined;
      for (const job of jobs.values()) finish(job);
      jobs.clear();
    };
    worker.on('error', () => {
      this.#broken = true; // a worker that cannot load or throws: recover inline from now on
      lost();
    });
    worker.on('exit', lost);
    return worker;
  }

  /** Lets the process exit while a worker has nothing to do. */
  #idle(index: number): void {
    if (this.#jobs[index]?.size === 0) this.#workers[index]?.unref();
  }
}

function finish(job: Job): void {
  clearTimeout(job.timer);
  job.done();
}

function isKnown(hash: Uint8Array, sig: Uint8Array): boolean {
  const known = recoveredSigners.get(sig);
  return known !== undefined && bytesEqual(known.hash, hash);
}

let pool = new RecoveryPool({});

/**
 * Recovers the signer of each (32-byte hash, 65-byte signature) pair on a worker thread, so that
 * `recoverSigner` on the same signature object finds it without recovering. Resolves when done, or
 * at once when the pool is off; never rejects (see the module comment).
 */
export function prerecoverSigners(pairs: readonly { hash: Uint8Array; sig: Uint8Array }[]): Promise<void> {
  return pool.add(pairs);
}

/** Replaces the pool (tests; an operator's thread budget). The old one's workers are stopped. */
export async function configureRecoveryPool(opts: RecoveryPoolOptions): Promise<void> {
  const old = pool;
  pool = new RecoveryPool(opts);
  await old.close();
}

/** True when recovery runs on workers (more than one CPU, not turned off, workers load). */
export function recoveryPoolEnabled(): boolean {
  return pool.enabled;
}
