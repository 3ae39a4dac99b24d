/**
 * The block gas cost (README.md "Fees"; subnet-evm `blockgascost/cost.go`, `customheader/block_gas_cost.go`)
 * and its enforcement (VerifyBlockFee): blocks faster than targetBlockRate must carry tips that buy
 * the cost at the base fee. Granite sets the cost to 0.
 */
import type { IncludedTx } from '@cornice/evm';
import type { FeeConfig } from '../types.js';
import { MAX_UINT64 } from '../config/json.js';

function clamp(v: bigint, min: bigint, max: bigint): bigint {
  return v < min ? min : v > max ? max : v;
}

/**
 * The cost of a block `elapsed` seconds after a parent that cost `parentCost` (undefined: the parent
 * has none, the cost is minBlockGasCost). Go's uint64 over/underflows saturate before the clamp.
 */
export function blockGasCost(cfg: FeeConfig, parentCost: bigint | undefined, elapsed: bigint): bigint {
  if (parentCost === undefined) return cfg.minBlockGasCost;
  const rate = cfg.targetBlockRate;
  const deviation = rate > elapsed ? rate - elapsed : elapsed - rate;
  let change = cfg.blockGasCostStep * deviation;
  if (change > MAX_UINT64) change = MAX_UINT64;
  let cost = elapsed < rate ? parentCost + change : parentCost - change;
  if (cost > MAX_UINT64) cost = MAX_UINT64;
  if (cost < 0n) cost = 0n;
  return clamp(cost, cfg.minBlockGasCost, cfg.maxBlockGasCost);
}

/** The cost of a block at `timestamp` on a parent at `parentTimestamp` (a timestamp before it counts as 0 s). */
export function nextBlockGasCost(cfg: FeeConfig, parentCost: bigint | undefined, parentTimestamp: bigint, timestamp: bigint, granite: boolean): bigint {
  if (granite) return 0n;
  return blockGasCost(cfg, parentCost, timestamp > parentTimestamp ? timestamp - parentTimestamp : 0n);
}

/**
 * VerifyBlockFee: the tips (effective tip x gas used, summed) buy at least `requiredCost` gas at
 * `baseFee`. Returns subnet-evm's error text, or undefined when the block pays.
 */
export function verifyBlockFee(baseFee: bigint, requiredCost: bigint, txs: readonly IncludedTx[]): string | undefined {
  if (baseFee <= 0n) return `invalid base fee (${baseFee}) in SubnetEVM`;
  if (requiredCost < 0n || requiredCost > MAX_UINT64) return `invalid block gas cost (${requiredCost}) in SubnetEVM`;
  let total = 0n;
  for (const tx of txs) total += tx.tipPerGas * tx.gasUsed;
  const blockGas = total / baseFee;
  if (blockGas < requiredCost) {
    return `insufficient gas (${blockGas}) to cover the block cost (${requiredCost}) at base fee (${baseFee}) (total block fee: ${total})`;
  }
  return undefined;
}

/**
 * The earliest second at which a block on this parent costs minBlockGasCost (0 by default), so that
 * tip-less txs pass VerifyBlockFee: targetBlockRate seconds, plus a second per step the parent's
 * cost is above the minimum. With a zero step (or min = max) the cost never falls: waiting does not help, the
 * answer is the parent's time. After Granite the cost is always 0.
 */
export function buildableAt(parentTimestamp: bigint, parentCost: bigint | undefined, cfg: FeeConfig, granite = false): bigint {
  if (granite || parentCost === undefined || cfg.blockGasCostStep === 0n || cfg.minBlockGasCost === cfg.maxBlockGasCost) return parentTimestamp;
  const above = parentCost > cfg.minBlockGasCost ? parentCost - cfg.minBlockGasCost : 0n;
  const steps = (above + cfg.blockGasCostStep - 1n) / cfg.blockGasCostStep;
  return parentTimestamp + cfg.targetBlockRate + steps;
}
