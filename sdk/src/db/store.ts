/**
 * The key/value storage contract every Cornice module and VM writes through. Keys and values are
 * bytes; iteration is in unsigned byte order of keys. Core provides LevelDB- and memory-backed
 * stores and prefixed sub-stores; a VM receives its chain's store already prefixed.
 */
export interface KeyValueStore {
  /** The value at `key`, or undefined when absent. */
  get(key: Uint8Array): Promise<Uint8Array | undefined>;
  has(key: Uint8Array): Promise<boolean>;
  put(key: Uint8Array, value: Uint8Array): Promise<void>;
  delete(key: Uint8Array): Promise<void>;
  /** A batch of writes applied atomically by `write()`: all or nothing. */
  batch(): WriteBatch;
  /** Entries in byte order of key, restricted by `range`. */
  iterate(range?: KeyRange): AsyncIterable<[key: Uint8Array, value: Uint8Array]>;
  /** Releases the store. Prefixed sub-stores do not close their parent. */
  close(): Promise<void>;
}

export interface WriteBatch {
  put(key: Uint8Array, value: Uint8Array): WriteBatch;
  delete(key: Uint8Array): WriteBatch;
  /** Number of operations queued. */
  readonly length: number;
  write(): Promise<void>;
}

export interface KeyRange {
  /** Only keys starting with these bytes. */
  prefix?: Uint8Array;
  /** Inclusive lower bound. */
  gte?: Uint8Array;
  /** Exclusive upper bound. */
  lt?: Uint8Array;
  /** At most this many entries. */
  limit?: number;
  reverse?: boolean;
}
