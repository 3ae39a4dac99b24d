/**
 * Hash functions of the reference node: SHA-256 (node:crypto, native and fastest for all sizes),
 * RIPEMD-160 (@noble/hashes: OpenSSL 3 may not offer it) and hash160 = RIPEMD160(SHA256(x)), which
 * makes addresses and node IDs (reference §2.3, §2.5). All return fresh plain Uint8Arrays.
 */
import * as nodeCrypto from 'node:crypto';
import { ripemd160 as nobleRipemd160 } from '@noble/hashes/legacy.js';

/**
 * node:crypto's one-shot `hash` (Node >= 20.12): for the short inputs of IDs about twice as fast as
 * createHash, which builds a Hash object per call. `createHash` where it is missing.
 */
const oneShot = (nodeCrypto as { hash?: (algorithm: string, data: Uint8Array, encoding: 'buffer') => Buffer }).hash;

/** SHA-256 of the bytes (32 bytes). */
export function sha256(data: Uint8Array): Uint8Array {
  const d = oneShot ? oneShot('sha256', data, 'buffer') : nodeCrypto.createHash('sha256').update(data).digest();
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
