/**
 * Base58 with the Bitcoin alphabet, as mr-tron/base58 (which the reference node uses): each leading
 * zero byte is written as a leading `1`, and decode errors use that library's texts.
 *
 * Both directions work on machine-sized limbs instead of one BigInt step per character: encoding
 * accumulates base-58^5 limbs, two input bytes at a time; decoding accumulates base-2^24 limbs, four
 * characters at a time. All intermediate values stay below 2^53, so plain numbers are exact.
 */
import { EncodingError } from '../errors/errors.js';

export const BASE58_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** Digit value per ASCII char code, -1 when the char is not in the alphabet. */
const DIGIT_OF = new Int8Array(128).fill(-1);
for (let i = 0; i < BASE58_ALPHABET.length; i++) DIGIT_OF[BASE58_ALPHABET.charCodeAt(i)] = i;

/** 58^5: the radix of the encoder's limbs (< 2^30). */
const ENC_RADIX = 58 ** 5;
/** Decoder limbs hold 24 bits. */
const DEC_RADIX = 2 ** 24;
/** 58^k for k = 0..4. */
const POW58 = [1, 58, 58 ** 2, 58 ** 3, 58 ** 4];

/** log(256)/log(58): base-58 digits per byte. */
const DIGITS_PER_BYTE = Math.log(256) / Math.log(58);

/** Base58 text of the bytes. */
export function base58Encode(bytes: Uint8Array): string {
  const n = bytes.length;
  let zeros = 0;
  while (zeros < n && bytes[zeros] === 0) zeros++;

  // Enough base-58^5 limbs for the value (5 digits per limb), plus slack.
  const limbs = new Uint32Array(Math.ceil(((n - zeros) * DIGITS_PER_BYTE) / 5) + 2);
  let used = 0;
  let i = zeros;
  // Feed an odd leading byte alone so the rest go in pairs.
  const mulAdd = (mul: number, value: number): void => {
    let carry = value;
    for (let j = 0; j < used; j++) {
      const x = limbs[j]! * mul + carry;
      carry = Math.floor(x / ENC_RADIX);
      limbs[j] = x - carry * ENC_RADIX;
    }
    while (carry > 0) {
      const next = Math.floor(carry / ENC_RADIX);
      limbs[used++] = carry - next * ENC_RADIX;
      carry = next;
    }
  };
  if ((n - zeros) % 2 === 1) mulAdd(256, bytes[i++]!);
  for (; i < n; i += 2) mulAdd(65536, (bytes[i]! << 8) | bytes[i + 1]!);

  let out = '1'.repeat(zeros);
  if (used === 0) return out;
  // Most significant limb without padding, then 5 digits per limb.
  let top = '';
  for (let v = limbs[used - 1]!; v > 0; v = Math.floor(v / 58)) top = BASE58_ALPHABET[v % 58]! + top;
  out += top;
  for (let j = used - 2; j >= 0; j--) {
    let v = limbs[j]!;
    let chunk = '';
    for (let k = 0; k < 5; k++) {
      chunk = BASE58_ALPHABET[v % 58]! + chunk;
      v = Math.floor(v / 58);
    }
    out += chunk;
  }
  return out;
}

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
 * Bytes of a base58 string. Errors (EncodingError): `zero length string` ('ZeroLength'),
 * `Invalid base58 digit ('0')` naming the first bad char, or `High-bit set on invalid digit` for a
 * non-ASCII char ('InvalidDigit').
 */
export function base58Decode(s: string): Uint8Array {
  const n = s.length;
  if (n === 0) throw new EncodingError('ZeroLength', 'zero length string');
  let zeros = 0;
  while (zeros < n && s.charCodeAt(zeros) === 49 /* '1' */) zeros++;

  // Enough 24-bit limbs for the value, plus slack.
  const limbs = new Uint32Array(Math.ceil((n - zeros) / DIGITS_PER_BYTE / 3) + 2);
  let used = 0;
  for (let i = zeros; i < n; ) {
    const k = Math.min(4, n - i);
    let value = 0;
    for (let e = i + k; i < e; i++) {
      const c = s.charCodeAt(i);
      const d = c < 128 ? DIGIT_OF[c]! : -1;
      if (d < 0) throw invalidChar(s.codePointAt(i)!);
      value = value * 58 + d;
    }
    const mul = POW58[k]!;
    let carry = value;
    for (let j = 0; j < used; j++) {
      const x = limbs[j]! * mul + carry;
      carry = Math.floor(x / DEC_RADIX);
      limbs[j] = x - carry * DEC_RADIX;
    }
    while (carry > 0) {
      const next = Math.floor(carry / DEC_RADIX);
      limbs[used++] = carry - next * DEC_RADIX;
      carry = next;
    }
  }

  // Significant bytes of the top limb, then 3 bytes per limb.
  const top = used === 0 ? 0 : limbs[used - 1]!;
  const topBytes = top >= 1 << 16 ? 3 : top >= 1 << 8 ? 2 : top > 0 ? 1 : 0;
  const out = new Uint8Array(zeros + topBytes + 3 * Math.max(0, used - 1));
  let p = zeros;
  for (let b = topBytes - 1; b >= 0; b--) out[p++] = (top >>> (8 * b)) & 0xff;
  for (let j = used - 2; j >= 0; j--) {
    const v = limbs[j]!;
    out[p++] = v >>> 16;
    out[p++] = (v >>> 8) & 0xff;
    out[p++] = v & 0xff;
  }
  return out;
}
