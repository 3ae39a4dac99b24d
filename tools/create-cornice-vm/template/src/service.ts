import { NotFoundError, bindService, type BoundService } from '@cornice/sdk';
import { api } from './api.js';
import type { Mempool } from './mempool.js';
import type { State } from './state.js';
import { makeTx } from './tx.js';

/** What the service needs of the VM. */
export interface ServiceBackend {
  readonly mempool: Mempool;
  readonly state: State;
  tip(): { id: string; height: number };
}

/** The `__VM_NAME__` service of one chain, bound to its VM. */
export function vmService(vm: ServiceBackend): BoundService {
  return bindService(api, {
    async issueTx({ key, value }) {
      const tx = makeTx(key, value);
      vm.mempool.add(tx);
      return { txID: tx.id.toString() };
    },
    async get({ key }) {
      const stored = await vm.state.getValue(key);
      if (!stored) throw new NotFoundError(`key "${key}" not found`);
      return { key, ...stored };
    },
    async status() {
      const tip = vm.tip();
      return { lastAccepted: tip.id, height: tip.height, pending: vm.mempool.size };
    },
  });
}
