/**
 * The pairing worker thread (pairing.ts): runs @ethereumjs' own BN254 pairing check (the same
 * library the in-process precompile uses) on the input of each job and posts back the 32 result
 * bytes, or the EVM error it threw (`error` undefined: not an EVM error, which the precompile turns
 * into a revert, as the stock one does).
 */
import { parentPort } from 'node:worker_threads';
import { NobleBN254 } from '@ethereumjs/evm';

export interface PairingJob {
  readonly seq: number;
  readonly input: Uint8Array;
}

export type PairingResult = { readonly seq: number; readonly output: Uint8Array } | { readonly seq: number; readonly failed: true; readonly error?: string };

const bn254 = new NobleBN254();

parentPort?.on('message', ({ seq, input }: PairingJob) => {
  let result: PairingResult;
  try {
    result = { seq, output: bn254.pairing(input) };
  } catch (e) {
    const error = (e as { errorType?: unknown; error?: unknown } | null)?.errorType === 'EVMError' ? String((e as { error: unknown }).error) : undefined;
    result = { seq, failed: true, ...(error !== undefined ? { error } : {}) };
  }
  parentPort!.postMessage(result);
});
