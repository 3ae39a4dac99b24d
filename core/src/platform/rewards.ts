/**
 * Staking rewards, as the reference node computes them: reward = floor(stake · 1.04^(hours/8760) − stake), computed in
 * float64 as the reference does; a delegator's reward is split by its validator's delegation fee
 * (shares, in millionths): the validator's destination gets shares/1e6 of it.
 */
import { NUMBER_OF_SHARES } from './model.js';

const INFLATION_RATE = 1.04;
const HOURS_PER_YEAR = 8760;

export function reward(stake: bigint, durationSeconds: number): bigint {
  const years = durationSeconds / 3600 / HOURS_PER_YEAR;
  const grown = BigInt(Math.floor(Number(stake) * INFLATION_RATE ** years));
  return grown > stake ? grown - stake : 0n;
}

/** How a delegator's reward is split: the delegator's part and the validator's fee. */
export function splitDelegatorReward(total: bigint, validatorShares: number): { delegator: bigint; validator: bigint } {
  const delegator = (BigInt(NUMBER_OF_SHARES - validatorShares) * total) / BigInt(NUMBER_OF_SHARES);
  return { delegator, validator: total - delegator };
}
