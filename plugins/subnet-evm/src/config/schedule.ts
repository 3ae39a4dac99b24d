/**
 * The precompile activation schedule (README.md "`upgrade.json`"; subnet-evm's
 * GetActivatingPrecompileConfigs / ApplyPrecompileActivations): which config of each module is
 * active at a timestamp, and which enable / disable transitions a block applies.
 */
import { compareBytes } from '@cornice/sdk';
import type { PrecompileConfigBase, PrecompileModule } from '../types.js';
import type { SubnetChainConfig } from './chain-config.js';
import type { UpgradeConfig } from './upgrades.js';

/** One config taking effect in a block: enable (configure) or disable (wipe) the module. */
export interface PrecompileTransition {
  readonly module: PrecompileModule;
  readonly config: PrecompileConfigBase;
}

/** upgrade.json's configs with their module, and the config each is in (genesis ones first). */
interface Entry {
  readonly module: PrecompileModule;
  readonly config: PrecompileConfigBase;
}

/**
 * True when `at` is crossed going from the parent's timestamp to the block's (IsForkTransition):
 * for the genesis block (no parent) every `at <= timestamp`.
 */
export function crosses(at: bigint, parentTimestamp: bigint | undefined, timestamp: bigint): boolean {
  return parentTimestamp === undefined ? at <= timestamp : parentTimestamp < at && at <= timestamp;
}

export class PrecompileSchedule {
  /** Per module, in address order: its configs, genesis first then upgrade.json's in order. */
  readonly #byModule: ReadonlyArray<{ readonly module: PrecompileModule; readonly entries: readonly Entry[] }>;

  constructor(chain: SubnetChainConfig, upgrades: UpgradeConfig) {
    const lists = new Map<string, Entry[]>();
    const add = (key: string, config: PrecompileConfigBase) => {
      const module = chain.modules.get(key);
      if (module === undefined) return;
      let list = lists.get(key);
      if (list === undefined) lists.set(key, (list = []));
      list.push({ module, config });
    };
    for (const [key, config] of chain.genesisPrecompiles) add(key, config);
    for (const u of upgrades.precompileUpgrades) add(u.key, u.config);
    this.#byModule = [...lists.values()]
      .map((entries) => ({ module: entries[0]!.module, entries }))
      .sort((a, b) => compareBytes(a.module.address, b.module.address));
  }

  /**
   * The config in effect of each module active at `timestamp` (the latest config at or before it,
   * when that one enables), by key, in address order.
   */
  activeAt(timestamp: bigint): Map<string, PrecompileConfigBase> {
    const out = new Map<string, PrecompileConfigBase>();
    for (const { module, entries } of this.#byModule) {
      const config = latest(entries, timestamp);
      if (config !== undefined && !config.disable) out.set(module.key, config);
    }
    return out;
  }

  /** The active config of one module at `timestamp`, or undefined when it is not active. */
  activeConfig(key: string, timestamp: bigint): PrecompileConfigBase | undefined {
    const found = this.#byModule.find((m) => m.module.key === key);
    const config = found && latest(found.entries, timestamp);
    return config && !config.disable ? config : undefined;
  }

  /**
   * The transitions a block at `timestamp` on a parent at `parentTimestamp` applies (undefined for
   * the genesis block), in address order, each module's in config order.
   */
  transitions(parentTimestamp: bigint | undefined, timestamp: bigint): PrecompileTransition[] {
    const out: PrecompileTransition[] = [];
    for (const { entries } of this.#byModule) {
      for (const e of entries) if (crosses(e.config.blockTimestamp, parentTimestamp, timestamp)) out.push(e);
    }
    return out;
  }

  /** Every module that is ever scheduled, in address order. */
  modules(): PrecompileModule[] {
    return this.#byModule.map((m) => m.module);
  }
}

function latest(entries: readonly Entry[], timestamp: bigint): PrecompileConfigBase | undefined {
  let found: PrecompileConfigBase | undefined;
  for (const e of entries) if (e.config.blockTimestamp <= timestamp) found = e.config;
  return found;
}
