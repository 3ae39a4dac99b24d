/**
 * Shared memory between the chains of this node (see the sdk's SharedMemory). Values exported by
 * chain A to chain B live at [B || A || key] under the node's `shared` prefix: B reads and removes
 * them, A puts them. Writes go into the root batch behind the VM's own batch, so they commit
 * atomically with the block that makes them.
 */
import { NodeError, concatBytes, rootBatchOf, type Id, type KeyValueStore, type PrefixedStore, type SharedMemory, type WriteBatch } from '@cornice/sdk';

export class SharedMemoryError extends NodeError<'ForeignBatch'> {}

export function sharedMemoryFor(shared: PrefixedStore, chainId: Id): SharedMemory {
  const inbox = (from: Id) => concatBytes(chainId.bytes, from.bytes);
  const outbox = (to: Id) => concatBytes(to.bytes, chainId.bytes);
  const store: KeyValueStore = shared;
  return {
    async get(peer, keys) {
      const prefix = inbox(peer);
      return Promise.all(keys.map((k) => store.get(concatBytes(prefix, k))));
    },
    async *list(peer) {
      const prefix = inbox(peer);
      for await (const [k, v] of store.iterate({ prefix })) yield [k.subarray(prefix.length), v];
    },
    apply(peer, ops, batch: WriteBatch) {
      const root = rootBatchOf(batch);
      if (!root) throw new SharedMemoryError('ForeignBatch', 'shared memory writes must join a batch of the chain database');
      const abs = (k: Uint8Array) => concatBytes(shared.prefix, k);
      for (const [k, v] of ops.put ?? []) root.put(abs(concatBytes(outbox(peer), k)), v);
      for (const k of ops.remove ?? []) root.delete(abs(concatBytes(inbox(peer), k)));
    },
  };
}
