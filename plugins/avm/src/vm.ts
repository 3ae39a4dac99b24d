/**
 * The asset VM (X-Chain) on a linear chain: the reference's txs in our own Snowman
 * blocks (block.ts). Txs are checked once when issued (or first seen in a block) into a TxEffect
 * (rules.ts) and wait in the mempool until a block holding them is accepted; blocks are state diffs
 * on their parent's state (state.ts); accepting a block is one batch (state, block, tx statuses and
 * the shared memory of its imports and exports).
 *
 * Conflicts: two txs spending one UTXO may both be issued (both 'Processing'); a block never holds
 * both, and once one is accepted the other is 'Rejected' for good (with every pooled tx that spends
 * what it would have made).
 *
 * One piece (past 600 lines) because issuing, building, verifying, accepting and rejecting move the
 * same state together: the processing blocks and their diffs, the preferred branch and what it has
 * taken from the mempool, the cache of checked txs (TxEffects), the UTXOs processing blocks make,
 * and the tx decisions pubsub and the service are told of; the AvmBackend reads beside them answer
 * from that same state. What stands apart is in modules of its own: the syntax and the rules
 * (syntax.ts, rules.ts), storage (state.ts), the pool (mempool.ts), blocks (block.ts), gossip
 * (gossip.ts), byte formats (codec.ts), the service (service.ts).
 */
import {
  BlockMap,
  EventWaiter,
  type WaiterTimers,
  Id,
  NotFoundError,
  RateBudget,
  bytesEqual,
  sha256,
  prerecoverSigners,
  serializer,
  type ChainContext,
  type ChainHandler,
  type ChainVM,
  type KeyValueStore,
  type Logger,
  type ShortId,
  type VMEvent,
  type VMInit,
  type VMState,
} from '@cornice/sdk';
import { AvmBlock, BlockStore, MAX_BLOCK_BYTES, MAX_BLOCK_TXS, MIN_BLOCK_LENGTH, blockIdOf, decodeBlock, encodeBlock, type BlockHost } from './block.js';
import { decodeTx, decodeUtxo, encodeTx, encodeUtxo, producedUtxos, txIdOf, utxoId } from './codec.js';
import { AvmError } from './errors.js';
import { assetIdOf, decodeGenesis } from './genesis.js';
import { Mempool, DEFAULT_MEMPOOL_BYTES, DEFAULT_MEMPOOL_CAPACITY } from './mempool.js';
import type { AssetDescription, AvmBackend, GenesisAsset, OutputKind, Tx, TxStatus, Utxo, UtxoCursor, UtxoPage } from './model.js';
import { decodeGossip, encodeGossip } from './gossip.js';
import { pubsubHandler } from './pubsub.js';
import { avmService } from './service.js';
import { applyEffect, checkTx, signedHash, type RuleContext, type TxEffect, type UtxoSource } from './rules.js';
import { AcceptedState, StateDiff, storedBytes, type StateReader } from './state.js';
import { DEFAULT_FREE_TX_BYTES_PER_MINUTE, chargeFreeTx, isFreeTx, parseAvmConfig } from './limits.js';

/** The platform chain's ID: the peer of imports and exports. */
export const PLATFORM_CHAIN_ID = Id.empty;
/** How far ahead of local time a block's timestamp may be. */
export const MAX_FUTURE_SECONDS = 10;
/** Longest a waitForEvent sleeps before looking at the clock again when a pooled tx waits for its locktime. */
const MAX_LOCKTIME_WAKE_MS = 60_000;
/** Checked txs remembered for blocks that hold them (beyond the mempool). */
const EFFECT_CACHE_SIZE = 20_000;
/** IDs of txs accepted lately, remembered so that rejecting a competing block need not read their status. */
const RECENTLY_ACCEPTED_SIZE = 20_000;

export type TxDecision = 'accepted' | 'rejected';
export type TxDecidedListener = (txId: Id, status: TxDecision) => void;

export interface AssetVMOptions {
  /** Most pending txs (default 16,384). */
  mempoolCapacity?: number;
  /** Most bytes of pending txs (default 64 MiB). */
  mempoolBytes?: number;
  /** Most undecided blocks kept before the oldest never verified are dropped (default 4096). */
  maxProcessing?: number;
  /** The timer waitForEvent sleeps on until a pooled tx's locktime (default: real, unref'd timers); tests inject virtual ones. */
  timers?: Timers;
  /**
   * Most bytes free txs (those that create an asset or make UTXOs of assets other than the native
   * token) may make this node store a minute, as limits.ts counts them (default 4 MiB). The chain
   * config's `free-tx-bytes-per-minute` overrides it.
   */
  freeTxBytesPerMinute?: number;
}

/** The timers the VM sleeps on (the sdk's EventWaiter's). */
export type Timers = WaiterTimers;

const systemTimers: Timers = {
  setTimeout(fn, ms) {
    const t = setTimeout(fn, ms);
    t.unref?.();
    return { cancel: () => clearTimeout(t) };
  },
};

