import { defineService, method, p, result } from '@cornice/sdk';

const blockchainID = () => p.string({ min: 1, max: 128 });

/** ipcs: stream a chain's accepted blocks over a Unix domain socket. Served at /ext/ipcs. */
export const ipcsApi = defineService('ipcs', {
  publishBlockchain: method({
    params: p.object({ blockchainID: blockchainID() }),
    result: result<{ url: string }>(),
    doc: "Publish a chain's accepted blocks on a Unix domain socket; returns its ipc:// url",
  }),
  unpublishBlockchain: method({
    params: p.object({ blockchainID: blockchainID() }),
    result: result<{ success: boolean }>(),
    doc: 'Stop publishing a chain: disconnect its readers and remove the socket',
  }),
});
