import { NodeError, Reader, Writer, bytesEqual, toHex, type KeyValueStore } from '@cornice/sdk';

export class DbMismatchError extends NodeError<'NetworkMismatch' | 'GenesisMismatch'> {}

const NETWORK_KEY = new Uint8Array([1]);
const GENESIS_KEY = new Uint8Array([2]);

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

/** Records the genesis digest on first start; refuses a database made from another genesis. */
export async function checkGenesis(meta: KeyValueStore, hash: Uint8Array): Promise<void> {
  const stored = await meta.get(GENESIS_KEY);
  if (stored === undefined) return meta.put(GENESIS_KEY, hash);
  if (!bytesEqual(stored, hash)) {
    throw new DbMismatchError(
      'GenesisMismatch',
      `the database was created from another genesis (${toHex(stored).slice(0, 16)}…, now ${toHex(hash).slice(0, 16)}…); use another --db-dir`,
    );
  }
}
