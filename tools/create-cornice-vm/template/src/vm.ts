/**
 * The VM: a replicated key/value store. `issueTx` queues a SetTx in the mempool, waitForEvent tells
 * the engine, the engine asks for a block, and every node applies accepted blocks to its store.
 *
 * What the engine guarantees (see ChainVM and Block in @cornice/sdk): initialize() first and once;
 * buildBlock() only after waitForEvent() resolved; verify() before a block is voted on, once its
 * parent is verified or accepted; exactly one of accept()/reject() per verified block, accept() in
 * height order; every call bounded by --vm-call-timeout (a call that never settles halts the chain).
 * What it expects: the checks marked "contract" below (@cornice/core/testing's chainVMCompliance
 * checks them).
 */
import {
  BlockMap,
  NotFoundError,
  isNotFoundError,
  type BlockHost,
  type ChainContext,
  type ChainHandler,
  type ChainVM,
  type Id,
  type Logger,
  type VMEvent,
  type VMInit,
  type VMState,
} from '@cornice/sdk';
import { MAX_TXS_PER_BLOCK, VmBlock, decodeBlock, encodeBlock, type BlockFields } from './block.js';
import { VmError } from './errors.js';
import { parseGenesis } from './genesis.js';
import { Mempool } from './mempool.js';
import { vmService } from './service.js';
import { State } from './state.js';

/** A block's time may be at most this far ahead of the local clock. */
export const MAX_CLOCK_SKEW_SECONDS = 3600;

