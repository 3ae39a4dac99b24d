/**
 * Hash functions of the reference node: SHA-256 (hash-wasm for short inputs, node:crypto for long
 * ones), RIPEMD-160 (@noble/hashes: OpenSSL 3 may not offer it) and hash160 = RIPEMD160(SHA256(x)), which
 * makes addresses (of compressed public keys) and node IDs (of certificates). All return fresh plain Uint8Arrays.
 */
import * as nodeCrypto from 'node:crypto';
import { createRequire } from 'node:module';
import type { IHasher, createSHA256 as CreateSHA256 } from 'hash-wasm';
import { ripemd160 as nobleRipemd160 } from '@noble/hashes/legacy.js';
import { toHex } from '../encoding/hex.js';

/**
 * node:crypto's one-shot `hash` (Node >= 20.12): for the short inputs of IDs about twice as fast as
 * createHash, which builds a Hash object per call. `createHash` where it is missing.
 */
const oneShot = (nodeCrypto as { hash?: (algorithm: string, data: Uint8Array, encoding: 'buffer') => Buffer }).hash;

/**
 * A hash function on one reused hash-wasm hasher (synchronous, so calls never interleave), if `make`
 * gives one whose digest of no bytes is `emptyDigestHex`; undefined if it throws or is wrong. Each
 * call returns a new array.
 */
export async function reusedHasher(make: () => Promise<IHasher>, emptyDigestHex: string): Promise<((msg: Uint8Array) => Uint8Array) | undefined> {
  try {
    const hasher = await make();
    const hash = (msg: Uint8Array): Uint8Array => {
      hasher.init();
      hasher.update(msg);
      return hasher.digest('binary');
    };
    return toHex(hash(new Uint8Array())) === emptyDigestHex ? hash : undefined;
  } catch {
    return undefined;
  }
}

const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
/** Inputs shorter than this go to the WebAssembly hasher. */
const WASM_SHA256_BELOW = 256;
/**
 * SHA-256 on one reused WebAssembly hasher (hash-wasm; synchronous, so never interleaved), if it
 * loads and is right. Most hashes here are of IDs (a UTXO ID hashes 40 bytes): for those it takes
 * about half node:crypto's time, most of which is making the native result Buffer. Past a few
 * hundred bytes they take the same, so inputs from WASM_SHA256_BELOW on go to node:crypto. Test:
 * hash.test.ts 'short inputs go to the WebAssembly SHA-256, …'.
 */
const wasmSha256 = await reusedHasher(
  // The sha256-only bundle: the main one builds every algorithm.
  () => (createRequire(import.meta.url)('hash-wasm/dist/sha256.umd.min.js') as { createSHA256: typeof CreateSHA256 }).createSHA256(),
  EMPTY_SHA256,
);

/** 'wasm' when short inputs go to hash-wasm, else 'node' (node:crypto for every input). */
export const sha256BackendName: 'wasm' | 'node' = wasmSha256 ? 'wasm' : 'node';

/** SHA-256 by node:crypto alone (the agreement tests compare with it). */
export function nodeSha256(data: Uint8Array): Uint8Array {
  const d = oneShot ? oneShot('sha256', data, 'buffer') : nodeCrypto.createHash('sha256').update(data).digest();
  return new Uint8Array(d.buffer, d.byteOffset, d.byteLength);
}

/** SHA-256 of the bytes (32 bytes). */
export function sha256(data: Uint8Array): Uint8Array {
  return wasmSha256 && data.length < WASM_SHA256_BELOW ? wasmSha256(data) : nodeSha256(data);
}

/** RIPEMD-160 of the bytes (20 bytes). */
export function ripemd160(data: Uint8Array): Uint8Array {
  return nobleRipemd160(data);
}

/** RIPEMD160(SHA256(data)) (20 bytes): addresses from compressed public keys, node IDs from certificates. */
export function hash160(data: Uint8Array): Uint8Array {
  return nobleRipemd160(sha256(data));
}
