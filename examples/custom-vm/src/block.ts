import { Id, Reader, Writer, sha256 } from '@cornice/sdk';

/** One write of the store. */
export interface Put {
  key: string;
  value: string;
}

/** A block: parent, height, time (unix seconds) and the writes it applies, in order. */
export interface KvBlockFields {
  parentId: Id;
  height: number;
  timestamp: number;
  puts: Put[];
}

export const MAX_PUTS_PER_BLOCK = 256;

export function encodeBlock(b: KvBlockFields): Uint8Array {
  return new Writer()
    .id(b.parentId)
    .u64(b.height)
    .u64(b.timestamp)
    .array(b.puts, (w, p) => w.str(p.key).str(p.value))
    .finish();
}

export function decodeBlock(bytes: Uint8Array): KvBlockFields {
  const r = new Reader(bytes);
  const parentId = r.id();
  const height = Number(r.u64());
  const timestamp = Number(r.u64());
  const puts = r.array((r2) => ({ key: r2.str(), value: r2.str() }), { minItemSize: 4 });
  r.end();
  return { parentId, height, timestamp, puts };
}

export const blockId = (bytes: Uint8Array): Id => Id.fromBytes(sha256(bytes));
