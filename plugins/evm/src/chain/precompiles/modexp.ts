/**
 * The MODEXP precompile (0x05) without @ethereumjs' slow paths, for every VM:
 * - its expMod shifts the whole exponent right by one bit per step, so an exponent of 100 KB (4.3M
 *   gas) held the node 3.4 s and one of 200 KB (34M gas, inside eth_call's cap) over 5 minutes. Here
 *   the exponent's bits are read from its bytes: one squaring, and a multiplication per set bit.
 * - it reads the operands (zero-padded to their declared lengths) before it looks at the modulus: an
 *   18 MB exponent declared in a 100-byte input (48M gas) held the node 6.8 s. Here a zero modulus
 *   (as there: the input ends before it) ends the call first.
 * Gas, size limits and errors follow the stock precompile's rules (EIP-198, -2565, -7883, -7823), as
 * the tests check input by input. A guarded VM runs exponentiations priced over IN_PROCESS_GAS on
 * the precompile worker (offload.ts).
 */
import type { ExecResult, PrecompileInput } from '@ethereumjs/evm';
import type { Common } from '@ethereumjs/common';
import { bigIntToBytes, bytesToBigInt, setLengthLeft } from '@ethereumjs/util';
import type { CallGuard } from '../call-guard.js';
import { halted, offThread, outOfGas, type Precompile, type PrecompileWorker } from './offload.js';

/** Exponentiations priced at most this much gas run in process (a few tens of ms at the slowest gas rate measured). */
export const IN_PROCESS_GAS = 100_000n;
/** A pessimistic rate (below the slowest measured, an 8-byte modulus: bench/evm-heavy-calls.mjs), for the worker's stall bound. */
const GAS_PER_MS = 2_000n;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** base ** exp % mod (mod > 0), left to right over the exponent's bytes. */
export function modexp(base: bigint, exp: Uint8Array, mod: bigint): bigint {
  if (mod === 1n) return 0n;
  let i = 0;
  while (i < exp.length && exp[i] === 0) i++;
  if (i === exp.length) return 1n;
  const b = base % mod;
  let r = 1n;
  for (; i < exp.length; i++) {
    const byte = exp[i]!;
    for (let bit = 7; bit >= 0; bit--) {
      r = (r * r) % mod;
      if ((byte >> bit) & 1) r = (r * b) % mod;
    }
  }
  return r;
}

/** `length` bytes of `data` from `start` (numbers past it read as zeros, as the precompile reads its input), no copy of what is past it. */
function bytesAt(data: Uint8Array, start: number, length: number): Uint8Array {
  const out = new Uint8Array(Math.max(0, Math.min(length, data.length - start)));
  if (out.length > 0) out.set(data.subarray(start, start + out.length));
  return out;
}

/** The big-endian number of `length` bytes at `start`, zero-padded on the right to that length. */
function numberAt(data: Uint8Array, start: number, length: number): bigint {
  const have = bytesAt(data, start, length);
  const n = have.length === 0 ? 0n : bytesToBigInt(have);
  return n === 0n ? 0n : n << BigInt(8 * (length - have.length));
}

const word = (data: Uint8Array, at: number) => numberAt(data, at, 32);

function multiplicationComplexity(x: bigint): bigint {
  if (x <= 64n) return x * x;
  if (x <= 1024n) return (x * x) / 4n + 96n * x - 3072n;
  return (x * x) / 16n + 480n * x - 199680n;
}

/** EIP-198's adjusted exponent length: the exponent's length past 32 bytes, and the bit length of its head. */
function adjustedExponentLength(data: Uint8Array, bLen: bigint, eLen: bigint, common: Common): bigint {
  const start = 96n + bLen;
  let head = start > MAX_SAFE ? 0n : numberAt(data, Number(start), 32);
  if (eLen < 32n) head >>= 8n * (32n - eLen);
  const bitLen = head === 0n ? -1 : head.toString(2).length - 1;
  let adjusted = (eLen > 32n ? eLen - 32n : 0n) * (common.isActivatedEIP(7883) ? 16n : 8n);
  if (bitLen > 0) adjusted += BigInt(bitLen);
  return adjusted < 1n ? 1n : adjusted;
}

