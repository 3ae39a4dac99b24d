/**
 * Signers already recovered, by signature object, with the hash each signed: recoverSigner's memory
 * (secp256k1.ts), which the recovery pool (recovery-pool.ts) fills ahead of time. Internal to the sdk.
 */
import type { ShortId } from '../ids/id.js';

export const recoveredSigners = new WeakMap<Uint8Array, { hash: Uint8Array; signer: ShortId }>();
