/**
 * The subnet-EVM's extra eth_ methods (API.md "Methods"): their
 * argument parsers and pure result builders. The methods themselves (reading the head, the fee
 * manager's storage) are wired where the chain is. Integers are JSON numbers, decimal strings beyond
 * 2^53 (clients accept both).
 */
import { ArgumentError, optional, parseBlockRef, parseHash, parseUint64, type Arg, type BlockRef } from '@cornice/evm';
import { toHex } from '@cornice/sdk';
import { chainConfigJson, moduleOf, type PrecompileUpgrade, type SubnetChainConfig } from '../config/chain-config.js';
import { feeConfigJson } from '../config/fee-config.js';
import { jsonInteger } from '../config/json.js';
import type { PrecompileSchedule } from '../config/schedule.js';
import type { FeeConfig } from '../types.js';

/**
 * A timestamp argument (eth_getActivePrecompilesAt, eth_getActiveRulesAt): a JSON number, as
 * subnet-evm's *uint64 takes, or also a 0x quantity (what most Ethereum clients send for integers).
 * A number must be a non-negative integer below 2^53 (larger ones are not exact in JSON.parse; send
 * those as 0x quantities).
 */
export function parseTimestamp(v: unknown): bigint {
  if (typeof v === 'number') {
    if (!Number.isInteger(v) || v < 0) throw new ArgumentError(`cannot unmarshal number ${v} into uint64`);
    if (!Number.isSafeInteger(v)) throw new ArgumentError(`number ${v} is not exact in JSON: send it as a 0x quantity`);
    return BigInt(v);
  }
  if (typeof v === 'string') return parseUint64(v);
  throw new ArgumentError(`cannot unmarshal ${v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v} into uint64`);
}

/**
 * eth_feeConfig's block (geth's BlockNumberOrHash): a tag, a number, an EIP-1898 object, or a block
 * hash as a plain 32-byte 0x string (subnet-evm takes a block number or hash).
 */
export function parseFeeConfigBlock(v: unknown): BlockRef {
  return typeof v === 'string' && v.length === 66 ? { hash: parseHash(v) } : parseBlockRef(v);
}

/** eth_feeConfig: [block number, tag or hash?] (default latest). */
export const FEE_CONFIG_ARGS: readonly Arg[] = [optional(parseFeeConfigBlock)];
/** eth_getChainConfig: no arguments. */
export const CHAIN_CONFIG_ARGS: readonly Arg[] = [];
/** eth_getActivePrecompilesAt / eth_getActiveRulesAt: [timestamp?] (default: the head block's). */
export const TIMESTAMP_ARGS: readonly Arg[] = [optional(parseTimestamp)];

/**
 * eth_feeConfig: the fee config in effect for a block built on that header, and the block number
 * the fee manager last changed it at (0 when the fee manager is not active).
 */
export function feeConfigResult(feeConfig: FeeConfig, lastChangedAt: bigint): { feeConfig: Record<string, number | string>; lastChangedAt: number | string } {
  return { feeConfig: feeConfigJson(feeConfig), lastChangedAt: jsonInteger(lastChangedAt) };
}

/** eth_getChainConfig: the chain config with `upgrades.precompileUpgrades`. */
export function chainConfigResult(chain: SubnetChainConfig, precompileUpgrades: readonly PrecompileUpgrade[]): Record<string, unknown> {
  return chainConfigJson(chain, precompileUpgrades);
}

/** eth_getActivePrecompilesAt: config key -> the active config, for each precompile active at `timestamp`. */
export function activePrecompilesResult(chain: SubnetChainConfig, schedule: PrecompileSchedule, timestamp: bigint): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const [key, config] of schedule.activeAt(timestamp)) out[key] = moduleOf(chain, key).configJson(config);
  return out;
}

/**
 * eth_getActiveRulesAt in the shape of subnet-evm's params.Rules as it first serialized it
 * (API.md): the Ethereum forks (all through Istanbul; Cancun with Etna), the Avalanche upgrades,
 * and the active precompiles keyed by 0x address. No module here is a predicater or an accepter (only warp is, in subnet-evm).
 */
export function activeRulesResult(chain: SubnetChainConfig, schedule: PrecompileSchedule, timestamp: bigint): Record<string, unknown> {
  const active: Record<string, Record<string, unknown>> = {};
  for (const [key, config] of schedule.activeAt(timestamp)) {
    const module = moduleOf(chain, key);
    active['0x' + toHex(module.address)] = module.configJson(config);
  }
  return {
    ChainID: jsonInteger(chain.chainId),
    IsHomestead: true,
    IsEIP150: true,
    IsEIP155: true,
    IsEIP158: true,
    IsByzantium: true,
    IsConstantinople: true,
    IsPetersburg: true,
    IsIstanbul: true,
    IsCancun: chain.isEtna(timestamp),
    IsSubnetEVM: chain.isSubnetEVM(timestamp),
    IsDurango: chain.isDurango(timestamp),
    IsEUpgrade: chain.isEtna(timestamp),
    ActivePrecompiles: active,
    Predicaters: {},
    AccepterPrecompiles: {},
  };
}
