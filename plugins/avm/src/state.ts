/**
 * Asset chain state: the accepted state (`AcceptedState`, in the chain's store, recently used UTXOs
 * cached) and `StateDiff`, what one processing block changes on top of its parent's state. A diff
 * finds its parent through a callback, so once the parent is accepted the diff reads the accepted
 * state, not a stale copy.
 *
 * Keys in the chain's store (one tag byte first):
 * - `u ‖ utxoID`             -> UTXO bytes (reference layout, codec.ts)
 * - `a ‖ address ‖ utxoID`   -> empty (which UTXOs an address owns, in UTXO ID order)
 * - `t ‖ txID`               -> status u8 (1 accepted, 2 rejected) ‖ signed tx bytes (accepted only)
 * - `s ‖ assetID`            -> name string ‖ symbol string ‖ denomination u8 (each CreateAssetTx)
 * - `n ‖ alias`              -> assetID (the genesis aliases)
 * Blocks are kept by block.ts's BlockStore (tags `b`, `h`, `l`, `g`).
 */
import {
  Id,
  Reader,
  ShortId,
  Writer,
  concatBytes,
  pooledBytes,
  utf8Encode,
  utf8Decode,
  type KeyValueStore,
  type WriteBatch,
} from '@cornice/sdk';
import { decodeUtxo, encodeUtxo } from './codec.js';
import { AvmError } from './errors.js';
import type { AssetDescription, Utxo } from './model.js';
import type { TxEffect } from './rules.js';

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
} as const;

const TX_ACCEPTED = 1;
const TX_REJECTED = 2;

/** A UTXO and its ID. */
export interface KeyedUtxo {
  id: Id;
  utxo: Utxo;
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
const assetKey = (id: Id) => tagged(TAG.asset, id);
const aliasKey = (alias: string) => concatBytes(Uint8Array.of(TAG.alias), utf8Encode(alias));

/** Most UTXOs the accepted state keeps decoded in memory. */
const UTXO_CACHE_SIZE = 100_000;

export type StoredTxStatus = 'Accepted' | 'Rejected';

/** The accepted state. `commit` updates its cache once an accepting batch is written. */
export class AcceptedState implements StateReader {
  readonly #utxos = new Map<string, Utxo>();

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

  /** Queues the writes of an accepted diff into `batch`. */
  write(diff: StateDiff, batch: WriteBatch): void {
    for (const { id, utxo } of diff.created.values()) {
      if (diff.spent.has(id.key)) continue;
      batch.put(utxoKey(id), encodeUtxo(utxo));
      for (const a of utxo.out.addresses) batch.put(addressKey(a, id), new Uint8Array(0));
    }
    for (const { id, utxo } of diff.spent.values()) {
      if (diff.created.has(id.key)) continue;
      batch.delete(utxoKey(id));
      for (const a of utxo.out.addresses) batch.delete(addressKey(a, id));
    }
    for (const e of diff.effects) {
      // Pooled: the store copies it (a new Uint8Array of over 64 bytes costs ~1.2 µs here).
      const record = pooledBytes(1 + e.bytes.length);
      record[0] = TX_ACCEPTED;
      record.set(e.bytes, 1);
      batch.put(txKey(e.id), record);
      if (e.asset) batch.put(assetKey(e.asset.assetId), encodeAsset(e.asset));
    }
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
