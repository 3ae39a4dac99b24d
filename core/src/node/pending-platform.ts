/**
 * TEMPORARY (p-node branch only): stands in for the lead's PlatformVM (core/src/platform/vm.ts)
 * until it is merged. At initialize it reports what a genesis holds, as the real VM does: the
 * Default Subnet's validators, then every genesis chain.
 */
import { Id, defineVM, type ChainContext, type VMFactory, type VMInit } from '@cornice/sdk';
import { TestVM } from '../consensus/index.js';
import { genesisValidators, type NetworkGenesis } from '../genesis/genesis.js';
import { txId } from '../genesis/pending-codec.js';
import type { PlatformVMDeps } from './container.js';

export function pendingPlatformVM(genesis: NetworkGenesis): (deps: PlatformVMDeps) => VMFactory {
  return (deps) =>
    defineVM({
      name: 'platformvm',
      version: '0.0.0',
      vmId: Id.fromString('rWhpuQPF1kb72esV2momhMuTYGkEb1oL29pt2EBXWmSy4kxnT'),
      create: () => {
        const vm = new TestVM();
        vm.initialize = async (_ctx: ChainContext, _init: VMInit) => {
          deps.events.validatorsChanged(Id.empty, genesisValidators(genesis));
          for (const tx of genesis.platform.chains) {
            deps.events.chainCreated({ id: txId(tx), name: tx.chainName, subnetId: tx.subnetId, vmId: tx.vmId, fxIds: tx.fxIds, genesisData: tx.genesisData });
          }
        };
        vm.createHandlers = async () => [{ path: '', http: (_req, res) => void res.writeHead(501).end() }];
        return vm;
      },
    });
}
