/** Hexadecimal: lower-case without `0x` on output; `0x`/`0X` optional on input, either case. */
import { EncodingError } from '../errors/errors.js';

/** Buffer's native hex encoder, called on any Uint8Array (Node's; undefined elsewhere). */
const hexSlice = (Buffer.prototype as { hexSlice?: (this: Uint8Array, start: number, end: number) => string }).hexSlice;

/**
 * Lower-case hex of the bytes, without a `0x` prefix. Native, which also yields a flat string: IDs'
 * Map keys are made here, and a string built by `+=` is a rope of one piece per byte that V8 must
 * flatten (copy) before hashing it, garbage on every ID. Buffer's encoder is called on the array
 * itself: a Buffer over `bytes.buffer` makes V8 move a short array's bytes (up to 64, kept in the JS
 * heap: every ID's) to a new native allocation for good, which the garbage collector then tracks.
 * Test: hex.test.ts 'hex of short arrays leaves their bytes where they are (no native copy per call)'.
 */
export function toHex(bytes: Uint8Array): string {
  if (hexSlice) return hexSlice.call(bytes, 0, bytes.length);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/** Value of one hex digit's char code, or -1. */
function nibble(c: number): number {
  if (c >= 48 && c <= 57) return c - 48; // 0-9
  if (c >= 97 && c <= 102) return c - 87; // a-f
  if (c >= 65 && c <= 70) return c - 55; // A-F
  return -1;
}

/**
 * Bytes of a hex string. Accepts an optional `0x` prefix and either case; the digits must be of even
 * length. Throws EncodingError('BadHex') naming the problem.
 */
export function fromHex(s: string): Uint8Array {
  if (typeof s !== 'string') throw new EncodingError('BadHex', 'hex input must be a string');
  const start = s.length >= 2 && s[0] === '0' && (s[1] === 'x' || s[1] === 'X') ? 2 : 0;
  const digits = s.length - start;
  if (digits % 2 !== 0) throw new EncodingError('BadHex', `hex string has an odd number of digits (${digits})`);
  const out = new Uint8Array(digits / 2);
  for (let i = 0; i < out.length; i++) {
    const p = start + 2 * i;
    const hi = nibble(s.charCodeAt(p));
    const lo = nibble(s.charCodeAt(p + 1));
    if (hi < 0 || lo < 0) {
      const at = hi < 0 ? p : p + 1;
      throw new EncodingError('BadHex', `invalid hex character ${JSON.stringify(s[at])} at position ${at}`);
    }
    out[i] = (hi << 4) | lo;
  }
  return out;
}
