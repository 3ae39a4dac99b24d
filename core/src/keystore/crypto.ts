/**
 * Password key derivation and value encryption.
 *
 * - scrypt(password, 16-byte salt, N, r, p) -> 64 bytes, run on the libuv thread pool (async).
 *   The first 32 bytes, hashed with SHA-256, are the stored verifier; the last 32 are the
 *   AES-256-GCM data key, which is never stored.
 * - A value is sealed as codec `{version u8, nonce [12]byte, ciphertext||tag []byte}` with a random
 *   nonce and additional authenticated data chainId || key, so a sealed value cannot be moved to
 *   another key or chain without failing authentication.
 * - An export blob ends with HMAC-SHA256 of the rest under HMAC-SHA256(dataKey, EXPORT_MAC_LABEL):
 *   a key of its own, derived from the data key, so the same key is not used for AES and HMAC.
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes, scrypt } from 'node:crypto';
import { concatBytes, constantTimeEqual, Reader, sha256, utf8Encode, Writer } from '@cornice/sdk';
import { KeystoreError } from './errors.js';

export interface KdfParams {
  N: number;
  r: number;
  p: number;
}

/** Default scrypt cost: 32 MiB of memory; a derivation runs off the event loop (kdf-limiter.ts bounds how many). */
export const DEFAULT_KDF: Readonly<KdfParams> = Object.freeze({ N: 2 ** 15, r: 8, p: 1 });

export const SALT_LENGTH = 16;
export const VERIFIER_LENGTH = 32;
export const DATA_KEY_LENGTH = 32;
export const NONCE_LENGTH = 12;
export const TAG_LENGTH = 16;
export const SEALED_VERSION = 1;
/** version + nonce + u32 length + tag: the size of a sealed empty value. */
export const SEALED_OVERHEAD = 1 + NONCE_LENGTH + 4 + TAG_LENGTH;

/** Bounds on accepted scrypt parameters (options and imported records): memory and CPU cost. */
const MAX_N = 2 ** 20;
const MAX_R = 32;
const MAX_P = 16;
const MAX_MEMORY = 256 * 1024 * 1024; // 128 * N * r
const MAX_COST = 2 ** 22; // N * r * p (the default is 2^18)

/** Why the parameters are out of bounds, or undefined when they are acceptable. */
export function kdfParamsProblem(k: KdfParams): string | undefined {
  const { N, r, p } = k;
  if (!Number.isInteger(N) || N < 2 || N > MAX_N || (N & (N - 1)) !== 0) {
    return `scrypt N must be a power of two from 2 to ${MAX_N}`;
  }
  if (!Number.isInteger(r) || r < 1 || r > MAX_R) return `scrypt r must be from 1 to ${MAX_R}`;
  if (!Number.isInteger(p) || p < 1 || p > MAX_P) return `scrypt p must be from 1 to ${MAX_P}`;
  if (128 * N * r > MAX_MEMORY) return `scrypt memory 128*N*r exceeds ${MAX_MEMORY} bytes`;
  if (N * r * p > MAX_COST) return `scrypt cost N*r*p exceeds ${MAX_COST}`;
  return undefined;
}

export interface DerivedKeys {
  /** SHA-256 of the first half of the scrypt output: what the user record stores. */
  verifier: Uint8Array;
  /** The second half: the AES-256-GCM key of the user's data. Never stored. */
  dataKey: Uint8Array;
}

