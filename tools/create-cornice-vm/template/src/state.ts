/**
 * What the VM keeps in its chain's store (ctx.db, a prefix of the node's database that is this
 * chain's alone). Every key starts with one tag byte:
 *   b ‖ blockID      -> block bytes          (accepted blocks)
 *   h ‖ height (u64) -> blockID              (the height index)
 *   v ‖ key (UTF-8)  -> value ‖ height (u64) (the store: each key's value and the height that set it)
 *   l                -> blockID              (the last accepted block)
 * accept() writes all of a block's records in ONE batch: after a crash the store holds either the
 * old or the new last accepted block with all its effects, never half of one.
 */
import { Id, Reader, Writer, concatBytes, utf8Encode, type KeyValueStore } from '@cornice/sdk';
import { VmError } from './errors.js';
import type { BlockFields } from './block.js';

const BLOCK = Uint8Array.of(0x62); // 'b'
const HEIGHT = Uint8Array.of(0x68); // 'h'
const VALUE = Uint8Array.of(0x76); // 'v'
const LAST_ACCEPTED = Uint8Array.of(0x6c); // 'l'

const blockKey = (id: Id) => concatBytes(BLOCK, id.bytes);
const heightKey = (height: number) => concatBytes(HEIGHT, new Writer().u64(height).finish());
const valueKey = (key: string) => concatBytes(VALUE, utf8Encode(key));

export interface StoredValue {
  value: string;
  /** Height of the block that set it. */
  height: number;
}

export class State {
  constructor(private readonly db: KeyValueStore) {}

  getBlockBytes(id: Id): Promise<Uint8Array | undefined> {
    return this.db.get(blockKey(id));
  }

  async idAtHeight(height: number): Promise<Id | undefined> {
    const bytes = await this.db.get(heightKey(height));
    return bytes && readId(bytes, `block ID at height ${height}`);
  }

  async lastAccepted(): Promise<Id | undefined> {
    const bytes = await this.db.get(LAST_ACCEPTED);
    return bytes && readId(bytes, 'last accepted block ID');
  }

  async getValue(key: string): Promise<StoredValue | undefined> {
    const bytes = await this.db.get(valueKey(key));
    if (!bytes) return undefined;
    const r = new Reader(bytes);
    const stored = { value: r.str(), height: Number(r.u64()) };
    r.end();
    return stored;
  }

  /** The block, its height index, its txs' effects and the new tip, in one atomic batch. */
  async accept(id: Id, bytes: Uint8Array, fields: BlockFields): Promise<void> {
    const batch = this.db.batch().put(blockKey(id), bytes).put(heightKey(fields.height), id.bytes).put(LAST_ACCEPTED, id.bytes);
    for (const tx of fields.txs) batch.put(valueKey(tx.key), new Writer().str(tx.value).u64(fields.height).finish());
    await batch.write();
  }
}

function readId(bytes: Uint8Array, what: string): Id {
  if (bytes.length !== Id.LENGTH) throw new VmError('CorruptDatabase', `the stored ${what} is malformed`);
  return Id.fromBytes(bytes);
}
