/**
 * The timestamp VM, the reference node's `timestampvm`: a linear chain whose blocks each hold a 32-byte payload and the
 * time they were built. Payloads come from `timestamp.proposeBlock` into a bounded in-memory
 * mempool; the engine builds one block per payload on the preferred block.
 */
import {
  BlockMap,
  NotFoundError,
  RateBudget,
  type ChainContext,
  type ChainHandler,
  type ChainVM,
  type Id,
  type Logger,
  type VMEvent,
  type VMInit,
  type VMState,
} from '@cornice/sdk';
import { TimestampBlock, type BlockHost, type BlockStatus } from './block.js';
import { blockIdOf, decodeBlock, encodeBlock, genesisFields, type BlockFields } from './codec.js';
import { TimestampError } from './errors.js';
import { DEFAULT_MEMPOOL_CAPACITY, Mempool } from './mempool.js';
import { timestampService } from './service.js';
import { BlockStore } from './state.js';
import { DEFAULT_FREE_TXS_PER_MINUTE, chargeFreeTx, parseTimestampConfig } from './limits.js';

/** How far ahead of local time a block's timestamp may be: strictly less than now + 1 h. */
export const MAX_CLOCK_SKEW_SECONDS = 3600;

export interface TimestampVMOptions {
  /** Most pending payloads (default 4096). */
  mempoolCapacity?: number;
  /** Most undecided blocks kept in memory before the oldest unverified ones are dropped (default 8192). */
  maxProcessing?: number;
  /** Accepted blocks kept in memory (default 1024). */
  acceptedCacheSize?: number;
  /**
   * Most proposals (free txs: each becomes a stored block) this node takes a minute (default 6,000);
   * the chain config's `free-txs-per-minute` overrides it (limits.ts).
   */
  freeTxsPerMinute?: number;
}

interface Initialized {
  ctx: ChainContext;
  log: Logger;
  store: BlockStore;
  genesisId: Id;
  /** What proposals may still come in (limits.ts), on the chain's clock. */
  freeBudget: RateBudget;
}

export class TimestampVM implements ChainVM {
  readonly #mempool: Mempool;
  readonly #acceptedCacheSize: number;
  /** Parsed or built, not yet decided: one object per ID. Insertion order = age. */
  readonly #processing: BlockMap<TimestampBlock>;
  /** Recently accepted blocks by `id.key`, least recently used first. */
  readonly #accepted = new Map<string, TimestampBlock>();
  readonly #host: BlockHost;
  #init: Initialized | undefined;
  #lastAccepted: TimestampBlock | undefined;
  #preferred: Id | undefined;
  #state: VMState = 'bootstrapping';
  #shutDown = false;
  readonly #freeTxsPerMinute: number;

