/**
 * cb58 (base58 with a 4-byte checksum: the last 4 bytes of the SHA-256 of the payload), for the
 * vmID and the genesis data the generator writes. The generator depends on nothing (it runs from its
 * own tarball), hence this small copy of what @cornice/sdk's cb58Encode does.
 */
import { createHash } from 'node:crypto';

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

export function cb58Encode(payload: Uint8Array): string {
  const checksum = createHash('sha256').update(payload).digest().subarray(-4);
  const bytes = new Uint8Array(payload.length + 4);
  bytes.set(payload);
  bytes.set(checksum, payload.length);
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  let out = '';
  while (n > 0n) {
    out = ALPHABET[Number(n % 58n)]! + out;
    n /= 58n;
  }
  for (const b of bytes) {
    if (b !== 0) break;
    out = '1' + out;
  }
  return out;
}

/** The vmID of a VM name: the name's UTF-8 bytes zero-padded to 32 bytes, as cb58. */
export function vmIdOf(vmName: string): string {
  const padded = new Uint8Array(32);
  padded.set(new TextEncoder().encode(vmName));
  return cb58Encode(padded);
}
