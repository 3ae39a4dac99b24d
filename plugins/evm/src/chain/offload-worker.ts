/**
 * The precompile worker thread (offload.ts): runs a guarded VM's heavy precompile work and posts
 * back the result bytes, or the EVM error it threw (`error` undefined: not an EVM error, which the
 * precompile turns into a revert, as the stock one does).
 * - `pairing`: @ethereumjs' own BN254 pairing check, the same library the in-process precompile uses.
 * - `modexp`: modexp.ts's exponentiation of the precompile's input (its gas already charged).
 */
import { parentPort } from 'node:worker_threads';
import { NobleBN254 } from '@ethereumjs/evm';
import { modexpOutput } from './modexp.js';

export type OffloadKind = 'pairing' | 'modexp';

export interface OffloadJob {
  readonly seq: number;
  readonly kind: OffloadKind;
  readonly input: Uint8Array;
}

export type OffloadResult = { readonly seq: number; readonly output: Uint8Array } | { readonly seq: number; readonly failed: true; readonly error?: string };

const bn254 = new NobleBN254();

parentPort?.on('message', ({ seq, kind, input }: OffloadJob) => {
  let result: OffloadResult;
  try {
    result = { seq, output: kind === 'pairing' ? bn254.pairing(input) : modexpOutput(input) };
  } catch (e) {
    const error = (e as { errorType?: unknown; error?: unknown } | null)?.errorType === 'EVMError' ? String((e as { error: unknown }).error) : undefined;
    result = { seq, failed: true, ...(error !== undefined ? { error } : {}) };
  }
  parentPort!.postMessage(result);
});
