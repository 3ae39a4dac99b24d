/**
 * geth's bound on the fee of a tx sent or signed through the RPC (its --rpc.txfeecap, coreth's
 * rpc-tx-fee-cap, 100 by default there): gas × fee cap, in whole native units, past the cap is
 * refused with "tx fee (F ether) exceeds the configured cap (C ether)", F and C written as Go's %.2f
 * writes a float64 (every digit of a large one, never an exponent). It comes before the pool's
 * checks, so a tx whose gas × fee cap passes 2^256-1 gets it over the RPC. Tests:
 * mempool.test.ts "the RPC fee cap".
 */

const WEI_PER_UNIT = 10n ** 18n;

/** `x` as Go's fmt %.2f writes a float64. */
export function goFixed2(x: number): string {
  if (Math.abs(x) < 1e21) return x.toFixed(2);
  // An integer: its exact digits.
  return BigInt(x).toString() + '.00';
}

/** The fee of gas × feeCap wei in whole units, as the nearest float64 (geth's big.Float quotient). */
function feeUnits(wei: bigint): number {
  const whole = wei / WEI_PER_UNIT;
  if (whole >= 1n << 53n) return Number(whole);
  return Number(whole) + Number(wei % WEI_PER_UNIT) / 1e18;
}

/** geth's refusal of a tx paying more than `cap` units (0: no bound), or undefined. */
export function txFeeRefusal(feeCap: bigint, gas: bigint, cap: number): string | undefined {
  if (cap === 0) return undefined;
  const fee = feeUnits(feeCap * gas);
  if (!(fee > cap)) return undefined;
  return `tx fee (${goFixed2(fee)} ether) exceeds the configured cap (${goFixed2(cap)} ether)`;
}
