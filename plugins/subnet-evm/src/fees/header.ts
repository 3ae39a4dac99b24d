/**
 * The fee fields of a new block's header from its parent's (README.md "Fees"): gas limit, base fee, fee
 * window and block gas cost, and the extraData carrying the last two.
 */
import { isForked } from '../config/network-upgrades.js';
import type { FeeConfig, NetworkUpgrades } from '../types.js';
import { nextBaseFee } from './base-fee.js';
import { nextBlockGasCost } from './block-gas-cost.js';
import { decodeExtraData, encodeExtraData } from './extra-data.js';
import { emptyWindow, type FeeWindow } from './window.js';

/** What the fee rules read of a parent header. */
export interface FeeParent {
  readonly number: bigint;
  readonly timestamp: bigint;
  readonly gasUsed: bigint;
  readonly baseFeePerGas: bigint;
  readonly extraData: Uint8Array;
}

export interface FeeFields {
  readonly gasLimit: bigint;
  readonly baseFee: bigint;
  readonly window: FeeWindow;
  readonly blockGasCost: bigint;
  /** window (80 bytes) || blockGasCost (8 bytes BE). */
  readonly extraData: Uint8Array;
}

/**
 * The parent's window and block gas cost. The genesis block has neither in its extraData: an empty
 * window, and a cost of 0 when Etna is active at genesis (subnet-evm's genesis header sets it then),
 * else none. Other blocks' extraData must be the 88-byte layout (FeeError otherwise).
 */
export function parentFeeState(parent: FeeParent, upgrades: NetworkUpgrades): { window: FeeWindow; blockGasCost: bigint | undefined } {
  if (parent.number === 0n) return { window: emptyWindow(), blockGasCost: isForked(upgrades.etnaTimestamp, parent.timestamp) ? 0n : undefined };
  return decodeExtraData(parent.extraData);
}

/** The fee fields of a block at `timestamp` on `parent`, under `cfg` (the fee config in effect at the parent). */
export function nextFeeFields(cfg: FeeConfig, parent: FeeParent, timestamp: bigint, upgrades: NetworkUpgrades): FeeFields {
  const state = parentFeeState(parent, upgrades);
  const { window, baseFee } = nextBaseFee(cfg, { ...parent, window: state.window }, timestamp);
  const blockGasCost = nextBlockGasCost(cfg, state.blockGasCost, parent.timestamp, timestamp, isForked(upgrades.graniteTimestamp, timestamp));
  return { gasLimit: cfg.gasLimit, baseFee, window, blockGasCost, extraData: encodeExtraData({ window, blockGasCost }) };
}
