/**
 * The genesis `config` object of a subnet-EVM chain (README.md "Genesis `config`"):
 * chainId, feeConfig, allowFeeRecipients, the block-number forks, the network-upgrade timestamps and
 * the genesis precompile configs inlined by key. Every error is a ConfigError naming the field.
 */
import { fromHex, toHex } from '@cornice/sdk';
import { ConfigError, type ChainConfigView, type NetworkUpgrades, type PrecompileConfigBase, type PrecompileModule } from '../types.js';
import { DEFAULT_FEE_CONFIG, feeConfigJson, parseFeeConfig } from './fee-config.js';
import { isObject, jsonInteger, jsonKind, objectAt, parseBool, parseInteger } from './json.js';
import { isForked, networkUpgradesJson, parseNetworkUpgrades } from './network-upgrades.js';
import { parsePrecompileConfigBase } from '../precompiles/config.js';

/** Ethereum's block-number forks: SetEthUpgrades forces them to 0 (a subnet-EVM chain starts at London). */
export const BLOCK_FORK_FIELDS = [
  'homesteadBlock',
  'daoForkBlock',
  'eip150Block',
  'eip155Block',
  'eip158Block',
  'byzantiumBlock',
  'constantinopleBlock',
  'petersburgBlock',
  'istanbulBlock',
  'muirGlacierBlock',
  'berlinBlock',
  'londonBlock',
  'arrowGlacierBlock',
  'grayGlacierBlock',
] as const;

/** The block forks eth_getChainConfig shows (geth's ChainConfig with SetEthUpgrades applied). */
const SHOWN_BLOCK_FORKS = BLOCK_FORK_FIELDS.filter((f) => f !== 'daoForkBlock' && f !== 'arrowGlacierBlock' && f !== 'grayGlacierBlock');

/** Ethereum forks past Cancun: never enabled on a subnet-EVM chain. */
const UNSUPPORTED_TIME_FORKS = ['pragueTime', 'osakaTime', 'verkleTime'] as const;

const MAX_CHAIN_ID = (1n << 63n) - 1n;

/** One entry of upgrade.json's precompileUpgrades (or a genesis precompile), parsed by its module. */
export interface PrecompileUpgrade {
  readonly key: string;
  readonly config: PrecompileConfigBase;
}

/** The parsed chain config: what modules see (ChainConfigView) plus the rest of the genesis config. */
export interface SubnetChainConfig extends ChainConfigView {
  /** Every precompile module this chain knows, by config key. */
  readonly modules: ReadonlyMap<string, PrecompileModule>;
  /** Genesis precompile configs, by key (only keys the config gives). */
  readonly genesisPrecompiles: ReadonlyMap<string, PrecompileConfigBase>;
  /** The legacy `eip150Hash` (kept to show it back), when the config has one. */
  readonly eip150Hash?: Uint8Array;
  isSubnetEVM(timestamp: bigint): boolean;
  isEtna(timestamp: bigint): boolean;
  isFortuna(timestamp: bigint): boolean;
  isGranite(timestamp: bigint): boolean;
}

/** A map of the modules by key; two with one key is a ConfigError. */
export function modulesByKey(modules: readonly PrecompileModule[]): Map<string, PrecompileModule> {
  const out = new Map<string, PrecompileModule>();
  for (const m of modules) {
    if (out.has(m.key)) throw new ConfigError(m.key, 'two precompile modules have this config key');
    out.set(m.key, m);
  }
  return out;
}

/**
 * The chain view a module's parseConfig receives (network upgrades and the genesis fee config).
 */
export function chainView(chainId: bigint, feeConfig: ChainConfigView['feeConfig'], allowFeeRecipients: boolean, upgrades: NetworkUpgrades) {
  return {
    chainId,
    feeConfig,
    allowFeeRecipients,
    upgrades,
    isSubnetEVM: (t: bigint) => isForked(upgrades.subnetEVMTimestamp, t),
    isDurango: (t: bigint) => isForked(upgrades.durangoTimestamp, t),
    isEtna: (t: bigint) => isForked(upgrades.etnaTimestamp, t),
    isFortuna: (t: bigint) => isForked(upgrades.fortunaTimestamp, t),
    isGranite: (t: bigint) => isForked(upgrades.graniteTimestamp, t),
  };
}

/**
 * Checks the parts of a precompile config that do not depend on its module, before the module
 * parses it: the Upgrade part (parsePrecompileConfigBase: an object, blockTimestamp present, disable
 * a boolean), managerAddresses only once Durango is active at blockTimestamp (allowlist's
 * ErrCannotAddManagersBeforeDurango, for a third party's module too). Returns the base and the object.
 */
export function checkPrecompileConfigBase(json: unknown, field: string, chain: ChainConfigView): { base: PrecompileConfigBase; object: Record<string, unknown> } {
  const base = parsePrecompileConfigBase(json, field);
  const object = json as Record<string, unknown>;
  const managers = object['managerAddresses'];
  if (Array.isArray(managers) && managers.length > 0 && !chain.isDurango(base.blockTimestamp)) {
    throw new ConfigError(`${field}.managerAddresses`, 'cannot add managers before Durango');
  }
  return { base, object };
}

/** The config key of a module's object, or of something that looks like one (`…Config` object). */
function looksLikePrecompileConfig(key: string, v: unknown): boolean {
  return key.endsWith('Config') && key !== 'feeConfig' && isObject(v);
}

/**
 * Parses the genesis `config` object. `modules` are the precompile modules the node has registered:
 * a key of one of them is a genesis precompile config; any other `…Config` object is refused (an
 * unknown precompile); other unknown keys are ignored, as geth does. `field` is the object's path.
 */
