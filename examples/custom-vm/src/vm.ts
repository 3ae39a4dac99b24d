/**
 * A replicated key/value store: `kv.put` queues writes, the engine builds blocks of them, and every
 * node applies accepted blocks to its store. Everything it needs comes from @cornice/sdk.
 *
 * Storage (ctx.db): b/<id> block bytes, h/<height> id, s/<key> value+height, 'last' last accepted.
 */
import {
  BlockBase,
  BlockMap,
  NodeError,
  NotFoundError,
  Reader,
  Writer,
  bindService,
  concatBytes,
  utf8Decode,
  utf8Encode,
  type Block,
  type BlockHost,
  type BlockStatus,
  type ChainContext,
  type ChainHandler,
  type ChainVM,
  type Id,
  type VMEvent,
  type VMInit,
} from '@cornice/sdk';
import { kvApi } from './api.js';
import { MAX_PUTS_PER_BLOCK, blockId, decodeBlock, encodeBlock, type KvBlockFields, type Put } from './block.js';

export class KvError extends NodeError<'QueueFull' | 'NothingToBuild' | 'BadParent' | 'BadHeight' | 'BadTime'> {}

const MAX_QUEUE = 10_000;
const k = {
  block: (id: Id) => concatBytes(utf8Encode('b/'), id.bytes),
  height: (h: number) => concatBytes(utf8Encode('h/'), new Writer().u64(h).finish()),
  value: (key: string) => utf8Encode(`s/${key}`),
  last: utf8Encode('last'),
};

/** The sdk's BlockBase hands verify/accept/reject to the VM (its BlockHost). */
class KvBlock extends BlockBase<KvBlock> implements Block {
  readonly id: Id;
  constructor(
    vm: BlockHost<KvBlock>,
    readonly bytes: Uint8Array,
    readonly fields: KvBlockFields,
    status?: BlockStatus,
  ) {
    super(vm, status);
    this.id = blockId(bytes);
  }
  get parentId() {
    return this.fields.parentId;
  }
  get height() {
    return this.fields.height;
  }
  get timestamp() {
    return this.fields.timestamp;
  }
}

export class KvVM implements ChainVM, BlockHost<KvBlock> {
  #ctx!: ChainContext;
  #last!: KvBlock;
  #preferred!: Id;
  /** Parsed or built, not decided: one object per ID. */
  readonly #undecided = new BlockMap<KvBlock>();
  readonly #queue: Put[] = [];
  #wake: (() => void) | undefined;

  async initialize(ctx: ChainContext, init: VMInit): Promise<void> {
    this.#ctx = ctx;
    const stored = await ctx.db.get(k.last);
    if (stored) {
      this.#last = await this.#load(new Reader(stored).id());
    } else {
      // Genesis: height 0, its writes are the genesis bytes as UTF-8 JSON {"key": "value"} (or none).
      const puts = init.genesis.length ? Object.entries(JSON.parse(utf8Decode(init.genesis)) as Record<string, string>).map(([key, value]) => ({ key, value })) : [];
      const fields = { parentId: ctx.chainId, height: 0, timestamp: 0, puts };
      this.#last = new KvBlock(this, encodeBlock(fields), fields, 'accepted');
      await this.#persist(this.#last);
    }
    this.#preferred = this.#last.id;
  }

  async setState(): Promise<void> {}

