import { concatBytes, utf8Encode, type KeyRange, type KeyValueStore, type WriteBatch } from '@cornice/sdk';

const ROOT_BATCH = Symbol('rootBatch');

/**
 * The batch of the root store behind a (possibly nested) prefixed-store batch, so that core can add
 * writes outside the prefix (shared memory) to the same atomic commit. Undefined for other batches.
 */
export function rootBatchOf(batch: WriteBatch): WriteBatch | undefined {
  return (batch as { [ROOT_BATCH]?: WriteBatch })[ROOT_BATCH];
}

/**
 * A sub-store whose keys live under a namespace of the parent. The namespace bytes are
 * `u8 length || name`, so no namespace is a prefix of another and nesting composes.
 */
export class PrefixedStore implements KeyValueStore {
  readonly prefix: Uint8Array;

  constructor(
    private readonly parent: KeyValueStore,
    namespace: string | Uint8Array,
  ) {
    const name = typeof namespace === 'string' ? utf8Encode(namespace) : namespace;
    if (name.length === 0 || name.length > 255) throw new RangeError('namespace must be 1 to 255 bytes');
    this.prefix = concatBytes(Uint8Array.of(name.length), name);
  }

  private k(key: Uint8Array): Uint8Array {
    return concatBytes(this.prefix, key);
  }

  get(key: Uint8Array) {
    return this.parent.get(this.k(key));
  }
  has(key: Uint8Array) {
    return this.parent.has(this.k(key));
  }
  put(key: Uint8Array, value: Uint8Array) {
    return this.parent.put(this.k(key), value);
  }
  delete(key: Uint8Array) {
    return this.parent.delete(this.k(key));
  }

  batch(): WriteBatch {
    const inner = this.parent.batch();
    const batch: WriteBatch & { [ROOT_BATCH]: WriteBatch } = {
      [ROOT_BATCH]: rootBatchOf(inner) ?? inner,
      put: (key, value) => (inner.put(this.k(key), value), batch),
      delete: (key) => (inner.delete(this.k(key)), batch),
      get length() {
        return inner.length;
      },
      write: () => inner.write(),
    };
    return batch;
  }

  async *iterate(range: KeyRange = {}): AsyncIterable<[Uint8Array, Uint8Array]> {
    const inner: KeyRange = {
      prefix: this.k(range.prefix ?? new Uint8Array()),
      ...(range.gte ? { gte: this.k(range.gte) } : {}),
      ...(range.lt ? { lt: this.k(range.lt) } : {}),
      ...(range.limit !== undefined ? { limit: range.limit } : {}),
      ...(range.reverse ? { reverse: true } : {}),
    };
    const n = this.prefix.length;
    for await (const [k, v] of this.parent.iterate(inner)) yield [k.subarray(n), v];
  }

  /** A sub-store does not own its parent: closing it is a no-op. */
  async close(): Promise<void> {}
}
