/**
 * The subnet-EVM plugin: @cornice/evm's VM with the subnet-EVM's chain rules, extra eth_ methods and
 * no gas refunds. vmID `subnetevm` zero-padded (srEXiWaHuhNyGwPUi444Tu47ZEDwxTWrbQiuD7FmgSAQ6X7Dy).
 */
import { defineEvmVM, dynamicFeeRules, EvmChainError, parseGenesis, type ChainRules, type EvmChainOptions, type EvmVMOptions } from '@cornice/evm';
import { fromHex, utf8Decode, type VMFactory } from '@cornice/sdk';
import { subnetChain, subnetRules, type SubnetChain, type SubnetRulesOptions } from './chain-rules.js';
import { subnetMethods } from './rpc/methods.js';
import { ConfigError } from './types.js';

/** The VM name its vmID is made from. */
export const SUBNET_EVM_VM_NAME = 'subnetevm';

/** No gas refunds once SubnetEVM is active (evm.md A.6): the refund quotient made too large to matter. */
const NO_REFUNDS = { 3529: { maxRefundQuotient: 2 ** 52 } };

/** The parsed config of each chain's rules, for its RPC methods. */
const chains = new WeakMap<ChainRules, SubnetChain>();

/** A ConfigError as the EVM's typed error (the chain fails to start with it). */
function asChainError(e: unknown): unknown {
  return e instanceof ConfigError ? new EvmChainError('InvalidConfig', e.message, { field: e.field }) : e;
}

function rulesFactory(o: SubnetRulesOptions): NonNullable<EvmChainOptions['rules']> {
  return (genesis, upgrade) => {
    let chain: SubnetChain;
    try {
      chain = subnetChain(genesis.config, upgrade);
    } catch (e) {
      throw asChainError(e);
    }
    const rules = subnetRules(chain, o);
    chains.set(rules, chain);
    return rules;
  };
}

/** The per-chain config file (config.json): `{ "feeRecipient": "0x…" }` (used when fee recipients are allowed). */
function parseConfig(bytes: Uint8Array): Partial<EvmChainOptions> {
  if (bytes.length === 0) return {};
  let json: unknown;
  try {
    json = JSON.parse(utf8Decode(bytes));
  } catch {
    throw new EvmChainError('InvalidConfig', 'invalid chain config file: not valid JSON');
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new EvmChainError('InvalidConfig', 'invalid chain config file: must be a JSON object');
  const { feeRecipient } = json as { feeRecipient?: unknown };
  if (feeRecipient === undefined) return {};
  if (typeof feeRecipient !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(feeRecipient)) {
    throw new EvmChainError('InvalidConfig', 'invalid chain config file: feeRecipient: must be a 0x-prefixed 20-byte hex address', { field: 'feeRecipient' });
  }
  return { rules: rulesFactory({ feeRecipient: fromHex(feeRecipient) }) };
}

/** platform.createBlockchain's check: the genesis parses and its subnet-EVM config is valid. */
export function checkSubnetGenesis(bytes: Uint8Array): void {
  const genesis = parseGenesis(bytes);
  try {
    subnetChain(genesis.config, new Uint8Array());
  } catch (e) {
    throw asChainError(e);
  }
}

/** The EvmVM options of a subnet-EVM chain (what `vmFactory` makes its VMs with; tests start VMs with them too). */
export const subnetEvmOptions: EvmVMOptions = {
  rules: rulesFactory({}),
  // The floor eth_gasPrice answers and the genesis block's base fee: the genesis fee config's.
  fees: (genesis) => {
    let cfg;
    try {
      cfg = subnetChain(genesis.config, new Uint8Array()).config.feeConfig;
    } catch (e) {
      throw asChainError(e);
    }
    return dynamicFeeRules({ minBaseFee: cfg.minBaseFee, gasLimit: cfg.gasLimit });
  },
  vmParams: NO_REFUNDS,
  parseConfig,
  extraMethods: (backend, chain) => {
    const subnet = chain.rules && chains.get(chain.rules);
    return subnet ? subnetMethods(backend, subnet) : new Map();
  },
  clientVersion: 'cornice-subnet-evm/0.1.0',
};

export const vmFactory: VMFactory = defineEvmVM({ name: SUBNET_EVM_VM_NAME, checkGenesis: checkSubnetGenesis, options: subnetEvmOptions });
