import {
  Id,
  MemoryStore,
  ShortId,
  silentLogger,
  type ChainContext,
  type ChainNetwork,
  type Clock,
  type KeyValueStore,
  type Logger,
} from '@cornice/sdk';

/**
 * A ChainContext for unit tests of a VM: memory store, fixed IDs, no-op metrics and keystore; gossip
 * goes to `network` (default: nowhere); `debugApis` as the node's --evm-debug-api (default false, a
 * node started without it).
 */
export function testChainContext(
  o: { db?: KeyValueStore; clock?: Clock; log?: Logger; chainId?: Id; vmId?: Id; signal?: AbortSignal; network?: ChainNetwork; debugApis?: boolean } = {},
): ChainContext {
  const noop = { inc() {}, set() {}, observe() {} };
  return {
    networkId: 12345,
    subnetId: Id.empty,
    chainId: o.chainId ?? Id.fromBytes(new Uint8Array(32).fill(7)),
    aliases: ['test'],
    nodeId: ShortId.fromBytes(new Uint8Array(20).fill(1)),
    vmId: o.vmId ?? Id.empty,
    db: o.db ?? new MemoryStore(),
    log: o.log ?? silentLogger,
    metrics: { counter: () => noop, gauge: () => noop, histogram: () => noop },
    clock: o.clock ?? { now: () => Date.now() },
    signal: o.signal ?? new AbortController().signal,
    sharedMemory: {
      get: async (_peer, keys) => keys.map(() => undefined),
      list: async function* () {},
      apply: () => {},
    },
    keystore: {
      openUser: async () => new MemoryStore(),
    },
    nativeAsset: { id: undefined, symbol: 'AVA' },
    validators: { list: async () => [] },
    network: o.network ?? { gossip: () => {} },
    debugApis: o.debugApis ?? false,
  };
}

/** A store whose close() is a no-op, so one memory store can outlive a node (restarts). */
export function unclosable(store: KeyValueStore): KeyValueStore {
  return {
    get: (k) => store.get(k),
    has: (k) => store.has(k),
    put: (k, v) => store.put(k, v),
    delete: (k) => store.delete(k),
    batch: () => store.batch(),
    iterate: (r) => store.iterate(r),
    close: async () => {},
  };
}
