import { bindService, cb58Encode, type BoundService, type Id } from '@cornice/sdk';
import { timestampApi } from './api.js';
import type { TimestampBlock } from './block.js';

/** What the service needs of the VM (TimestampVM implements it). */
export interface TimestampBackend {
  getBlock(id: Id): Promise<TimestampBlock>;
  lastAccepted(): Promise<Id>;
  proposeBlock(data: Uint8Array): void;
}

/** The `timestamp` service of one chain, bound to its VM. */
export function timestampService(vm: TimestampBackend): BoundService {
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
