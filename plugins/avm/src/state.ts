/**
 * Asset chain state: the accepted state (`AcceptedState`, in the chain's store, recently used UTXOs
 * cached) and `StateDiff`, what one processing block changes on top of its parent's state. A diff
 * finds its parent through a callback, so once the parent is accepted the diff reads the accepted
 * state, not a stale copy.
 *
 * Keys in the chain's store (one tag byte first):
 * - `u ‖ utxoID`             -> UTXO bytes (reference layout, codec.ts)
 * - `a ‖ address ‖ utxoID`   -> empty (which UTXOs an address owns, in UTXO ID order: getUTXOs' pages)
 * - `o ‖ address ‖ assetID ‖ kind ‖ ~amount ‖ utxoID` -> empty (an address's UTXOs of one asset and
 *                              kind — 0 transfer, 1 mint — largest amount first: ~amount is
 *                              2^64-1 - amount, u64 BE; what send, getBalance and createMintTx read)
 * - `w ‖ address ‖ assetID`  -> the sum of the amounts of the TransferOutputs of the asset the address
 *                              is among the owners of (unsigned big-endian, no leading zeros;
 *                              absent when 0): getBalance and getAllBalances without reading UTXOs
 * - `v`                      -> index version u8 ‖ the block ID up to which `o` and `w` are kept
 * - `t ‖ txID`               -> status u8 (1 accepted, 2 rejected) ‖ signed tx bytes (accepted only)
 * - `s ‖ assetID`            -> name string ‖ symbol string ‖ denomination u8 (each CreateAssetTx)
 * - `n ‖ alias`              -> assetID (the genesis aliases)
 * Blocks are kept by block.ts's BlockStore (tags `b`, `h`, `l`, `g`).
 *
 * One piece (past 600 lines) because the key layout above is written and read here alone: the
 * accepted state's reads, its cache and its one write per accepted block (UTXOs, the `a`/`o`/`w`
 * indexes and their version, tx records, assets) must agree on every key, and StateDiff, the same
 * StateReader over a processing block, is what that write takes in. What stands apart: the bytes of UTXOs and txs (codec.ts),
 * what a tx does to the state (rules.ts), blocks (block.ts).
 */
import {
  Id,
  Reader,
  type ShortId,
  Writer,
  bytesEqual,
  compareBytes,
  concatBytes,
  pooledBytes,
  utf8Encode,
  utf8Decode,
  type KeyValueStore,
  type Logger,
  type WriteBatch,
} from '@cornice/sdk';
import { decodeUtxo, encodeUtxo } from './codec.js';
import { AvmError } from './errors.js';
import type { AssetDescription, OutputKind, Tx, Utxo, UtxoCursor, UtxoPage } from './model.js';

/** The tag byte of each record kind (state here, blocks in block.ts). */
export const TAG = {
  utxo: 0x75, // u
  address: 0x61, // a
  tx: 0x74, // t
  asset: 0x73, // s
  alias: 0x6e, // n
  block: 0x62, // b
  height: 0x68, // h
  lastAccepted: 0x6c, // l
  genesis: 0x67, // g
  owned: 0x6f, // o
  worth: 0x77, // w
  indexed: 0x76, // v
} as const;

/** Kinds of output in the `o` index. */
const KIND_TRANSFER = 0;
const KIND_MINT = 1;
/** The `o` and `w` indexes' version (the `v` record); another version is rebuilt on open. */
const INDEX_VERSION = 1;

const TX_ACCEPTED = 1;
const TX_REJECTED = 2;

/** A UTXO and its ID. */
export interface KeyedUtxo {
  id: Id;
  utxo: Utxo;
}

