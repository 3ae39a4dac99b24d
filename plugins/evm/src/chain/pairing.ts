/**
 * The BN254 pairing check (precompile 0x08) of a guarded VM (call-guard.ts: the reading and the
 * executing VM), off the event loop. In JS it costs ~6 ms per pair here, and the gas cap of eth_call
 * allows ~1,470 pairs: ~9 s during which the node answered nothing. A check of more than
 * IN_PROCESS_PAIRS pairs runs on a worker thread instead, with the same library (pairing-worker.ts),
 * so its result and its errors are the stock precompile's; a call with a deadline waits for it at
 * most until then. Smaller checks, wrong input lengths and inputs the gas does not cover go to the
 * stock precompile unchanged.
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

/** One worker for every guarded VM of the process, started at the first large check; it keeps the process alive only while a check is pending. */
class PairingWorker {
  #worker: Worker | undefined;
  #seq = 0;
  readonly #pending = new Map<number, { resolve: (r: PairingResult) => void; reject: (e: Error) => void }>();

  check(input: Uint8Array): Promise<PairingResult> {
    const worker = this.#start();
    const seq = ++this.#seq;
    return new Promise<PairingResult>((resolve, reject) => {
      this.#pending.set(seq, { resolve, reject });
      worker.ref();
      worker.postMessage({ seq, input } satisfies PairingJob);
    });
  }

  /** Ends the worker: pending checks are lost (their callers check in process); the next large check starts a new one. */
  async stop(): Promise<void> {
    await this.#worker?.terminate();
  }

  #start(): Worker {
    if (this.#worker) return this.#worker;
    const worker = new Worker(WORKER_URL);
    worker.unref();
    const lost = (why: string) => {
      if (this.#worker !== worker) return;
      this.#worker = undefined;
      for (const p of this.#pending.values()) p.reject(new Error(`pairing worker ${why}`));
      this.#pending.clear();
    };
    worker.on('message', (r: PairingResult) => {
      const p = this.#pending.get(r.seq);
      if (!p) return;
      this.#pending.delete(r.seq);
      if (this.#pending.size === 0) worker.unref();
      p.resolve(r);
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
export function withOffThreadPairing(common: Common, custom: CustomPrecompiles | undefined, guard: CallGuard): CustomPrecompiles | undefined {
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
    let result: PairingResult;
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const deadline = Number.isFinite(left) ? new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), left))) : undefined;
      const r = await (deadline ? Promise.race([shared.check(opts.data), deadline]) : shared.check(opts.data));
      if (r === 'late') return halted(guard.expire(), opts.gasLimit);
      result = r;
    } catch {
      return await stock(opts); // no worker here: checked in process, as before
    } finally {
      clearTimeout(timer);
    }
    if (!('output' in result)) return halted(new EVMError((result.error ?? EVMError.errorMessages.REVERT) as never), opts.gasLimit);
    if (result.output.length !== 32) return halted(new EVMError(EVMError.errorMessages.OUT_OF_GAS), opts.gasLimit);
    return { executionGasUsed: gasUsed, returnValue: result.output };
  };
  return [...(custom ?? []), { address: new Address(hexToBytes(`0x${PAIRING_ADDRESS}`)), function: pairing }];
}
