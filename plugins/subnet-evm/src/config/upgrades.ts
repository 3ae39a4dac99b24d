/**
 * The chain's upgrade config: the bytes of `<chain-config-dir>/<chain>/upgrade.json` (README.md "`upgrade.json`"),
 * checked by subnet-evm's verifyPrecompileUpgrades rules. `stateUpgrades` and
 * `networkUpgradeOverrides` are not supported: empty ones are accepted, others refused (silently
 * ignoring them would run a chain other than the one configured).
 */
import { ConfigError } from '../types.js';
import { checkPrecompileConfigBase, type PrecompileUpgrade, type SubnetChainConfig } from './chain-config.js';
import { isObject, jsonKind, objectAt, parseJsonLossless } from './json.js';

/** Largest upgrade.json read (avalanchego's chain config files are small; this bounds the parse). */
export const MAX_UPGRADE_BYTES = 1 << 20;
/** Most entries in precompileUpgrades (each is a timed state change). */
export const MAX_PRECOMPILE_UPGRADES = 1_000;

const KNOWN_KEYS = new Set(['precompileUpgrades', 'stateUpgrades', 'networkUpgradeOverrides']);

export interface UpgradeConfig {
  readonly precompileUpgrades: readonly PrecompileUpgrade[];
}

export const NO_UPGRADES: UpgradeConfig = Object.freeze({ precompileUpgrades: Object.freeze([]) });

function isEmpty(v: unknown): boolean {
  return v === undefined || v === null || (Array.isArray(v) && v.length === 0) || (isObject(v) && Object.keys(v).length === 0);
}

/**
 * Parses and verifies upgrade.json bytes against the chain config (its modules, genesis precompiles
 * and network upgrades). Empty bytes (or only whitespace): no upgrades.
 */
export function parseUpgradeConfig(bytes: Uint8Array, chain: SubnetChainConfig): UpgradeConfig {
  if (bytes.length > MAX_UPGRADE_BYTES) throw new ConfigError('upgrade.json', `is ${bytes.length} bytes, at most ${MAX_UPGRADE_BYTES} allowed`);
  if (bytes.every((b) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09)) return NO_UPGRADES;
  const root = objectAt(parseJsonLossless(bytes, 'upgrade.json'), 'upgrade.json');
  for (const k of Object.keys(root)) {
    if (!KNOWN_KEYS.has(k)) throw new ConfigError(k, 'unknown upgrade config key (known: precompileUpgrades, stateUpgrades, networkUpgradeOverrides)');
  }
  for (const k of ['stateUpgrades', 'networkUpgradeOverrides'] as const) {
    if (!isEmpty(root[k])) throw new ConfigError(k, 'is not supported by this node (only precompileUpgrades)');
  }
  const list = root['precompileUpgrades'];
  if (list === undefined || list === null) return NO_UPGRADES;
  if (!Array.isArray(list)) throw new ConfigError('precompileUpgrades', `must be an array, got ${jsonKind(list)}`);
  if (list.length > MAX_PRECOMPILE_UPGRADES) throw new ConfigError('precompileUpgrades', `has ${list.length} entries, at most ${MAX_PRECOMPILE_UPGRADES} allowed`);
  const upgrades = list.map((entry, i) => parsePrecompileUpgrade(entry, i, chain));
  verifyPrecompileUpgrades(upgrades, chain);
  return { precompileUpgrades: upgrades };
}

/** One `{ "<key>": {config} }` entry: exactly one key, of a known module; its module parses the config. */
function parsePrecompileUpgrade(entry: unknown, i: number, chain: SubnetChainConfig): PrecompileUpgrade {
  const field = `precompileUpgrades[${i}]`;
  const o = objectAt(entry, field);
  const keys = Object.keys(o);
  if (keys.length !== 1) throw new ConfigError(field, `must have exactly one precompile config key, got ${keys.length}${keys.length ? ` (${keys.join(', ')})` : ''}`);
  const key = keys[0]!;
  const module = chain.modules.get(key);
  if (module === undefined) throw new ConfigError(`${field}.${key}`, `unknown precompile config key (known: ${[...chain.modules.keys()].join(', ') || 'none'})`);
  const path = `${field}.${key}`;
  const raw = o[key];
  checkPrecompileConfigBase(raw, path, chain);
  return { key, config: module.parseConfig(raw, path, chain) };
}

/**
 * verifyPrecompileUpgrades: timestamps non-decreasing across the list and strictly increasing per
 * key (after the genesis config of that key); the first upgrade of a key not enabled at genesis
 * enables it, and enable / disable alternate.
 */
export function verifyPrecompileUpgrades(upgrades: readonly PrecompileUpgrade[], chain: SubnetChainConfig): void {
  const last = new Map<string, { at: bigint; disabled: boolean }>();
  for (const [key, c] of chain.genesisPrecompiles) last.set(key, { at: c.blockTimestamp, disabled: false });
  let previous: bigint | undefined;
  upgrades.forEach((u, i) => {
    const field = `precompileUpgrades[${i}].${u.key}`;
    const at = u.config.blockTimestamp;
    if (previous !== undefined && at < previous) {
      throw new ConfigError(`${field}.blockTimestamp`, `config block timestamp (${at}) < previous timestamp (${previous})`);
    }
    const before = last.get(u.key);
    const wasDisabled = before?.disabled ?? true;
    if (wasDisabled === u.config.disable) {
      throw new ConfigError(`${field}.disable`, `disable should be [${!wasDisabled}]${wasDisabled ? ' (the precompile is not enabled at this point)' : ' (the precompile is already enabled)'}`);
    }
    if (before !== undefined && at <= before.at) {
      throw new ConfigError(`${field}.blockTimestamp`, `config block timestamp (${at}) <= previous timestamp (${before.at}) of same key`);
    }
    last.set(u.key, { at, disabled: u.config.disable });
    previous = at;
  });
}
