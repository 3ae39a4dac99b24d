/**
 * Parsing helpers for precompile configs (genesis and upgrades): the Upgrade part (blockTimestamp,
 * disable), 0x addresses, and JSON output. Errors are ConfigError naming the JSON path.
 */
import { fromHex, toHex } from '@cornice/sdk';
import { ConfigError, type PrecompileConfigBase } from '../types.js';

export type JsonObject = Record<string, unknown>;

/** The config object itself, or a ConfigError. */
export function requireObject(json: unknown, field: string): JsonObject {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new ConfigError(field, 'must be an object');
  return json as JsonObject;
}

/** A non-negative integer (a JSON number, or a bigint from a lossless parser). */
export function parseUint(value: unknown, field: string, bits = 64): bigint {
  let v: bigint;
  if (typeof value === 'bigint') v = value;
  else if (typeof value === 'number' && Number.isSafeInteger(value)) v = BigInt(value);
  else throw new ConfigError(field, 'must be a non-negative integer');
  if (v < 0n || v >= 1n << BigInt(bits)) throw new ConfigError(field, `must be a non-negative integer below 2^${bits}`);
  return v;
}

/** precompileconfig.Upgrade: `blockTimestamp` required, `disable` optional. */
export function parsePrecompileConfigBase(json: unknown, field: string): PrecompileConfigBase {
  const o = requireObject(json, field);
  if (o.blockTimestamp === undefined || o.blockTimestamp === null) throw new ConfigError(`${field}.blockTimestamp`, 'is required');
  const blockTimestamp = parseUint(o.blockTimestamp, `${field}.blockTimestamp`);
  if (o.disable !== undefined && o.disable !== null && typeof o.disable !== 'boolean') {
    throw new ConfigError(`${field}.disable`, 'must be a boolean');
  }
  return { blockTimestamp, disable: o.disable === true };
}

/** A `0x` + 40 hex digits address (the prefix is required, as Go's common.Address). */
export function parseAddressJson(value: unknown, field: string): Uint8Array {
  if (typeof value !== 'string' || !/^0[xX][0-9a-fA-F]{40}$/.test(value)) {
    throw new ConfigError(field, 'must be a 0x-prefixed 20-byte hex address');
  }
  return fromHex(value);
}

/** An optional (absent or null) array of addresses. */
export function parseAddressList(value: unknown, field: string): Uint8Array[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new ConfigError(field, 'must be an array of addresses');
  return value.map((a, i) => parseAddressJson(a, `${field}[${i}]`));
}

/** An address as Go marshals it: `0x` and lower case. */
export function addressJson(address: Uint8Array): string {
  return `0x${toHex(address)}`;
}

/** The Upgrade part as JSON (numbers; `disable` only when set). */
export function baseConfigJson(config: PrecompileConfigBase): JsonObject {
  return { blockTimestamp: Number(config.blockTimestamp), ...(config.disable ? { disable: true } : {}) };
}
