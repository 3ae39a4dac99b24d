import { NodeError, Reader, Writer, type KeyValueStore } from '@cornice/sdk';

export class DbMismatchError extends NodeError<'NetworkMismatch'> {}

const NETWORK_KEY = new Uint8Array([1]);

/** Records the network ID on first start; refuses a database made for another network. */
export async function checkNetwork(meta: KeyValueStore, networkId: number): Promise<void> {
  const stored = await meta.get(NETWORK_KEY);
  if (stored === undefined) {
    await meta.put(NETWORK_KEY, new Writer().u32(networkId).finish());
    return;
  }
  const r = new Reader(stored);
  const was = r.u32();
  if (was !== networkId) {
    throw new DbMismatchError('NetworkMismatch', `the database was created for network ${was}, not ${networkId}; use another --db-dir`);
  }
}
