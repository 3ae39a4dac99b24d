/**
 * secp256k1 keys and recoverable signatures as the reference node uses them:
 * 32-byte private keys (cb58 when written), 33-byte compressed public keys, addresses =
 * RIPEMD160(SHA256(compressed pubkey)), and 65-byte signatures `r(32) || s(32) || v(1)` over
 * SHA-256 of the message, with v the recovery id (0 or 1). Signing always yields low S; recovery
 * rejects high S (`MutatedSignature`), as the reference does, so a signature cannot be malleated.
 *
 * Two interchangeable backends: libsecp256k1 through the native `secp256k1` package (fast; recovery
 * is the hot path of every transaction) and @noble/curves (pure JS). Both sign deterministically
 * (RFC 6979), so they produce identical signatures. `secp256k1` is the native one when its binary
 * loads here, noble otherwise. Both share the same input checks, so they accept and reject alike.
 */
import { createRequire } from 'node:module';
import { getRandomValues } from 'node:crypto';
import { secp256k1 as nobleSecp } from '@noble/curves/secp256k1.js';
import { CryptoError } from '../errors/errors.js';
import { bytesEqual, compareBytes } from '../encoding/bytes.js';
import { fromHex, toHex } from '../encoding/hex.js';
import { cb58Decode, cb58Encode } from '../encoding/cb58.js';
import { ShortId } from '../ids/id.js';
import { hash160, sha256 } from './hash.js';
import { recoveredSigners } from './signer-cache.js';

export interface Secp256k1Backend {
  readonly name: 'native' | 'noble';
  /** Signs a 32-byte hash: 65 bytes r || s || v, low S, deterministic (RFC 6979). */
  sign(hash32: Uint8Array, priv32: Uint8Array): Uint8Array;
  /** The 33-byte compressed public key that made `sig65` over `hash32`; CryptoError otherwise. */
  recover(hash32: Uint8Array, sig65: Uint8Array): Uint8Array;
  /** The 33-byte compressed public key of a private key. */
  publicKey(priv32: Uint8Array): Uint8Array;
  /** True for 32 bytes encoding an integer in [1, n-1]. */
  isValidPrivateKey(priv32: Uint8Array): boolean;
}

export const SIGNATURE_LENGTH = 65;
export const PRIVATE_KEY_LENGTH = 32;
export const PUBLIC_KEY_LENGTH = 33;

/** The curve order n and n/2, big-endian. */
const CURVE_N = fromHex('fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141');
const HALF_N = fromHex('7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0');

function isZero(b: Uint8Array): boolean {
  let acc = 0;
  for (let i = 0; i < b.length; i++) acc |= b[i]!;
  return acc === 0;
}

function validPrivateKey(priv: Uint8Array): boolean {
  return (
    priv instanceof Uint8Array &&
    priv.length === PRIVATE_KEY_LENGTH &&
    !isZero(priv) &&
    compareBytes(priv, CURVE_N) < 0
  );
}

function checkPrivateKey(priv: Uint8Array): void {
  if (!validPrivateKey(priv)) throw new CryptoError('InvalidPrivateKey', 'invalid private key');
}

function checkHash(hash: Uint8Array): void {
  if (!(hash instanceof Uint8Array) || hash.length !== 32) {
    throw new CryptoError('InvalidSignature', 'message hash must be 32 bytes');
  }
}

/**
 * Format checks shared by both backends; returns the recovery id. Length, then v, then r and s in
 * [1, n-1], then low S (the reference's `errMutatedSig`).
 */
function checkSignature(sig: Uint8Array): 0 | 1 {
  if (!(sig instanceof Uint8Array) || sig.length !== SIGNATURE_LENGTH) {
    throw new CryptoError('InvalidSignature', 'invalid signature length');
  }
  const v = sig[64]!;
  if (v !== 0 && v !== 1) throw new CryptoError('InvalidSignature', 'invalid signature recovery id');
  const r = sig.subarray(0, 32);
  const s = sig.subarray(32, 64);
  if (isZero(r) || compareBytes(r, CURVE_N) >= 0 || isZero(s) || compareBytes(s, CURVE_N) >= 0) {
    throw new CryptoError('InvalidSignature', 'invalid signature');
  }
  if (compareBytes(s, HALF_N) > 0) {
    throw new CryptoError('MutatedSignature', 'signature was mutated from its original format');
  }
  return v;
}

