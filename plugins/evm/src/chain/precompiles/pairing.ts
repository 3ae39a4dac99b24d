/**
 * The BN254 pairing check (precompile 0x08) of a guarded VM: a check of more than IN_PROCESS_PAIRS
 * pairs runs on the precompile worker (offload.ts) with the same library. Smaller checks, wrong
 * input lengths and inputs the gas does not cover go to the stock precompile unchanged.
 */
import { EVMError, type ExecResult, type PrecompileInput } from '@ethereumjs/evm';
import type { CallGuard } from '../call-guard.js';
import { halted, offThread, outOfGas, type Precompile, type PrecompileWorker } from './offload.js';

/** Pairs checked in process (a few tens of ms). */
export const IN_PROCESS_PAIRS = 4;
const PAIR_BYTES = 192;
/** What one pair costs here, in JS, for the worker's stall bound. */
const MS_PER_PAIR = 6;

export function offThreadPairing(stock: Precompile, guard: CallGuard, worker: PrecompileWorker): Precompile {
  return async (opts: PrecompileInput): Promise<ExecResult> => {
    const length = opts.data.length;
    if (length % PAIR_BYTES !== 0 || length / PAIR_BYTES <= IN_PROCESS_PAIRS) return await stock(opts);
    const pairs = length / PAIR_BYTES;
    const gasUsed = opts.common.param('bn254PairingGas') + BigInt(pairs) * opts.common.param('bn254PairingWordGas');
    if (opts.gasLimit < gasUsed) return await stock(opts); // out of gas, before any work
    const result = await offThread(guard, worker, 'pairing', opts.data, pairs * MS_PER_PAIR);
    if (result === 'late') return halted(guard.expire(), opts.gasLimit);
    if (result === undefined) return await stock(opts); // checked in process
    if (!('output' in result)) return halted(new EVMError((result.error ?? EVMError.errorMessages.REVERT) as never), opts.gasLimit);
    if (result.output.length !== 32) return outOfGas(opts.gasLimit);
    return { executionGasUsed: gasUsed, returnValue: result.output };
  };
}