/** The gas of a MODEXP input. */
export function modexpGas(data: Uint8Array, common: Common): bigint {
  const [bLen, eLen, mLen] = [word(data, 0), word(data, 32), word(data, 64)];
  const adjusted = adjustedExponentLength(data, bLen, eLen, common);
  const maxLen = bLen > mLen ? bLen : mLen;
  if (!common.isActivatedEIP(2565)) return (adjusted * multiplicationComplexity(maxLen)) / common.param('modexpGquaddivisorGas');
  const words = (maxLen + 7n) / 8n;
  if (common.isActivatedEIP(7883)) {
    const gas = adjusted * (maxLen > 32n ? 2n * words * words : 16n);
    return gas < 500n ? 500n : gas;
  }
  const gas = (adjusted * words * words) / common.param('modexpGquaddivisorGas');
  return gas < 200n ? 200n : gas;
}

/**
 * What an input whose gas is paid gives without exponentiating: 'refused' (an operand longer than
 * the stock precompile takes), the output when there is nothing to compute, else 'work'.
 */
function precheck(data: Uint8Array, common: Common): 'refused' | 'work' | Uint8Array {
  const [bLen, eLen, mLen] = [word(data, 0), word(data, 32), word(data, 64)];
  const osaka = common.isActivatedEIP(7823);
  if (!osaka && bLen === 0n && mLen === 0n) return new Uint8Array();
  const maxSize = osaka ? 1024n : 2_147_483_647n;
  if (bLen > maxSize || eLen > maxSize || mLen > maxSize || 96n + bLen + eLen + mLen > MAX_SAFE) return 'refused';
  return numberAt(data, Number(96n + bLen + eLen), Number(mLen)) === 0n ? new Uint8Array(Number(mLen)) : 'work';
}

/** The output of an input precheck calls 'work' (mLen bytes). */
export function modexpOutput(data: Uint8Array): Uint8Array {
  const [bLen, eLen, mLen] = [word(data, 0), word(data, 32), word(data, 64)].map(Number) as [number, number, number];
  const mod = numberAt(data, 96 + bLen + eLen, mLen);
  if (mod === 0n) return new Uint8Array(mLen); // also when the input ends before the modulus: a long exponent is never read
  const r = modexp(numberAt(data, 96, bLen), bytesAt(data, 96 + bLen, eLen), mod);
  return r === 0n ? new Uint8Array(mLen) : setLengthLeft(bigIntToBytes(r), mLen);
}

/** MODEXP; with a guard and a worker, an exponentiation priced over IN_PROCESS_GAS off the event loop. */
export function fastModexp(guard?: CallGuard, worker?: PrecompileWorker): Precompile {
  return async (opts: PrecompileInput): Promise<ExecResult> => {
    const gas = modexpGas(opts.data, opts.common);
    if (opts.gasLimit < gas) return outOfGas(opts.gasLimit);
    const paid = (returnValue: Uint8Array): ExecResult => ({ executionGasUsed: gas, returnValue });
    const pre = precheck(opts.data, opts.common);
    if (pre === 'refused') return outOfGas(opts.gasLimit);
    if (pre !== 'work') return paid(pre);
    if (!guard || !worker || gas <= IN_PROCESS_GAS) return paid(modexpOutput(opts.data));
    const result = await offThread(guard, worker, 'modexp', opts.data, Number(gas / GAS_PER_MS));
    if (result === 'late') return halted(guard.expire(), opts.gasLimit);
    return paid(result && 'output' in result ? result.output : modexpOutput(opts.data)); // else in process
  };
}
