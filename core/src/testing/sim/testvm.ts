/**
 * An in-memory ChainVM for engine tests and simulations. A block is
 * `parentId[32] ‖ height u64 ‖ timestamp u64 ‖ flags u8 ‖ payload[16]` (big-endian) and its ID is
 * SHA-256 of those bytes. It builds only when told (`notify`), on the last preferred block, with a
 * random payload, so two nodes building at once make a fork. It checks the engine's side of the
 * contract (verify before accept/reject, accept in height order after the parent, one decision per
 * block) and records every breach in `violations` instead of throwing, so a test can assert none.
 */
import {
  BlockMap,
  Id,
  NodeError,
  NotFoundError,
  sha256,
  type Block,
  type ChainContext,
  type ChainHandler,
  type ChainVM,
  type VMEvent,
  type VMInit,
  type VMState,
} from '@cornice/sdk';

export type TestVMErrorCode = 'Malformed' | 'InvalidBlock' | 'UnknownParent' | 'Aborted';

export class TestVMError extends NodeError<TestVMErrorCode> {}

export const TEST_BLOCK_SIZE = 65;
const FLAG_INVALID = 1;

export type TestBlockStatus = 'processing' | 'verified' | 'accepted' | 'rejected';

export interface TestBlockFields {
  parentId: Id;
  height: number;
  timestamp: number;
  /** Blocks made with `invalid` fail verify. */
  invalid?: boolean;
  payload: Uint8Array;
}

export function encodeTestBlock(f: TestBlockFields): Uint8Array {
  const out = new Uint8Array(TEST_BLOCK_SIZE);
  const view = new DataView(out.buffer);
  f.parentId.copyTo(out, 0);
  view.setBigUint64(32, BigInt(f.height));
  view.setBigUint64(40, BigInt(f.timestamp));
  out[48] = f.invalid ? FLAG_INVALID : 0;
  out.set(f.payload.subarray(0, 16), 49);
  return out;
}

