/**
 * Hash functions of the reference node: SHA-256 (node:crypto, native and fastest for all sizes),
 * RIPEMD-160 (@noble/hashes: OpenSSL 3 may not offer it) and hash160 = RIPEMD160(SHA256(x)), which
 * makes addresses and node IDs (reference §2.3, §2.5). All return fresh plain Uint8Arrays.
 */
import { createHash } from 'node:crypto';
import { ripemd160 as nobleRipemd160 } from '@noble/hashes/legacy.js';

/** SHA-256 of the bytes (32 bytes). */
export function sha256(data: Uint8Array): Uint8Array {
  const d = createHash('sha256').update(data).digest();
  return new Uint8Array(d.buffer, d.byteOffset, d.byteLength);
}

/** RIPEMD-160 of the bytes (20 bytes). */
export function ripemd160(data: Uint8Array): Uint8Array {
  return nobleRipemd160(data);
}

/** RIPEMD160(SHA256(data)) (20 bytes): addresses from compressed public keys, node IDs from certificates. */
export function hash160(data: Uint8Array): Uint8Array {
  return nobleRipemd160(sha256(data));
}
