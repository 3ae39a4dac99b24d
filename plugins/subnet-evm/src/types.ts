/**
 * The subnet-EVM's shared types: the fee config, the chain config as modules see it, and the
 * precompile module contract (the built-in modules and a third party's implement the same one).
 * README.md "Configuration" and "Precompiles" describe what they carry.
 */
import type { BlockInfo, HookState, PrecompileCall, PrecompileResult } from '@cornice/evm';
import { NodeError } from '@cornice/sdk';

/** commontype.FeeConfig (A.2): every field required once parsed. */
export interface FeeConfig {
  readonly gasLimit: bigint;
  readonly targetBlockRate: bigint;
  readonly minBaseFee: bigint;
  readonly targetGas: bigint;
  readonly baseFeeChangeDenominator: bigint;
  readonly minBlockGasCost: bigint;
  readonly maxBlockGasCost: bigint;
  readonly blockGasCostStep: bigint;
}

/** The fee config fields in their ABI / storage order (FeeManager slot i+1 holds field i). */
export const FEE_CONFIG_FIELDS = [
  'gasLimit',
  'targetBlockRate',
  'minBaseFee',
  'targetGas',
  'baseFeeChangeDenominator',
  'minBlockGasCost',
  'maxBlockGasCost',
  'blockGasCostStep',
] as const satisfies ReadonlyArray<keyof FeeConfig>;

/**
 * A bad chain config, genesis or upgrade config: `field` is its JSON path (e.g.
 * `config.feeConfig.gasLimit`, `precompileUpgrades[1].txAllowListConfig.blockTimestamp`). The message
 * names the field too (and `data` is `{ field }`); the chain does not start.
 */
export class ConfigError extends NodeError<'InvalidConfig'> {
  constructor(
    readonly field: string,
    why: string,
  ) {
    super('InvalidConfig', `invalid chain config: ${field}: ${why}`, { field });
  }
}

/** Network upgrades (A.1): unix seconds; undefined = not scheduled. */
export interface NetworkUpgrades {
  readonly subnetEVMTimestamp?: bigint;
  readonly durangoTimestamp?: bigint;
  readonly etnaTimestamp?: bigint;
  readonly fortunaTimestamp?: bigint;
  readonly graniteTimestamp?: bigint;
}

/** What a precompile module may ask of the chain config. */
export interface ChainConfigView {
  readonly chainId: bigint;
  /** The genesis fee config (defaults filled in). */
  readonly feeConfig: FeeConfig;
  readonly allowFeeRecipients: boolean;
  readonly upgrades: NetworkUpgrades;
  /** Durango is active at `timestamp` (setManager, event gas, lenient input lengths). */
  isDurango(timestamp: bigint): boolean;
}

/** The part every precompile config has (precompileconfig.Upgrade). */
export interface PrecompileConfigBase {
  readonly blockTimestamp: bigint;
  /** Only in upgrades: deactivates the precompile (its storage is wiped). */
  readonly disable: boolean;
}

/** allowlist.AllowListConfig (A.3). */
export interface AllowListConfig {
  readonly adminAddresses: readonly Uint8Array[];
  readonly managerAddresses: readonly Uint8Array[];
  readonly enabledAddresses: readonly Uint8Array[];
}

/** A context for a module's call handler. */
export interface ModuleCallContext<C extends PrecompileConfigBase> {
  /** The config that activated it (the latest enabling one at or before the block). */
  readonly config: C;
  readonly chain: ChainConfigView;
}

/**
 * A stateful precompile module: built-in (the five of A.3) or a third party's, registered with
 * `registerPrecompile(module)` before a chain starts. Address in a reserved range (A.3:
 * 0x0100…00–ff, 0x0200…00–ff, 0x0300…00–ff, not the black-hole address), key unique.
 */
export interface PrecompileModule<C extends PrecompileConfigBase = PrecompileConfigBase> {
  /** The config key in the chain config and in precompileUpgrades (e.g. `feeManagerConfig`). */
  readonly key: string;
  readonly address: Uint8Array;
  /**
   * Parses one config object (genesis or an upgrade); `field` is its JSON path for errors. It reads
   * `blockTimestamp` and `disable` too (parsePrecompileConfigBase helps). Throws ConfigError.
   */
  parseConfig(json: unknown, field: string, chain: ChainConfigView): C;
  /** The config as eth_getChainConfig and eth_getActivePrecompilesAt show it (JSON numbers). */
  configJson(config: C): Record<string, unknown>;
  /**
   * Writes the module's initial state when it activates (the caller already set nonce 1 and code
   * 0x01 at its address): roles, initial mint, initial fee config…
   */
  configure(state: HookState, config: C, block: BlockInfo, chain: ChainConfigView): Promise<void>;
  /** Runs a call to the precompile while it is active. */
  run(call: PrecompileCall, ctx: ModuleCallContext<C>): Promise<PrecompileResult>;
}
