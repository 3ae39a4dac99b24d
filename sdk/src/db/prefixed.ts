import { concatBytes, pooledBytes, utf8Encode } from '../encoding/bytes.js';
import type { KeyRange, KeyValueStore, WriteBatch } from './store.js';

/** Registered, so that batches made by another copy of the sdk (a plugin's) are recognised too. */
const ROOT_BATCH = Symbol.for('cornice.rootBatch');

/**
 * The batch of the root store behind a (possibly nested) prefixed-store batch, so that the node can
 * add writes outside the prefix (shared memory) to the same atomic commit. Undefined for other batches.
 */
export function rootBatchOf(batch: WriteBatch): WriteBatch | undefined {
  return (batch as { [ROOT_BATCH]?: WriteBatch })[ROOT_BATCH];
}

/** A batch writing into `inner` under the keys `keyOf` makes. */
function prefixedBatch(inner: WriteBatch, keyOf: (key: Uint8Array) => Uint8Array): WriteBatch {
  const batch: WriteBatch & { [ROOT_BATCH]: WriteBatch } = {
    [ROOT_BATCH]: rootBatchOf(inner) ?? inner,
    put: (key, value) => (inner.put(keyOf(key), value), batch),
    delete: (key) => (inner.delete(keyOf(key)), batch),
    get length() {
      return inner.length;
    },
    write: () => inner.write(),
  };
  return batch;
}

/**
 * A sub-store whose keys live under a namespace of the parent (a chain's store under the node's, a
 * VM's sections under its chain's). The namespace bytes are `u8 length || name`, so no namespace is
 * a prefix of another and nesting composes.
 */
export class PrefixedStore implements KeyValueStore {
  /** This namespace's bytes under the parent. */
  readonly prefix: Uint8Array;
  /**
   * The store the reads and writes go to, and the key prefix there: a sub-store of a sub-store goes
   * straight to the grandparent with both prefixes, one key copy per operation instead of one per level.
   */
  readonly #base: KeyValueStore;
  readonly #full: Uint8Array;

  constructor(
    parent: KeyValueStore,
    namespace: string | Uint8Array,
  ) {
    const name = typeof namespace === 'string' ? utf8Encode(namespace) : namespace;
    if (name.length === 0 || name.length > 255) throw new RangeError('namespace must be 1 to 255 bytes');
    this.prefix = concatBytes(Uint8Array.of(name.length), name);
    const nested = parent instanceof PrefixedStore;
    this.#base = nested ? parent.#base : parent;
    this.#full = nested ? concatBytes(parent.#full, this.prefix) : this.prefix;
  }

  /** The parent's key for `key`. */
  key(key: Uint8Array): Uint8Array {
    return concatBytes(this.prefix, key);
  }

  /**
   * The base store's key for `key`, pooled (pooledBytes): stores copy the keys they are given, and
   * a chain's keys with the prefix are mostly over 64 bytes, a native allocation each as a new
   * Uint8Array (see pooledBytes), on every read and write.
   */
  #baseKey(key: Uint8Array): Uint8Array {
    const out = pooledBytes(this.#full.length + key.length);
    out.set(this.#full, 0);
    out.set(key, this.#full.length);
    return out;
  }

  get(key: Uint8Array) {
    return this.#base.get(this.#baseKey(key));
  }
  has(key: Uint8Array) {
    return this.#base.has(this.#baseKey(key));
  }
  put(key: Uint8Array, value: Uint8Array) {
    return this.#base.put(this.#baseKey(key), value);
  }
  delete(key: Uint8Array) {
    return this.#base.delete(this.#baseKey(key));
  }

  batch(): WriteBatch {
    return prefixedBatch(this.#base.batch(), (key) => this.#baseKey(key));
  }

  /** A view of `inner`, a batch of the parent, that writes under this namespace: several sub-stores' writes in one commit. */
  within(inner: WriteBatch): WriteBatch {
    return prefixedBatch(inner, (key) => this.key(key));
  }

  async *iterate(range: KeyRange = {}): AsyncIterable<[Uint8Array, Uint8Array]> {
    const inner: KeyRange = {
      prefix: this.#baseKey(range.prefix ?? new Uint8Array()),
      ...(range.gte ? { gte: this.#baseKey(range.gte) } : {}),
      ...(range.lt ? { lt: this.#baseKey(range.lt) } : {}),
      ...(range.limit !== undefined ? { limit: range.limit } : {}),
      ...(range.reverse ? { reverse: true } : {}),
    };
    const n = this.#full.length;
    for await (const [k, v] of this.#base.iterate(inner)) yield [k.subarray(n), v];
  }

  /** A sub-store does not own its parent: closing it is a no-op. */
  async close(): Promise<void> {}
}
