import { StoreError } from '../errors/errors.js';
import { fromHex, toHex } from '../encoding/hex.js';
import type { KeyRange, KeyValueStore, WriteBatch } from './store.js';

/**
 * Lower-case hex sorts in the same order as the bytes it encodes. Native hex (toHex) gives a flat
 * string; one built by `+=` per byte stays a rope of a piece per byte as a Map key, several times
 * the heap of a flat one for as long as the entry lives.
 */
const keyOf = toHex;
const bytesOf = fromHex;

/** An in-memory KeyValueStore (tests, `--db-type memory`). Values are copied in and out. */
export class MemoryStore implements KeyValueStore {
  readonly #map = new Map<string, Uint8Array>();
  #sorted: string[] | undefined;
  #closed = false;

  #check(): void {
    if (this.#closed) throw new StoreError('Closed', 'database closed');
  }

  async get(key: Uint8Array): Promise<Uint8Array | undefined> {
    this.#check();
    const v = this.#map.get(keyOf(key));
    return v?.slice();
  }

  async has(key: Uint8Array): Promise<boolean> {
    this.#check();
    return this.#map.has(keyOf(key));
  }

  async put(key: Uint8Array, value: Uint8Array): Promise<void> {
    this.#check();
    this.#set(keyOf(key), value.slice());
  }

  async delete(key: Uint8Array): Promise<void> {
    this.#check();
    this.#remove(keyOf(key));
  }

  #set(k: string, v: Uint8Array): void {
    if (!this.#map.has(k)) this.#sorted = undefined;
    this.#map.set(k, v);
  }

  #remove(k: string): void {
    if (this.#map.delete(k)) this.#sorted = undefined;
  }

  batch(): WriteBatch {
    const ops: Array<[string, Uint8Array | undefined]> = [];
    const batch: WriteBatch = {
      put: (key, value) => {
        ops.push([keyOf(key), value.slice()]);
        return batch;
      },
      delete: (key) => {
        ops.push([keyOf(key), undefined]);
        return batch;
      },
      get length() {
        return ops.length;
      },
      write: async () => {
        this.#check();
        for (const [k, v] of ops) {
          if (v) this.#set(k, v);
          else this.#remove(k);
        }
        ops.length = 0;
      },
    };
    return batch;
  }

  async *iterate(range: KeyRange = {}): AsyncIterable<[Uint8Array, Uint8Array]> {
    this.#check();
    this.#sorted ??= [...this.#map.keys()].sort();
    const prefix = range.prefix ? keyOf(range.prefix) : '';
    const gte = range.gte ? keyOf(range.gte) : undefined;
    const lt = range.lt ? keyOf(range.lt) : undefined;
    let keys = this.#sorted.filter(
      (k) => k.startsWith(prefix) && (gte === undefined || k >= gte) && (lt === undefined || k < lt),
    );
    if (range.reverse) keys = keys.reverse();
    if (range.limit !== undefined) keys = keys.slice(0, range.limit);
    for (const k of keys) {
      const v = this.#map.get(k);
      if (v) yield [bytesOf(k), v.slice()];
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
  }
}