/** The pure-JS backend (@noble/curves). */
export const nobleBackend: Secp256k1Backend = Object.freeze({
  name: 'noble' as const,
  sign(hash32: Uint8Array, priv32: Uint8Array): Uint8Array {
    checkHash(hash32);
    checkPrivateKey(priv32);
    // 'recovered' is v || r || s; we lay it out r || s || v.
    const rec = nobleSecp.sign(hash32, priv32, { prehash: false, lowS: true, format: 'recovered' });
    const out = new Uint8Array(SIGNATURE_LENGTH);
    out.set(rec.subarray(1, 65), 0);
    out[64] = rec[0]!;
    return out;
  },
  recover(hash32: Uint8Array, sig65: Uint8Array): Uint8Array {
    const v = checkSignature(sig65);
    checkHash(hash32);
    const rec = new Uint8Array(SIGNATURE_LENGTH);
    rec[0] = v;
    rec.set(sig65.subarray(0, 64), 1);
    try {
      return nobleSecp.recoverPublicKey(rec, hash32, { prehash: false });
    } catch {
      throw new CryptoError('InvalidSignature', 'invalid signature');
    }
  },
  publicKey(priv32: Uint8Array): Uint8Array {
    checkPrivateKey(priv32);
    return nobleSecp.getPublicKey(priv32, true);
  },
  isValidPrivateKey: validPrivateKey,
});

/** The subset of the `secp256k1` package (v5) we call. */
interface NativeSecp256k1 {
  publicKeyCreate(seckey: Uint8Array, compressed?: boolean): Uint8Array;
  ecdsaSign(msg32: Uint8Array, seckey: Uint8Array): { signature: Uint8Array; recid: number };
  ecdsaRecover(sig64: Uint8Array, recid: number, msg32: Uint8Array, compressed?: boolean): Uint8Array;
}

/** Compressed public key of private key 1 (the generator): a load-time sanity check. */
const GENERATOR_HEX = '0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798';

function makeNativeBackend(lib: NativeSecp256k1): Secp256k1Backend {
  return Object.freeze({
    name: 'native' as const,
    sign(hash32: Uint8Array, priv32: Uint8Array): Uint8Array {
      checkHash(hash32);
      checkPrivateKey(priv32);
      const { signature, recid } = lib.ecdsaSign(hash32, priv32);
      const out = new Uint8Array(SIGNATURE_LENGTH);
      out.set(signature, 0);
      out[64] = recid;
      return out;
    },
    recover(hash32: Uint8Array, sig65: Uint8Array): Uint8Array {
      const v = checkSignature(sig65);
      checkHash(hash32);
      try {
        return lib.ecdsaRecover(sig65.subarray(0, 64), v, hash32, true);
      } catch {
        throw new CryptoError('InvalidSignature', 'invalid signature');
      }
    },
    publicKey(priv32: Uint8Array): Uint8Array {
      checkPrivateKey(priv32);
      return lib.publicKeyCreate(priv32, true);
    },
    isValidPrivateKey: validPrivateKey,
  });
}

let nativeLoaded: Secp256k1Backend | null | undefined;

/**
 * The libsecp256k1 backend, or undefined when its binary does not load on this platform. Loads
 * `secp256k1/bindings` (never plain `secp256k1`, which silently falls back to a slow JS version).
 */
export function loadNativeBackend(): Secp256k1Backend | undefined {
  if (nativeLoaded === undefined) {
    try {
      const require = createRequire(import.meta.url);
      const lib = require('secp256k1/bindings') as NativeSecp256k1;
      const one = new Uint8Array(32);
      one[31] = 1;
      if (toHex(lib.publicKeyCreate(one, true)) !== GENERATOR_HEX) throw new CryptoError('InvalidPublicKey', 'self-test');
      nativeLoaded = makeNativeBackend(lib);
    } catch {
      nativeLoaded = null;
    }
  }
  return nativeLoaded ?? undefined;
}

/** The backend in use: native when it loads, noble otherwise. */
export const secp256k1: Secp256k1Backend = loadNativeBackend() ?? nobleBackend;

/** The 33-byte compressed public key that signed `hash32` (see Secp256k1Backend.recover). */
export function recoverPublicKey(hash32: Uint8Array, sig65: Uint8Array): Uint8Array {
  return secp256k1.recover(hash32, sig65);
}

/** Address = RIPEMD160(SHA256(compressed public key)). CryptoError('InvalidPublicKey') unless 33 bytes, 02/03. */
export function addressFromPublicKey(pub33: Uint8Array): ShortId {
  if (!(pub33 instanceof Uint8Array) || pub33.length !== PUBLIC_KEY_LENGTH || (pub33[0] !== 2 && pub33[0] !== 3)) {
    throw new CryptoError('InvalidPublicKey', 'invalid compressed public key');
  }
  return ShortId.fromBytes(hash160(pub33));
}

