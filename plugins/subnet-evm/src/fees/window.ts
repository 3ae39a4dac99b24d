/**
 * The subnet-EVM fee window (README.md "Fees"; subnet-evm `upgrade/subnetevm/window.go`): gas used in each
 * of the last 10 seconds, oldest first, as 10 big-endian uint64 (80 bytes). Arithmetic saturates at
 * 2^64 - 1 as in Go's safemath.
 */
import { FeeError } from './errors.js';
import { MAX_UINT64 } from '../config/json.js';

export const WINDOW_LEN = 10;
export const WINDOW_BYTES = WINDOW_LEN * 8;

/** Ten uint64 entries; index 9 is the newest second. */
export type FeeWindow = readonly bigint[];

export function emptyWindow(): FeeWindow {
  return new Array<bigint>(WINDOW_LEN).fill(0n);
}

const saturate = (n: bigint): bigint => (n > MAX_UINT64 ? MAX_UINT64 : n);

/** Adds gas to the newest entry (saturating). */
export function addGas(w: FeeWindow, gas: bigint): FeeWindow {
  const out = [...w];
  out[WINDOW_LEN - 1] = saturate(out[WINDOW_LEN - 1]! + gas);
  return out;
}

/** Drops the oldest `n` seconds (n >= 10 empties the window). */
export function shiftWindow(w: FeeWindow, n: bigint): FeeWindow {
  if (n >= BigInt(WINDOW_LEN)) return emptyWindow();
  const k = Number(n);
  return [...w.slice(k), ...new Array<bigint>(k).fill(0n)];
}

/** Total gas in the window (saturating). */
export function windowSum(w: FeeWindow): bigint {
  return saturate(w.reduce((a, b) => a + b, 0n));
}

export function encodeWindow(w: FeeWindow): Uint8Array {
  const out = new Uint8Array(WINDOW_BYTES);
  const view = new DataView(out.buffer);
  w.forEach((v, i) => view.setBigUint64(i * 8, v));
  return out;
}

/** The window from the first 80 bytes; shorter input is a FeeError. */
export function decodeWindow(bytes: Uint8Array): FeeWindow {
  if (bytes.length < WINDOW_BYTES) throw new FeeError('InvalidExtraData', `fee window needs ${WINDOW_BYTES} bytes, got ${bytes.length}`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, WINDOW_BYTES);
  return Array.from({ length: WINDOW_LEN }, (_, i) => view.getBigUint64(i * 8));
}
