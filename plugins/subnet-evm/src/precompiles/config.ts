/**
 * Parsing helpers for precompile configs (genesis and upgrades), for the built-in modules and third
 * parties': the Upgrade part (blockTimestamp, disable), 0x addresses, JSON output, and the chain
 * config's JSON readers (objects, integers, booleans). Errors are ConfigError naming the JSON path.
 */
import { fromHex, toHex } from '@cornice/sdk';
import { jsonInteger, objectAt, parseBool, parseUint64 } from '../config/json.js';
import { ConfigError, type PrecompileConfigBase } from '../types.js';

// One set of JSON readers for the chain config, upgrade.json and every module's config.
export { jsonInteger, objectAt, parseBool, parseInteger, parseUint64 } from '../config/json.js';

export type JsonObject = Record<string, unknown>;

/** precompileconfig.Upgrade: `blockTimestamp` required (a uint64), `disable` optional (a boolean). */
export function parsePrecompileConfigBase(json: unknown, field: string): PrecompileConfigBase {
  const o = objectAt(json, field);
  if (o.blockTimestamp === undefined || o.blockTimestamp === null) throw new ConfigError(`${field}.blockTimestamp`, 'block timestamp cannot be nil');
  const blockTimestamp = parseUint64(o.blockTimestamp, `${field}.blockTimestamp`);
  const disable = o.disable === undefined || o.disable === null ? false : parseBool(o.disable, `${field}.disable`);
  return { blockTimestamp, disable };
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

/** The Upgrade part as JSON (a number, a decimal string beyond 2^53; `disable` only when set). */
export function baseConfigJson(config: PrecompileConfigBase): JsonObject {
  return { blockTimestamp: jsonInteger(config.blockTimestamp), ...(config.disable ? { disable: true } : {}) };
}
