import { concatBytes, utf8Encode } from '../encoding/bytes.js';
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

/**
 * A sub-store whose keys live under a namespace of the parent (a chain's store under the node's, a
 * VM's sections under its chain's). The namespace bytes are `u8 length || name`, so no namespace is
 * a prefix of another and nesting composes.
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

  /** The parent's key for `key`. */
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

  /** A view of `inner`, a batch of the parent, that writes under this namespace: several sub-stores' writes in one commit. */
  within(inner: WriteBatch): WriteBatch {
    const batch: WriteBatch & { [ROOT_BATCH]: WriteBatch } = {
      [ROOT_BATCH]: rootBatchOf(inner) ?? inner,
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

  /** A sub-store does not own its parent: closing it is a no-op. */
  async close(): Promise<void> {}
}
