import { bindService, silentLogger, type BoundService, type Id, type Logger } from '@cornice/sdk';
import type { PeerSummary } from '../../network/types.js';
import type { RouteTable } from '../routes.js';
import { adminApi } from './api.js';
import { HEAP_SAMPLING_DEFAULT_MS } from './heap-profile.js';
import { stackTrace, type Profiler } from './profiler.js';

/**
 * The node's chain alias table as the admin service uses it (admin.aliasChain, removeChainAlias,
 * getBlockchainID, getChainAliases): the chain manager's ChainAliases (chains/aliases.ts), passed
 * in by the node, since the HTTP front end sits below the chains layer (ARCHITECTURE.md).
 */
export interface ChainAliasTable {
  alias(chain: string, alias: string): void;
  removeAlias(alias: string): void;
  lookup(aliasOrId: string): Id;
  aliases(chainId: Id): string[];
}

export interface AdminDeps {
  nodeId: string;
  networkId: number;
  /** The network's name as the reference names it: `local` for 12345, `network-<id>` for an unnamed ID. */
  networkName: string;
  /** The node's version string, `cornice/<package version>`. */
  version: string;
  routes: RouteTable;
  chains: ChainAliasTable;
  profiler: Profiler;
  /** Connected peers. */
  peers: () => PeerSummary[];
  log?: Logger;
}

export function adminService(d: AdminDeps): BoundService {
  return bindService(adminApi, {
    async getNodeID() {
      return { nodeID: d.nodeId };
    },
    async getNetworkID() {
      return { networkID: String(d.networkId) };
    },
    async getNetworkName() {
      return { networkName: d.networkName };
    },
    async getNodeVersion() {
      return { version: d.version };
    },
    async peers() {
      const details = d.peers();
      return { peers: details.map((p) => p.ip), details };
    },
    async alias({ endpoint, alias }) {
      d.routes.addAdminAlias(endpoint.replace(/^\/?(ext\/)?/, ''), alias);
      return { success: true };
    },
    async removeAlias({ alias }) {
      d.routes.removeAdminAlias(alias.replace(/^\/?(ext\/)?/, ''));
      return { success: true };
    },
    async aliasChain({ chain, alias }) {
      d.chains.alias(chain, alias);
      return { success: true };
    },
    async removeChainAlias({ alias }) {
      d.chains.removeAlias(alias);
      return { success: true };
    },
    async getBlockchainID({ alias }) {
      return { blockchainID: d.chains.lookup(alias).toString() };
    },
    async getChainAliases({ chainID }) {
      return { Aliases: d.chains.aliases(chainID) };
    },
    async startCPUProfiler({ fileName }) {
      await d.profiler.startCpu(fileName);
      return { success: true };
    },
    async stopCPUProfiler() {
      await d.profiler.stopCpu();
      return { success: true };
    },
    async memoryProfile({ fileName, durationMs, kind }) {
      if (kind === 'snapshot') {
        if (d.profiler.heapSnapshotsEnabled) {
          (d.log ?? silentLogger).warn('admin.memoryProfile: taking a full heap snapshot; the node stops answering until it is written', { fileName });
        }
        await d.profiler.heapSnapshot(fileName);
      } else {
        await d.profiler.heapSampling(fileName, durationMs ?? HEAP_SAMPLING_DEFAULT_MS);
      }
      return { success: true };
    },
    async lockProfile({ fileName }) {
      await d.profiler.lockReport(fileName);
      return { success: true };
    },
    async stacktrace() {
      return { stacktrace: stackTrace() };
    },
  });
}