export class AssetVM implements ChainVM, AvmBackend {
  #ctx: ChainContext | undefined;
  #log!: Logger;
  #blocks!: BlockStore;
  #state!: AcceptedState;
  #lastAccepted!: AvmBlock;
  #preferred!: Id;
  /** Parsed or built, not decided: one object per ID (insertion order = age). */
  readonly #processing: BlockMap<AvmBlock>;
  readonly #mempool: Mempool;
  /** Txs in verified processing blocks: how many blocks hold each, and what it does. */
  readonly #inBlocks = new Map<string, { count: number; effect: TxEffect }>();
  /** Txs checked for blocks from other nodes, by ID key. */
  readonly #effects = new Map<string, TxEffect>();
  /**
   * Keys of txs accepted lately (cleared beyond RECENTLY_ACCEPTED_SIZE). A block rejected when its
   * sibling is accepted mostly holds the sibling's txs: this answers for them without one database
   * read each (a thousand sequential reads per rejected block held every issue back meanwhile).
   */
  readonly #recentlyAccepted = new Set<string>();
  /** Genesis aliases -> asset IDs. */
  #aliases = new Map<string, Id>();
  #native: AssetDescription | undefined;
  readonly #listeners = new Set<TxDecidedListener>();
  readonly #waiter: EventWaiter;
  /** issueTx, accept and reject one at a time: each sees the mempool and state the previous left. */
  readonly #exclusive = serializer();
  #shutDown = false;
  /** What #onPreferredBranch found, for the preferred block it found it for. */
  #branch: { preferred: string; txs: ReadonlySet<string> } | undefined;
  readonly #host: BlockHost;
  /** What free txs may still store (limits.ts); made at initialize, on the chain's clock. */
  #freeBudget!: RateBudget;

