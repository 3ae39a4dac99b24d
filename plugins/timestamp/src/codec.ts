/**
 * The timestamp VM's block format, the reference node's: `ParentID [32] ‖ Data [32] ‖ Timestamp int64`
 * (unix seconds, big-endian) — 72 bytes, no type ID, no codec version. Block ID = SHA-256(bytes).
 * The height is not in the bytes: the VM derives it from the parent (genesis height 0).
 */
import { Id, sha256 } from '@cornice/sdk';
import { TimestampError } from './errors.js';

/** Size of a block's payload. */
export const DATA_LENGTH = 32;
/** Size of an encoded block. */
export const BLOCK_LENGTH = 32 + DATA_LENGTH + 8;

export interface BlockFields {
  parentId: Id;
  /** Exactly 32 bytes. */
  data: Uint8Array;
  /** Unix seconds; a safe integer (the wire type is int64). */
  timestamp: number;
}

/** The 72 bytes of a block. TimestampError('MalformedBlock') on a wrong data length or timestamp. */
export function encodeBlock(fields: BlockFields): Uint8Array {
  if (fields.data.length !== DATA_LENGTH) {
    throw new TimestampError('MalformedBlock', `block data must be ${DATA_LENGTH} bytes (got ${fields.data.length})`);
  }
  if (!Number.isSafeInteger(fields.timestamp)) {
    throw new TimestampError('MalformedBlock', `block timestamp must be an integer number of seconds (got ${fields.timestamp})`);
  }
  const out = new Uint8Array(BLOCK_LENGTH);
  fields.parentId.copyTo(out, 0);
  out.set(fields.data, 32);
  new DataView(out.buffer).setBigInt64(32 + DATA_LENGTH, BigInt(fields.timestamp), false);
  return out;
}

/**
 * The fields of 72 block bytes. TimestampError('MalformedBlock') on another length, or on a
 * timestamp outside ±(2^53 − 1) s (such a block could never pass verify anyway).
 */
export function decodeBlock(bytes: Uint8Array): BlockFields {
  if (!(bytes instanceof Uint8Array) || bytes.length !== BLOCK_LENGTH) {
    const got = bytes instanceof Uint8Array ? `${bytes.length} bytes` : typeof bytes;
    throw new TimestampError('MalformedBlock', `a timestamp block is ${BLOCK_LENGTH} bytes (got ${got})`);
  }
  const raw = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getBigInt64(32 + DATA_LENGTH, false);
  if (raw > BigInt(Number.MAX_SAFE_INTEGER) || raw < BigInt(Number.MIN_SAFE_INTEGER)) {
    throw new TimestampError('MalformedBlock', `block timestamp ${raw} is out of range`);
  }
  return {
    parentId: Id.fromBytes(bytes.subarray(0, 32)),
    data: bytes.slice(32, 32 + DATA_LENGTH),
    timestamp: Number(raw),
  };
}

/** A block's ID: SHA-256 of its bytes. */
export function blockIdOf(bytes: Uint8Array): Id {
  return Id.fromBytes(sha256(bytes));
}

/**
 * The genesis block's fields: `genesisData` (at most 32 bytes) zero-padded into Data, parent
 * Id.empty, timestamp 0. TimestampError('InvalidGenesis') with the reference's text when longer.
 */
export function genesisFields(genesisData: Uint8Array): BlockFields {
  if (!(genesisData instanceof Uint8Array) || genesisData.length > DATA_LENGTH) {
    throw new TimestampError('InvalidGenesis', 'genesis data should be bytes (max length 32)', {
      length: genesisData instanceof Uint8Array ? genesisData.length : undefined,
    });
  }
  const data = new Uint8Array(DATA_LENGTH);
  data.set(genesisData);
  return { parentId: Id.empty, data, timestamp: 0 };
}
