/**
 * Base58 with the Bitcoin alphabet, as mr-tron/base58 (which the reference node uses): each leading
 * zero byte is written as a leading `1`, and decode errors use that library's texts.
 *
 * Short inputs (IDs, keys, addresses, signatures: the hot path) go through `bs58` (base-x), pinned
 * to one version, once this module has checked every character (for the reference's error texts).
 * base-x is quadratic in the length, so long inputs divide and conquer with BigInt instead (V8
 * multiplies and divides big BigInts in better than quadratic time): decoding joins 9-digit leaves
 * pairwise by powers 58^(9*2^k), encoding splits by the same powers. The two cross near 32 bytes
 * (BS58_MAX_BYTES, BS58_MAX_CHARS); a cb58 ID (36 bytes) is already past it, and txs come in as cb58.
 *
 * Mid-length input (cb58 IDs, txs) goes faster still through a small WebAssembly module
 * (base58.wat: schoolbook on 32-bit limbs with i64 arithmetic), without BigInt's garbage per
 * decoded tx, which an X-Chain node under load pays for in collection time (bench/avm.mjs). Pure JS
 * limbs were slower than BigInt; i64 arithmetic is what makes the difference. The schoolbook is
 * quadratic, so past WASM_MAX_CHARS (decoding) and WASM_MAX_BYTES (encoding) divide and conquer
 * takes over. Without WebAssembly (--jitless), BigInt does it all. Tests: base58.test.ts 'long
 * inputs cost far less than quadratic time', 'mid-length input decodes through WebAssembly, …',
 * 'short inputs are bs58 (pinned exactly); …', 'without WebAssembly (node --jitless) …'.
 */
import bs58 from 'bs58';
import { EncodingError } from '../errors/errors.js';
import { BASE58_WASM } from './base58-wasm.generated.js';
import { fromHex, toHex } from './hex.js';

export const BASE58_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** Digit value per ASCII char code, -1 when the char is not in the alphabet. */
const DIGIT_OF = new Int8Array(128).fill(-1);
for (let i = 0; i < BASE58_ALPHABET.length; i++) DIGIT_OF[BASE58_ALPHABET.charCodeAt(i)] = i;

/** Go's `%q` of an ASCII rune, as in mr-tron's error text. */
function quoteRune(code: number): string {
  const escapes: Record<number, string> = { 7: '\\a', 8: '\\b', 9: '\\t', 10: '\\n', 11: '\\v', 12: '\\f', 13: '\\r' };
  if (code === 39) return `'\\''`;
  if (code === 92) return `'\\\\'`;
  if (code >= 0x20 && code < 0x7f) return `'${String.fromCharCode(code)}'`;
  const e = escapes[code];
  if (e !== undefined) return `'${e}'`;
  return `'\\x${code.toString(16).padStart(2, '0')}'`;
}

function invalidChar(code: number): EncodingError {
  if (code > 127) return new EncodingError('InvalidDigit', 'High-bit set on invalid digit');
  return new EncodingError('InvalidDigit', `Invalid base58 digit (${quoteRune(code)})`);
}

/**
 * Up to this many bytes (encode) or characters (decode, ~32 bytes: addresses), bs58; past them its
 * quadratic cost outgrows BigInt's divide and conquer.
 */
export const BS58_MAX_BYTES = 32;
export const BS58_MAX_CHARS = 44;
/** Longest input decoded (characters) or encoded (bytes) by the WebAssembly module (it has room for 4,096). */
export const WASM_MAX_CHARS = 2048;
export const WASM_MAX_BYTES = 256;

interface WasmCodec {
  /** Digit values in at io[0..n); returns how many little-endian u32 limbs (base 2^32) it left in `limbs`. */
  decode(n: number): number;
  /** Bytes in at io[0..n); returns how many little-endian u32 limbs in base 58^5 it left in `limbs`. */
  encode(n: number): number;
  io: Uint8Array;
  limbs: Uint32Array;
}