export class Vm implements ChainVM {
  readonly mempool = new Mempool();
  #ctx!: ChainContext;
  #log!: Logger;
  #state!: State;
  #last!: VmBlock;
  #preferred!: Id;
  /** Blocks parsed or built and not decided yet: one object per ID (contract). */
  readonly #processing = new BlockMap<VmBlock>();
  readonly #host: BlockHost<VmBlock> = {
    verify: (b) => this.#verify(b),
    accept: (b) => this.#accept(b),
    reject: (b) => this.#reject(b),
  };

  async initialize(ctx: ChainContext, init: VMInit): Promise<void> {
    this.#ctx = ctx;
    this.#log = ctx.log.child({ module: '__VM_NAME__' });
    this.#state = new State(ctx.db);
    const lastId = await this.#state.lastAccepted();
    if (lastId) {
      this.#last = await this.#load(lastId);
    } else {
      // A new chain: block 0 applies the genesis entries. Its parent is the chain ID, so that two
      // chains of this VM with the same genesis still have different blocks.
      const fields: BlockFields = { parentId: ctx.chainId, height: 0, timestamp: 0, txs: parseGenesis(init.genesis) };
      this.#last = new VmBlock(this.#host, encodeBlock(fields), fields, false, 'accepted');
      await this.#state.accept(this.#last.id, this.#last.bytes, fields);
      this.#log.info('genesis block written', { blockId: this.#last.id.toString(), keys: fields.txs.length });
    }
    this.#preferred = this.#last.id;
  }

  get state(): State {
    return this.#state;
  }

  tip(): { id: string; height: number } {
    return { id: this.#last.id.toString(), height: this.#last.height };
  }

  /** 'bootstrapping', then 'normalOp' before any block is built. This VM behaves the same in both. */
  async setState(_state: VMState): Promise<void> {}

  /** Contract: builds on the block last passed to setPreference. */
  async buildBlock(): Promise<VmBlock> {
    // The parent first: if that fails, no tx has left the mempool yet.
    const parent = await this.getBlock(this.#preferred);
    const txs = this.mempool.take(MAX_TXS_PER_BLOCK);
    if (txs.length === 0) throw new VmError('NothingToBuild', 'no pending txs to build a block from');
    const timestamp = Math.max(parent.timestamp, Math.floor(this.#ctx.clock.now() / 1000));
    const fields: BlockFields = { parentId: parent.id, height: parent.height + 1, timestamp, txs };
    return this.#processing.intern(new VmBlock(this.#host, encodeBlock(fields), fields, true));
  }

  /** Contract: the same bytes give the same block ID, and one object per ID. Throws on bytes that are not a block. */
  async parseBlock(bytes: Uint8Array): Promise<VmBlock> {
    const block = new VmBlock(this.#host, bytes.slice(), decodeBlock(bytes));
    const known = this.#processing.get(block.id);
    if (known) return known;
    if (block.id.equals(this.#last.id) || (await this.#state.getBlockBytes(block.id))) return block;
    return this.#processing.intern(block);
  }

  /** Contract: NotFoundError for a block this VM does not know. */
  async getBlock(id: Id): Promise<VmBlock> {
    return this.#processing.get(id) ?? (await this.#load(id));
  }

  async setPreference(id: Id): Promise<void> {
    this.#preferred = id;
  }

  async lastAccepted(): Promise<Id> {
    return this.#last.id;
  }

  /** Contract: NotFoundError above the last accepted height. */
  async getBlockIdAtHeight(height: number): Promise<Id> {
    const id = height <= this.#last.height ? await this.#state.idAtHeight(height) : undefined;
    if (!id) throw new NotFoundError(`no accepted block at height ${height}`);
    return id;
  }

  /** Contract: resolves when there is something to build; rejects promptly when `signal` aborts. */
  async waitForEvent(signal: AbortSignal): Promise<VMEvent> {
    await this.mempool.waitForTxs(signal);
    return 'pendingTxs';
  }

  async createHandlers(): Promise<ChainHandler[]> {
    return [{ path: '', services: [vmService(this)] }];
  }

  async shutdown(): Promise<void> {
    this.mempool.close();
  }

  // ---- block decisions (VmBlock forwards here)

  /**
   * Throws a VmError naming the broken rule. A block that fails verify is dropped by the engine:
   * neither accept() nor reject() will follow, so the VM forgets it here, and puts the txs of a
   * block it built itself back into the mempool (all SetTxs stay valid: a VM whose txs can become
   * invalid gives back only the valid ones, so the next build does not fail the same way).
   */
  async #verify(b: VmBlock): Promise<void> {
    try {
      await this.#check(b);
    } catch (e) {
      this.#processing.delete(b.id);
      if (b.builtHere) this.mempool.putBack(b.txs);
      throw e;
    }
    b.verified = true;
  }

  async #check(b: VmBlock): Promise<void> {
    let parent: VmBlock;
    try {
      parent = await this.getBlock(b.parentId);
    } catch (e) {
      if (isNotFoundError(e)) throw new VmError('InvalidBlock', `unknown parent ${b.parentId}`);
      throw e;
    }
    if (b.height !== parent.height + 1) throw new VmError('InvalidBlock', `height must be ${parent.height + 1}, got ${b.height}`);
    if (b.timestamp < parent.timestamp) throw new VmError('InvalidBlock', 'block time is before its parent');
    if (b.timestamp >= this.#ctx.clock.now() / 1000 + MAX_CLOCK_SKEW_SECONDS) throw new VmError('InvalidBlock', 'block time is an hour or more ahead');
    if (b.txs.length === 0 || b.txs.length > MAX_TXS_PER_BLOCK) throw new VmError('InvalidBlock', `a block holds 1 to ${MAX_TXS_PER_BLOCK} txs`);
    // Setting a key is idempotent, so this VM needs no replay check. A VM whose txs are not (a
    // transfer) must refuse here a tx already accepted or in one of the block's processing ancestors.
  }

  /** Contract: persists the block and its effects atomically before resolving. */
  async #accept(b: VmBlock): Promise<void> {
    await this.#state.accept(b.id, b.bytes, b.fields);
    b.status = 'accepted';
    this.#last = b;
    this.#processing.delete(b.id);
    // A peer's block may hold txs that were issued here too.
    this.mempool.remove(b.txs);
    // Blocks at or below the accepted height can never be accepted now: forget those never verified
    // (the engine rejects the verified ones).
    for (const other of this.#processing) if (other.height <= b.height) this.#processing.delete(other.id);
    this.#log.debug('block accepted', { blockId: b.id.toString(), height: b.height, txs: b.txs.length });
  }

  async #reject(b: VmBlock): Promise<void> {
    b.status = 'rejected';
    this.#processing.delete(b.id);
    if (b.builtHere) this.mempool.putBack(b.txs);
  }

  async #load(id: Id): Promise<VmBlock> {
    const bytes = await this.#state.getBlockBytes(id);
    if (!bytes) throw new NotFoundError(`block ${id} not found`);
    return new VmBlock(this.#host, bytes, decodeBlock(bytes), false, 'accepted');
  }
}
