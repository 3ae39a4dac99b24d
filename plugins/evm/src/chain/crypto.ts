/**
 * The crypto the EVM chain hands @ethereumjs through `common.customCrypto`: sender recovery is the
 * costliest part of admitting a transaction, and @ethereumjs' default (pure-JS noble) is an order
 * of magnitude slower than libsecp256k1 (the `secp256k1` package's native binding, as the sdk loads
 * it). Keccak is hash-wasm's WebAssembly build, faster on 32-byte keys and trie branches than the
 * `keccak` package's native sponge (four N-API calls a hash) and than noble (node:crypto has SHA3
 * but not Ethereum's keccak padding); bench/evm.mjs shows both. Each falls back to noble when it
 * does not load. Test: crypto.test.ts.
 */
import { createRequire } from 'node:module';
import type { createKeccak as CreateKeccak } from 'hash-wasm';
import type { CustomCrypto } from '@ethereumjs/common';
import { calculateSigRecovery, ecrecover as nobleEcrecover, setLengthLeft } from '@ethereumjs/util';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { secp256k1 as nobleSecp } from '@noble/curves/secp256k1.js';
import { reusedHasher } from '@cornice/sdk';
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

const EMPTY_KECCAK = 'c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470';

const native = loadNative();
// hash-wasm's keccak-only bundle: its main one (every algorithm) is slower to load and make a hasher,
// at every start of an EVM chain.
const wasmKeccak = await reusedHasher(
  () => (createRequire(import.meta.url)('hash-wasm/dist/keccak.umd.min.js') as { createKeccak: typeof CreateKeccak }).createKeccak(256),
  EMPTY_KECCAK,
);

/** 'native' when libsecp256k1 loaded, else 'noble'. */
export const secpBackendName: 'native' | 'noble' = native ? 'native' : 'noble';

/** 'wasm' when hash-wasm's keccak loaded, else 'noble'. */
export const keccakBackendName: 'wasm' | 'noble' = wasmKeccak ? 'wasm' : 'noble';

/** Keccak-256 of `msg` (a new array). */
export const keccak256: (msg: Uint8Array) => Uint8Array = wasmKeccak ?? ((msg) => keccak_256(msg));

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

/** What the chain's Common gets: native recovery and signing, and the fast keccak, when available. */
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
