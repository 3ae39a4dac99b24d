import { concatBytes, utf8Encode, type KeyRange, type KeyValueStore, type WriteBatch } from '@cornice/sdk';

/**
 * A sub-store under a namespace of the chain's store (`u8 length || name`, so no namespace is a
 * prefix of another). The plugin depends on the sdk only, which has no prefixed store.
 */
export class SubStore implements KeyValueStore {
  readonly prefix: Uint8Array;

  constructor(
    private readonly parent: KeyValueStore,
    namespace: string,
  ) {
    const name = utf8Encode(namespace);
    this.prefix = concatBytes(Uint8Array.of(name.length), name);
  }

  /** The parent's key of `key`: to join this store's writes to a batch of the parent. */
  key(key: Uint8Array): Uint8Array {
    return concatBytes(this.prefix, key);
  }

  get(key: Uint8Array) {
    return this.parent.get(this.key(key));
  }
  has(key: Uint8Array) {
    return this.parent.has(this.key(key));
  }
  put(key: Uint8Array, value: Uint8Array) {
    return this.parent.put(this.key(key), value);
  }
  delete(key: Uint8Array) {
    return this.parent.delete(this.key(key));
  }

  batch(): WriteBatch {
    return this.within(this.parent.batch());
  }

  /** A view of a parent batch that writes under this namespace. */
  within(inner: WriteBatch): WriteBatch {
    const batch: WriteBatch = {
      put: (key, value) => (inner.put(this.key(key), value), batch),
      delete: (key) => (inner.delete(this.key(key)), batch),
      get length() {
        return inner.length;
      },
      write: () => inner.write(),
    };
    return batch;
  }

  async *iterate(range: KeyRange = {}): AsyncIterable<[Uint8Array, Uint8Array]> {
    const inner: KeyRange = {
      prefix: this.key(range.prefix ?? new Uint8Array()),
      ...(range.gte ? { gte: this.key(range.gte) } : {}),
      ...(range.lt ? { lt: this.key(range.lt) } : {}),
      ...(range.limit !== undefined ? { limit: range.limit } : {}),
      ...(range.reverse ? { reverse: true } : {}),
    };
    const n = this.prefix.length;
    for await (const [k, v] of this.parent.iterate(inner)) yield [k.subarray(n), v];
  }

  /** A sub-store does not own its parent. */
  async close(): Promise<void> {}
}
