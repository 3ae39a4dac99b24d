/**
 * The base fee from the fee window (README.md "Fees"; subnet-evm `customheader/dynamic_fee_windower.go`):
 * up when the window's gas is above targetGas, down when below (faster after long idle gaps), never
 * below minBaseFee. Integer division in Go's order.
 */
import type { FeeConfig } from '../types.js';
import { FeeError } from './errors.js';
import { WINDOW_LEN, addGas, emptyWindow, shiftWindow, windowSum, type FeeWindow } from './window.js';

/** What the base fee needs of the parent block. */
export interface ParentFeeInfo {
  readonly number: bigint;
  readonly timestamp: bigint;
  readonly gasUsed: bigint;
  readonly baseFeePerGas: bigint;
  /** The parent's fee window (decoded from its extraData); ignored for the genesis block. */
  readonly window: FeeWindow;
}

const ROLLUP_WINDOW = BigInt(WINDOW_LEN);

/** The child's window: the parent's plus its gas used, shifted by the seconds elapsed (empty on genesis). */
export function childWindow(parent: ParentFeeInfo, timestamp: bigint): FeeWindow {
  if (parent.number === 0n) return emptyWindow();
  if (timestamp < parent.timestamp) {
    throw new FeeError('InvalidTimestamp', `cannot calculate fee window for timestamp ${timestamp} prior to parent timestamp ${parent.timestamp}`);
  }
  return shiftWindow(addGas(parent.window, parent.gasUsed), timestamp - parent.timestamp);
}

/** The base fee of a block at `timestamp` on `parent`, with the child's window already computed. */
export function baseFeeFromWindow(cfg: FeeConfig, parent: ParentFeeInfo, window: FeeWindow, timestamp: bigint): bigint {
  if (parent.number === 0n) return cfg.minBaseFee;
  const total = windowSum(window);
  const target = cfg.targetGas;
  // As subnet-evm: exactly on target keeps the parent's base fee, unclamped.
  if (total === target) return parent.baseFeePerGas;
  let baseFee: bigint;
  if (total > target) {
    const delta = (parent.baseFeePerGas * (total - target)) / target / cfg.baseFeeChangeDenominator;
    baseFee = parent.baseFeePerGas + (delta > 1n ? delta : 1n);
  } else {
    let delta = (parent.baseFeePerGas * (target - total)) / target / cfg.baseFeeChangeDenominator;
    if (delta < 1n) delta = 1n;
    // Idle for several windows: apply the decrease once per window elapsed.
    const windows = (timestamp - parent.timestamp) / ROLLUP_WINDOW;
    if (windows > 1n) delta *= windows;
    baseFee = parent.baseFeePerGas - delta;
  }
  return baseFee < cfg.minBaseFee ? cfg.minBaseFee : baseFee;
}

/** The child's window and base fee. */
export function nextBaseFee(cfg: FeeConfig, parent: ParentFeeInfo, timestamp: bigint): { window: FeeWindow; baseFee: bigint } {
  const window = childWindow(parent, timestamp);
  return { window, baseFee: baseFeeFromWindow(cfg, parent, window, timestamp) };
}