  async buildBlock(): Promise<Block> {
    if (this.#queue.length === 0) throw new KvError('NothingToBuild', 'no queued writes');
    const parent = await this.getBlock(this.#preferred);
    const timestamp = Math.max(parent.timestamp, Math.floor(this.#ctx.clock.now() / 1000));
    const fields = { parentId: parent.id, height: parent.height + 1, timestamp, puts: this.#queue.splice(0, MAX_PUTS_PER_BLOCK) };
    return this.#undecided.intern(new KvBlock(this, encodeBlock(fields), fields));
  }

  async parseBlock(bytes: Uint8Array): Promise<Block> {
    const block = new KvBlock(this, bytes.slice(), decodeBlock(bytes));
    const known = this.#undecided.get(block.id);
    if (known) return known;
    return (await this.#ctx.db.has(k.block(block.id))) ? block : this.#undecided.intern(block);
  }

  async getBlock(id: Id): Promise<KvBlock> {
    return this.#undecided.get(id) ?? this.#load(id);
  }

  async setPreference(id: Id): Promise<void> {
    this.#preferred = id;
  }

  async lastAccepted(): Promise<Id> {
    return this.#last.id;
  }

  async getBlockIdAtHeight(height: number): Promise<Id> {
    const bytes = height <= this.#last.height ? await this.#ctx.db.get(k.height(height)) : undefined;
    if (!bytes) throw new NotFoundError(`no accepted block at height ${height}`);
    return new Reader(bytes).id();
  }

  waitForEvent(signal: AbortSignal): Promise<VMEvent> {
    if (this.#queue.length > 0) return Promise.resolve('pendingTxs');
    return new Promise((resolve, reject) => {
      const onAbort = () => reject(signal.reason);
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      this.#wake = () => {
        signal.removeEventListener('abort', onAbort);
        resolve('pendingTxs');
      };
    });
  }

  async createHandlers(): Promise<ChainHandler[]> {
    const service = bindService(kvApi, {
      put: async ({ key, value }) => {
        if (this.#queue.length >= MAX_QUEUE) throw new KvError('QueueFull', `the write queue is full (${MAX_QUEUE})`);
        this.#queue.push({ key, value });
        this.#wake?.();
        this.#wake = undefined;
        return { success: true };
      },
      get: async ({ key }) => {
        const stored = await this.#ctx.db.get(k.value(key));
        if (!stored) throw new NotFoundError(`key "${key}" not found`);
        const r = new Reader(stored);
        return { key, value: r.str(), height: Number(r.u64()) };
      },
      status: async () => ({ lastAccepted: this.#last.id.toString(), height: this.#last.height, pending: this.#queue.length }),
    });
    return [{ path: '', services: [service] }];
  }

  async shutdown(): Promise<void> {}

  // ---- block callbacks

  async verify(b: KvBlock): Promise<void> {
    const parent = await this.getBlock(b.parentId).catch(() => undefined);
    if (!parent) throw new KvError('BadParent', `unknown parent ${b.parentId}`);
    if (b.height !== parent.height + 1) throw new KvError('BadHeight', `height must be ${parent.height + 1}`);
    if (b.timestamp < parent.timestamp) throw new KvError('BadTime', 'block time is before its parent');
    if (b.timestamp > this.#ctx.clock.now() / 1000 + 3600) throw new KvError('BadTime', 'block time is more than an hour ahead');
    b.verified = true;
  }

  async accept(b: KvBlock): Promise<void> {
    await this.#persist(b);
    b.status = 'accepted';
    this.#undecided.delete(b.id);
    this.#last = b;
  }

  async reject(b: KvBlock): Promise<void> {
    b.status = 'rejected';
    this.#undecided.delete(b.id);
  }

  /** One atomic batch: the block, its height, its writes and the new tip. */
  async #persist(b: KvBlock): Promise<void> {
    const batch = this.#ctx.db.batch().put(k.block(b.id), b.bytes).put(k.height(b.height), b.id.bytes).put(k.last, b.id.bytes);
    for (const p of b.fields.puts) batch.put(k.value(p.key), new Writer().str(p.value).u64(b.height).finish());
    await batch.write();
  }

  async #load(id: Id): Promise<KvBlock> {
    const bytes = await this.#ctx.db.get(k.block(id));
    if (!bytes) throw new NotFoundError(`block ${id} not found`);
    return new KvBlock(this, bytes, decodeBlock(bytes), 'accepted');
  }
}