export function decodeTestBlock(bytes: Uint8Array): TestBlockFields {
  if (!(bytes instanceof Uint8Array) || bytes.length !== TEST_BLOCK_SIZE) {
    throw new TestVMError('Malformed', 'test block must be 65 bytes');
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const height = view.getBigUint64(32);
  const timestamp = view.getBigUint64(40);
  const flags = bytes[48] ?? 0;
  if (height > BigInt(Number.MAX_SAFE_INTEGER) || timestamp > BigInt(Number.MAX_SAFE_INTEGER) || (flags & ~FLAG_INVALID) !== 0) {
    throw new TestVMError('Malformed', 'test block fields out of range');
  }
  return {
    parentId: Id.fromBytes(bytes.subarray(0, 32)),
    height: Number(height),
    timestamp: Number(timestamp),
    invalid: flags === FLAG_INVALID,
    payload: bytes.slice(49, 65),
  };
}

/** The genesis block every TestVM starts from (height 0, parent Id.empty). */
export const TEST_GENESIS_BYTES: Uint8Array = encodeTestBlock({
  parentId: Id.empty,
  height: 0,
  timestamp: 0,
  payload: new Uint8Array(16),
});

export class TestBlock implements Block {
  readonly id: Id;
  readonly parentId: Id;
  readonly height: number;
  readonly timestamp: number;
  readonly invalid: boolean;
  status: TestBlockStatus = 'processing';
  verifyCalls = 0;

  constructor(
    private readonly vm: TestVM,
    readonly bytes: Uint8Array,
  ) {
    const f = decodeTestBlock(bytes);
    this.id = Id.fromBytes(sha256(bytes));
    this.parentId = f.parentId;
    this.height = f.height;
    this.timestamp = f.timestamp;
    this.invalid = f.invalid === true;
  }

  async verify(): Promise<void> {
    this.verifyCalls += 1;
    const parent = this.vm.blocks.get(this.parentId.key);
    if (this.status === 'accepted' || this.status === 'rejected') {
      this.vm.violation(`verify of decided block ${this.id} (${this.status})`);
    }
    if (!parent) throw new TestVMError('UnknownParent', 'parent block is unknown');
    if (parent.status !== 'verified' && parent.status !== 'accepted') {
      this.vm.violation(`verify of ${this.id} while its parent is ${parent.status}`);
      throw new TestVMError('InvalidBlock', 'parent is not verified');
    }
    if (this.height !== parent.height + 1) throw new TestVMError('InvalidBlock', 'height is not parent height + 1');
    if (this.invalid) throw new TestVMError('InvalidBlock', 'block is marked invalid');
    if (this.status === 'processing') this.status = 'verified';
  }

  async accept(): Promise<void> {
    this.vm.acceptCalls += 1;
    if (this.status !== 'verified') this.vm.violation(`accept of ${this.id} while ${this.status}`);
    const last = this.vm.lastAcceptedBlock;
    if (!this.parentId.equals(last.id)) {
      this.vm.violation(`accept of ${this.id} at height ${this.height} whose parent is not the last accepted (height ${last.height})`);
    }
    this.status = 'accepted';
    this.vm.acceptedChain.push(this);
  }

  async reject(): Promise<void> {
    this.vm.rejectCalls += 1;
    if (this.status !== 'verified') this.vm.violation(`reject of ${this.id} while ${this.status}`);
    this.status = 'rejected';
  }
}

export interface TestVMOptions {
  /** Payload randomness (Math.random by default; a seeded PRNG in simulations). */
  random?: () => number;
}

export class TestVM implements ChainVM {
  /** Every block it knows (it forgets none), one object per ID; look-ups by ID or its key. */
  readonly blocks = new BlockMap<TestBlock>();
  /** Accepted blocks by height (index 0 is genesis). */
  readonly acceptedChain: TestBlock[] = [];
  readonly violations: string[] = [];
  readonly states: VMState[] = [];
  readonly preferences: Id[] = [];
  acceptCalls = 0;
  rejectCalls = 0;
  buildCalls = 0;
  parseCalls = 0;
  readonly genesis: TestBlock;
  #preferred: TestBlock;
  #wantBuild = 0;
  #waiter: { resolve(e: VMEvent): void; reject(e: unknown): void; signal: AbortSignal; onAbort(): void } | undefined;
  readonly #random: () => number;
  /** Parsed blocks by the identity of their bytes (simulated messages share buffers; nothing mutates them). */
  readonly #byBytes = new WeakMap<Uint8Array, TestBlock>();

  constructor(opts: TestVMOptions = {}) {
    this.#random = opts.random ?? Math.random;
    this.genesis = new TestBlock(this, TEST_GENESIS_BYTES);
    this.genesis.status = 'accepted';
    this.blocks.add(this.genesis);
    this.acceptedChain.push(this.genesis);
    this.#preferred = this.genesis;
  }

  violation(text: string): void {
    this.violations.push(text);
  }

  get lastAcceptedBlock(): TestBlock {
    return this.acceptedChain[this.acceptedChain.length - 1] as TestBlock;
  }

  /** Asks the engine to build a block (resolves a pending waitForEvent, or the next one). */
  notify(): void {
    if (this.#waiter) {
      const w = this.#waiter;
      this.#waiter = undefined;
      w.signal.removeEventListener('abort', w.onAbort);
      w.resolve('pendingTxs');
    } else {
      this.#wantBuild += 1;
    }
  }

  /** True while the engine waits in waitForEvent. */
  get waiting(): boolean {
    return this.#waiter !== undefined;
  }

  /** A new block on `parent` (stored as parsed, not verified). */
  makeBlock(parent: Block, opts: { invalid?: boolean; payload?: Uint8Array } = {}): TestBlock {
    const payload = opts.payload ?? new Uint8Array(16).map(() => Math.floor(this.#random() * 256));
    const bytes = encodeTestBlock({
      parentId: parent.id,
      height: parent.height + 1,
      timestamp: parent.timestamp + 1,
      invalid: opts.invalid === true,
      payload,
    });
    return this.intern(bytes);
  }

  /** The block for `bytes` (the known object when it was seen before); throws TestVMError on malformed bytes. */
  intern(bytes: Uint8Array): TestBlock {
    const cached = this.#byBytes.get(bytes);
    if (cached) return cached;
    const b = this.#internNew(bytes);
    this.#byBytes.set(bytes, b);
    return b;
  }

  #internNew(bytes: Uint8Array): TestBlock {
    return this.blocks.intern(new TestBlock(this, bytes));
  }

  async initialize(_ctx: ChainContext, _init: VMInit): Promise<void> {}

  async setState(state: VMState): Promise<void> {
    this.states.push(state);
  }

  async buildBlock(): Promise<Block> {
    this.buildCalls += 1;
    let parent = this.#preferred;
    if (parent.status !== 'verified' && parent.status !== 'accepted') parent = this.lastAcceptedBlock;
    return this.makeBlock(parent);
  }

  async parseBlock(bytes: Uint8Array): Promise<Block> {
    this.parseCalls += 1;
    return this.intern(bytes);
  }

  async getBlock(id: Id): Promise<Block> {
    const b = this.blocks.get(id.key);
    if (!b) throw new NotFoundError('block not found');
    return b;
  }

  async setPreference(id: Id): Promise<void> {
    const b = this.blocks.get(id.key);
    if (!b) {
      this.violation(`setPreference to unknown block ${id}`);
      return;
    }
    this.preferences.push(id);
    this.#preferred = b;
  }

  get preferred(): TestBlock {
    return this.#preferred;
  }

  async lastAccepted(): Promise<Id> {
    return this.lastAcceptedBlock.id;
  }

  async getBlockIdAtHeight(height: number): Promise<Id> {
    const b = this.acceptedChain[height];
    if (!b) throw new NotFoundError('height not found');
    return b.id;
  }

  waitForEvent(signal: AbortSignal): Promise<VMEvent> {
    if (signal.aborted) return Promise.reject(new TestVMError('Aborted', 'aborted'));
    if (this.#wantBuild > 0) {
      this.#wantBuild -= 1;
      return Promise.resolve('pendingTxs');
    }
    if (this.#waiter) this.violation('concurrent waitForEvent calls');
    return new Promise<VMEvent>((resolve, reject) => {
      const onAbort = (): void => {
        this.#waiter = undefined;
        reject(new TestVMError('Aborted', 'aborted'));
      };
      this.#waiter = { resolve, reject, signal, onAbort };
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  async createHandlers(): Promise<ChainHandler[]> {
    return [];
  }

  async shutdown(): Promise<void> {}
}