  constructor(private readonly opts: AssetVMOptions = {}) {
    this.#mempool = new Mempool(opts.mempoolCapacity ?? DEFAULT_MEMPOOL_CAPACITY, opts.mempoolBytes ?? DEFAULT_MEMPOOL_BYTES);
    // Past the limit, the oldest blocks never verified go (never the preferred one).
    this.#processing = new BlockMap({ max: opts.maxProcessing ?? 4096, keep: (b) => b.id.equals(this.#preferred) });
    // Asleep until a wake, or a pooled tx's locktime (looked at again at least once a minute).
    this.#waiter = new EventWaiter({ timers: opts.timers ?? systemTimers, now: () => this.#ctx!.clock.now(), maxSleepMs: MAX_LOCKTIME_WAKE_MS });
    this.#host = {
      verify: (b) => this.#verify(b),
      accept: (b) => this.#exclusive(() => this.#accept(b)),
      reject: (b) => this.#exclusive(() => this.#reject(b)),
    };
  }

  // ---------------------------------------------------------------- ChainVM

  async initialize(ctx: ChainContext, init: VMInit): Promise<void> {
    if (this.#shutDown) throw new AvmError('NotRunning', 'the asset VM is shut down');
    this.#log = ctx.log.child({ module: 'avm' });
    let freeTxBytesPerMinute = this.opts.freeTxBytesPerMinute ?? DEFAULT_FREE_TX_BYTES_PER_MINUTE;
    if (init.config) {
      const { options, ignored } = parseAvmConfig(init.config);
      if (ignored.length > 0) this.#log.warn('chain config keys this VM does not read were ignored', { keys: ignored.slice(0, 20).map((k) => k.slice(0, 64)).join(', ') });
      freeTxBytesPerMinute = options.freeTxBytesPerMinute ?? freeTxBytesPerMinute;
    }
    this.#freeBudget = new RateBudget(freeTxBytesPerMinute, ctx.clock.now());
    this.#blocks = new BlockStore(ctx.db);
    this.#state = new AcceptedState(ctx.db, async (id) => (await ctx.sharedMemory.get(PLATFORM_CHAIN_ID, [id.bytes]))[0]);
    const genesisHash = sha256(init.genesis);
    const stored = await this.#blocks.genesisHash();
    if (stored && !bytesEqual(stored, genesisHash)) {
      throw new AvmError('InvalidGenesis', 'the asset chain database was made from another genesis');
    }
    let assets: GenesisAsset[];
    try {
      assets = decodeGenesis(init.genesis);
    } catch (e) {
      throw new AvmError('InvalidGenesis', `asset chain genesis is malformed: ${(e as Error).message}`);
    }
    if (!(await this.#blocks.lastAccepted())) await this.#writeGenesis(ctx, assets, genesisHash);
    this.#aliases = await this.#state.aliases();
    this.#native = await this.#findNative(ctx, assets);
    const lastId = await this.#blocks.lastAccepted();
    const bytes = lastId && (await this.#blocks.get(lastId));
    if (!lastId || !bytes) throw new AvmError('CorruptDatabase', 'the last accepted block is missing from the database');
    this.#lastAccepted = new AvmBlock(this.#host, lastId, bytes, decodeBlock(bytes), 'accepted');
    this.#preferred = lastId;
    // A database of a version without the `o` and `w` indexes gets them now (state.ts ensureIndexes).
    await this.#state.ensureIndexes(lastId, this.#log);
    this.#ctx = ctx;
    this.#log.info('initialized', {
      lastAccepted: lastId.toString(),
      height: this.#lastAccepted.height,
      nativeAsset: this.#native?.assetId.toString(),
      freeTxBytesPerMinute,
    });
  }

  /** Writes the genesis block (height 0, time 0, the genesis CreateAssetTxs with no credentials) and its state. */
  async #writeGenesis(ctx: ChainContext, assets: GenesisAsset[], hash: Uint8Array): Promise<void> {
    const batch = ctx.db.batch();
    const diff = new StateDiff(() => this.#state);
    for (const a of assets) {
      const tx: Tx = { unsigned: a.tx, creds: [] };
      const id = assetIdOf(a.tx);
      const effect: TxEffect = {
        id,
        bytes: encodeTx(tx),
        tx,
        spends: [],
        imports: [],
        produced: producedUtxos(id, a.tx).map((utxo) => ({ id: utxoId(utxo), utxo })),
        exports: [],
        asset: { assetId: id, name: a.tx.name, symbol: a.tx.symbol, denomination: a.tx.denomination },
        locktime: 0n,
      };
      diff.record(effect);
      this.#state.writeAlias(a.alias, id, batch);
    }
    let bytes: Uint8Array;
    try {
      bytes = encodeBlock({ parentId: Id.empty, height: 0, timestamp: 0, txs: diff.effects.map((e) => e.bytes) });
    } catch (e) {
      throw new AvmError('InvalidGenesis', `asset chain genesis does not fit in a block: ${(e as Error).message}`);
    }
    await this.#state.write(diff, batch);
    this.#state.writeIndexed(blockIdOf(bytes), batch);
    this.#blocks.writeAccepted(batch, blockIdOf(bytes), 0, bytes);
    this.#blocks.setGenesisHash(batch, hash);
    await batch.write();
    this.#state.commit(diff);
  }

  /** The genesis asset that is the node's native token: by ID when the node knows it, else by alias or symbol. */
  async #findNative(ctx: ChainContext, assets: GenesisAsset[]): Promise<AssetDescription | undefined> {
    const { id, symbol } = ctx.nativeAsset;
    const match = assets.find((a) => id !== undefined && assetIdOf(a.tx).equals(id)) ?? assets.find((a) => a.alias === symbol || a.tx.symbol === symbol);
    return match && this.#describe(assetIdOf(match.tx));
  }

  async setState(_state: VMState): Promise<void> {
    this.#running();
  }

  async buildBlock(): Promise<AvmBlock> {
    this.#running();
    const parent = this.#live(this.#preferred);
    if (!parent) throw new AvmError('NothingToBuild', `the preferred block ${this.#preferred} is not verified`);
    const time = Math.max(this.#now(), parent.timestamp);
    const diff = new StateDiff(() => this.#stateAt(parent));
    const taken = this.#onPreferredBranch();
    let size = MIN_BLOCK_LENGTH;
    for (const e of this.#mempool.values()) {
      if (diff.effects.length >= MAX_BLOCK_TXS) break;
      if (taken.has(e.id.key) || size + 4 + e.bytes.length > MAX_BLOCK_BYTES) continue;
      try {
        await applyEffect(e, diff, BigInt(time));
        size += 4 + e.bytes.length;
      } catch {
        // Conflicts with the branch or this block, or waits for its locktime: stays pooled (see #accept).
      }
    }
    if (diff.effects.length === 0) throw new AvmError('NothingToBuild', 'nothing to build: no pending tx applies on the preferred block');
    const fields = { parentId: parent.id, height: parent.height + 1, timestamp: time, txs: diff.effects.map((e) => e.bytes) };
    const bytes = encodeBlock(fields);
    const id = blockIdOf(bytes);
    const known = this.#processing.get(id.key);
    if (known) return known;
    const block = new AvmBlock(this.#host, id, bytes, fields, 'processing');
    block.diff = diff;
    block.effects = diff.effects;
    block.txs = diff.effects.map((e) => e.tx);
    this.#processing.add(block);
    this.#log.debug('built block', { blockId: id.toString(), height: block.height, txs: block.effects.length });
    return block;
  }

  async parseBlock(bytes: Uint8Array): Promise<AvmBlock> {
    this.#running();
    const id = blockIdOf(bytes);
    const known = this.#inMemory(id) ?? (await this.#fromStore(id));
    if (known) return known;
    const fields = decodeBlock(bytes);
    // A tx this node holds already (its ID is the hash of the same bytes) is not decoded again.
    const ids = fields.txs.map(txIdOf);
    const txs = fields.txs.map((b, i) => {
      const held = this.#knownEffect(ids[i]!);
      if (held) return held.tx;
      try {
        return decodeTx(b);
      } catch (e) {
        throw new AvmError('Malformed', `tx ${i} of the block is malformed: ${(e as Error).message}`);
      }
    });
    const raced = this.#inMemory(id);
    if (raced) return raced;
    const block = new AvmBlock(this.#host, id, bytes.slice(), fields, 'processing');
    block.txs = txs;
    block.txIds = ids;
    this.#processing.add(block);
    return block;
  }

  async getBlock(id: Id): Promise<AvmBlock> {
    this.#running();
    const block = this.#inMemory(id) ?? (await this.#fromStore(id));
    if (!block) throw new NotFoundError(`block ${id} not found`);
    return block;
  }

  async setPreference(id: Id): Promise<void> {
    this.#running();
    this.#preferred = id;
    this.#branch = undefined;
    this.#wake();
  }

  async lastAccepted(): Promise<Id> {
    this.#running();
    return this.#lastAccepted.id;
  }

  async getBlockIdAtHeight(height: number): Promise<Id> {
    this.#running();
    const last = this.#lastAccepted.height;
    if (!Number.isSafeInteger(height) || height < 0 || height > last) {
      throw new NotFoundError(`no accepted block at height ${height} (last accepted height is ${last})`);
    }
    const id = await this.#blocks.idAtHeight(height);
    if (!id) throw new AvmError('CorruptDatabase', `accepted block at height ${height} is missing from the index`);
    return id;
  }

  /**
   * Resolves 'pendingTxs' once a pooled tx applies on the preferred block; until then it sleeps until
   * something is issued, decided or preferred, or a pooled tx's locktime comes. Rejects on abort or shutdown.
   */
  async waitForEvent(signal: AbortSignal): Promise<VMEvent> {
    return this.#waiter.wait(signal, () => this.#buildable(), () => this.#stillWaiting(signal));
  }

  #stillWaiting(signal: AbortSignal): void {
    if (this.#shutDown) throw new AvmError('NotRunning', 'the asset VM is shut down');
    if (signal.aborted) throw new AvmError('NotRunning', 'waiting for an event was aborted');
  }

  /** 'now' when a pooled tx applies on the preferred block; else the unix second a locktime lets one (undefined: no time helps). */
  async #buildable(): Promise<'now' | number | undefined> {
    if (!this.#ctx || this.#mempool.size === 0) return undefined;
    const preferred = this.#live(this.#preferred);
    if (!preferred) return undefined;
    const time = Math.max(this.#now(), preferred.timestamp);
    const taken = this.#onPreferredBranch();
    const base = this.#stateAt(preferred);
    let wakeAt: number | undefined;
    // The tx issued last is the likeliest to be buildable: try it before the rest.
    const last = this.#mempool.last();
    for (const e of last ? [last, ...this.#mempool.values()] : this.#mempool.values()) {
      if (taken.has(e.id.key)) continue;
      if (e.locktime > BigInt(time)) {
        const at = Number(e.locktime);
        wakeAt = wakeAt === undefined ? at : Math.min(wakeAt, at);
        continue;
      }
      try {
        await applyEffect(e, new StateDiff(() => base), BigInt(time));
        return 'now';
      } catch {
        // conflicts with the preferred branch: not buildable now
      }
    }
    return wakeAt;
  }

  #wake(): void {
    this.#waiter.wake();
  }

  /** The avm service at the chain's endpoint, and the pubsub WebSocket at `<endpoint>/pubsub` (fed by onTxDecided). */
  async createHandlers(): Promise<ChainHandler[]> {
    const ctx = this.#running();
    return [
      { path: '', services: [avmService(this, { nativeSymbol: ctx.nativeAsset.symbol, clock: ctx.clock })] },
      { path: 'pubsub', websocket: pubsubHandler(this) },
    ];
  }

  async shutdown(): Promise<void> {
    if (this.#shutDown) return;
    this.#shutDown = true;
    this.#wake();
    this.#processing.clear();
    this.#listeners.clear();
    this.#log?.info('shut down');
  }

  // ---------------------------------------------------------------- blocks

  async #verify(block: AvmBlock): Promise<void> {
    this.#running();
    if (block.status === 'accepted') return;
    if (block.status === 'rejected') throw new AvmError('InvalidBlock', `block ${block.id} was rejected`);
    if (block.verified) return;
    const parent = this.#live(block.parentId);
    if (!parent) {
      throw new AvmError('InvalidBlock', `parent ${block.parentId} of block ${block.id} is not the last accepted block nor a verified processing block`);
    }
    if (block.height !== parent.height + 1) {
      throw new AvmError('InvalidBlock', `block height ${block.height} is not its parent's height + 1 (${parent.height + 1})`);
    }
    if (block.timestamp < parent.timestamp) {
      throw new AvmError('InvalidBlock', `block timestamp ${block.timestamp} is before its parent's (${parent.timestamp})`);
    }
    const now = this.#now();
    if (block.timestamp > now + MAX_FUTURE_SECONDS) {
      throw new AvmError('InvalidBlock', `block timestamp ${block.timestamp} is more than ${MAX_FUTURE_SECONDS} s ahead of local time ${now}`);
    }
    if (block.txBytes.length === 0) throw new AvmError('InvalidBlock', 'a block needs at least one tx');
    // A block built here has its diff already, made on this parent, whose state has not changed since.
    if (!block.diff) {
      const diff = new StateDiff(() => this.#stateAt(parent));
      const time = BigInt(block.timestamp);
      const txs = block.txs ?? block.txBytes.map((b) => decodeTx(b));
      const ids = block.txIds ?? block.txBytes.map(txIdOf);
      // The signatures of txs not seen before, recovered together on the sdk's workers first.
      const unseen = txs.filter((_, i) => !this.#knownEffect(ids[i]!));
      await prerecoverSigners(unseen.flatMap((tx) => tx.creds.flatMap((c) => c.sigs.map((sig) => ({ hash: signedHash(tx), sig })))));
      for (let i = 0; i < txs.length; i++) {
        const bytes = block.txBytes[i]!;
        const id = ids[i]!;
        try {
          const e = this.#knownEffect(id) ?? (await checkTx(txs[i]!, bytes, id, this.#diffSource(diff), time, this.#rules()));
          await applyEffect(e, diff, time);
          this.#cacheEffect(e);
        } catch (err) {
          throw new AvmError('InvalidBlock', `tx ${i} (${id}) of block ${block.id} is invalid: ${(err as Error).message}`, (err as { data?: unknown }).data);
        }
      }
      block.diff = diff;
      block.effects = diff.effects;
    }
    block.verified = true;
    this.#branch = undefined;
    for (const e of block.effects!) {
      const held = this.#inBlocks.get(e.id.key);
      if (held) held.count += 1;
      else this.#inBlocks.set(e.id.key, { count: 1, effect: e });
    }
  }

  async #accept(block: AvmBlock): Promise<void> {
    const ctx = this.#running();
    if (block.status === 'accepted') return;
    if (block.status === 'rejected') throw new AvmError('InvalidBlock', `block ${block.id} was rejected; it cannot be accepted`);
    if (!block.parentId.equals(this.#lastAccepted.id)) {
      throw new AvmError('InvalidBlock', `block ${block.id} is not a child of the last accepted block ${this.#lastAccepted.id}`);
    }
    if (!block.verified) await this.#verify(block);
    const diff = block.diff!;
    const effects = block.effects!;
    const dead = this.#mempool.conflicts(effects);
    const batch = ctx.db.batch();
    this.#blocks.writeAccepted(batch, block.id, block.height, block.bytes);
    await this.#state.write(diff, batch);
    this.#state.writeIndexed(block.id, batch);
    this.#state.writeRejected(
      dead.map((e) => e.id),
      batch,
    );
    const put: Array<[Uint8Array, Uint8Array]> = [];
    const remove: Uint8Array[] = [];
    for (const e of effects) {
      for (const x of e.exports) put.push([x.id.bytes, encodeUtxo(x.utxo)]);
      for (const id of e.imports) remove.push(id.bytes);
    }
    if (put.length > 0 || remove.length > 0) ctx.sharedMemory.apply(PLATFORM_CHAIN_ID, { put, remove }, batch);
    await batch.write();
    this.#state.commit(diff);

    block.status = 'accepted';
    this.#branch = undefined;
    this.#lastAccepted = block;
    this.#processing.delete(block.id.key);
    block.diff = undefined;
    this.#forgetInBlocks(block);
    if (this.#recentlyAccepted.size + effects.length > RECENTLY_ACCEPTED_SIZE) this.#recentlyAccepted.clear();
    for (const e of effects) {
      this.#mempool.remove(e.id);
      this.#effects.delete(e.id.key);
      this.#recentlyAccepted.add(e.id.key);
    }
    for (const e of dead) this.#mempool.remove(e.id);
    // Unverified blocks at or below this height can never be accepted.
    for (const b of this.#processing) if (!b.verified && b.height <= block.height) this.#processing.delete(b.id);
    this.#log.debug('accepted block', { blockId: block.id.toString(), height: block.height, txs: effects.length, rejectedTxs: dead.length });
    for (const e of effects) this.#tell(e.id, 'accepted');
    for (const e of dead) this.#tell(e.id, 'rejected');
    this.#wake();
  }

  async #reject(block: AvmBlock): Promise<void> {
    const ctx = this.#running();
    if (block.status === 'rejected') return;
    if (block.status === 'accepted') throw new AvmError('InvalidBlock', `block ${block.id} was accepted; it cannot be rejected`);
    block.status = 'rejected';
    this.#branch = undefined;
    this.#processing.delete(block.id.key);
    if (block.verified) {
      this.#forgetInBlocks(block);
      // Its txs not held elsewhere go back to the mempool if they can still be accepted; the others are rejected.
      const dead: TxEffect[] = [];
      for (const e of block.effects!) {
        if (this.#mempool.has(e.id) || this.#inBlocks.has(e.id.key) || this.#recentlyAccepted.has(e.id.key) || (await this.#state.txStatus(e.id))) continue;
        if (await this.#stillPossible(e)) {
          try {
            this.#mempool.add(e);
          } catch {
            this.#log.info('dropping tx of a rejected block: the mempool is full', { txId: e.id.toString() });
          }
        } else dead.push(e);
      }
      const all = [...dead, ...this.#mempool.conflicts([], dead)];
      if (all.length > 0) {
        const batch = ctx.db.batch();
        this.#state.writeRejected(
          all.map((e) => e.id),
          batch,
        );
        await batch.write();
        for (const e of all) this.#mempool.remove(e.id);
        for (const e of all) this.#tell(e.id, 'rejected');
      }
    }
    block.diff = undefined;
    this.#log.debug('rejected block', { blockId: block.id.toString(), height: block.height });
    this.#wake();
  }

  /** Whether a tx can still be accepted some day: what it spends is unspent in the accepted state or made by a tx in flight. */
  async #stillPossible(e: TxEffect): Promise<boolean> {
    for (const s of e.spends) {
      if (this.#mempool.produced(s.id) || this.#producedInProcessing(s.id)) continue;
      if (!(await this.#state.utxo(s.id))) return false;
    }
    for (const id of e.imports) if (!(await this.#state.importAvailable(id))) return false;
    return true;
  }

  #producedInProcessing(id: Id): boolean {
    for (const b of this.#processing.values()) if (b.verified && b.diff?.created.has(id.key)) return true;
    return false;
  }

  #forgetInBlocks(block: AvmBlock): void {
    if (!block.verified) return;
    for (const e of block.effects ?? []) {
      const held = this.#inBlocks.get(e.id.key);
      if (held && --held.count === 0) this.#inBlocks.delete(e.id.key);
    }
  }

  /**
   * IDs of the txs in the processing blocks of the preferred branch (already in the preferred state).
   * Kept until the preference changes or a block is decided.
   */
  #onPreferredBranch(): ReadonlySet<string> {
    if (this.#branch?.preferred === this.#preferred.key) return this.#branch.txs;
    const txs = new Set<string>();
    for (let b = this.#processing.get(this.#preferred.key); b?.verified && b.status === 'processing'; b = this.#processing.get(b.parentId.key)) {
      for (const e of b.effects ?? []) txs.add(e.id.key);
    }
    this.#branch = { preferred: this.#preferred.key, txs };
    return txs;
  }

  /** The state after a verified block (the accepted state for the last accepted block). */
  #stateAt(block: AvmBlock): StateReader {
    if (block.status === 'accepted') return this.#state;
    if (!block.diff) throw new AvmError('InvalidBlock', `block ${block.id} is not verified`);
    return block.diff;
  }

  /** The last accepted block or a verified processing block. */
  #live(id: Id): AvmBlock | undefined {
    if (id.equals(this.#lastAccepted.id)) return this.#lastAccepted;
    const b = this.#processing.get(id.key);
    return b?.verified && b.status === 'processing' ? b : undefined;
  }

  #inMemory(id: Id): AvmBlock | undefined {
    return this.#processing.get(id.key) ?? (id.equals(this.#lastAccepted.id) ? this.#lastAccepted : undefined);
  }

  async #fromStore(id: Id): Promise<AvmBlock | undefined> {
    const bytes = await this.#blocks.get(id);
    return bytes && new AvmBlock(this.#host, id, bytes, decodeBlock(bytes), 'accepted');
  }

  /** A tx this node checked already: pooled, in a verified processing block, or checked for a block. */
  #knownEffect(id: Id): TxEffect | undefined {
    return this.#mempool.get(id) ?? this.#inBlocks.get(id.key)?.effect ?? this.#effects.get(id.key);
  }

  #cacheEffect(e: TxEffect): void {
    if (this.#effects.size >= EFFECT_CACHE_SIZE) this.#effects.clear();
    this.#effects.set(e.id.key, e);
  }

  // ---------------------------------------------------------------- rules' inputs

  #rules(): RuleContext {
    const ctx = this.#running();
    return {
      networkId: ctx.networkId,
      chainId: ctx.chainId,
      nativeAsset: this.#native && { id: this.#native.assetId, symbol: ctx.nativeAsset.symbol },
    };
  }

  /** A UTXO in shared memory from the platform chain (accepted state), decoded. */
  async #readImport(id: Id): Promise<Utxo | undefined> {
    const bytes = (await this.#running().sharedMemory.get(PLATFORM_CHAIN_ID, [id.bytes]))[0];
    if (!bytes) return undefined;
    try {
      return decodeUtxo(bytes);
    } catch (e) {
      throw new AvmError('InvalidTx', `imported utxo ${id} is malformed: ${(e as Error).message}`);
    }
  }

  /** What a tx in a block may spend: the state before it. */
  #diffSource(diff: StateDiff): UtxoSource {
    return {
      utxo: (id) => diff.utxo(id),
      spentInFlight: (id) => diff.spentInFlight(id),
      imported: async (id) => ((await diff.importAvailable(id)) ? this.#readImport(id) : undefined),
    };
  }

  /**
   * What an issued tx may spend: accepted UTXOs and those made by txs in flight (the preferred
   * branch and the mempool), spent in flight or not (a conflict is settled when one is accepted).
   */
  #issueSource(): UtxoSource {
    const preferred = this.#live(this.#preferred) ?? this.#lastAccepted;
    const branch = this.#stateAt(preferred);
    return {
      utxo: async (id) => this.#mempool.produced(id) ?? branch.producedInFlight(id) ?? this.#state.utxo(id),
      imported: (id) => this.#readImport(id),
    };
  }

  // ---------------------------------------------------------------- AvmBackend

  get networkId(): number {
    return this.#running().networkId;
  }

  get chainId(): Id {
    return this.#running().chainId;
  }

  get aliases(): readonly string[] {
    return this.#running().aliases;
  }

  get platformChainId(): Id {
    return PLATFORM_CHAIN_ID;
  }

  nativeAsset(): AssetDescription | undefined {
    this.#running();
    return this.#native;
  }

  async asset(idOrAlias: string): Promise<AssetDescription | undefined> {
    const ctx = this.#running();
    const aliased = this.#aliases.get(idOrAlias);
    if (aliased) return this.#describe(aliased);
    if (idOrAlias === 'NATIVE' || idOrAlias === ctx.nativeAsset.symbol) return this.#native;
    let id: Id;
    try {
      id = Id.fromString(idOrAlias);
    } catch {
      return undefined;
    }
    return this.#describe(id);
  }

  /** An accepted asset's description, with its genesis alias if it has one. */
  async #describe(id: Id): Promise<AssetDescription | undefined> {
    const a = await this.#state.asset(id);
    if (!a) return undefined;
    for (const [alias, aliased] of this.#aliases) if (aliased.equals(id)) return { ...a, alias };
    return a;
  }

  async utxos(addresses: readonly ShortId[], limit?: number): Promise<Utxo[]> {
    this.#running();
    const ids = await this.#state.utxoIds(addresses, limit);
    const out: Utxo[] = [];
    for (const id of ids) {
      const u = await this.#state.utxo(id);
      if (u) out.push(u);
    }
    return out;
  }

  async balance(address: ShortId, assetId: Id): Promise<bigint> {
    this.#running();
    return this.#state.balance(address, assetId);
  }

  async balances(address: ShortId, limit: number): Promise<Array<{ assetId: Id; amount: bigint }>> {
    this.#running();
    return this.#state.balances(address, limit);
  }

  async utxoPage(addresses: readonly ShortId[], start: UtxoCursor | undefined, limit: number): Promise<UtxoPage> {
    this.#running();
    const page = await this.#state.utxoPage(addresses, start, limit);
    return { ...page, utxos: page.utxos.map((k) => k.utxo) };
  }

  async *utxosByAmount(addresses: readonly ShortId[], assetId: Id, kind: OutputKind): AsyncIterable<Utxo> {
    this.#running();
    for await (const { utxo } of this.#state.byAmount(addresses, assetId, kind)) yield utxo;
  }

  async utxosById(ids: readonly Id[]): Promise<Array<Utxo | undefined>> {
    this.#running();
    const out: Array<Utxo | undefined> = [];
    for (const id of ids) out.push(await this.#state.utxo(id));
    return out;
  }

  async atomicUtxos(addresses: readonly ShortId[]): Promise<Utxo[]> {
    const ctx = this.#running();
    const native = this.#native;
    if (!native) return [];
    const wanted = new Set(addresses.map((a) => a.key));
    const out: Utxo[] = [];
    for await (const [key, bytes] of ctx.sharedMemory.list(PLATFORM_CHAIN_ID)) {
      let u: Utxo;
      try {
        u = decodeUtxo(bytes);
      } catch {
        this.#log.warn('skipping a malformed UTXO in shared memory', { utxoId: key.length === 32 ? Id.fromBytes(key).toString() : undefined });
        continue;
      }
      if (u.assetId.equals(native.assetId) && u.out.addresses.some((a) => wanted.has(a.key))) out.push(u);
    }
    return out;
  }

  /** Checks a tx and pools it for a block; a tx new to this node is gossiped to the chain's other nodes. */
  async issueTx(tx: Tx, bytes?: Uint8Array): Promise<Id> {
    const b = bytes ?? encodeTx(tx);
    const id = await this.#checkAndPool(tx, b);
    this.#gossipIfNew(id, b);
    return id;
  }

  /**
   * Txs another node gossiped (gossip.ts: several per message): each pooled like an issued one, not
   * gossiped again; one that fails its checks is skipped. Throws for a payload that does not decode.
   */
  async onGossip(_from: ShortId, payload: Uint8Array): Promise<void> {
    this.#running();
    const txs = decodeGossip(payload).map((bytes) => ({ bytes, tx: decodeTx(bytes) }));
    await Promise.all(txs.map(({ tx, bytes }) => this.#checkAndPool(tx, bytes).catch(() => undefined)));
  }

  #checkAndPool(tx: Tx, bytes: Uint8Array): Promise<Id> {
    // Signatures are recovered on a worker while earlier txs take their turn (rules.ts finds them).
    // The recoveries are awaited in issue order, so txs take their turns in the order they were
    // issued (a tx may spend what the one issued just before it makes), and no turn is held while a
    // worker recovers.
    const hash = signedHash(tx);
    const recovered = prerecoverSigners(tx.creds.flatMap((c) => c.sigs.map((sig) => ({ hash, sig }))));
    const ready = this.#recoveredInOrder.then(() => recovered);
    this.#recoveredInOrder = ready;
    return ready.then(() => this.#exclusive(() => this.#issue(tx, bytes)));
  }

  /** The recoveries of the txs issued so far, in issue order (see #checkAndPool). */
  #recoveredInOrder: Promise<void> = Promise.resolve();
  /** Txs this node gossiped, so that an issue repeated by a client is not sent again (bounded). */
  readonly #gossiped = new Set<string>();

  /** Txs to gossip at the end of this turn (one message for all of them). */
  #toGossip: Uint8Array[] = [];

  #gossipIfNew(id: Id, bytes: Uint8Array): void {
    if (this.#gossiped.has(id.key) || !this.#mempool.has(id)) return;
    if (this.#gossiped.size >= 10_000) this.#gossiped.clear();
    this.#gossiped.add(id.key);
    if (this.#toGossip.length === 0) setImmediate(() => this.#flushGossip());
    this.#toGossip.push(bytes);
  }

  #flushGossip(): void {
    const txs = this.#toGossip;
    this.#toGossip = [];
    if (this.#shutDown) return;
    try {
      for (const payload of encodeGossip(txs)) this.#ctx?.network.gossip(payload);
    } catch (e) {
      // Gossip is best effort: the txs are pooled here and reach the others in this node's blocks.
      this.#log.warn('could not gossip issued txs', { txs: txs.length, error: (e as Error).message });
    }
  }

  async #issue(tx: Tx, bytes: Uint8Array): Promise<Id> {
    this.#running();
    const id = txIdOf(bytes);
    if (this.#mempool.has(id) || this.#inBlocks.has(id.key)) return id;
    this.#mempool.checkRoom(bytes.length);
    const preferred = this.#live(this.#preferred) ?? this.#lastAccepted;
    const time = BigInt(Math.max(this.#now(), preferred.timestamp));
    let effect: TxEffect;
    try {
      effect = await checkTx(tx, bytes, id, this.#issueSource(), time, this.#rules());
    } catch (e) {
      // A tx already decided fails for its spent inputs: say what it is instead.
      const status = await this.#state.txStatus(id);
      if (status === 'Accepted') return id;
      if (status === 'Rejected') throw new AvmError('InvalidTx', 'transaction is rejected: a conflicting tx was accepted');
      throw e;
    }
    // Only a tx that spends nothing could pass again once accepted.
    if (effect.spends.length === 0 && effect.imports.length === 0 && (await this.#state.txStatus(id)) === 'Accepted') return id;
    // Last, so that only a tx that goes into the pool is charged (limits.ts).
    if (isFreeTx(effect, this.#native?.assetId)) chargeFreeTx(this.#freeBudget, storedBytes(effect), this.#running().clock.now(), this.#running().nativeAsset.symbol);
    this.#mempool.add(effect);
    this.#wake();
    return id;
  }

  async getTx(txId: Id): Promise<Uint8Array | undefined> {
    this.#running();
    const inFlight = this.#mempool.get(txId) ?? this.#inBlocks.get(txId.key)?.effect;
    if (inFlight) return inFlight.bytes.slice();
    return this.#state.txBytes(txId);
  }

  async txStatus(txId: Id): Promise<TxStatus> {
    this.#running();
    const stored = await this.#state.txStatus(txId);
    if (stored) return stored;
    if (this.#mempool.has(txId) || this.#inBlocks.has(txId.key)) return 'Processing';
    return 'Unknown';
  }

  openUser(username: string, password: string): Promise<KeyValueStore> {
    return this.#running().keystore.openUser(username, password);
  }

  /** Calls `listener` with each tx ID once it is accepted or rejected for good; the unsubscribe function. */
  onTxDecided(listener: TxDecidedListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #tell(id: Id, status: TxDecision): void {
    for (const l of [...this.#listeners]) {
      try {
        const r: unknown = l(id, status);
        if (r && typeof (r as Promise<unknown>).then === 'function') {
          (r as Promise<unknown>).then(undefined, (e: unknown) => this.#listenerFailed(e));
        }
      } catch (e) {
        this.#listenerFailed(e);
      }
    }
  }

  #listenerFailed(e: unknown): void {
    this.#log.warn('a tx decision listener failed', { error: (e as Error)?.message ?? String(e) });
  }

  // ---------------------------------------------------------------- internals

  #running(): ChainContext {
    if (this.#shutDown) throw new AvmError('NotRunning', 'the asset VM is shut down');
    if (!this.#ctx) throw new AvmError('NotRunning', 'the asset VM is not initialized');
    return this.#ctx;
  }

  #now(): number {
    return Math.floor(this.#running().clock.now() / 1000);
  }
}