/** What a valid tx does to the state (rules.ts checkTx makes it; a StateDiff records it). */
export interface TxEffect {
  id: Id;
  /** The signed bytes. */
  bytes: Uint8Array;
  tx: Tx;
  /** Local UTXOs spent (BaseTx ins, then the operations' UTXOs). */
  spends: KeyedUtxo[];
  /** Imported UTXOs consumed from shared memory. */
  imports: Id[];
  /** Local UTXOs made. */
  produced: KeyedUtxo[];
  /** UTXOs put into shared memory for the platform chain. */
  exports: KeyedUtxo[];
  /** The asset a CreateAssetTx makes. */
  asset: AssetDescription | undefined;
  /** Latest locktime among the spent outputs: the tx fits only in a block at least that late. */
  locktime: bigint;
}

/** What the rules read of a state. */
export interface StateReader {
  /** An unspent UTXO. */
  utxo(id: Id): Promise<Utxo | undefined>;
  /** True when this imported UTXO is in shared memory and no block between the accepted state and here consumed it. */
  importAvailable(id: Id): Promise<boolean>;
  /** True when a block between the accepted state and here spent this UTXO. */
  spentInFlight(id: Id): boolean;
  /** True when the tx is accepted or in a block between the accepted state and here. */
  hasTx(id: Id): Promise<boolean>;
  /** A UTXO made by a block between the accepted state and here, spent since or not. */
  producedInFlight(id: Id): Utxo | undefined;
}

/** A tag byte then an ID, without copying the ID's bytes twice. */
function tagged(tag: number, id: Id): Uint8Array {
  const k = new Uint8Array(33);
  k[0] = tag;
  id.copyTo(k, 1);
  return k;
}

const utxoKey = (id: Id) => tagged(TAG.utxo, id);
const addressKey = (address: ShortId, id: Id) => {
  const k = new Uint8Array(1 + 20 + 32);
  k[0] = TAG.address;
  address.copyTo(k, 1);
  id.copyTo(k, 21);
  return k;
};
const txKey = (id: Id) => tagged(TAG.tx, id);
const INDEXED_KEY = Uint8Array.of(TAG.indexed);
const EMPTY = new Uint8Array(0);
const U64_MAX = (1n << 64n) - 1n;

/** `o ‖ address ‖ assetID ‖ kind ‖ ~amount ‖ utxoID`. */
const OWNED_KEY_LENGTH = 1 + 20 + 32 + 1 + 8 + 32;
/** Where ~amount starts in an `o` key (what the largest-first order compares from). */
const OWNED_ORDER_AT = 54;
const OWNED_UTXO_AT = 62;

/** The prefix of one address's UTXOs of one asset and kind in the `o` index. */
function ownedPrefix(address: ShortId, assetId: Id, kind: OutputKind): Uint8Array {
  const k = new Uint8Array(OWNED_ORDER_AT);
  k[0] = TAG.owned;
  address.copyTo(k, 1);
  assetId.copyTo(k, 21);
  k[53] = kind === 'mint' ? KIND_MINT : KIND_TRANSFER;
  return k;
}

/**
 * The `o` key of `utxo` (of ID `id`) for one of its owners. Pooled (pooledBytes): it goes straight
 * into a batch or a read, which copy it (why pooled: see pooledBytes in the sdk).
 */
function ownedKey(address: ShortId, id: Id, utxo: Utxo): Uint8Array {
  const k = pooledBytes(OWNED_KEY_LENGTH);
  k[0] = TAG.owned;
  address.copyTo(k, 1);
  utxo.assetId.copyTo(k, 21);
  const out = utxo.out;
  k[53] = out.kind === 'mint' ? KIND_MINT : KIND_TRANSFER;
  const inv = out.kind === 'transfer' ? U64_MAX - out.amount : U64_MAX;
  const hi = Number(inv >> 32n);
  const lo = Number(inv & 0xffff_ffffn);
  k[54] = hi >>> 24;
  k[55] = (hi >>> 16) & 0xff;
  k[56] = (hi >>> 8) & 0xff;
  k[57] = hi & 0xff;
  k[58] = lo >>> 24;
  k[59] = (lo >>> 16) & 0xff;
  k[60] = (lo >>> 8) & 0xff;
  k[61] = lo & 0xff;
  id.copyTo(k, OWNED_UTXO_AT);
  return k;
}

