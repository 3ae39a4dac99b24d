/**
 * The state trie's database (@ethereumjs `DB`) over the chain's prefixed store. The MPT passes
 * per-operation encodings: keys are hex strings (node hashes) unless
 * `keyEncoding: 'view'`; values are bytes, strings or JSON as `valueEncoding` says, and the same key
 * is always read with the encoding it was written with. Forcing one encoding for everything
 * corrupts nodes, so each op is honoured.
 *
 * Reads go through an LRU of nodes shared by every trie over this database: @ethereumjs gives a
 * storage trie no node cache of its own, so without it each SLOAD of an eth_call walks LevelDB.
 *
 * Writes are held in memory until `flushInto(batch)`: the VM joins them to the batch that accepts
 * a block, so a block's trie nodes and its records are one commit. Nodes of blocks still undecided
 * (or rejected) ride along with the next accept: trie nodes are content-addressed, so an extra node
 * is never wrong, only unused.
 */
import { fromHex, toHex, utf8Decode, utf8Encode, type KeyValueStore, type WriteBatch } from '@cornice/sdk';
import type { BatchDBOp, DB, EncodingOpts } from '@ethereumjs/util';

type Value = Uint8Array | string;

const HEX_KEY = /^(?:[0-9a-f]{2})+$/;

/** Store key of a string key: 0x00 + the bytes of a hex key, else 0x01 + its UTF-8. Byte keys: 0x02 + bytes. */
function storeKey(key: string | Uint8Array): Uint8Array {
  if (typeof key !== 'string') return withTag(2, key);
  return HEX_KEY.test(key) ? withTag(0, fromHex(key)) : withTag(1, utf8Encode(key));
}

function withTag(tag: number, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(b.length + 1);
  out[0] = tag;
  out.set(b, 1);
  return out;
}

/** Map key of the write-back buffer (strings as they are; byte keys can't collide: they get a prefix no hex string has). */
function memKey(key: string | Uint8Array): string {
  return typeof key === 'string' ? key : `b:${toHex(key)}`;
}

function encodeValue(v: Value | object, opts?: EncodingOpts): Uint8Array {
  if (v instanceof Uint8Array) return v;
  if (opts?.valueEncoding === 'json' || typeof v === 'object') return utf8Encode(JSON.stringify(v));
  return utf8Encode(v);
}

function decodeValue(b: Uint8Array, opts?: EncodingOpts): Value {
  switch (opts?.valueEncoding) {
    case 'view':
      return b;
    case 'json':
      return JSON.parse(utf8Decode(b)) as Value;
    default:
      return utf8Decode(b);
  }
}

interface Pending {
  key: Uint8Array;
  /** Encoded value; undefined = delete. */
  value: Uint8Array | undefined;
  /** What get() answers (the value as it was put). */
  raw: Value | undefined;
}

/** A bounded map, least recently inserted out first (reads refresh nothing: cheap, and good enough for trie nodes). */
class NodeCache {
  readonly #map = new Map<string, Value>();
  constructor(private readonly max: number) {}
  get(k: string): Value | undefined {
    return this.#map.get(k);
  }
  set(k: string, v: Value): void {
    if (this.max <= 0) return;
    this.#map.delete(k);
    this.#map.set(k, v);
    if (this.#map.size > this.max) this.#map.delete(this.#map.keys().next().value as string);
  }
  delete(k: string): void {
    this.#map.delete(k);
  }
}

export class StateDB implements DB<string, Value> {
  readonly #pending: Map<string, Pending>;
  readonly #cache: NodeCache;

  /** `cacheSize`: trie nodes kept in memory for reads (default 200,000). */
  constructor(
    private readonly store: KeyValueStore,
    cacheSize = 200_000,
    shared?: { pending: Map<string, Pending>; cache: NodeCache },
  ) {
    this.#pending = shared?.pending ?? new Map();
    this.#cache = shared?.cache ?? new NodeCache(cacheSize);
  }

  async get(key: string, opts?: EncodingOpts): Promise<Value | undefined> {
    const mk = memKey(key);
    const p = this.#pending.get(mk);
    if (p) return p.raw;
    const cached = this.#cache.get(mk);
    if (cached !== undefined) return cached;
    const b = await this.store.get(storeKey(key));
    if (b === undefined) return undefined;
    const v = decodeValue(b, opts);
    this.#cache.set(mk, v);
    return v;
  }

  async put(key: string, value: Value, opts?: EncodingOpts): Promise<void> {
    const mk = memKey(key);
    this.#pending.set(mk, { key: storeKey(key), value: encodeValue(value, opts), raw: value });
    this.#cache.delete(mk);
  }

  async del(key: string): Promise<void> {
    const mk = memKey(key);
    this.#pending.set(mk, { key: storeKey(key), value: undefined, raw: undefined });
    this.#cache.delete(mk);
  }

  async batch(ops: BatchDBOp<string, Value>[]): Promise<void> {
    for (const op of ops) {
      if (op.type === 'put') await this.put(op.key, op.value as Value, op.opts);
      else await this.del(op.key);
    }
  }

  /** A view sharing the store and the write-back buffer. */
  shallowCopy(): StateDB {
    return new StateDB(this.store, 0, { pending: this.#pending, cache: this.#cache });
  }

  async open(): Promise<void> {}

  /** Writes held in memory. */
  get pendingCount(): number {
    return this.#pending.size;
  }

  /**
   * Queues every held write into `batch`; call `flushed()` with the result once the batch is
   * written, so writes made meanwhile stay held.
   */
  flushInto(batch: WriteBatch): Map<string, Pending> {
    const snapshot = new Map(this.#pending);
    for (const p of snapshot.values()) {
      if (p.value === undefined) batch.delete(p.key);
      else batch.put(p.key, p.value);
    }
    return snapshot;
  }

  /** Forgets the writes of a snapshot that are now in the store (unless overwritten since). */
  flushed(snapshot: Map<string, Pending>): void {
    for (const [k, p] of snapshot) {
      if (this.#pending.get(k) !== p) continue;
      this.#pending.delete(k);
      if (p.raw !== undefined) this.#cache.set(k, p.raw);
    }
  }
}
