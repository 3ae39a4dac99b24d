/**
 * Ethereum keys for node-held accounts: addresses (keccak of the uncompressed public key), EIP-191
 * personal messages, signatures `r ‖ s ‖ v` with v 27/28 as geth writes them, and their recovery.
 */
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { concatBytes, utf8Encode } from '@cornice/sdk';
import { EvmRpcError, type Address } from '../evm-backend.js';

/** The address of a 32-byte private key. */
export function addressOf(privateKey: Uint8Array): Address {
  const pub = secp256k1.getPublicKey(privateKey, false);
  return keccak_256(pub.subarray(1)).slice(12);
}

export function isValidPrivateKey(key: Uint8Array): boolean {
  return key.length === 32 && secp256k1.utils.isValidSecretKey(key);
}

export function randomPrivateKey(): Uint8Array {
  return secp256k1.utils.randomSecretKey();
}

/** keccak256("\x19Ethereum Signed Message:\n" + len(data) + data) (EIP-191 version 0x45). */
export function personalMessageHash(data: Uint8Array): Uint8Array {
  return keccak_256(concatBytes(utf8Encode(`\x19Ethereum Signed Message:\n${data.length}`), data));
}

/** Signs `data` as a personal message: 65 bytes r ‖ s ‖ v with v = 27 + recovery id. */
export function signPersonal(data: Uint8Array, privateKey: Uint8Array): Uint8Array {
  const rec = secp256k1.sign(personalMessageHash(data), privateKey, { prehash: false, lowS: true, format: 'recovered' });
  const out = new Uint8Array(65);
  out.set(rec.subarray(1, 65), 0);
  out[64] = rec[0]! + 27;
  return out;
}

/** The address that signed `data` as a personal message (geth's personal_ecRecover). */
export function recoverPersonal(data: Uint8Array, signature: Uint8Array): Address {
  if (signature.length !== 65) throw new EvmRpcError(-32000, 'signature must be 65 bytes long');
  const v = signature[64]!;
  if (v !== 27 && v !== 28) throw new EvmRpcError(-32000, 'invalid Ethereum signature (V is not 27 or 28)');
  const rec = new Uint8Array(65);
  rec[0] = v - 27;
  rec.set(signature.subarray(0, 64), 1);
  let pub: Uint8Array;
  try {
    const compressed = secp256k1.recoverPublicKey(rec, personalMessageHash(data), { prehash: false });
    pub = secp256k1.Point.fromBytes(compressed).toBytes(false);
  } catch {
    throw new EvmRpcError(-32000, 'invalid signature: no public key recovers from it');
  }
  return keccak_256(pub.subarray(1)).slice(12);
}
