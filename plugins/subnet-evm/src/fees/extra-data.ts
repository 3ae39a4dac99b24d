/**
 * A subnet-EVM block's extraData in this node: the fee window (80 bytes) then the block gas cost
 * (8 bytes, big-endian). subnet-evm keeps blockGasCost in a header field of its own; @ethereumjs
 * headers have none, so it rides in extraData (which is in the block hash either way).
 */
import { FeeError } from './errors.js';
import { WINDOW_BYTES, decodeWindow, encodeWindow, type FeeWindow } from './window.js';
import { MAX_UINT64 } from '../config/json.js';

export const EXTRA_DATA_BYTES = WINDOW_BYTES + 8;

export interface FeeExtraData {
  readonly window: FeeWindow;
  readonly blockGasCost: bigint;
}

export function encodeExtraData(e: FeeExtraData): Uint8Array {
  if (e.blockGasCost < 0n || e.blockGasCost > MAX_UINT64) throw new FeeError('InvalidExtraData', `block gas cost ${e.blockGasCost} is not a uint64`);
  const out = new Uint8Array(EXTRA_DATA_BYTES);
  out.set(encodeWindow(e.window));
  new DataView(out.buffer).setBigUint64(WINDOW_BYTES, e.blockGasCost);
  return out;
}

/** Parses a non-genesis block's extraData: exactly 88 bytes, else a FeeError saying what it got. */
export function decodeExtraData(extra: Uint8Array): FeeExtraData {
  if (extra.length !== EXTRA_DATA_BYTES) {
    throw new FeeError('InvalidExtraData', `extraData has ${extra.length} bytes, want ${EXTRA_DATA_BYTES} (fee window ${WINDOW_BYTES} + block gas cost 8)`);
  }
  return {
    window: decodeWindow(extra),
    blockGasCost: new DataView(extra.buffer, extra.byteOffset, extra.length).getBigUint64(WINDOW_BYTES),
  };
}
