/**
 * One user's store for one chain: a KeyValueStore over the keystore's store under
 * [0x02] || sha256(username) || chainId, sealing every value on write and opening it on read
 * (see crypto.ts). Keys are relative to that area and are not encrypted. Closing it does not close
 * the parent; deleting the user revokes it (later calls fail as if closed).
 */
import { concatBytes, StoreError, type KeyRange, type KeyValueStore, type WriteBatch } from '@cornice/sdk';
import { open, seal } from './crypto.js';

/** Shared by every store opened for one user; deleteUser sets `revoked`. */
export interface UserHandle {
  revoked: boolean;
}

export class UserStore implements KeyValueStore {
  readonly #parent: KeyValueStore;
  readonly #prefix: Uint8Array;
  readonly #chainId: Uint8Array;
  readonly #dataKey: Uint8Array;
  readonly #handle: UserHandle;
  #closed = false;

  /** `prefix` = [0x02] || sha256(username) || chainId; the store keeps `dataKey` (a private copy). */
  constructor(parent: KeyValueStore, prefix: Uint8Array, chainId: Uint8Array, dataKey: Uint8Array, handle: UserHandle) {
    this.#parent = parent;
    this.#prefix = prefix.slice();
    this.#chainId = chainId.slice();
    this.#dataKey = dataKey.slice();
    this.#handle = handle;
  }

  #check(): void {
    if (this.#closed || this.#handle.revoked) throw new StoreError('Closed', 'database closed');
  }

  #k(key: Uint8Array): Uint8Array {
    return concatBytes(this.#prefix, key);
  }

  #seal(key: Uint8Array, value: Uint8Array): Uint8Array {
    return seal(this.#dataKey, this.#chainId, key, value);
  }

  async get(key: Uint8Array): Promise<Uint8Array | undefined> {
    this.#check();
    const sealed = await this.#parent.get(this.#k(key));
    return sealed === undefined ? undefined : open(this.#dataKey, this.#chainId, key, sealed);
  }

  async has(key: Uint8Array): Promise<boolean> {
    this.#check();
    return this.#parent.has(this.#k(key));
  }

  async put(key: Uint8Array, value: Uint8Array): Promise<void> {
    this.#check();
    return this.#parent.put(this.#k(key), this.#seal(key, value));
  }

  async delete(key: Uint8Array): Promise<void> {
    this.#check();
    return this.#parent.delete(this.#k(key));
  }

  batch(): WriteBatch {
    const inner = this.#parent.batch();
    const batch: WriteBatch = {
      put: (key, value) => {
        this.#check();
        inner.put(this.#k(key), this.#seal(key, value));
        return batch;
      },
      delete: (key) => {
        this.#check();
        inner.delete(this.#k(key));
        return batch;
      },
      get length() {
        return inner.length;
      },
      write: async () => {
        this.#check();
        await inner.write();
      },
    };
    return batch;
  }

  async *iterate(range: KeyRange = {}): AsyncIterable<[Uint8Array, Uint8Array]> {
    this.#check();
    const inner: KeyRange = { prefix: this.#k(range.prefix ?? new Uint8Array(0)) };
    if (range.gte) inner.gte = this.#k(range.gte);
    if (range.lt) inner.lt = this.#k(range.lt);
    if (range.limit !== undefined) inner.limit = range.limit;
    if (range.reverse) inner.reverse = true;
    const n = this.#prefix.length;
    for await (const [k, v] of this.#parent.iterate(inner)) {
      this.#check();
      const key = k.slice(n);
      yield [key, open(this.#dataKey, this.#chainId, key, v)];
    }
  }

  /** Releases this store and forgets its key; the parent stays open. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#dataKey.fill(0);
  }
}
