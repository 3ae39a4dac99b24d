/**
 * The crypto the EVM chain hands @ethereumjs through `common.customCrypto` (reference evm.md C.1,
 * C.9): sender recovery is the costliest part of admitting a transaction, and @ethereumjs' default
 * (pure-JS noble) takes ~1 ms per recovery where libsecp256k1 (the `secp256k1` package's native
 * binding, as the sdk loads it) takes ~50 µs. Keccak is the `keccak` package's native sponge
 * (XKCP), driven directly: 2.6 µs for 32 bytes and 5.7 µs for a 532-byte trie branch where noble
 * takes 7.7 and 37 µs (node:crypto has SHA3 but not Ethereum's keccak padding). Trie hashing is a
 * fifth of block building's time with noble. Both fall back to noble when the binding does not load.
 */
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import type { CustomCrypto } from '@ethereumjs/common';
import { calculateSigRecovery, ecrecover as nobleEcrecover, setLengthLeft } from '@ethereumjs/util';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { secp256k1 as nobleSecp } from '@noble/curves/secp256k1.js';
import { EvmChainError } from '../errors.js';

/** The part of the `secp256k1` package (v5) we use. */
interface NativeSecp256k1 {
  ecdsaRecover(sig64: Uint8Array, recid: number, msg32: Uint8Array, compressed?: boolean): Uint8Array;
  ecdsaSign(msg32: Uint8Array, seckey: Uint8Array): { signature: Uint8Array; recid: number };
  publicKeyCreate(seckey: Uint8Array, compressed?: boolean): Uint8Array;
}

function loadNative(): NativeSecp256k1 | undefined {
  try {
    const require = createRequire(import.meta.url);
    // `secp256k1/bindings` only: plain `secp256k1` silently falls back to a slow JS implementation.
    return require('secp256k1/bindings') as NativeSecp256k1;
  } catch {
    return undefined;
  }
}

/** The `keccak` package's native sponge (its N-API class, without the package's stream wrappers). */
interface NativeSponge {
  initialize(rate: number, capacity: number): void;
  absorb(data: Uint8Array): void;
  absorbLastFewBits(bits: number): void;
  squeeze(length: number): Uint8Array;
}

function loadNativeKeccak(): NativeSponge | undefined {
  try {
    const require = createRequire(import.meta.url);
    const dir = dirname(require.resolve('keccak/package.json'));
    // node-gyp-build as the package itself loads it (keccak/bindings), but the class alone.
    const requireFromKeccak = createRequire(require.resolve('keccak/package.json'));
    const Sponge = (requireFromKeccak('node-gyp-build') as (dir: string) => unknown)(dir);
    if (typeof Sponge !== 'function') return undefined;
    const sponge = new (Sponge as new () => NativeSponge)();
    const probe = nativeKeccakWith(sponge)(new Uint8Array());
    return bytesToHexLower(probe) === EMPTY_KECCAK ? sponge : undefined;
  } catch {
    return undefined;
  }
}

const EMPTY_KECCAK = 'c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470';

function bytesToHexLower(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
}

/** Keccak-256 (rate 1088, capacity 512, Ethereum's 0x01 padding) on one reused sponge: synchronous, so never interleaved. */
function nativeKeccakWith(sponge: NativeSponge): (msg: Uint8Array) => Uint8Array {
  return (msg) => {
    sponge.initialize(1088, 512);
    sponge.absorb(Buffer.from(msg.buffer, msg.byteOffset, msg.byteLength));
    sponge.absorbLastFewBits(0x01);
    const out = sponge.squeeze(32);
    return new Uint8Array(out.buffer, out.byteOffset, 32);
  };
}

const native = loadNative();
const nativeSponge = loadNativeKeccak();

/** 'native' when libsecp256k1 loaded, else 'noble'. */
export const secpBackendName: 'native' | 'noble' = native ? 'native' : 'noble';

/** 'native' when the `keccak` package's binding loaded, else 'noble'. */
export const keccakBackendName: 'native' | 'noble' = nativeSponge ? 'native' : 'noble';

/** Keccak-256 of `msg` (a new array). */
export const keccak256: (msg: Uint8Array) => Uint8Array = nativeSponge ? nativeKeccakWith(nativeSponge) : (msg) => keccak_256(msg);

/** @ethereumjs' `ecrecover` contract: the 64-byte uncompressed public key (no 0x04 prefix). */
function nativeEcrecover(msgHash: Uint8Array, v: bigint, r: Uint8Array, s: Uint8Array, chainId?: bigint): Uint8Array {
  const recovery = calculateSigRecovery(v, chainId);
  if (recovery !== 0n && recovery !== 1n) throw new EvmChainError('InvalidSignature', 'Invalid signature v value');
  const sig = new Uint8Array(64);
  sig.set(setLengthLeft(r, 32), 0);
  sig.set(setLengthLeft(s, 32), 32);
  try {
    return native!.ecdsaRecover(sig, Number(recovery), msgHash, false).subarray(1);
  } catch {
    throw new EvmChainError('InvalidSignature', 'Invalid signature');
  }
}

/** noble's `sign` contract with format 'recovered' (recovery byte first), made by libsecp256k1. */
function nativeEcsign(msgHash: Uint8Array, privateKey: Uint8Array): Uint8Array {
  const { signature, recid } = native!.ecdsaSign(msgHash, privateKey);
  const out = new Uint8Array(65);
  out[0] = recid;
  out.set(signature, 1);
  return out;
}

/** What the chain's Common gets: native recovery, signing and keccak when available. */
export function chainCrypto(): CustomCrypto {
  if (!native) return { keccak256 };
  return { keccak256, ecrecover: nativeEcrecover, ecsign: nativeEcsign as unknown as CustomCrypto['ecsign'] };
}

/** Reference implementations (noble), for tests that the fast ones agree. */
export const referenceCrypto = {
  ecrecover: nobleEcrecover,
  keccak256: keccak_256,
  publicKey: (priv: Uint8Array) => nobleSecp.getPublicKey(priv, false).subarray(1),
};

/** The 20-byte Ethereum address of a private key. */
export function addressOfKey(priv: Uint8Array): Uint8Array {
  const pub = native ? native.publicKeyCreate(priv, false).subarray(1) : nobleSecp.getPublicKey(priv, false).subarray(1);
  return keccak256(pub).subarray(12);
}
