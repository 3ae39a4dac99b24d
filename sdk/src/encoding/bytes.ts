/**
 * Small helpers over Uint8Array used across the sdk. Domain code passes bytes as Uint8Array, never
 * Buffer; these helpers accept any Uint8Array (a Buffer included) and return plain Uint8Arrays.
 */

/**
 * `length` bytes, not zeroed, from Node's Buffer pool, as a plain Uint8Array: for bytes that are
 * written whole and then copied away at once (a store's key or value, a frame for a socket). V8
 * places a new Uint8Array of over 64 bytes outside its heap, a native allocation the collector then
 * tracks, many times the cost of a slice of the pool: the sdk's other hot paths (the codec's
 * writers, prefixed stores' keys) and the VMs' stores point here for that reason. The figure it
 * moves is the X-Chain's transfers accepted/s (bench/avm.mjs, bench/network.mjs). The pool's
 * memory is never handed out twice, but a view kept long keeps its 8 KiB slab (bytes.test.ts
 * 'pooledBytes: …').
 */
export function pooledBytes(length: number): Uint8Array {
  const b = Buffer.allocUnsafe(length);
  return new Uint8Array(b.buffer, b.byteOffset, length);
}

/** Concatenates the parts into one new array. */
export function concatBytes(...parts: readonly Uint8Array[]): Uint8Array {
  let length = 0;
  for (const p of parts) length += p.length;
  const out = new Uint8Array(length);
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}

/** True when both arrays hold the same bytes. Returns early; not for secrets (see constantTimeEqual). */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * Equality without an early exit on the first differing byte, for comparing secrets (MACs, password
 * hashes). A length mismatch returns false straight away: lengths are not secret here.
 */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

/** Unsigned lexicographic order: -1 when a < b, 0 when equal, 1 when a > b (a prefix sorts first). */
export function compareBytes(a: Uint8Array, b: Uint8Array): -1 | 0 | 1 {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x !== y) return x < y ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8');

/** UTF-8 bytes of a string. */
export function utf8Encode(s: string): Uint8Array {
  return encoder.encode(s);
}

/** The string of UTF-8 bytes; invalid sequences become U+FFFD (lenient, like Go's conversions). */
export function utf8Decode(b: Uint8Array): string {
  return decoder.decode(b);
}
