/**
 * The signer-recovery pool's worker thread (recovery-pool.ts): recovers the address behind each
 * (hash, signature) pair of a job and posts them back, 20 bytes each, with a flag per pair.
 */
import { parentPort } from 'node:worker_threads';
import { recoverAddressFromHash } from './secp256k1.js';

export interface RecoveryJob {
  seq: number;
  /** n hashes of 32 bytes, back to back. */
  hashes: Uint8Array;
  /** n signatures of 65 bytes, back to back. */
  sigs: Uint8Array;
}

export interface RecoveryResult {
  seq: number;
  /** n addresses of 20 bytes (zeros where ok[i] is 0). */
  addresses: Uint8Array;
  /** 1 where the signature recovered, 0 where it is invalid. */
  ok: Uint8Array;
}

parentPort?.on('message', ({ seq, hashes, sigs }: RecoveryJob) => {
  const n = hashes.length / 32;
  const addresses = new Uint8Array(n * 20);
  const ok = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    try {
      addresses.set(recoverAddressFromHash(hashes.subarray(i * 32, i * 32 + 32), sigs.subarray(i * 65, i * 65 + 65)).bytes, i * 20);
      ok[i] = 1;
    } catch {
      // Left for the caller's own recovery to report.
    }
  }
  const result: RecoveryResult = { seq, addresses, ok };
  parentPort!.postMessage(result, [addresses.buffer, ok.buffer]);
});
