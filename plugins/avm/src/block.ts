/**
 * The asset chain's Snowman blocks (our own format; the txs inside are the reference's):
 *
 *   ParentID [32] ‖ Height u64 ‖ Timestamp u64 (unix s) ‖ u32 n ‖ n × (u32 length ‖ signed tx bytes)
 *
 * Block ID = SHA-256(bytes). Accepted blocks are kept by BlockStore:
 * `b ‖ blockID` -> block bytes, `h ‖ height u64` -> blockID, `l` -> last accepted blockID,
 * `g` -> SHA-256 of the genesis bytes the chain was made from.
 */
import { BlockBase, CodecError, Id, Reader, Writer, concatBytes, sha256, type Block, type BlockHost as SdkBlockHost, type BlockStatus, type KeyValueStore, type WriteBatch } from '@cornice/sdk';
import { AvmError } from './errors.js';
import type { StateDiff } from './state.js';
import type { Tx } from './model.js';
import type { TxEffect } from './rules.js';
import { TAG } from './state.js';

/** Most txs in one block. */
export const MAX_BLOCK_TXS = 1000;
/** Most bytes of one block (header and txs). */
export const MAX_BLOCK_BYTES = 1 << 20;
/** ParentID, height, timestamp, tx count. */
const HEADER_LENGTH = 32 + 8 + 8 + 4;

export interface BlockFields {
  parentId: Id;
  height: number;
  /** Unix seconds. */
  timestamp: number;
  /** The signed bytes of each tx, in order. */
  txs: Uint8Array[];
}

/** The bytes of a block; AvmError('InvalidBlock') past the limits. */
export function encodeBlock(f: BlockFields): Uint8Array {
  if (f.txs.length > MAX_BLOCK_TXS) throw new AvmError('InvalidBlock', `a block holds at most ${MAX_BLOCK_TXS} txs (got ${f.txs.length})`);
  try {
    const size = f.txs.reduce((n, tx) => n + 4 + tx.length, 32 + 8 + 8 + 4);
    const w = new Writer({ maxSize: MAX_BLOCK_BYTES, maxSliceLength: MAX_BLOCK_BYTES, initialSize: size });
    w.id(f.parentId).u64(f.height).u64(f.timestamp).u32(f.txs.length);
    for (const tx of f.txs) w.bytes(tx);
    return w.finish();
  } catch (e) {
    if (e instanceof CodecError) throw new AvmError('InvalidBlock', `block cannot be encoded: ${e.message}`);
    throw e;
  }
}

/** A block's fields from its bytes (txs not decoded); AvmError('Malformed') for anything else. */
export function decodeBlock(bytes: Uint8Array): BlockFields {
  try {
    const r = new Reader(bytes, { maxSize: MAX_BLOCK_BYTES, maxSliceLength: MAX_BLOCK_BYTES });
    const parentId = r.id();
    const height = r.u64();
    const timestamp = r.u64();
    if (height > BigInt(Number.MAX_SAFE_INTEGER) || timestamp > BigInt(Number.MAX_SAFE_INTEGER)) {
      throw new CodecError('Invalid', 'block height or timestamp out of range');
    }
    const n = r.u32();
    if (n > MAX_BLOCK_TXS) throw new CodecError('TooLarge', `a block holds at most ${MAX_BLOCK_TXS} txs (got ${n})`);
    const txs: Uint8Array[] = [];
    for (let i = 0; i < n; i++) txs.push(r.bytes());
    r.end();
    return { parentId, height: Number(height), timestamp: Number(timestamp), txs };
  } catch (e) {
    if (e instanceof CodecError) throw new AvmError('Malformed', `not an asset chain block: ${e.message}`, e.data);
    throw e;
  }
}

export function blockIdOf(bytes: Uint8Array): Id {
  return Id.fromBytes(sha256(bytes));
}

/** Smallest possible block (no txs). */
export const MIN_BLOCK_LENGTH = HEADER_LENGTH;

export type { BlockStatus } from '@cornice/sdk';

/** What a block asks of the VM that made it (the sdk's BlockHost). */
export type BlockHost = SdkBlockHost<AvmBlock>;

/** A block; its status and verify/accept/reject handed to the VM are the sdk's BlockBase. */
export class AvmBlock extends BlockBase<AvmBlock> implements Block {
  readonly parentId: Id;
  readonly height: number;
  readonly timestamp: number;
  /** Signed bytes of each tx. */
  readonly txBytes: readonly Uint8Array[];
  /** The state after this block, once verified (or built). */
  diff: StateDiff | undefined;
  /** What each tx does, in block order, once verified (or built). */
  effects: TxEffect[] | undefined;
  /** The decoded txs (processing blocks). */
  txs: Tx[] | undefined;
  /** The IDs of the txs, once computed (parsed blocks). */
  txIds: Id[] | undefined;

  constructor(
    host: BlockHost,
    readonly id: Id,
    readonly bytes: Uint8Array,
    fields: BlockFields,
    status: BlockStatus,
  ) {
    super(host, status);
    this.parentId = fields.parentId;
    this.height = fields.height;
    this.timestamp = fields.timestamp;
    this.txBytes = fields.txs;
  }
}

const heightKey = (h: number) => new Writer().u8(TAG.height).u64(h).finish();
const blockKey = (id: Id) => concatBytes(Uint8Array.of(TAG.block), id.bytes);
const LAST_ACCEPTED = Uint8Array.of(TAG.lastAccepted);
const GENESIS = Uint8Array.of(TAG.genesis);

function storedId(v: Uint8Array, what: string): Id {
  if (v.length !== 32) throw new AvmError('CorruptDatabase', `stored ${what} is malformed`);
  return Id.fromBytes(v);
}

/** Accepted blocks, the height index and the last accepted block in the chain's store. */
export class BlockStore {
  constructor(private readonly db: KeyValueStore) {}

  async lastAccepted(): Promise<Id | undefined> {
    const v = await this.db.get(LAST_ACCEPTED);
    return v && storedId(v, 'last accepted block ID');
  }

  async genesisHash(): Promise<Uint8Array | undefined> {
    return this.db.get(GENESIS);
  }

  setGenesisHash(batch: WriteBatch, hash: Uint8Array): void {
    batch.put(GENESIS, hash);
  }

  /** The bytes of an accepted block. */
  async get(id: Id): Promise<Uint8Array | undefined> {
    return this.db.get(blockKey(id));
  }

  async idAtHeight(height: number): Promise<Id | undefined> {
    const v = await this.db.get(heightKey(height));
    return v && storedId(v, `block ID at height ${height}`);
  }

  /** Queues the writes that make a block the last accepted one. */
  writeAccepted(batch: WriteBatch, id: Id, height: number, bytes: Uint8Array): void {
    batch.put(blockKey(id), bytes);
    batch.put(heightKey(height), id.bytes);
    batch.put(LAST_ACCEPTED, id.bytes);
  }
}
