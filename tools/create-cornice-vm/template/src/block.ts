/**
 * Blocks: their bytes (the sdk's binary codec) and the Block object the engine drives. A block's ID
 * is the SHA-256 of its bytes, so parsing a block's bytes always gives the same ID. The sdk's
 * BlockBase keeps its status and hands verify/accept/reject to the VM.
 */
import { BlockBase, Id, Reader, Writer, sha256, type Block, type BlockHost, type BlockStatus } from '@cornice/sdk';
import { readTx, writeTx, type SetTx } from './tx.js';

export const MAX_TXS_PER_BLOCK = 64;

export interface BlockFields {
  parentId: Id;
  height: number;
  /** Unix seconds. */
  timestamp: number;
  txs: SetTx[];
}

export function encodeBlock(b: BlockFields): Uint8Array {
  return new Writer()
    .id(b.parentId)
    .u64(b.height)
    .u64(b.timestamp)
    .array(b.txs, writeTx)
    .finish();
}

/** Throws the sdk's CodecError (or VmError('InvalidTx')) on bytes that are not a block. */
export function decodeBlock(bytes: Uint8Array): BlockFields {
  const r = new Reader(bytes);
  const parentId = r.id();
  const height = Number(r.u64());
  const timestamp = Number(r.u64());
  // An empty key and value take 4 bytes: a count that cannot fit is refused before reading.
  const txs = r.array(readTx, { minItemSize: 4 });
  r.end();
  return { parentId, height, timestamp, txs };
}

/** A block; the VM (its BlockHost) decides, the block only forwards. */
export class VmBlock extends BlockBase<VmBlock> implements Block {
  readonly id: Id;

  constructor(
    host: BlockHost<VmBlock>,
    readonly bytes: Uint8Array,
    readonly fields: BlockFields,
    /** Built by this node (its txs came from our mempool), rather than parsed from a peer's bytes. */
    readonly builtHere = false,
    /** 'accepted' for the blocks read from the store. */
    status: BlockStatus = 'processing',
  ) {
    super(host, status);
    this.id = Id.fromBytes(sha256(bytes));
  }

  get parentId(): Id {
    return this.fields.parentId;
  }
  get height(): number {
    return this.fields.height;
  }
  get timestamp(): number {
    return this.fields.timestamp;
  }
  get txs(): readonly SetTx[] {
    return this.fields.txs;
  }
}
