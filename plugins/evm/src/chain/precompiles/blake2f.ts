/**
 * The BLAKE2F precompile (0x09) of a guarded VM: its gas is one per round, and a round in JS costs
 * far more than a gas unit elsewhere, so one eth_call of 10M rounds (10M gas) held the node for
 * seconds (bench/evm-heavy-calls.mjs). A call of more than
 * IN_PROCESS_ROUNDS rounds runs on the precompile worker (offload.ts) with the stock precompile;
 * wrong lengths, a bad final flag and inputs the gas does not cover go to the stock one in process.
 */
import type { ExecResult, PrecompileInput } from '@ethereumjs/evm';
import type { CallGuard } from '../call-guard.js';
import { halted, offThread, type Precompile, type PrecompileWorker } from './offload.js';

/** Rounds computed in process (a few tens of ms). */
export const IN_PROCESS_ROUNDS = 100_000;
const INPUT_BYTES = 213;
/** Rounds a ms, pessimistic (below what bench/evm-heavy-calls.mjs measures), for the worker's stall bound. */
const ROUNDS_PER_MS = 2_000;

/** The rounds of a well-formed input, else undefined. */
export function blake2fRounds(data: Uint8Array): number | undefined {
  if (data.length !== INPUT_BYTES || data[212]! > 1) return undefined;
  return new DataView(data.buffer, data.byteOffset, 4).getUint32(0);
}

export function offThreadBlake2f(stock: Precompile, guard: CallGuard, worker: PrecompileWorker): Precompile {
  return async (opts: PrecompileInput): Promise<ExecResult> => {
    const rounds = blake2fRounds(opts.data);
    if (rounds === undefined || rounds <= IN_PROCESS_ROUNDS) return await stock(opts);
    const gasUsed = opts.common.param('blake2RoundGas') * BigInt(rounds);
    if (opts.gasLimit < gasUsed) return await stock(opts); // out of gas, before any work
    const result = await offThread(guard, worker, 'blake2f', opts.data, rounds / ROUNDS_PER_MS);
    if (result === 'late') return halted(guard.expire(), opts.gasLimit);
    // No worker, or a hung one (or, not expected, a failure: the checks above are the stock's): in process.
    if (result === undefined || !('output' in result)) return await stock(opts);
    return { executionGasUsed: gasUsed, returnValue: result.output };
  };
}
