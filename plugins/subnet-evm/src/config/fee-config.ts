/**
 * The fee config (README.md "Fees"): subnet-evm's DefaultFeeConfig, parsing a `feeConfig` object,
 * FeeConfig.Verify's rules and texts, JSON output and equality.
 */
import { ConfigError, FEE_CONFIG_FIELDS, type FeeConfig } from '../types.js';
import { MAX_UINT256, MAX_UINT64, jsonInteger, objectAt, parseInteger } from './json.js';

/** params/extras DefaultFeeConfig. */
export const DEFAULT_FEE_CONFIG: FeeConfig = Object.freeze({
  gasLimit: 8_000_000n,
  targetBlockRate: 2n,
  minBaseFee: 25_000_000_000n,
  targetGas: 15_000_000n,
  baseFeeChangeDenominator: 36n,
  minBlockGasCost: 0n,
  maxBlockGasCost: 1_000_000n,
  blockGasCostStep: 200_000n,
});

/** A fee config as read: a missing field is undefined (Go's nil; targetBlockRate's zero value). */
export type PartialFeeConfig = { readonly [K in keyof FeeConfig]?: bigint };

/**
 * Why the config is invalid, in FeeConfig.Verify's words and order (nil fields first, then the
 * values, then the 32-byte bound), or undefined when it is valid.
 */
export function feeConfigProblem(c: PartialFeeConfig): string | undefined {
  for (const f of FEE_CONFIG_FIELDS) {
    // A missing targetBlockRate is Go's 0 (a uint64), caught by the "<= 0" rule below.
    if (f !== 'targetBlockRate' && c[f] === undefined) return `${f} cannot be nil`;
  }
  const v = c as FeeConfig & { targetBlockRate?: bigint };
  const rate = v.targetBlockRate ?? 0n;
  if (v.gasLimit <= 0n) return `gasLimit cannot be less than or equal to 0: gasLimit = ${v.gasLimit}`;
  if (rate <= 0n) return `targetBlockRate cannot be less than or equal to 0: targetBlockRate = ${rate}`;
  if (v.minBaseFee < 0n) return `minBaseFee cannot be less than 0: minBaseFee = ${v.minBaseFee}`;
  if (v.targetGas <= 0n) return `targetGas cannot be less than or equal to 0: targetGas = ${v.targetGas}`;
  if (v.baseFeeChangeDenominator <= 0n) {
    return `baseFeeChangeDenominator cannot be less than or equal to 0: baseFeeChangeDenominator = ${v.baseFeeChangeDenominator}`;
  }
  if (v.minBlockGasCost < 0n) return `minBlockGasCost cannot be less than 0: minBlockGasCost = ${v.minBlockGasCost}`;
  if (v.minBlockGasCost > v.maxBlockGasCost) {
    return `minBlockGasCost cannot be greater than maxBlockGasCost: minBlockGasCost = ${v.minBlockGasCost}, maxBlockGasCost = ${v.maxBlockGasCost}`;
  }
  if (v.blockGasCostStep < 0n) return `blockGasCostStep cannot be less than 0: blockGasCostStep = ${v.blockGasCostStep}`;
  if (v.maxBlockGasCost > MAX_UINT64) return `maxBlockGasCost is not a valid uint64: maxBlockGasCost = ${v.maxBlockGasCost}`;
  if (rate > MAX_UINT64) return `targetBlockRate is not a valid uint64: targetBlockRate = ${rate}`;
  for (const f of FEE_CONFIG_FIELDS) if ((f === 'targetBlockRate' ? rate : v[f]) > MAX_UINT256) return `${f} exceeds hash length: 32 bytes`;
  return undefined;
}

/** Rules a chain adds to FeeConfig.Verify (the fee manager's `verify` option): why the config is refused, or undefined. */
export type FeeConfigVerifier = (config: FeeConfig) => string | undefined;

/**
 * Verifies a fee config (FeeConfig.Verify, then `extra` rules if any); `field` is its JSON path
 * (e.g. `config.feeConfig`). The ConfigError names the offending field when the text starts with
 * one: `config.feeConfig.gasLimit: gasLimit cannot be nil`.
 */
export function verifyFeeConfig(c: PartialFeeConfig, field: string, extra?: FeeConfigVerifier): FeeConfig {
  const problem = feeConfigProblem(c) ?? extra?.(c as FeeConfig);
  if (problem !== undefined) {
    const name = FEE_CONFIG_FIELDS.find((f) => problem.startsWith(f + ' ')) ?? '';
    throw new ConfigError(name ? `${field}.${name}` : field, problem);
  }
  return { ...(c as FeeConfig) };
}

/**
 * Parses and verifies a `feeConfig` object. Values: JSON numbers, or decimal / 0x strings (needed
 * beyond 2^53); negative values parse and fail Verify with its text, as in subnet-evm. Unknown keys
 * are refused (a typo would otherwise read as a missing field).
 */
export function parseFeeConfig(json: unknown, field: string, extra?: FeeConfigVerifier): FeeConfig {
  const o = objectAt(json, field);
  const known = new Set<string>(FEE_CONFIG_FIELDS);
  for (const k of Object.keys(o)) if (!known.has(k)) throw new ConfigError(`${field}.${k}`, `unknown fee config field (known: ${FEE_CONFIG_FIELDS.join(', ')})`);
  const out: { -readonly [K in keyof FeeConfig]?: bigint } = {};
  for (const f of FEE_CONFIG_FIELDS) {
    const v = o[f];
    // JSON null is Go's nil, as absent.
    if (v !== undefined && v !== null) out[f] = parseInteger(v, `${field}.${f}`, -MAX_UINT256, MAX_UINT256 << 8n);
  }
  return verifyFeeConfig(out, field, extra);
}

/** The config as JSON (eth_feeConfig, eth_getChainConfig): numbers, decimal strings beyond 2^53. */
export function feeConfigJson(c: FeeConfig): Record<string, number | string> {
  const out: Record<string, number | string> = {};
  for (const f of FEE_CONFIG_FIELDS) out[f] = jsonInteger(c[f]);
  return out;
}

export function feeConfigEqual(a: FeeConfig, b: FeeConfig): boolean {
  return FEE_CONFIG_FIELDS.every((f) => a[f] === b[f]);
}