/** The part of the WebAssembly API used here (the project's lib setting has no DOM types). */
declare const WebAssembly: {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: Record<string, unknown> };
};

/** The module's functions; undefined where WebAssembly is unavailable. Its memory never grows, so the views stay valid. */
const wasm: WasmCodec | undefined = (() => {
  try {
    const instance = new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(BASE58_WASM, 'base64')));
    const { buffer } = instance.exports.memory as { buffer: ArrayBuffer };
    const { decode, encode } = instance.exports as { decode: (n: number) => number; encode: (n: number) => number };
    return { decode, encode, io: new Uint8Array(buffer, 0, 4096), limbs: new Uint32Array(buffer, 4096) };
  } catch {
    return undefined;
  }
})();

/** Whether mid-length input goes through WebAssembly here (exported for tests). */
export const base58UsesWasm = wasm !== undefined;

/** Base-58 digits per leaf of the divide and conquer: 58^9 < 2^53. */
const LEAF_DIGITS = 9;
const LEAF_RADIX = 58 ** LEAF_DIGITS;
/** POWERS[k] = 58^(LEAF_DIGITS * 2^k), grown on demand. */
const POWERS: bigint[] = [BigInt(LEAF_RADIX)];

function power(k: number): bigint {
  while (POWERS.length <= k) POWERS.push(POWERS[POWERS.length - 1]! ** 2n);
  return POWERS[k]!;
}

/** Base58 text of the bytes. */
export function base58Encode(bytes: Uint8Array): string {
  if (bytes.length <= BS58_MAX_BYTES) return bs58.encode(bytes);
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  if (zeros === bytes.length) return '1'.repeat(zeros);
  if (wasm && bytes.length <= WASM_MAX_BYTES) return encodeWithWasm(wasm, bytes, zeros);
  const value = BigInt('0x' + toHex(bytes.subarray(zeros)));
  let k = 0;
  while (power(k) <= value) k++;
  const parts: string[] = ['1'.repeat(zeros)];
  splitDigits(value, k - 1, false, parts);
  return parts.join('');
}

/** ASCII code of each base58 digit. */
const DIGIT_CODES = Uint8Array.from(BASE58_ALPHABET, (c) => c.charCodeAt(0));
/** The text being built by encodeWithWasm, as char codes (one string made at the end, not one per digit). */
let encodeChars = new Uint16Array(512);

function encodeWithWasm({ encode, io, limbs }: WasmCodec, bytes: Uint8Array, zeros: number): string {
  io.set(bytes.subarray(zeros));
  const used = encode(bytes.length - zeros);
  // Written from the end: the low limbs give 5 digits each, the top limb (nonzero: the first byte
  // after the zeros is) only up to its highest nonzero digit; then the leading 1s.
  const most = zeros + used * 5;
  if (encodeChars.length < most) encodeChars = new Uint16Array(most * 2);
  const chars = encodeChars;
  let k = most;
  for (let j = 0; j < used - 1; j++) {
    let v = limbs[j]!;
    for (let d = 0; d < 5; d++) {
      const q = Math.floor(v / 58);
      chars[--k] = DIGIT_CODES[v - q * 58]!;
      v = q;
    }
  }
  for (let v = limbs[used - 1]!; v > 0; ) {
    const q = Math.floor(v / 58);
    chars[--k] = DIGIT_CODES[v - q * 58]!;
    v = q;
  }
  for (let z = 0; z < zeros; z++) chars[--k] = 49; // '1'
  return String.fromCharCode.apply(null, chars.subarray(k, most) as unknown as number[]);
}

/**
 * Appends the digits of `value` (< 58^(9*2^(k+1))) to `out`: exactly 9*2^(k+1) of them when `pad`,
 * else without leading zeros. k = -1 is a leaf (< 58^9, a plain number).
 */