/** scrypt over the password's UTF-8 bytes, off the event loop, with an explicit memory cap. */
export async function deriveKeys(password: string, salt: Uint8Array, k: KdfParams): Promise<DerivedKeys> {
  const pw = utf8Encode(password);
  // scrypt needs about 128*N*r bytes for V plus 128*r*p for B; leave room for the rest.
  const maxmem = 128 * k.N * k.r + 128 * k.r * k.p + 16 * 1024 * 1024;
  const out = await new Promise<Buffer>((resolve, reject) =>
    scrypt(pw, salt, VERIFIER_LENGTH + DATA_KEY_LENGTH, { N: k.N, r: k.r, p: k.p, maxmem }, (err, key) =>
      err ? reject(err) : resolve(key),
    ),
  );
  pw.fill(0);
  const verifier = sha256(out.subarray(0, VERIFIER_LENGTH));
  const dataKey = new Uint8Array(out.subarray(VERIFIER_LENGTH));
  out.fill(0);
  return { verifier, dataKey };
}

const EXPORT_MAC_LABEL = 'cornice keystore export mac v2';

/** The mac that authenticates an export blob's `body` (records.ts): only the password's owner can make it. */
export function exportMac(dataKey: Uint8Array, body: Uint8Array): Uint8Array {
  const macKey = createHmac('sha256', dataKey).update(EXPORT_MAC_LABEL).digest();
  const mac = new Uint8Array(createHmac('sha256', macKey).update(body).digest());
  macKey.fill(0);
  return mac;
}

/** Constant-time comparison of a derived verifier with the stored one. */
export function verifierMatches(derived: Uint8Array, stored: Uint8Array): boolean {
  return constantTimeEqual(derived, stored);
}

export function randomSalt(): Uint8Array {
  return new Uint8Array(randomBytes(SALT_LENGTH));
}

function aad(chainId: Uint8Array, key: Uint8Array): Uint8Array {
  const out = new Uint8Array(chainId.length + key.length);
  out.set(chainId);
  out.set(key, chainId.length);
  return out;
}

/** Codec limits for one sealed value: no practical bound beyond memory (values are written locally). */
const SEALED_CODEC = { maxSize: 2 ** 31, maxSliceLength: 2 ** 31 };

/** Encrypts `value` stored at `key` of chain `chainId` (32 bytes). */
export function seal(dataKey: Uint8Array, chainId: Uint8Array, key: Uint8Array, value: Uint8Array): Uint8Array {
  const nonce = randomBytes(NONCE_LENGTH);
  const cipher = createCipheriv('aes-256-gcm', dataKey, nonce, { authTagLength: TAG_LENGTH });
  cipher.setAAD(aad(chainId, key));
  const ct = concatBytes(cipher.update(value), cipher.final(), cipher.getAuthTag());
  return new Writer(SEALED_CODEC).u8(SEALED_VERSION).fixedBytes(nonce).bytes(ct).finish();
}

/**
 * Decrypts a value sealed by `seal` for the same chain and key. KeystoreError('Corrupt') when it is
 * malformed or fails authentication (tampered, moved, or under another data key): never garbage.
 */
export function open(dataKey: Uint8Array, chainId: Uint8Array, key: Uint8Array, sealed: Uint8Array): Uint8Array {
  let nonce: Uint8Array;
  let ct: Uint8Array;
  try {
    const r = new Reader(sealed, SEALED_CODEC);
    if (r.u8() !== SEALED_VERSION) throw new KeystoreError('Corrupt', 'keystore value has an unknown version');
    nonce = r.fixedBytes(NONCE_LENGTH);
    ct = r.bytes();
    r.end();
  } catch (e) {
    if (e instanceof KeystoreError) throw e;
    throw new KeystoreError('Corrupt', 'keystore value is malformed');
  }
  if (ct.length < TAG_LENGTH) throw new KeystoreError('Corrupt', 'keystore value is malformed');
  try {
    const decipher = createDecipheriv('aes-256-gcm', dataKey, nonce, { authTagLength: TAG_LENGTH });
    decipher.setAAD(aad(chainId, key));
    decipher.setAuthTag(ct.subarray(ct.length - TAG_LENGTH));
    return concatBytes(decipher.update(ct.subarray(0, ct.length - TAG_LENGTH)), decipher.final());
  } catch {
    throw new KeystoreError('Corrupt', 'keystore value failed authentication');
  }
}