export function parseChainConfig(json: unknown, modules: readonly PrecompileModule[], field = 'config'): SubnetChainConfig {
  const config = objectAt(json, field);
  const byKey = modulesByKey(modules);
  if (config['chainId'] === undefined || config['chainId'] === null) throw new ConfigError(`${field}.chainId`, 'is required');
  const chainId = parseInteger(config['chainId'], `${field}.chainId`, 1n, MAX_CHAIN_ID);
  const feeJson = config['feeConfig'];
  const feeConfig = feeJson === undefined || feeJson === null ? DEFAULT_FEE_CONFIG : parseFeeConfig(feeJson, `${field}.feeConfig`);
  const rawAllow = config['allowFeeRecipients'];
  const allowFeeRecipients = rawAllow === undefined || rawAllow === null ? false : parseBool(rawAllow, `${field}.allowFeeRecipients`);
  for (const f of BLOCK_FORK_FIELDS) {
    const v = config[f];
    if (v !== undefined && v !== null && parseInteger(v, `${field}.${f}`, 0n, (1n << 64n) - 1n) !== 0n) {
      throw new ConfigError(`${field}.${f}`, 'must be 0 or absent: a subnet-EVM chain has every fork up to London from genesis');
    }
  }
  for (const f of UNSUPPORTED_TIME_FORKS) {
    if (config[f] !== undefined && config[f] !== null) throw new ConfigError(`${field}.${f}`, 'is not supported: the chain runs Cancun rules at most');
  }
  let eip150Hash: Uint8Array | undefined;
  const rawHash = config['eip150Hash'];
  if (rawHash !== undefined && rawHash !== null) {
    if (typeof rawHash !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(rawHash)) throw new ConfigError(`${field}.eip150Hash`, `must be a 32-byte 0x hex string, got ${jsonKind(rawHash)}`);
    eip150Hash = fromHex(rawHash);
  }
  const upgrades = parseNetworkUpgrades(config, field);
  // shanghaiTime / cancunTime follow Durango / Etna (SetEthUpgrades); an explicit different value is refused.
  for (const [f, at] of [
    ['shanghaiTime', upgrades.durangoTimestamp],
    ['cancunTime', upgrades.etnaTimestamp],
  ] as const) {
    const v = config[f];
    if (v === undefined || v === null) continue;
    const got = parseInteger(v, `${field}.${f}`, 0n, (1n << 64n) - 1n);
    if (got !== at) throw new ConfigError(`${field}.${f}`, `must equal ${f === 'shanghaiTime' ? 'durangoTimestamp' : 'etnaTimestamp'} (${at ?? 'unscheduled'}), got ${got}`);
  }
  const view = chainView(chainId, feeConfig, allowFeeRecipients, upgrades);
  const genesisPrecompiles = new Map<string, PrecompileConfigBase>();
  for (const [key, v] of Object.entries(config)) {
    const module = byKey.get(key);
    if (module === undefined) {
      if (looksLikePrecompileConfig(key, v)) {
        throw new ConfigError(`${field}.${key}`, `unknown precompile config key (known: ${[...byKey.keys()].join(', ') || 'none'})`);
      }
      continue;
    }
    if (v === undefined || v === null) continue;
    const path = `${field}.${key}`;
    if (checkPrecompileConfigBase(v, path, view).base.disable) {
      throw new ConfigError(`${path}.disable`, 'a genesis precompile cannot be disabled (disable belongs in precompileUpgrades)');
    }
    genesisPrecompiles.set(key, module.parseConfig(v, path, view));
  }
  return { ...view, modules: byKey, genesisPrecompiles, ...(eip150Hash ? { eip150Hash } : {}) };
}

/**
 * eth_getChainConfig's object (API.md "eth_getChainConfig"): the geth fields with
 * SetEthUpgrades applied, the Avalanche extras, the genesis precompiles inlined by key, and
 * `upgrades.precompileUpgrades` (always present). Integers are JSON numbers (decimal strings
 * beyond 2^53).
 */
export function chainConfigJson(cfg: SubnetChainConfig, precompileUpgrades: readonly PrecompileUpgrade[]): Record<string, unknown> {
  const out: Record<string, unknown> = { chainId: jsonInteger(cfg.chainId) };
  for (const f of SHOWN_BLOCK_FORKS) out[f] = 0;
  if (cfg.eip150Hash) out['eip150Hash'] = '0x' + toHex(cfg.eip150Hash);
  if (cfg.upgrades.durangoTimestamp !== undefined) out['shanghaiTime'] = jsonInteger(cfg.upgrades.durangoTimestamp);
  if (cfg.upgrades.etnaTimestamp !== undefined) out['cancunTime'] = jsonInteger(cfg.upgrades.etnaTimestamp);
  out['feeConfig'] = feeConfigJson(cfg.feeConfig);
  out['allowFeeRecipients'] = cfg.allowFeeRecipients;
  Object.assign(out, networkUpgradesJson(cfg.upgrades));
  for (const [key, config] of cfg.genesisPrecompiles) out[key] = moduleOf(cfg, key).configJson(config);
  out['upgrades'] = { precompileUpgrades: precompileUpgrades.map((u) => precompileUpgradeJson(cfg, u)) };
  return out;
}

/** One precompileUpgrades entry as JSON: `{ "<key>": {...config} }`. */
export function precompileUpgradeJson(cfg: SubnetChainConfig, u: PrecompileUpgrade): Record<string, unknown> {
  return { [u.key]: moduleOf(cfg, u.key).configJson(u.config) };
}

export function moduleOf(cfg: SubnetChainConfig, key: string): PrecompileModule {
  const m = cfg.modules.get(key);
  if (m === undefined) throw new ConfigError(key, 'no precompile module has this config key');
  return m;
}
