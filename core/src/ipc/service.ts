import { bindService, type BoundService } from '@cornice/sdk';
import { ipcsApi } from './api.js';
import type { IpcPublisher } from './publisher.js';

/** The ipcs service over a publisher; mounted at /ext/ipcs only with --api-ipcs-enabled. */
export function ipcsService(publisher: IpcPublisher): BoundService {
  return bindService(ipcsApi, {
    async publishBlockchain({ blockchainID }) {
      return { url: await publisher.publish(blockchainID) };
    },
    async unpublishBlockchain({ blockchainID }) {
      await publisher.unpublish(blockchainID);
      return { success: true };
    },
  });
}
