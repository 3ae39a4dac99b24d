/**
 * Blocks: their bytes (the sdk's binary codec) and the Block object the engine drives. A block's ID
 * is the SHA-256 of its bytes, so parsing a block's bytes always gives the same ID.
 */
import { Id, Reader, Writer, sha256, type Block } from '@cornice/sdk';
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

/** What a block needs of its VM: the VM decides, the block only forwards. */
export interface BlockHost {
  verify(b: VmBlock): Promise<void>;
  accept(b: VmBlock): Promise<void>;
  reject(b: VmBlock): Promise<void>;
}

export class VmBlock implements Block {
  readonly id: Id;

  constructor(
    private readonly host: BlockHost,
    readonly bytes: Uint8Array,
    readonly fields: BlockFields,
    /** Built by this node (its txs came from our mempool), rather than parsed from a peer's bytes. */
    readonly builtHere = false,
  ) {
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

  verify(): Promise<void> {
    return this.host.verify(this);
  }
  accept(): Promise<void> {
    return this.host.accept(this);
  }
  reject(): Promise<void> {
    return this.host.reject(this);
  }
}
