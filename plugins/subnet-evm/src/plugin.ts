/**
 * The subnet-EVM plugin: @cornice/evm's VM with the subnet-EVM's chain rules, extra eth_ methods and
 * no gas refunds. vmID `subnetevm` zero-padded (srEXiWaHuhNyGwPUi444Tu47ZEDwxTWrbQiuD7FmgSAQ6X7Dy).
 */
import { defineEvmVM, dynamicFeeRules, EvmChainError, parseChainConfig, parseGenesis, type ChainRules, type EvmChainOptions, type EvmVMOptions } from '@cornice/evm';
import { fromHex, type Id, type VMFactory } from '@cornice/sdk';
import { subnetChain, subnetRules, type SubnetChain, type SubnetRulesOptions } from './chain-rules.js';
import { checkPrecompileModule, precompileModules, type AnyModule } from './precompiles/registry.js';
import { subnetMethods } from './rpc/methods.js';
import { ConfigError } from './types.js';

/** The VM name its vmID is made from. */
export const SUBNET_EVM_VM_NAME = 'subnetevm';
/** This package's version (web3_clientVersion). */
export const SUBNET_EVM_VERSION = '0.1.0';

/** No gas refunds once SubnetEVM is active (as in subnet-evm): the refund quotient made too large to matter. */
const NO_REFUNDS = { 3529: { maxRefundQuotient: 2 ** 52 } };

/** The parsed config of each chain's rules, for its RPC methods. */
const chains = new WeakMap<ChainRules, SubnetChain>();

/** A ConfigError as the EVM's typed error (the chain fails to start with it). */
function asChainError(e: unknown): unknown {
  return e instanceof ConfigError ? new EvmChainError('InvalidConfig', e.message, { field: e.field }) : e;
}

function rulesFactory(o: SubnetRulesOptions, modules: () => readonly AnyModule[]): NonNullable<EvmChainOptions['rules']> {
  return (genesis, upgrade) => {
    let chain: SubnetChain;
    try {
      chain = subnetChain(genesis.config, upgrade, modules());
    } catch (e) {
      throw asChainError(e);
    }
    const rules = subnetRules(chain, o);
    chains.set(rules, chain);
    return rules;
  };
}

/** The per-chain config file (config.json): the EVM's keys and `feeRecipient` (used when fee recipients are allowed). */
function configParser(modules: () => readonly AnyModule[]): (bytes: Uint8Array) => Partial<EvmChainOptions> {
  return (bytes) => {
    // The EVM's keys (allow-unprotected-txs, rpc-gas-cap), which subnet-evm's config.json has too.
    const { options, json } = parseChainConfig(bytes);
    const { feeRecipient } = json;
    if (feeRecipient === undefined) return options;
    if (typeof feeRecipient !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(feeRecipient)) {
      throw new EvmChainError('InvalidConfig', 'invalid chain config file: feeRecipient: must be a 0x-prefixed 20-byte hex address', { field: 'feeRecipient' });
    }
    return { ...options, rules: rulesFactory({ feeRecipient: fromHex(feeRecipient) }, modules) };
  };
}

/** platform.createBlockchain's check: the genesis parses and its subnet-EVM config is valid. */
export function checkSubnetGenesis(bytes: Uint8Array, modules: readonly AnyModule[] = precompileModules()): void {
  const genesis = parseGenesis(bytes);
  try {
    subnetChain(genesis.config, new Uint8Array(), modules);
  } catch (e) {
    throw asChainError(e);
  }
}

/** The EvmVM options of a subnet-EVM VM whose chains know `modules`' precompiles. */
function optionsWith(modules: () => readonly AnyModule[], version: string): EvmVMOptions {
  return {
    rules: rulesFactory({}, modules),
    // The floor eth_gasPrice answers and the genesis block's base fee: the genesis fee config's.
    fees: (genesis) => {
      let cfg;
      try {
        cfg = subnetChain(genesis.config, new Uint8Array(), modules()).config.feeConfig;
      } catch (e) {
        throw asChainError(e);
      }
      return dynamicFeeRules({ minBaseFee: cfg.minBaseFee, gasLimit: cfg.gasLimit });
    },
    vmParams: NO_REFUNDS,
    parseConfig: configParser(modules),
    extraMethods: (backend, chain) => {
      const subnet = chain.rules && chains.get(chain.rules);
      return subnet ? subnetMethods(backend, subnet) : new Map();
    },
    clientVersion: `cornice-subnet-evm/${version}`,
  };
}

/** The EvmVM options of the stock subnet-EVM (what `vmFactory` makes its VMs with; tests start VMs with them too). */
export const subnetEvmOptions: EvmVMOptions = optionsWith(() => precompileModules(), SUBNET_EVM_VERSION);

/**
 * A subnet-EVM VM: the built-in precompiles, those registered with registerPrecompile, and
 * `precompiles` — how a third party ships its own stateful precompile: its package exports
 * `vmFactory = defineSubnetEvmVM({ name: 'myevm', precompiles: [myModule] })`, a VM of its own
 * vmID that operators load with --vms or --plugin-dir (as avalanchego's precompile-evm builds its
 * own subnet-evm binary). Throws PrecompileRegistryError for a module at a non-reserved address or
 * with a key or address already taken.
 */
export function defineSubnetEvmVM(def: { name: string; vmId?: Id; version?: string; precompiles?: readonly AnyModule[] }): VMFactory {
  const extra = def.precompiles ?? [];
  for (const [i, m] of extra.entries()) checkPrecompileModule(m, [...precompileModules(), ...extra.slice(0, i)]);
  const modules = () => [...precompileModules(), ...extra];
  return defineEvmVM({
    name: def.name,
    ...(def.vmId ? { vmId: def.vmId } : {}),
    ...(def.version ? { version: def.version } : {}),
    checkGenesis: (bytes) => checkSubnetGenesis(bytes, modules()),
    options: optionsWith(modules, def.version ?? SUBNET_EVM_VERSION),
  });
}

/** The subnet-EVM plugin: vmID `subnetevm` zero-padded. */
export const vmFactory: VMFactory = defineSubnetEvmVM({ name: SUBNET_EVM_VM_NAME });
