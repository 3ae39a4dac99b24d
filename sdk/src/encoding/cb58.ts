/**
 * cb58, the reference node's text form of bytes: base58(payload || checksum), where the checksum is the LAST 4 bytes of a
 * SINGLE SHA-256 of the payload (not bs58check's double SHA-256, not the first 4 bytes): the
 * bs58check scheme with cb58's checksum, on base58.ts (bs58 for short inputs).
 */
import { EncodingError } from '../errors/errors.js';
import { sha256 } from '../crypto/hash.js';
import { base58Decode, base58Encode } from './base58.js';

const CHECKSUM_LENGTH = 4;

/** log2(58): bits per base58 digit. */
const BITS_PER_DIGIT = Math.log2(58);

/**
 * The most characters the cb58 text of a `payloadBytes`-byte payload can have (payload plus
 * checksum at 8/log2(58) ~ 1.366 digits per byte; a leading zero byte is one digit, fewer). A
 * parser checks a string against it before decoding: decoding costs more than linear time.
 */
export function cb58MaxChars(payloadBytes: number): number {
  return Math.ceil(((payloadBytes + CHECKSUM_LENGTH) * 8) / BITS_PER_DIGIT);
}

/** cb58 text of the payload. */
export function cb58Encode(payload: Uint8Array): string {
  const hash = sha256(payload);
  const buf = new Uint8Array(payload.length + CHECKSUM_LENGTH);
  buf.set(payload, 0);
  buf.set(hash.subarray(hash.length - CHECKSUM_LENGTH), payload.length);
  return base58Encode(buf);
}

/**
 * Payload of a cb58 string. Throws EncodingError with the reference's texts: `zero length string`
 * ('ZeroLength'), `Invalid base58 digit ('X')` ('InvalidDigit'), `input string is smaller than the
 * checksum size` ('TooShortForChecksum'), `invalid input checksum` ('BadChecksum').
 */
export function cb58Decode(s: string): Uint8Array {
  const raw = base58Decode(s);
  if (raw.length < CHECKSUM_LENGTH) {
    throw new EncodingError('TooShortForChecksum', 'input string is smaller than the checksum size');
  }
  const split = raw.length - CHECKSUM_LENGTH;
  const payload = raw.subarray(0, split);
  const hash = sha256(payload);
  const off = hash.length - CHECKSUM_LENGTH;
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    if (hash[off + i] !== raw[split + i]) throw new EncodingError('BadChecksum', 'invalid input checksum');
  }
  return raw.slice(0, split);
}
