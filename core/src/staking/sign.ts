/**
 * Signatures with the staking key, checked against a peer's certificate (its public key: peerCertificate's `publicKey`): how a node vouches for
 * what it says about itself to nodes that only relay it (its signed listen address, network/
 * signed-ip.ts). Staking keys may be RSA (PKCS#1 v1.5 with SHA-256, the reference's), ECDSA (SHA-256,
 * DER signature: this node's own P-256 keys) or Ed25519/Ed448 (the curve's own hash).
 *
 * Verification never throws: a key of another kind, a malformed signature or a wrong one is false.
 * Tests: network/signed-ip.test.ts (RSA-4096 reference key, generated ECDSA, Ed25519, refusals).
 */
import { createPrivateKey, sign, verify, type KeyObject } from 'node:crypto';

/** The digest named to node:crypto: SHA-256, or none for the EdDSA keys (they hash themselves). */
function digestFor(key: KeyObject): string | null {
  const type = key.asymmetricKeyType;
  return type === 'ed25519' || type === 'ed448' ? null : 'sha256';
}

/** A signer for `keyPem` (PKCS#8 or PKCS#1 PEM): data -> signature bytes. The key is parsed once. */
export function stakingSigner(keyPem: string): (data: Uint8Array) => Uint8Array {
  const key = createPrivateKey(keyPem);
  const digest = digestFor(key);
  return (data) => new Uint8Array(sign(digest, data, key));
}

/** Whether `signature` is the key's signature of `data`; false for anything unusable. */
export function verifySignature(key: KeyObject | undefined, data: Uint8Array, signature: Uint8Array): boolean {
  if (!key || signature.byteLength === 0) return false;
  try {
    return verify(digestFor(key), data, key, signature);
  } catch {
    return false;
  }
}
