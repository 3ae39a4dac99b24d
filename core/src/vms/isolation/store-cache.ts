/**
 * A worker's copy of the chain store's values it last read or wrote (`--vm-isolation`), so that a VM
 * reading back what it wrote (its last accepted block, its tip) does not cross to the host.
 *
 * Sound because the worker is the only writer of its chain's store: the host's `chains/<chainID>`
 * prefix is the VM's alone, and every write to it is a request of this worker. So a value read while
 * no write was in flight, or written by a write that succeeded with no other write in flight, is the
 * stored value until this worker writes that key again. A write forgets its keys when it starts (a
 * read meanwhile crosses); a failed write leaves them forgotten. Never used for keystore stores
 * (another chain, or the keystore API, may write those).
 *
 * Bounded: at most `entries` keys and `bytes` of keys and values, least recently used out; a value
 * larger than `valueBytes` is not kept. Values are copied in and out, as a store does.
 */
import { toHex } from '@cornice/sdk';

export interface StoreCacheLimits {
  entries: number;
  bytes: number;
  valueBytes: number;
}

export const STORE_CACHE_LIMITS: StoreCacheLimits = { entries: 8_192, bytes: 16 << 20, valueBytes: 1 << 20 };

/** A value known absent. */
const ABSENT = null;
type Entry = Uint8Array | typeof ABSENT;

export class StoreCache {
  readonly #entries = new Map<string, Entry>();
  #bytes = 0;
  /** Writes sent and not yet answered. */
  #writing = 0;
  /** Counts the writes started: a read or write overlapped by another write sees it change. */
  #epoch = 0;
  hits = 0;
  misses = 0;

  constructor(private readonly limits: StoreCacheLimits = STORE_CACHE_LIMITS) {}

  get size(): number {
    return this.#entries.size;
  }

  /** The value of `key`, from the cache or else from `fetch` (kept when no write overlapped it). */
  async get(key: Uint8Array, fetch: () => Promise<Uint8Array | undefined>): Promise<Uint8Array | undefined> {
    const k = toHex(key);
    const hit = this.#touch(k);
    if (hit !== undefined) {
      this.hits++;
      return hit === ABSENT ? undefined : hit.slice();
    }
    this.misses++;
    const epoch = this.#writing === 0 ? this.#epoch : -1;
    const value = await fetch();
    if (epoch === this.#epoch) this.#set(k, value === undefined ? ABSENT : value.slice());
    return value;
  }

  /** Whether `key` is stored, from the cache or else from `fetch` (an absence is kept like a read). */
  async has(key: Uint8Array, fetch: () => Promise<boolean>): Promise<boolean> {
    const k = toHex(key);
    const hit = this.#touch(k);
    if (hit !== undefined) {
      this.hits++;
      return hit !== ABSENT;
    }
    this.misses++;
    const epoch = this.#writing === 0 ? this.#epoch : -1;
    const found = await fetch();
    if (!found && epoch === this.#epoch) this.#set(k, ABSENT);
    return found;
  }

  /**
   * Runs `send`, the write of `ops` (value undefined: a delete). Their keys are forgotten meanwhile,
   * and kept with the written values when it succeeds with no other write in flight.
   */
  async write(ops: ReadonlyArray<readonly [Uint8Array, Uint8Array | undefined]>, send: () => Promise<void>): Promise<void> {
    const after = new Map<string, Entry | undefined>();
    for (const [key, value] of ops) {
      const k = toHex(key);
      this.#forget(k);
      // undefined: too large to keep (the key stays forgotten).
      after.set(k, value === undefined ? ABSENT : value.length <= this.limits.valueBytes ? value.slice() : undefined);
    }
    const alone = this.#writing === 0;
    const epoch = ++this.#epoch;
    this.#writing++;
    try {
      await send();
    } finally {
      this.#writing--;
    }
    if (!alone || epoch !== this.#epoch) return;
    for (const [k, entry] of after) {
      this.#forget(k);
      if (entry !== undefined) this.#set(k, entry);
    }
  }

  #touch(k: string): Entry | undefined {
    const entry = this.#entries.get(k);
    if (entry === undefined) return undefined;
    // Most recently used last.
    this.#entries.delete(k);
    this.#entries.set(k, entry);
    return entry;
  }

  #set(k: string, entry: Entry): void {
    if (entry !== ABSENT && entry.length > this.limits.valueBytes) return;
    this.#forget(k);
    this.#entries.set(k, entry);
    this.#bytes += sizeOf(k, entry);
    while (this.#entries.size > this.limits.entries || this.#bytes > this.limits.bytes) {
      const [oldest, e] = this.#entries.entries().next().value!;
      this.#entries.delete(oldest);
      this.#bytes -= sizeOf(oldest, e);
    }
  }

  #forget(k: string): void {
    const entry = this.#entries.get(k);
    if (entry === undefined) return;
    this.#entries.delete(k);
    this.#bytes -= sizeOf(k, entry);
  }
}

/** Bytes of a key (hex: two chars a byte) and its value. */
const sizeOf = (k: string, entry: Entry): number => k.length / 2 + (entry === ABSENT ? 0 : entry.length);
