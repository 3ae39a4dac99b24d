/**
 * The precompile worker thread (offload.ts): runs a guarded VM's heavy precompile work and posts
 * back the result bytes, or the EVM error it threw (`error` undefined: not an EVM error, which the
 * precompile turns into a revert, as the stock one does).
 * - `pairing`: @ethereumjs' own BN254 pairing check, the same library the in-process precompile uses.
 * - `modexp`: modexp.ts's exponentiation of the precompile's input (its gas already charged).
 * - `blake2f`: the stock BLAKE2F precompile (its input checked and its gas charged already).
 * - `kzg`: kzg.ts's check of a point evaluation proof: one byte, 1 when it holds.
 */
import { parentPort } from 'node:worker_threads';
import { Common, Hardfork, Mainnet } from '@ethereumjs/common';
import { getActivePrecompiles, NobleBN254, paramsEVM, type ExecResult, type PrecompileInput } from '@ethereumjs/evm';
import { verifyPointEvaluation } from './kzg.js';
import { modexpOutput } from './modexp.js';
import type { OffloadJob, OffloadKind, OffloadResult } from './offload-protocol.js';

const bn254 = new NobleBN254();
const common = new Common({ chain: Mainnet, hardfork: Hardfork.Cancun, params: paramsEVM });
const blake2f = getActivePrecompiles(common).get('0000000000000000000000000000000000000009') as (opts: PrecompileInput) => ExecResult;

async function run(kind: OffloadKind, input: Uint8Array): Promise<Uint8Array> {
  if (kind === 'kzg') return Uint8Array.of((await verifyPointEvaluation(input)) ? 1 : 0);
  if (kind === 'pairing') return bn254.pairing(input);
  if (kind === 'modexp') return modexpOutput(input);
  const r = blake2f({ data: input, gasLimit: 1n << 62n, common } as unknown as PrecompileInput);
  if (r.exceptionError) throw r.exceptionError;
  return r.returnValue;
}

parentPort?.on('message', async ({ seq, kind, input }: OffloadJob) => {
  let result: OffloadResult;
  try {
    result = { seq, output: await run(kind, input) };
  } catch (e) {
    const error = (e as { errorType?: unknown; error?: unknown } | null)?.errorType === 'EVMError' ? String((e as { error: unknown }).error) : undefined;
    result = { seq, failed: true, ...(error !== undefined ? { error } : {}) };
  }
  parentPort!.postMessage(result);
});
