/**
 * The block bookkeeping every VM needs, once: a block's status and whether it verified, its
 * verify/accept/reject handed to the VM that made it (`BlockBase`), and the undecided blocks by ID
 * (`BlockMap`), so that `parseBlock`, `buildBlock` and `getBlock` hand the engine one object per ID.
 *
 * Why one object per ID: the engine parses a block each time a query, a Put or gossip carries it,
 * concurrently, and verifies one of the objects; a child's verify must then find its parent
 * verified, whichever object the engine verified (chainVMCompliance, "one block per ID").
 */
import type { Id } from '../ids/id.js';

/** Where a block stands. */
export type BlockStatus = 'processing' | 'accepted' | 'rejected';

/** The VM's side of a block: the engine's verify/accept/reject on `block` are the VM's work. */
export interface BlockHost<B> {
  verify(block: B): Promise<void>;
  accept(block: B): Promise<void>;
  reject(block: B): Promise<void>;
}

/**
 * A base for a VM's `Block` class: `status`, `verified`, and verify/accept/reject forwarded to the
 * host (the VM), which decides and updates them. The subclass adds `id`, `parentId`, `height`,
 * `timestamp` and `bytes` (and `implements Block`).
 *
 * ```ts
 * class MyBlock extends BlockBase<MyBlock> implements Block {
 *   constructor(host: BlockHost<MyBlock>, readonly id: Id, readonly bytes: Uint8Array, …) { super(host); }
 * }
 * ```
 */
export abstract class BlockBase<B extends BlockBase<B>> {
  /** 'processing' until the VM accepts or rejects it. */
  status: BlockStatus;
  /** True once verify() passed (always for accepted blocks). */
  verified: boolean;
  readonly #host: BlockHost<B>;

  protected constructor(host: BlockHost<B>, status: BlockStatus = 'processing') {
    this.#host = host;
    this.status = status;
    this.verified = status === 'accepted';
  }

  verify(): Promise<void> {
    return this.#host.verify(this as unknown as B);
  }

  accept(): Promise<void> {
    return this.#host.accept(this as unknown as B);
  }

  reject(): Promise<void> {
    return this.#host.reject(this as unknown as B);
  }
}

export interface BlockMapOptions<B> {
  /**
   * Most blocks held. Past it, `add` drops the oldest blocks that never verified (a peer can make
   * a node parse any number of blocks; verified ones await a decision and stay). Default: no bound.
   */
  max?: number;
  /** Blocks the bound never drops besides verified ones (the preferred block, say). */
  keep?: (block: B) => boolean;
}

/**
 * Blocks by ID, one object per ID: a VM's undecided blocks (or, for a VM that never forgets, all it
 * knows). Look-ups take an `Id` or its `key`. Iteration is in the order blocks were added.
 */
export class BlockMap<B extends { readonly id: Id; readonly verified?: boolean }> {
  readonly #blocks = new Map<string, B>();
  readonly #max: number;
  readonly #keep: ((block: B) => boolean) | undefined;

  constructor(options: BlockMapOptions<B> = {}) {
    this.#max = options.max ?? Infinity;
    this.#keep = options.keep;
  }

  get size(): number {
    return this.#blocks.size;
  }

  get(id: Id | string): B | undefined {
    return this.#blocks.get(typeof id === 'string' ? id : id.key);
  }

  has(id: Id | string): boolean {
    return this.#blocks.has(typeof id === 'string' ? id : id.key);
  }

  /**
   * The block already held under `block.id`, else `block`, now held (see `add`): what parseBlock
   * and buildBlock return.
   */
  intern(block: B): B {
    const known = this.#blocks.get(block.id.key);
    if (known) return known;
    this.add(block);
    return block;
  }

  /** Holds `block` (in place of another of its ID); past `max`, drops the oldest blocks that never verified. */
  add(block: B): void {
    this.#blocks.set(block.id.key, block);
    if (this.#blocks.size <= this.#max) return;
    for (const [key, b] of this.#blocks) {
      if (this.#blocks.size <= this.#max) break;
      if (!b.verified && b !== block && !this.#keep?.(b)) this.#blocks.delete(key);
    }
  }

  /**
   * For a VM that holds a parsed block only once it verified: holds `block` unless a verified block
   * of its ID is held already (the first one verified stays: the engine may have handed out either).
   * The block held.
   */
  addVerified(block: B): B {
    const known = this.#blocks.get(block.id.key);
    if (known?.verified) return known;
    this.#blocks.set(block.id.key, block);
    return block;
  }

  delete(id: Id | string): boolean {
    return this.#blocks.delete(typeof id === 'string' ? id : id.key);
  }

  clear(): void {
    this.#blocks.clear();
  }

  values(): IterableIterator<B> {
    return this.#blocks.values();
  }

  [Symbol.iterator](): IterableIterator<B> {
    return this.#blocks.values();
  }
}