  constructor(opts: TimestampVMOptions = {}) {
    this.#freeTxsPerMinute = opts.freeTxsPerMinute ?? DEFAULT_FREE_TXS_PER_MINUTE;
    this.#mempool = new Mempool(opts.mempoolCapacity ?? DEFAULT_MEMPOOL_CAPACITY);
    // Past the limit, the oldest blocks that were never verified go (never the preferred one).
    this.#processing = new BlockMap({ max: opts.maxProcessing ?? 8192, keep: (b) => this.#preferred !== undefined && b.id.equals(this.#preferred) });
    this.#acceptedCacheSize = opts.acceptedCacheSize ?? 1024;
    this.#host = {
      knownHeight: (id) => this.#inMemory(id)?.heightIfKnown,
      verify: (b) => this.#verify(b),
      accept: (b) => this.#accept(b),
      reject: (b) => this.#reject(b),
    };
  }

  // ---------------------------------------------------------------- ChainVM

  async initialize(ctx: ChainContext, init: VMInit): Promise<void> {
    this.#checkOpen();
    const genesis = genesisFields(init.genesis);
    const genesisBytes = encodeBlock(genesis);
    const genesisId = blockIdOf(genesisBytes);
    const store = new BlockStore(ctx.db);
    const log = ctx.log.child({ module: 'timestamp' });
    let freeTxsPerMinute = this.#freeTxsPerMinute;
    if (init.config) {
      const { options, ignored } = parseTimestampConfig(init.config);
      if (ignored.length > 0) log.warn('chain config keys this VM does not read were ignored', { keys: ignored.slice(0, 20).map((k) => k.slice(0, 64)).join(', ') });
      freeTxsPerMinute = options.freeTxsPerMinute ?? freeTxsPerMinute;
    }

    let lastId = await store.lastAccepted();
    if (lastId === undefined) {
      await store.accept(genesisId, 0, genesisBytes);
      lastId = genesisId;
      log.info('genesis block written', { blockId: genesisId.toString() });
    } else {
      const atZero = await store.idAtHeight(0);
      if (atZero === undefined || !atZero.equals(genesisId)) {
        throw new TimestampError('GenesisMismatch', 'the chain database was created from a different genesis', {
          expected: genesisId.toString(),
          stored: atZero?.toString(),
        });
      }
    }
    const record = await store.getBlock(lastId);
    if (record === undefined || record.status !== 'accepted') {
      throw new TimestampError('CorruptDatabase', `last accepted block ${lastId} is missing from the database`);
    }
    this.#init = { ctx, log, store, genesisId, freeBudget: new RateBudget(freeTxsPerMinute, ctx.clock.now()) };
    const last = this.#make(lastId, record.bytes, decodeBlock(record.bytes), record.height, 'accepted');
    this.#lastAccepted = last;
    this.#cacheAccepted(last);
    this.#preferred = last.id;
    log.info('initialized', { lastAccepted: last.id.toString(), height: last.height, freeTxsPerMinute });
  }

  async setState(state: VMState): Promise<void> {
    this.#ready();
    this.#state = state;
  }

  /** 'bootstrapping' or 'normalOp', as the engine last set it. */
  get state(): VMState {
    return this.#state;
  }

  async buildBlock(): Promise<TimestampBlock> {
    this.#ready();
    const data = this.#mempool.peek();
    if (data === undefined) throw new TimestampError('MempoolEmpty', 'no pending data to build a block from');
    const parent = await this.getBlock(this.#preferred!);
    const now = Math.floor(this.#init!.ctx.clock.now() / 1000);
    const fields: BlockFields = { parentId: parent.id, data, timestamp: Math.max(now, parent.timestamp) };
    const bytes = encodeBlock(fields);
    this.#mempool.shift();
    const id = blockIdOf(bytes);
    const known = this.#processing.get(id);
    if (known) return known;
    const block = this.#make(id, bytes, fields, parent.height + 1, 'processing');
    this.#processing.add(block);
    this.#init!.log.debug('built block', { blockId: id.toString(), height: block.height });
    return block;
  }

  async parseBlock(bytes: Uint8Array): Promise<TimestampBlock> {
    this.#ready();
    const fields = decodeBlock(bytes);
    const copy = bytes.slice();
    const id = blockIdOf(copy);
    // Timestamps never decrease along the chain, so a block later than the last accepted one is not
    // accepted: no store read for it (each costs a round trip to the database's threads; while
    // bootstrapping, every fetched block is such a block).
    const mayBeAccepted = fields.timestamp <= this.#lastAccepted!.timestamp;
    const known = this.#inMemory(id) ?? (mayBeAccepted ? await this.#fromStore(id) : undefined);
    if (known) return known;
    let height: number | undefined;
    // Only a height already resolved: resolving here would walk every unresolved ancestor, at
    // every parse (quadratic while bootstrapping, where blocks come newest first).
    const parentHeight = this.#inMemory(fields.parentId)?.resolvedHeight;
    if (parentHeight !== undefined) height = parentHeight + 1;
    else {
      const parent = await this.#init!.store.getBlock(fields.parentId);
      if (parent) height = parent.height + 1;
    }
    // Another call may have added the same block meanwhile.
    const raced = this.#inMemory(id);
    if (raced) return raced;
    const block = this.#make(id, copy, fields, height, 'processing');
    this.#processing.add(block);
    return block;
  }

  async getBlock(id: Id): Promise<TimestampBlock> {
    this.#ready();
    const block = this.#inMemory(id) ?? (await this.#fromStore(id));
    if (!block) throw new NotFoundError(`block ${id} not found`);
    return block;
  }

  async setPreference(id: Id): Promise<void> {
    this.#ready();
    await this.getBlock(id);
    this.#preferred = id;
  }

  async lastAccepted(): Promise<Id> {
    this.#ready();
    return this.#lastAccepted!.id;
  }

  async getBlockIdAtHeight(height: number): Promise<Id> {
    this.#ready();
    const last = this.#lastAccepted!.height;
    if (!Number.isSafeInteger(height) || height < 0 || height > last) {
      throw new NotFoundError(`no accepted block at height ${height} (last accepted height is ${last})`);
    }
    const id = await this.#init!.store.idAtHeight(height);
    if (id === undefined) throw new TimestampError('CorruptDatabase', `accepted block at height ${height} is missing from the index`);
    return id;
  }

  async waitForEvent(signal: AbortSignal): Promise<VMEvent> {
    this.#checkOpen();
    await this.#mempool.waitForItems(signal);
    return 'pendingTxs';
  }

  async createHandlers(): Promise<ChainHandler[]> {
    this.#ready();
    return [{ path: '', services: [timestampService(this)] }];
  }

  async shutdown(): Promise<void> {
    if (this.#shutDown) return;
    this.#shutDown = true;
    this.#mempool.close(new TimestampError('ShutDown', 'the timestamp VM is shut down'));
    this.#processing.clear();
    this.#accepted.clear();
    this.#init?.log.info('shut down');
    // The chain's store belongs to the node, which closes it.
  }

  // ---------------------------------------------------------------- used by the service

  /**
   * Queues a 32-byte payload for a block; the engine hears 'pendingTxs'. At most `free-txs-per-minute`
   * are taken (a full mempool refuses without using any up): TimestampError('RateLimited') past it.
   * Test: 'proposeBlock past free-txs-per-minute …' (limits.test.ts).
   */
  proposeBlock(data: Uint8Array): void {
    this.#ready();
    if (data.length !== 32) throw new TimestampError('MalformedBlock', `block data must be 32 bytes (got ${data.length})`);
    if (!this.#mempool.full) chargeFreeTx(this.#init!.freeBudget, this.#init!.ctx.clock.now());
    this.#mempool.push(data);
  }

  /** Payloads waiting for a block. */
  get pendingCount(): number {
    return this.#mempool.size;
  }

  /** The ID of the genesis block (after initialize). */
  get genesisId(): Id {
    this.#ready();
    return this.#init!.genesisId;
  }

  // ---------------------------------------------------------------- block decisions

  async #verify(block: TimestampBlock): Promise<void> {
    this.#ready();
    if (block.status === 'accepted') return;
    if (block.status === 'rejected') throw new TimestampError('AlreadyDecided', `block ${block.id} was rejected`);
    let parent: TimestampBlock;
    try {
      parent = await this.getBlock(block.parentId);
    } catch (e) {
      if (e instanceof NotFoundError) {
        throw new TimestampError('UnknownParent', `parent ${block.parentId} of block ${block.id} is unknown`);
      }
      throw e;
    }
    if (block.timestamp < parent.timestamp) {
      throw new TimestampError('TimestampBeforeParent', "block's timestamp is earlier than its parent's timestamp", {
        timestamp: block.timestamp,
        parentTimestamp: parent.timestamp,
      });
    }
    const now = Math.floor(this.#init!.ctx.clock.now() / 1000);
    if (block.timestamp >= now + MAX_CLOCK_SKEW_SECONDS) {
      throw new TimestampError('TimestampTooFarAhead', "block's timestamp is more than 1 hour ahead of local time", {
        timestamp: block.timestamp,
        localTime: now,
      });
    }
    block.markVerified(parent.height + 1);
  }

  async #accept(block: TimestampBlock): Promise<void> {
    this.#ready();
    if (block.status === 'accepted') return;
    if (block.status === 'rejected') throw new TimestampError('AlreadyDecided', `block ${block.id} was rejected; it cannot be accepted`);
    const last = this.#lastAccepted!;
    if (!block.parentId.equals(last.id)) {
      throw new TimestampError('NotNextBlock', `block ${block.id} does not extend the last accepted block ${last.id}`, {
        parentId: block.parentId.toString(),
        lastAccepted: last.id.toString(),
      });
    }
    const height = last.height + 1;
    await this.#init!.store.accept(block.id, height, block.bytes);
    block.markDecided('accepted', height);
    this.#processing.delete(block.id);
    this.#lastAccepted = block;
    this.#cacheAccepted(block);
    this.#init!.log.debug('accepted block', { blockId: block.id.toString(), height });
  }

  async #reject(block: TimestampBlock): Promise<void> {
    this.#ready();
    if (block.status === 'rejected') return;
    if (block.status === 'accepted') throw new TimestampError('AlreadyDecided', `block ${block.id} was accepted; it cannot be rejected`);
    block.markDecided('rejected');
    this.#processing.delete(block.id);
    this.#init!.log.debug('rejected block', { blockId: block.id.toString() });
  }

  // ---------------------------------------------------------------- helpers

  #make(id: Id, bytes: Uint8Array, fields: BlockFields, height: number | undefined, status: BlockStatus): TimestampBlock {
    return new TimestampBlock(this.#host, id, bytes, fields, height, status);
  }

  #inMemory(id: Id): TimestampBlock | undefined {
    const processing = this.#processing.get(id);
    if (processing) return processing;
    const last = this.#lastAccepted;
    if (last?.id.equals(id)) return last;
    const accepted = this.#accepted.get(id.key);
    if (accepted) {
      // Refresh its place in the LRU order.
      this.#accepted.delete(id.key);
      this.#accepted.set(id.key, accepted);
    }
    return accepted;
  }

  async #fromStore(id: Id): Promise<TimestampBlock | undefined> {
    const record = await this.#init!.store.getBlock(id);
    if (record?.status !== 'accepted') return undefined;
    const cached = this.#accepted.get(id.key);
    if (cached) return cached;
    const block = this.#make(id, record.bytes, decodeBlock(record.bytes), record.height, 'accepted');
    this.#cacheAccepted(block);
    return block;
  }

  #cacheAccepted(block: TimestampBlock): void {
    this.#accepted.delete(block.id.key);
    this.#accepted.set(block.id.key, block);
    while (this.#accepted.size > this.#acceptedCacheSize) {
      this.#accepted.delete(this.#accepted.keys().next().value as string);
    }
  }

  #checkOpen(): void {
    if (this.#shutDown) throw new TimestampError('ShutDown', 'the timestamp VM is shut down');
  }

  #ready(): void {
    this.#checkOpen();
    if (!this.#init) throw new TimestampError('NotInitialized', 'the timestamp VM is not initialized');
  }
}
