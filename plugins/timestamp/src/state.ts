/**
 * What the VM keeps in its chain's store (every key starts with one tag byte):
 * - `b ‖ blockID`  -> status u8 ‖ height u64 ‖ the 72 block bytes
 * - `h ‖ height u64` -> blockID (the accepted chain)
 * - `l`            -> blockID of the last accepted block
 * Accepting a block writes all three in one batch, so a crash leaves either the old or the new
 * last accepted block, never something in between.
 */
import { Id, type KeyValueStore } from '@cornice/sdk';
import { BLOCK_LENGTH } from './codec.js';
import type { BlockStatus } from './block.js';
import { TimestampError } from './errors.js';

const BLOCK_TAG = 0x62; // 'b'
const HEIGHT_TAG = 0x68; // 'h'
const LAST_ACCEPTED_KEY = Uint8Array.of(0x6c); // 'l'

// Status bytes as avalanchego's choices.Status: Processing 1, Rejected 2, Accepted 3.
const STATUS_BYTE: Record<BlockStatus, number> = { processing: 1, rejected: 2, accepted: 3 };
const STATUS_OF = new Map<number, BlockStatus>(Object.entries(STATUS_BYTE).map(([s, b]) => [b, s as BlockStatus]));

const RECORD_LENGTH = 1 + 8 + BLOCK_LENGTH;

export interface StoredBlock {
  status: BlockStatus;
  height: number;
  bytes: Uint8Array;
}

function blockKey(id: Id): Uint8Array {
  const k = new Uint8Array(33);
  k[0] = BLOCK_TAG;
  id.copyTo(k, 1);
  return k;
}

function heightKey(height: number): Uint8Array {
  const k = new Uint8Array(9);
  k[0] = HEIGHT_TAG;
  new DataView(k.buffer).setBigUint64(1, BigInt(height), false);
  return k;
}

function encodeRecord(r: StoredBlock): Uint8Array {
  const out = new Uint8Array(RECORD_LENGTH);
  out[0] = STATUS_BYTE[r.status];
  new DataView(out.buffer).setBigUint64(1, BigInt(r.height), false);
  out.set(r.bytes, 9);
  return out;
}

function decodeRecord(id: Id, v: Uint8Array): StoredBlock {
  const status = STATUS_OF.get(v[0] ?? 0);
  if (v.length !== RECORD_LENGTH || status === undefined) {
    throw new TimestampError('CorruptDatabase', `stored record of block ${id} is malformed`);
  }
  const height = new DataView(v.buffer, v.byteOffset, v.byteLength).getBigUint64(1, false);
  return { status, height: Number(height), bytes: v.slice(9) };
}

function decodeId(what: string, v: Uint8Array): Id {
  if (v.length !== Id.LENGTH) throw new TimestampError('CorruptDatabase', `stored ${what} is malformed`);
  return Id.fromBytes(v);
}

/** The VM's persistent state over the chain's store. */
export class BlockStore {
  constructor(readonly db: KeyValueStore) {}

  async getBlock(id: Id): Promise<StoredBlock | undefined> {
    const v = await this.db.get(blockKey(id));
    return v && decodeRecord(id, v);
  }

  async idAtHeight(height: number): Promise<Id | undefined> {
    const v = await this.db.get(heightKey(height));
    return v && decodeId(`block ID at height ${height}`, v);
  }

  async lastAccepted(): Promise<Id | undefined> {
    const v = await this.db.get(LAST_ACCEPTED_KEY);
    return v && decodeId('last accepted block ID', v);
  }

  /** Records `id` as accepted at `height` and as the last accepted block, in one atomic batch. */
  async accept(id: Id, height: number, bytes: Uint8Array): Promise<void> {
    await this.db
      .batch()
      .put(blockKey(id), encodeRecord({ status: 'accepted', height, bytes }))
      .put(heightKey(height), id.bytes)
      .put(LAST_ACCEPTED_KEY, id.bytes)
      .write();
  }
}
