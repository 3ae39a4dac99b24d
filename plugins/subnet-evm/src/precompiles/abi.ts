/**
 * The little of the Solidity ABI the precompiles need (A.5): 4-byte selectors, static 32-byte words
 * (uint256, address, bool), event topics, EIP-55 addresses for error texts, and argument reading
 * with geth's error texts. Arguments are read the way subnet-evm reads them: before Durango an exact
 * length is required (each function checks it with its own text); after it, extra bytes are ignored
 * and only missing words fail, as go-ethereum's ABI unpacker does.
 */
import { keccak_256 } from '@noble/hashes/sha3.js';
import { toHex, utf8Encode } from '@cornice/sdk';
import { PrecompileHalt } from './errors.js';
import { MAX_UINT256 } from '../config/json.js';

export const WORD_BYTES = 32;
export const ADDRESS_BYTES = 20;

export function keccak256(data: Uint8Array): Uint8Array {
  return keccak_256(data);
}

/** The 4-byte selector of a function signature such as `setAdmin(address)`. */
export function selector(signature: string): Uint8Array {
  return keccak256(utf8Encode(signature)).slice(0, 4);
}

/** topic0 of an event signature such as `RoleSet(uint256,address,address,uint256)`. */
export function eventTopic(signature: string): Uint8Array {
  return keccak256(utf8Encode(signature));
}

/** `0x` and lower-case hex (Go's `%#x` of a byte slice). */
export function hex0x(bytes: Uint8Array): string {
  return `0x${toHex(bytes)}`;
}

/** A uint256 as a 32-byte big-endian word; the value must be in [0, 2^256). */
export function uint256Word(value: bigint): Uint8Array {
  if (value < 0n || value > MAX_UINT256) throw new RangeError(`uint256 out of range: ${value}`);
  const out = new Uint8Array(WORD_BYTES);
  let v = value;
  for (let i = WORD_BYTES - 1; i >= 0 && v > 0n; i--) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return out;
}

/** Bytes left-padded with zeros to 32 (an address word, an allow-list slot). */
export function leftPad32(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(WORD_BYTES);
  out.set(bytes.subarray(Math.max(0, bytes.length - WORD_BYTES)), WORD_BYTES - Math.min(bytes.length, WORD_BYTES));
  return out;
}

export const addressWord = leftPad32;

export function boolWord(value: boolean): Uint8Array {
  return uint256Word(value ? 1n : 0n);
}

/** The unsigned big-endian value of a word (any length). */
export function wordToBigint(word: Uint8Array): bigint {
  let i = 0;
  while (i < word.length && word[i] === 0) i++;
  // Up to 6 bytes fit a double exactly: a role or a flag (read on every tx) needs no BigInt steps.
  if (word.length - i <= 6) {
    let n = 0;
    for (; i < word.length; i++) n = n * 256 + word[i]!;
    return BigInt(n);
  }
  let v = 0n;
  for (; i < word.length; i++) v = (v << 8n) | BigInt(word[i]!);
  return v;
}

/** The address in a word: its last 20 bytes (the upper 12 are not checked, as geth). */
export function wordToAddress(word: Uint8Array): Uint8Array {
  return word.slice(word.length - ADDRESS_BYTES);
}

/** An address in EIP-55 mixed case, as Go prints a common.Address in error texts (the EVM's). */
export { checksumAddress } from '@cornice/evm';

/**
 * Reads `count` static words from ABI arguments (after the selector), failing as go-ethereum's
 * unpacker: on empty input, or on the first word that is not all there. Extra bytes are ignored.
 */
export function readWords(args: Uint8Array, count: number): Uint8Array[] {
  if (count > 0 && args.length === 0) {
    throw new PrecompileHalt('abi: attempting to unmarshall an empty string while arguments are expected');
  }
  const words: Uint8Array[] = [];
  for (let i = 0; i < count; i++) {
    const end = (i + 1) * WORD_BYTES;
    if (end > args.length) throw new PrecompileHalt(`abi: cannot marshal in to go type: length insufficient ${args.length} require ${end}`);
    words.push(args.slice(i * WORD_BYTES, end));
  }
  return words;
}
