/**
 * The fee config as the fee manager needs it: commontype.FeeConfig.Verify with the reference's
 * texts, and the `initialFeeConfig` JSON. A local copy of the rules (the chain-config parser in
 * src/config has its own): the fee manager takes any `verify` with the same contract, so the two
 * can be merged into one.
 */
import { ConfigError, FEE_CONFIG_FIELDS, type FeeConfig } from '../types.js';
import { requireObject } from './config.js';

/** Why the config is invalid (FeeConfig.Verify's text), or undefined. */
export type FeeConfigVerifier = (config: FeeConfig) => string | undefined;

const MAX_UINT64 = (1n << 64n) - 1n;
const MAX_UINT256 = (1n << 256n) - 1n;

export const verifyFeeConfig: FeeConfigVerifier = (f) => {
  if (f.gasLimit <= 0n) return `gasLimit cannot be less than or equal to 0: gasLimit = ${f.gasLimit}`;
  if (f.targetBlockRate <= 0n) return `targetBlockRate cannot be less than or equal to 0: targetBlockRate = ${f.targetBlockRate}`;
  if (f.minBaseFee < 0n) return `minBaseFee cannot be less than 0: minBaseFee = ${f.minBaseFee}`;
  if (f.targetGas <= 0n) return `targetGas cannot be less than or equal to 0: targetGas = ${f.targetGas}`;
  if (f.baseFeeChangeDenominator <= 0n) {
    return `baseFeeChangeDenominator cannot be less than or equal to 0: baseFeeChangeDenominator = ${f.baseFeeChangeDenominator}`;
  }
  if (f.minBlockGasCost < 0n) return `minBlockGasCost cannot be less than 0: minBlockGasCost = ${f.minBlockGasCost}`;
  if (f.minBlockGasCost > f.maxBlockGasCost) {
    return `minBlockGasCost cannot be greater than maxBlockGasCost: minBlockGasCost = ${f.minBlockGasCost}, maxBlockGasCost = ${f.maxBlockGasCost}`;
  }
  if (f.blockGasCostStep < 0n) return `blockGasCostStep cannot be less than 0: blockGasCostStep = ${f.blockGasCostStep}`;
  if (f.maxBlockGasCost > MAX_UINT64) return `maxBlockGasCost is not a valid uint64: maxBlockGasCost = ${f.maxBlockGasCost}`;
  for (const name of FEE_CONFIG_FIELDS) {
    if (f[name] > MAX_UINT256) return `${name} exceeds hash length: 32 bytes`;
  }
  return undefined;
};

function integer(value: unknown, field: string): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
  throw new ConfigError(field, 'must be an integer');
}

/**
 * A fee config object (JSON numbers): a missing field is `<name> cannot be nil` (targetBlockRate,
 * a uint64 in Go, defaults to 0 and fails its own check), then the Verify rules.
 */
export function parseFeeConfigJson(json: unknown, field: string, verify: FeeConfigVerifier = verifyFeeConfig): FeeConfig {
  const o = requireObject(json, field);
  const values: Partial<Record<keyof FeeConfig, bigint>> = {};
  for (const name of FEE_CONFIG_FIELDS) {
    const v = o[name];
    if (v === undefined || v === null) {
      if (name === 'targetBlockRate') values[name] = 0n;
      else throw new ConfigError(`${field}.${name}`, `${name} cannot be nil`);
    } else {
      values[name] = integer(v, `${field}.${name}`);
    }
  }
  if (values.targetBlockRate! < 0n || values.targetBlockRate! > MAX_UINT64) {
    throw new ConfigError(`${field}.targetBlockRate`, 'must be a uint64');
  }
  const config = values as FeeConfig;
  const why = verify(config);
  if (why) throw new ConfigError(field, why);
  return config;
}

export function feeConfigJson(config: FeeConfig): Record<string, number> {
  return Object.fromEntries(FEE_CONFIG_FIELDS.map((name) => [name, Number(config[name])]));
}
