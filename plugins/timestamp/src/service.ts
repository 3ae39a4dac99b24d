import { bindService, cb58Encode, type BoundService } from '@cornice/sdk';
import { timestampApi } from './api.js';
import type { TimestampVM } from './vm.js';

/** The `timestamp` service of one chain, bound to its VM. */
export function timestampService(vm: TimestampVM): BoundService {
  return bindService(timestampApi, {
    async getBlock({ id }) {
      const block = await vm.getBlock(id ?? (await vm.lastAccepted()));
      return {
        id: block.id.toString(),
        data: cb58Encode(block.data),
        timestamp: String(block.timestamp),
        parentID: block.parentId.toString(),
      };
    },
    async proposeBlock({ data }) {
      vm.proposeBlock(data);
      return { Success: true };
    },
  });
}
