/**
 * Platform blocks as the engine sees them, and where accepted ones are kept. The VM does the
 * work (verify/accept/reject call back into it); a block carries what verify found: the state after
 * it (decision blocks) or the two outcomes of its proposal.
 *
 * Keys: `b ‖ blockID` -> height u64 ‖ timestamp u64 ‖ block bytes (accepted blocks);
 * `h ‖ height u64` -> blockID; `l` -> last accepted blockID; `g` -> SHA-256 of the genesis the chain
 * was made from.
 */
import { BlockBase, Id, Reader, Writer, concatBytes, type Block, type BlockHost as SdkBlockHost, type BlockStatus, type KeyValueStore, type WriteBatch } from '@cornice/sdk';
import type { ProposalOutcomes } from './executor.js';
import type { PlatformBlockFields } from './model.js';
import { PlatformError } from './errors.js';
import type { StateDiff } from './state.js';

export type { BlockStatus } from '@cornice/sdk';

/**
 * The height of a block whose parent is not known yet: above every real height, so the engine holds
 * the block and fetches its parent rather than dropping it. Known once the parent is verified.
 */
export const UNKNOWN_HEIGHT = Number.MAX_SAFE_INTEGER;

/** What a block asks of the VM that made it: its decisions (the sdk's BlockHost), and its parent's height. */
export interface BlockHost extends SdkBlockHost<PlatformBlock> {
  /** The height of a verified or last accepted block, if the host has it in memory. */
  heightOf(id: Id): number | undefined;
}

/** A platform block; its status and verify/accept/reject handed to the VM are the sdk's BlockBase. */
export class PlatformBlock extends BlockBase<PlatformBlock> implements Block {
  /** -1 while the parent is unknown (block bytes hold no height: it is the parent's + 1). */
  #height: number;
  /** Chain time after this block (unix seconds); known once verified. */
  timestamp = 0;
  /** Decision blocks (standard, atomic, commit, abort): the state after this block. */
  diff: StateDiff | undefined;
  /** Proposal blocks: the Commit and Abort states. */
  outcomes: ProposalOutcomes | undefined;

  constructor(
    private readonly host: BlockHost,
    readonly id: Id,
    readonly bytes: Uint8Array,
    readonly fields: PlatformBlockFields,
    height: number,
    status: BlockStatus,
  ) {
    super(host, status);
    this.#height = height;
  }

  get height(): number {
    if (this.#height < 0) {
      const parent = this.host.heightOf(this.parentId);
      if (parent !== undefined) this.#height = parent + 1;
    }
    return this.#height < 0 ? UNKNOWN_HEIGHT : this.#height;
  }

  set height(height: number) {
    this.#height = height;
  }

  get parentId(): Id {
    return this.fields.parentId;
  }

  get kind(): PlatformBlockFields['kind'] {
    return this.fields.kind;
  }

  /** Decision blocks may be parents of proposal, standard and atomic blocks. */
  get isDecision(): boolean {
    return this.fields.kind !== 'proposal';
  }

}

const BLOCK = 0x62; // b
const HEIGHT = 0x68; // h
const LAST_ACCEPTED = Uint8Array.of(0x6c); // l
const GENESIS = Uint8Array.of(0x67); // g

const heightKey = (h: number) => new Writer().u8(HEIGHT).u64(BigInt(h)).finish();
const blockKey = (id: Id) => concatBytes(Uint8Array.of(BLOCK), id.bytes);

/** Accepted blocks and the height index in the chain's store. */
export class BlockStore {
  constructor(private readonly db: KeyValueStore) {}

  async lastAccepted(): Promise<Id | undefined> {
    const v = await this.db.get(LAST_ACCEPTED);
    return v && Id.fromBytes(v);
  }

  async genesisHash(): Promise<Uint8Array | undefined> {
    return this.db.get(GENESIS);
  }

  setGenesisHash(batch: WriteBatch, hash: Uint8Array): void {
    batch.put(GENESIS, hash);
  }

  async get(id: Id): Promise<{ height: number; timestamp: number; bytes: Uint8Array } | undefined> {
    const v = await this.db.get(blockKey(id));
    if (!v) return undefined;
    if (v.length < 16) throw new PlatformError('CorruptDatabase', `stored block ${id} is malformed`);
    const r = new Reader(v.subarray(0, 16));
    const height = Number(r.u64());
    const timestamp = Number(r.u64());
    return { height, timestamp, bytes: v.slice(16) };
  }

  async idAtHeight(height: number): Promise<Id | undefined> {
    const v = await this.db.get(heightKey(height));
    return v && Id.fromBytes(v);
  }

  /** Queues the writes that make `block` the last accepted one (`timestamp`: chain time after it). */
  writeAccepted(batch: WriteBatch, id: Id, height: number, timestamp: number, bytes: Uint8Array): void {
    batch.put(blockKey(id), concatBytes(new Writer().u64(BigInt(height)).u64(BigInt(timestamp)).finish(), bytes));
    batch.put(heightKey(height), id.bytes);
    batch.put(LAST_ACCEPTED, id.bytes);
  }
}
