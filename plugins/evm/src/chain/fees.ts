/**
 * Fee rules: a hook, so the subnet-EVM can plug its own fee config in place
 * of the C-Chain's. The chain asks the rules for each new block's base fee, gas limit and fee
 * recipient, and checks a foreign block's header against the same answers.
 */
import { EvmChainError } from '../errors.js';

/** What fee rules see of a parent block. */
export interface ParentFeeInfo {
  readonly number: bigint;
  readonly timestamp: bigint;
  readonly gasLimit: bigint;
  readonly gasUsed: bigint;
  readonly baseFeePerGas: bigint;
}

export interface FeeRules {
  /** Base fee of a block on `parent` made at `timestamp` (unix seconds). */
  baseFee(parent: ParentFeeInfo, timestamp: bigint): bigint;
  /** Gas limit of a block on `parent` made at `timestamp`. */
  gasLimit(parent: ParentFeeInfo, timestamp: bigint): bigint;
  /** The fee recipient (coinbase) of a block on `parent`: the priority fees go there. */
  coinbase(parent: ParentFeeInfo): Uint8Array;
  /**
   * True when base fees are credited to the coinbase instead of being burned (ethereumjs burns
   * them; the subnet-EVM with fee recipients allowed credits them).
   */
  readonly creditBaseFee?: boolean;
  /** The lowest base fee (eth_gasPrice never answers less than this). */
  readonly minBaseFee: bigint;
  /** The tip eth_maxPriorityFeePerGas suggests. */
  suggestedTip(): bigint;
}

/** 25 gwei: the C-Chain's minimum base fee. */
export const C_CHAIN_MIN_BASE_FEE = 25_000_000_000n;

/** The C-Chain's black-hole fee recipient, 0x0100…00. */
export const BLACKHOLE_ADDRESS = Uint8Array.from([1, ...new Array<number>(19).fill(0)]);

export interface DynamicFeeOptions {
  /** Lowest base fee (default 25 gwei). */
  minBaseFee?: bigint;
  /** Per-block gas limit (default: the parent's, i.e. the genesis gas limit). */
  gasLimit?: bigint;
  /** Base fee moves by at most 1/denominator per block (default 8, as EIP-1559). */
  changeDenominator?: bigint;
  /** Gas target as a fraction of the limit: limit / elasticity (default 2). */
  elasticity?: bigint;
  /** Fee recipient (default the black-hole address). */
  coinbase?: Uint8Array;
  /** Suggested tip (default 0: a block is built as soon as a tx is pending, tips buy nothing). */
  tip?: bigint;
}

/**
 * An EIP-1559-like rule with a floor: the C-Chain's default. Blocks are built per tx burst, so a
 * block is rarely above target and the base fee sits at the floor unless blocks fill up.
 */
export function dynamicFeeRules(o: DynamicFeeOptions = {}): FeeRules {
  const minBaseFee = o.minBaseFee ?? C_CHAIN_MIN_BASE_FEE;
  const denominator = o.changeDenominator ?? 8n;
  const elasticity = o.elasticity ?? 2n;
  if (minBaseFee < 0n || denominator <= 0n || elasticity <= 0n) throw new EvmChainError('InvalidConfig', 'fee rules: minBaseFee must be >= 0, changeDenominator and elasticity > 0');
  const coinbase = o.coinbase ?? BLACKHOLE_ADDRESS;
  return {
    minBaseFee,
    baseFee(parent) {
      const target = parent.gasLimit / elasticity;
      const base = parent.baseFeePerGas < minBaseFee ? minBaseFee : parent.baseFeePerGas;
      if (target === 0n || parent.gasUsed === target) return base;
      let next: bigint;
      if (parent.gasUsed > target) {
        const delta = (base * (parent.gasUsed - target)) / target / denominator;
        next = base + (delta > 0n ? delta : 1n);
      } else {
        next = base - (base * (target - parent.gasUsed)) / target / denominator;
      }
      return next < minBaseFee ? minBaseFee : next;
    },
    gasLimit: (parent) => o.gasLimit ?? parent.gasLimit,
    coinbase: () => coinbase,
    suggestedTip: () => o.tip ?? 0n,
  };
}