/** Address of the key that signed the 32-byte hash (no further hashing). */
export function recoverAddressFromHash(hash32: Uint8Array, sig65: Uint8Array): ShortId {
  return ShortId.fromBytes(hash160(secp256k1.recover(hash32, sig65)));
}

let recoveries = 0;

/**
 * recoverAddressFromHash, remembered per signature object: a VM checks a tx at issue, at build and
 * at verify (and again when the preferred block changes), and recovery is the costly part. The same
 * signature bytes over another hash are recovered afresh. Throws as recoverAddressFromHash.
 * `prerecoverSigners` (recovery-pool.ts) does the recovery ahead of time on a worker thread.
 */
export function recoverSigner(hash32: Uint8Array, sig65: Uint8Array): ShortId {
  const known = recoveredSigners.get(sig65);
  if (known && bytesEqual(known.hash, hash32)) return known.signer;
  recoveries++;
  const signer = recoverAddressFromHash(hash32, sig65);
  recoveredSigners.set(sig65, { hash: hash32, signer });
  return signer;
}

/** How many signatures recoverSigner actually recovered so far (its cache's misses), for tests. */
export function signerRecoveries(): number {
  return recoveries;
}

/** Address of the key that signed `msg` (the signature is over SHA-256(msg), as `PrivateKey.sign` makes). */
export function recoverAddress(msg: Uint8Array, sig65: Uint8Array): ShortId {
  return recoverAddressFromHash(sha256(msg), sig65);
}

const INSPECT = Symbol.for('nodejs.util.inspect.custom');

/**
 * A secp256k1 private key. Its bytes are only given out by `toBytes()` and `toCb58()`: String(),
 * JSON.stringify and util.inspect show `[PrivateKey <address>]`, never the key.
 */
export class PrivateKey {
  readonly #bytes: Uint8Array;
  #publicKey: Uint8Array | undefined;
  #address: ShortId | undefined;

  /** Takes ownership of checked bytes. */
  private constructor(bytes: Uint8Array) {
    this.#bytes = bytes;
  }

  /** A new random key (CSPRNG). */
  static generate(): PrivateKey {
    for (;;) {
      const b = getRandomValues(new Uint8Array(PRIVATE_KEY_LENGTH));
      if (validPrivateKey(b)) return new PrivateKey(b);
    }
  }

  /** A key from 32 bytes encoding an integer in [1, n-1]; CryptoError('InvalidPrivateKey') otherwise. */
  static fromBytes(bytes: Uint8Array): PrivateKey {
    checkPrivateKey(bytes);
    return new PrivateKey(Uint8Array.prototype.slice.call(bytes));
  }

  /** A key from its cb58 form (bare, no `PrivateKey-` prefix in the reference). */
  static fromString(s: string): PrivateKey {
    return PrivateKey.fromBytes(cb58Decode(s));
  }

  /** The 33-byte compressed public key (a copy). */
  get publicKey(): Uint8Array {
    return (this.#publicKey ??= secp256k1.publicKey(this.#bytes)).slice();
  }

  /** RIPEMD160(SHA256(compressed public key)). */
  get address(): ShortId {
    return (this.#address ??= addressFromPublicKey(this.publicKey));
  }

  /** Signs SHA-256(msg): 65 bytes r || s || v. */
  sign(msg: Uint8Array): Uint8Array {
    return secp256k1.sign(sha256(msg), this.#bytes);
  }

  /** Signs an already computed 32-byte hash. */
  signHash(hash32: Uint8Array): Uint8Array {
    return secp256k1.sign(hash32, this.#bytes);
  }

  /** The 32 key bytes (a copy). Secret: never log it. */
  toBytes(): Uint8Array {
    return this.#bytes.slice();
  }

  /** The key as cb58 (how the reference writes private keys). Secret: never log it. */
  toCb58(): string {
    return cb58Encode(this.#bytes);
  }

  equals(other: PrivateKey): boolean {
    if (!(other instanceof PrivateKey)) return false;
    let diff = 0;
    for (let i = 0; i < PRIVATE_KEY_LENGTH; i++) diff |= this.#bytes[i]! ^ other.#bytes[i]!;
    return diff === 0;
  }

  /** `[PrivateKey <address>]`: never the key. */
  toString(): string {
    return `[PrivateKey ${this.address.toString()}]`;
  }

  toJSON(): string {
    return this.toString();
  }

  [INSPECT](): string {
    return this.toString();
  }
}