/** `w ‖ address ‖ assetID`. */
function worthKey(address: ShortId, assetId: Id): Uint8Array {
  const k = new Uint8Array(1 + 20 + 32);
  k[0] = TAG.worth;
  address.copyTo(k, 1);
  assetId.copyTo(k, 21);
  return k;
}

/** A non-negative bigint as unsigned big-endian bytes without leading zeros (0 is no bytes). */
function encodeWorth(n: bigint): Uint8Array {
  if (n === 0n) return EMPTY;
  let hex = n.toString(16);
  if (hex.length % 2) hex = `0${hex}`;
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

function decodeWorth(b: Uint8Array): bigint {
  let n = 0n;
  for (const x of b) n = (n << 8n) | BigInt(x);
  return n;
}

/** The smallest key after `key` (for a range that starts just past it). */
function after(key: Uint8Array): Uint8Array {
  const k = new Uint8Array(key.length + 1);
  k.set(key);
  return k;
}

/** A page of the `a` index (utxoPage): the UTXOs with their IDs. */
export interface KeyedUtxoPage extends Omit<UtxoPage, 'utxos'> {
  utxos: KeyedUtxo[];
}

/** Entries an `o` cursor reads at a time. */
const OWNED_PAGE = 64;

/**
 * One address's `o` entries of one asset and kind, in key order (largest amount first), a page at a
 * time: the merge in `byAmount` reads each address only as far as it needs.
 */
class OwnedCursor {
  #page: Uint8Array[] = [];
  #at = 0;
  #from: Uint8Array | undefined;
  #done = false;

  constructor(
    private readonly db: KeyValueStore,
    private readonly prefix: Uint8Array,
  ) {}

  /** The next key, reading a page when the last is used up; undefined at the end. */
  async head(): Promise<Uint8Array | undefined> {
    if (this.#at < this.#page.length) return this.#page[this.#at];
    if (this.#done) return undefined;
    const page: Uint8Array[] = [];
    for await (const [k] of this.db.iterate({ prefix: this.prefix, ...(this.#from ? { gte: this.#from } : {}), limit: OWNED_PAGE })) page.push(k);
    if (page.length < OWNED_PAGE) this.#done = true;
    if (page.length > 0) this.#from = after(page[page.length - 1]!);
    this.#page = page;
    this.#at = 0;
    return page[0];
  }

  /** Moves past the head. */
  next(): void {
    this.#at += 1;
  }
}

/** Largest amount first, then UTXO ID: the bytes of an `o` key from ~amount on. */
function ownedOrder(a: Uint8Array, b: Uint8Array): number {
  return compareBytes(a.subarray(OWNED_ORDER_AT), b.subarray(OWNED_ORDER_AT));
}
const assetKey = (id: Id) => tagged(TAG.asset, id);
const aliasKey = (alias: string) => concatBytes(Uint8Array.of(TAG.alias), utf8Encode(alias));

/** Most UTXOs the accepted state keeps decoded in memory. */
const UTXO_CACHE_SIZE = 100_000;
/** Most (owner, asset) balances it keeps in memory (the `w` values of recently used pairs). */
const WORTH_CACHE_SIZE = 100_000;

/** A change of one (owner, asset) balance in a block being written. */
interface WorthChange {
  address: ShortId;
  assetId: Id;
  delta: bigint;
  /** The new balance, once computed. */
  now?: bigint;
}

export type StoredTxStatus = 'Accepted' | 'Rejected';

/** The accepted state. `commit` updates its cache once an accepting batch is written. */
export class AcceptedState implements StateReader {
  readonly #utxos = new Map<string, Utxo>();
  /**
   * Committed `w` values by owner key then asset key (a pair absent from the store is 0): what
   * writing a block reads, without a database read per (owner, asset) pair it touches.
   */
  readonly #worth = new Map<string, Map<string, bigint>>();
  #worthSize = 0;
  /** The balances the last `write` computed, applied to #worth by `commit` once its batch is durable. */
  #pendingWorth: WorthChange[] = [];

  constructor(
    private readonly db: KeyValueStore,
    /** The bytes of a UTXO the platform chain exported to this chain (shared memory), by UTXO ID. */
    private readonly readImport: (id: Id) => Promise<Uint8Array | undefined>,
  ) {}

  async utxo(id: Id): Promise<Utxo | undefined> {
    const cached = this.#utxos.get(id.key);
    if (cached) return cached;
    const v = await this.db.get(utxoKey(id));
    if (!v) return undefined;
    let utxo: Utxo;
    try {
      utxo = decodeUtxo(v);
    } catch (e) {
      throw new AvmError('CorruptDatabase', `stored UTXO ${id} is malformed: ${(e as Error).message}`);
    }
    this.#cache(id, utxo);
    return utxo;
  }

  async importAvailable(id: Id): Promise<boolean> {
    return (await this.readImport(id)) !== undefined;
  }

  spentInFlight(): boolean {
    return false;
  }

  async hasTx(id: Id): Promise<boolean> {
    return (await this.txStatus(id)) === 'Accepted';
  }

  producedInFlight(): undefined {
    return undefined;
  }

  async txStatus(id: Id): Promise<StoredTxStatus | undefined> {
    const v = await this.db.get(txKey(id));
    if (!v) return undefined;
    return v[0] === TX_ACCEPTED ? 'Accepted' : v[0] === TX_REJECTED ? 'Rejected' : undefined;
  }

  /** The signed bytes of an accepted tx. */
  async txBytes(id: Id): Promise<Uint8Array | undefined> {
    const v = await this.db.get(txKey(id));
    return v && v[0] === TX_ACCEPTED ? v.subarray(1) : undefined;
  }

  async asset(id: Id): Promise<AssetDescription | undefined> {
    const v = await this.db.get(assetKey(id));
    if (!v) return undefined;
    try {
      const r = new Reader(v);
      const a = { assetId: id, name: r.str(), symbol: r.str(), denomination: r.u8() };
      r.end();
      return a;
    } catch (e) {
      throw new AvmError('CorruptDatabase', `stored asset ${id} is malformed: ${(e as Error).message}`);
    }
  }

  /** The genesis aliases and their asset IDs. */
  async aliases(): Promise<Map<string, Id>> {
    const out = new Map<string, Id>();
    for await (const [k, v] of this.db.iterate({ prefix: Uint8Array.of(TAG.alias) })) {
      if (v.length !== 32) throw new AvmError('CorruptDatabase', 'a stored asset alias is malformed');
      out.set(utf8Decode(k.subarray(1)), Id.fromBytes(v));
    }
    return out;
  }

  /**
   * IDs of the UTXOs owned (among others) by any of `addresses`, in UTXO ID order, at most `limit` (default all).
   * Each address's index is read in ID order, so its first `limit` entries are enough.
   */
  async utxoIds(addresses: readonly ShortId[], limit?: number): Promise<Id[]> {
    const found = new Map<string, Id>();
    for (const address of addresses) {
      const prefix = concatBytes(Uint8Array.of(TAG.address), address.bytes);
      for await (const [k] of this.db.iterate({ prefix, ...(limit !== undefined ? { limit } : {}) })) {
        const id = Id.fromBytes(k.subarray(21));
        found.set(id.key, id);
      }
    }
    const sorted = [...found.values()].sort((a, b) => a.compare(b));
    return limit === undefined ? sorted : sorted.slice(0, limit);
  }

  /**
   * Queues the writes of an accepted diff into `batch`: its UTXOs with their `a` and `o` entries, the
   * `w` balances they change (read here, so accepts must not overlap: the VM makes them one at a
   * time), its txs and assets.
   */
  async write(diff: StateDiff, batch: WriteBatch): Promise<void> {
    // Balance changes per (owner, asset): one write per pair however many UTXOs move, and a read
    // only for a pair not in #worth.
    const worth = new Map<string, Map<string, WorthChange>>();
    const changes: WorthChange[] = [];
    const move = (utxo: Utxo, address: ShortId, sign: 1n | -1n, i: number) => {
      if (utxo.out.kind !== 'transfer') return;
      // Once per owner, as the `o` key (a genesis is not syntax-checked: an owner could be listed twice).
      if (i > 0 && utxo.out.addresses.findIndex((x) => x.equals(address)) < i) return;
      let ofOwner = worth.get(address.key);
      if (!ofOwner) worth.set(address.key, (ofOwner = new Map()));
      const w = ofOwner.get(utxo.assetId.key);
      if (w) w.delta += sign * utxo.out.amount;
      else {
        const c: WorthChange = { address, assetId: utxo.assetId, delta: sign * utxo.out.amount };
        ofOwner.set(utxo.assetId.key, c);
        changes.push(c);
      }
    };
    for (const { id, utxo } of diff.created.values()) {
      if (diff.spent.has(id.key)) continue;
      batch.put(utxoKey(id), encodeUtxo(utxo));
      utxo.out.addresses.forEach((a, i) => {
        batch.put(addressKey(a, id), EMPTY);
        batch.put(ownedKey(a, id, utxo), EMPTY);
        move(utxo, a, 1n, i);
      });
    }
    for (const { id, utxo } of diff.spent.values()) {
      if (diff.created.has(id.key)) continue;
      batch.delete(utxoKey(id));
      utxo.out.addresses.forEach((a, i) => {
        batch.delete(addressKey(a, id));
        batch.delete(ownedKey(a, id, utxo));
        move(utxo, a, -1n, i);
      });
    }
    const changed = changes.filter((w) => w.delta !== 0n);
    const unknown = changed.filter((w) => this.#worth.get(w.address.key)?.get(w.assetId.key) === undefined);
    const read = unknown.length > 0 ? await Promise.all(unknown.map((w) => this.#readWorth(w.address, w.assetId))) : [];
    unknown.forEach((w, i) => (w.now = read[i]!));
    for (const w of changed) {
      const now = (w.now ?? this.#worth.get(w.address.key)!.get(w.assetId.key)!) + w.delta;
      if (now < 0n) throw new AvmError('CorruptDatabase', `the balance index of ${w.address} for asset ${w.assetId} went below zero`);
      w.now = now;
      if (now === 0n) batch.delete(worthKey(w.address, w.assetId));
      else batch.put(worthKey(w.address, w.assetId), encodeWorth(now));
    }
    this.#pendingWorth = changed;
    for (const e of diff.effects) {
      // Pooled (see the sdk's pooledBytes): the store copies it.
      const record = pooledBytes(1 + e.bytes.length);
      record[0] = TX_ACCEPTED;
      record.set(e.bytes, 1);
      batch.put(txKey(e.id), record);
      if (e.asset) batch.put(assetKey(e.asset.assetId), encodeAsset(e.asset));
    }
  }

  /** Queues the record that the `o` and `w` indexes hold everything up to block `blockId` (with that block's batch). */
  writeIndexed(blockId: Id, batch: WriteBatch): void {
    const v = new Uint8Array(33);
    v[0] = INDEX_VERSION;
    blockId.copyTo(v, 1);
    batch.put(INDEXED_KEY, v);
  }

  /**
   * Builds the `o` and `w` indexes from the UTXOs when they are not those of the last accepted block
   * `upTo` (a database made before they existed, or written meanwhile by a version that does not
   * keep them): every `o` and `w` entry is removed, then `o` is made from the `u` records and `w` by
   * summing `o` in key order (memory does not grow with the number of UTXOs or owners). Writes go in
   * batches; a crash midway leaves the `v` record unchanged, so the next start builds them again.
   * The number of UTXOs it went through; 0 when nothing was to do.
   * Tests: 'a database written before the o and w indexes …', 'on LevelDB: a data dir without the indexes …' (indexes.test.ts).
   */
  async ensureIndexes(upTo: Id, log: Logger): Promise<number> {
    const v = await this.db.get(INDEXED_KEY);
    if (v && v.length === 33 && v[0] === INDEX_VERSION && upTo.isAt(v, 1)) return 0;
    const started = Date.now();
    log.info('building the balance and UTXO indexes (once, for a database written before them)', { upTo: upTo.toString() });
    let batch = this.db.batch();
    const flush = async (force = false) => {
      if (batch.length === 0 || (!force && batch.length < 10_000)) return;
      await batch.write();
      batch = this.db.batch();
    };
    for (const tag of [TAG.owned, TAG.worth]) {
      for await (const [k] of this.db.iterate({ prefix: Uint8Array.of(tag) })) {
        batch.delete(k);
        await flush();
      }
    }
    await flush(true);
    let utxos = 0;
    for await (const [k, bytes] of this.db.iterate({ prefix: Uint8Array.of(TAG.utxo) })) {
      if (k.length !== 33) throw new AvmError('CorruptDatabase', 'a stored UTXO key is malformed');
      const id = Id.fromBytes(k.subarray(1));
      let utxo: Utxo;
      try {
        utxo = decodeUtxo(bytes);
      } catch (e) {
        throw new AvmError('CorruptDatabase', `stored UTXO ${id} is malformed: ${(e as Error).message}`);
      }
      for (const a of utxo.out.addresses) batch.put(ownedKey(a, id, utxo), EMPTY);
      utxos += 1;
      await flush();
    }
    await flush(true);
    // `o` is in (address, asset, kind) order: each pair's transfer amounts are summed as they pass.
    let pair: Uint8Array | undefined;
    let sum = 0n;
    const putSum = () => {
      if (pair && sum > 0n) batch.put(concatBytes(Uint8Array.of(TAG.worth), pair), encodeWorth(sum));
    };
    for await (const [k] of this.db.iterate({ prefix: Uint8Array.of(TAG.owned) })) {
      if (k.length !== OWNED_KEY_LENGTH || k[53] !== KIND_TRANSFER) continue;
      const p = k.subarray(1, 53);
      if (!pair || !bytesEqual(pair, p)) {
        putSum();
        await flush();
        pair = p.slice();
        sum = 0n;
      }
      sum += U64_MAX - new DataView(k.buffer, k.byteOffset, k.byteLength).getBigUint64(OWNED_ORDER_AT, false);
    }
    putSum();
    this.writeIndexed(upTo, batch);
    await flush(true);
    log.info('built the balance and UTXO indexes', { utxos, ms: Date.now() - started });
    return utxos;
  }

  /** The sum of the TransferOutputs of `assetId` that `address` is among the owners of (the `w` index). */
  async balance(address: ShortId, assetId: Id): Promise<bigint> {
    return this.#worth.get(address.key)?.get(assetId.key) ?? this.#readWorth(address, assetId);
  }

  async #readWorth(address: ShortId, assetId: Id): Promise<bigint> {
    const v = await this.db.get(worthKey(address, assetId));
    return v ? decodeWorth(v) : 0n;
  }

  #cacheWorth(address: ShortId, assetId: Id, amount: bigint): void {
    let ofOwner = this.#worth.get(address.key);
    if (ofOwner?.has(assetId.key)) {
      ofOwner.set(assetId.key, amount);
      return;
    }
    if (this.#worthSize >= WORTH_CACHE_SIZE) {
      this.#worth.clear();
      this.#worthSize = 0;
      ofOwner = undefined;
    }
    if (!ofOwner) this.#worth.set(address.key, (ofOwner = new Map()));
    ofOwner.set(assetId.key, amount);
    this.#worthSize += 1;
  }

  /** Each asset `address` holds (a balance above 0) and the balance, by asset ID; at most `limit`. */
  async balances(address: ShortId, limit: number): Promise<Array<{ assetId: Id; amount: bigint }>> {
    const prefix = new Uint8Array(21);
    prefix[0] = TAG.worth;
    address.copyTo(prefix, 1);
    const out: Array<{ assetId: Id; amount: bigint }> = [];
    for await (const [k, v] of this.db.iterate({ prefix, limit })) {
      if (k.length !== 53) throw new AvmError('CorruptDatabase', 'a stored balance key is malformed');
      out.push({ assetId: Id.fromBytes(k.subarray(21)), amount: decodeWorth(v) });
    }
    return out;
  }

  /**
   * The UTXOs of `assetId` and `kind` that any of `addresses` is among the owners of, largest amount
   * first (equal amounts, and mint outputs, in UTXO ID order), each once, read lazily: the caller
   * stops when it has enough, and only that much of each address's `o` entries is read.
   * Tests: 'the o and w indexes follow every accepted block …', 'the lock-out of issue 32 on the VM …' (indexes.test.ts).
   */
  async *byAmount(addresses: readonly ShortId[], assetId: Id, kind: OutputKind): AsyncGenerator<KeyedUtxo> {
    const cursors = addresses.map((a) => new OwnedCursor(this.db, ownedPrefix(a, assetId, kind)));
    const seen = new Set<string>();
    for (;;) {
      // Few addresses hold any one asset: a walk over the cursors per UTXO is cheaper than a heap.
      let best: OwnedCursor | undefined;
      let bestKey: Uint8Array | undefined;
      for (const c of cursors) {
        const k = await c.head();
        if (k && (!bestKey || ownedOrder(k, bestKey) < 0)) {
          best = c;
          bestKey = k;
        }
      }
      if (!best || !bestKey) return;
      best.next();
      const id = Id.fromBytes(bestKey.subarray(OWNED_UTXO_AT));
      if (seen.has(id.key)) continue;
      seen.add(id.key);
      const utxo = await this.utxo(id);
      // Spent since its entry was read (an accept in between): no longer there.
      if (utxo) yield { id, utxo };
    }
  }

  /**
   * A page of the UTXOs any of `addresses` (sorted, unique) is among the owners of, as avalanchego's
   * GetPaginatedUTXOs: addresses in order, each one's UTXOs in UTXO ID order (the `a` index), those
   * of `start.address` after `start.utxoId` and none of addresses before it; a UTXO of several of
   * the addresses once. At most `limit` UTXOs, and at most 2 × limit + 1024 index entries read (a
   * UTXO met again under another address is read and skipped): the page then ends early, and `end`
   * says where the next one starts.
   * Tests: 'the lock-out of issue 32 on the VM …' (indexes.test.ts); the service's paging: 'getUTXOs pages …' (service-spend.test.ts).
   */
  async utxoPage(addresses: readonly ShortId[], start: UtxoCursor | undefined, limit: number): Promise<KeyedUtxoPage> {
    const ids: Id[] = [];
    const seen = new Set<string>();
    const budget = 2 * limit + 1024;
    let read = 0;
    let end: UtxoCursor | undefined = start;
    let exhausted = true;
    walk: for (const address of addresses) {
      let from: Uint8Array | undefined;
      if (start) {
        const c = address.compare(start.address);
        if (c < 0) continue;
        if (c === 0) from = after(addressKey(address, start.utxoId));
      }
      end = { address, utxoId: from && start ? start.utxoId : Id.empty };
      const prefix = new Uint8Array(21);
      prefix[0] = TAG.address;
      address.copyTo(prefix, 1);
      for await (const [k] of this.db.iterate({ prefix, ...(from ? { gte: from } : {}) })) {
        if (read >= budget) {
          exhausted = false;
          break walk;
        }
        read += 1;
        const id = Id.fromBytes(k.subarray(21));
        end = { address, utxoId: id };
        if (seen.has(id.key)) continue;
        seen.add(id.key);
        ids.push(id);
        if (ids.length >= limit) {
          exhausted = false;
          break walk;
        }
      }
    }
    const utxos: KeyedUtxo[] = [];
    for (const id of ids) {
      const utxo = await this.utxo(id);
      if (utxo) utxos.push({ id, utxo });
    }
    return { utxos, end, exhausted };
  }

  /** Queues the writes that record txs as rejected (never accepted). */
  writeRejected(ids: readonly Id[], batch: WriteBatch): void {
    for (const id of ids) batch.put(txKey(id), Uint8Array.of(TX_REJECTED));
  }

  /** Queues a genesis alias. */
  writeAlias(alias: string, assetId: Id, batch: WriteBatch): void {
    batch.put(aliasKey(alias), assetId.bytes);
  }

  /** Applies an accepted diff whose writes are durable to the cache. */
  commit(diff: StateDiff): void {
    for (const key of diff.spent.keys()) this.#utxos.delete(key);
    for (const { id, utxo } of diff.created.values()) if (!diff.spent.has(id.key)) this.#cache(id, utxo);
    for (const w of this.#pendingWorth) this.#cacheWorth(w.address, w.assetId, w.now!);
    this.#pendingWorth = [];
  }

  #cache(id: Id, utxo: Utxo): void {
    if (this.#utxos.size >= UTXO_CACHE_SIZE) this.#utxos.clear();
    this.#utxos.set(id.key, utxo);
  }
}

function encodeAsset(a: AssetDescription): Uint8Array {
  return new Writer().str(a.name).str(a.symbol).u8(a.denomination).finish();
}

/**
 * What one block (or a set of pooled txs) changes, on top of its parent's state: the UTXOs it creates
 * and spends, the imported UTXOs it consumes and the txs it holds, in order.
 */
export class StateDiff implements StateReader {
  /** Every UTXO this diff creates (some may be spent again inside it). */
  readonly created = new Map<string, KeyedUtxo>();
  /** Every UTXO this diff spends (its parent's or its own). */
  readonly spent = new Map<string, KeyedUtxo>();
  /** Imported UTXOs (shared memory) this diff consumes. */
  readonly imported = new Map<string, Id>();
  readonly #txs = new Set<string>();
  /** The txs, in order. */
  readonly effects: TxEffect[] = [];

  constructor(private readonly parent: () => StateReader) {}

  async utxo(id: Id): Promise<Utxo | undefined> {
    if (this.spent.has(id.key)) return undefined;
    return this.created.get(id.key)?.utxo ?? this.parent().utxo(id);
  }

  async importAvailable(id: Id): Promise<boolean> {
    return !this.imported.has(id.key) && this.parent().importAvailable(id);
  }

  spentInFlight(id: Id): boolean {
    return this.spent.has(id.key) || this.parent().spentInFlight(id);
  }

  async hasTx(id: Id): Promise<boolean> {
    return this.#txs.has(id.key) || this.parent().hasTx(id);
  }

  producedInFlight(id: Id): Utxo | undefined {
    return this.created.get(id.key)?.utxo ?? this.parent().producedInFlight(id);
  }

  /** Records a tx whose rules were checked against this diff (rules.ts applyEffect). */
  record(effect: TxEffect): void {
    for (const s of effect.spends) this.spent.set(s.id.key, s);
    for (const p of effect.produced) this.created.set(p.id.key, p);
    for (const id of effect.imports) this.imported.set(id.key, id);
    this.#txs.add(effect.id.key);
    this.effects.push(effect);
  }
}

/** Bytes of each owner's index entries: `a` (53), `o` (94) and its `w` record (53-byte key, at most 9 bytes of sum). */
const PER_OWNER_BYTES = 53 + OWNED_KEY_LENGTH + 53 + 9;

/**
 * About how many bytes accepting `e` makes the chain's store hold (keys and values, before the
 * database's own overhead and compression): its signed bytes twice (the tx record and its block),
 * each UTXO it makes (record and, per owner, its `a`, `o` and `w` entries) and an asset's description.
 * What the free-tx budget counts (limits.ts). Test: 'storedBytes counts …' (limits.test.ts).
 */
export function storedBytes(e: TxEffect): number {
  let n = 33 + 1 + e.bytes.length + 4 + e.bytes.length;
  for (const { utxo } of e.produced) {
    const owners = utxo.out.addresses.length;
    n += 33 + 72 + (utxo.out.kind === 'transfer' ? 24 : 8) + 20 * owners + owners * PER_OWNER_BYTES;
  }
  if (e.asset) n += 33 + 2 + utf8Encode(e.asset.name).length + 2 + utf8Encode(e.asset.symbol).length + 1;
  return n;
}