function splitDigits(value: bigint, k: number, pad: boolean, out: string[]): void {
  if (k < 0) {
    let v = Number(value);
    let leaf = '';
    while (v > 0) {
      const q = Math.floor(v / 58);
      leaf = BASE58_ALPHABET[v - q * 58]! + leaf;
      v = q;
    }
    out.push(pad ? '1'.repeat(LEAF_DIGITS - leaf.length) + leaf : leaf);
    return;
  }
  const p = power(k);
  if (!pad && value < p) return splitDigits(value, k - 1, false, out);
  const high = value / p;
  splitDigits(high, k - 1, pad, out);
  splitDigits(value - high * p, k - 1, true, out);
}

/** Throws the reference's error for the first character outside the alphabet. */
function checkDigits(s: string): void {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 128 || DIGIT_OF[c]! < 0) throw invalidChar(s.codePointAt(i)!);
  }
}

/**
 * Bytes of a base58 string. Errors (EncodingError): `zero length string` ('ZeroLength'),
 * `Invalid base58 digit ('0')` naming the first bad char, or `High-bit set on invalid digit` for a
 * non-ASCII char ('InvalidDigit').
 */
export function base58Decode(s: string): Uint8Array {
  if (s.length === 0) throw new EncodingError('ZeroLength', 'zero length string');
  if (s.length <= BS58_MAX_CHARS) {
    checkDigits(s);
    return bs58.decode(s);
  }
  let zeros = 0;
  while (zeros < s.length && s.charCodeAt(zeros) === 49 /* '1' */) zeros++;
  if (wasm && s.length <= WASM_MAX_CHARS) return decodeWithWasm(wasm, s, zeros);
  return decodeWithBigInt(s, zeros);
}

function decodeWithWasm({ decode, io, limbs }: WasmCodec, s: string, zeros: number): Uint8Array {
  const n = s.length - zeros;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(zeros + i);
    const d = c < 128 ? DIGIT_OF[c]! : -1;
    if (d < 0) throw invalidChar(s.codePointAt(zeros + i)!);
    io[i] = d;
  }
  const used = decode(n);
  if (used === 0) return new Uint8Array(zeros); // all 1s
  // The top limb is nonzero (the first digit after the leading 1s is): drop its zero high bytes.
  const top = limbs[used - 1]!;
  const bodyLength = used * 4 - (top >= 0x1000000 ? 0 : top >= 0x10000 ? 1 : top >= 0x100 ? 2 : 3);
  const out = new Uint8Array(zeros + bodyLength);
  let k = out.length;
  for (let j = 0; j < used; j++) {
    let v = limbs[j]!;
    for (let b = 0; b < 4 && k > zeros; b++, v >>>= 8) out[--k] = v & 0xff;
  }
  return out;
}

function decodeWithBigInt(s: string, zeros: number): Uint8Array {
  // Leaves of 9 digits, most significant first; the first takes the remainder.
  const digits = s.length - zeros;
  let level: bigint[] = [];
  for (let i = zeros, end = zeros + (digits % LEAF_DIGITS || LEAF_DIGITS); i < s.length; end += LEAF_DIGITS) {
    let v = 0;
    for (; i < end; i++) {
      const c = s.charCodeAt(i);
      const d = c < 128 ? DIGIT_OF[c]! : -1;
      if (d < 0) throw invalidChar(s.codePointAt(i)!);
      v = v * 58 + d;
    }
    level.push(BigInt(v));
  }
  // Join neighbours: every element but the first holds exactly 9*2^k digits.
  for (let k = 0; level.length > 1; k++) {
    const p = power(k);
    const odd = level.length % 2;
    const next: bigint[] = odd ? [level[0]!] : [];
    for (let i = odd; i < level.length; i += 2) next.push(level[i]! * p + level[i + 1]!);
    level = next;
  }
  const value = level[0] ?? 0n;
  const hex = value === 0n ? '' : value.toString(16);
  const body = fromHex(hex.length % 2 ? '0' + hex : hex);
  const out = new Uint8Array(zeros + body.length);
  out.set(body, zeros);
  return out;
}
