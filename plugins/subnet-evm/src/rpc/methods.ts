/**
 * The subnet-EVM's four extra eth_ methods (API.md "Methods"), served beside every
 * EVM method: eth_feeConfig reads the fee manager's storage at the named block through the backend;
 * the others answer from the chain's config and precompile schedule.
 */
import { EvmRpcError, parseArgs, type BlockRef, type EthMethod, type EvmBackend, type HookState } from '@cornice/evm';
import type { SubnetChain } from '../chain-rules.js';
import { readLastChangedAt } from '../precompiles/fee-manager.js';
import { activePrecompilesResult, activeRulesResult, chainConfigResult, CHAIN_CONFIG_ARGS, FEE_CONFIG_ARGS, feeConfigResult, TIMESTAMP_ARGS } from './results.js';

const FEE_MANAGER = 'feeManagerConfig';

/** Storage reads at one block, for the fee manager's readers (read only). */
function stateAt(backend: EvmBackend, ref: BlockRef): Pick<HookState, 'getStorage'> {
  return { getStorage: (address, slot) => backend.storageAt(address, slot, ref) };
}

export function subnetMethods(backend: EvmBackend, chain: SubnetChain): ReadonlyMap<string, EthMethod> {
  const head = async () => (await backend.block('latest'))!.header;
  return new Map<string, EthMethod>([
    [
      'eth_feeConfig',
      async (params) => {
        const [ref] = parseArgs(FEE_CONFIG_ARGS, params) as [BlockRef | undefined];
        const block = await backend.block(ref ?? 'latest');
        if (!block) throw new EvmRpcError(-32000, 'header not found');
        const at: BlockRef = block.header.number;
        const state = stateAt(backend, at);
        const feeConfig = await chain.feeConfigAt(state, block.header.timestamp);
        const active = chain.schedule.activeConfig(FEE_MANAGER, block.header.timestamp) !== undefined;
        return feeConfigResult(feeConfig, active ? await readLastChangedAt(state) : 0n);
      },
    ],
    ['eth_getChainConfig', async (params) => (parseArgs(CHAIN_CONFIG_ARGS, params), chainConfigResult(chain.config, chain.upgrades.precompileUpgrades))],
    [
      'eth_getActivePrecompilesAt',
      async (params) => {
        const [ts] = parseArgs(TIMESTAMP_ARGS, params) as [bigint | undefined];
        return activePrecompilesResult(chain.config, chain.schedule, ts ?? (await head()).timestamp);
      },
    ],
    [
      'eth_getActiveRulesAt',
      async (params) => {
        const [ts] = parseArgs(TIMESTAMP_ARGS, params) as [bigint | undefined];
        return activeRulesResult(chain.config, chain.schedule, ts ?? (await head()).timestamp);
      },
    ],
  ]);
}
