/**
 * State reads and eth_call without copying a VM per call: one long-lived VM
 * whose state manager follows the accepted root; each call runs inside a checkpoint that is
 * reverted, one at a time (a serializer), so no call sees another's writes. Reads at an older block
 * use a fresh state manager at that block's root (no caches; rare).
 */
import { serializer } from '@cornice/sdk';
import type { Common } from '@ethereumjs/common';
import { createMPT, type MerklePatriciaTrie } from '@ethereumjs/mpt';
import { RLP } from '@ethereumjs/rlp';
import { Caches, type MerkleStateManager } from '@ethereumjs/statemanager';
import { type Account, type Address, bytesToHex, equalsBytes } from '@ethereumjs/util';
import type { VM } from '@ethereumjs/vm';
import { accountOf, encoded, FastAccountStateManager } from './state/accounts.js';
import { CallGuard } from './call-guard.js';
import { makeVM, stateManagerAt, type BlockHashLookup, type ExecutionHooks } from './executor.js';
import { OverlayDB } from './state/overlay-db.js';
import type { StateDB } from './state/state-db.js';

/** Most accounts plus slots memoized per root before the memo starts over. */
const MEMO_MAX = 200_000;

/**
 * A state manager that remembers what it read from the trie at its root. Each eth_call runs in a
 * checkpoint it reverts, and a revert also drops what the caches learnt by reading, so without this
 * every call walks the trie again (and a storage trie has no node cache). Valid because this state
 * manager never commits: its root only changes through setStateRoot, which clears the accounts (a
 * slot is keyed by its account's storage root, so slots stay valid across roots).
 */
class ReaderStateManager extends FastAccountStateManager {
  #accounts = new Map<string, Uint8Array | null>();
  readonly #slots = new Map<string, Uint8Array | null>();

  /** Checkpoints open: 0 once a use left the state as it found it. */
  get checkpointDepth(): number {
    return this._checkpointCount;
  }

  #remember(map: Map<string, Uint8Array | null>, k: string, v: Uint8Array | null): void {
    if (this.#accounts.size + this.#slots.size >= MEMO_MAX) {
      this.#accounts.clear();
      this.#slots.clear();
    }
    map.set(k, v);
  }

  override async getAccount(address: Address): Promise<Account | undefined> {
    const elem = this._caches?.account?.get(address);
    if (elem !== undefined) return elem.accountRLP !== undefined ? accountOf(elem.accountRLP) : undefined;
    const k = bytesToHex(address.bytes);
    let rlp = this.#accounts.get(k);
    if (rlp === undefined) {
      rlp = await this._trie.get(address.bytes);
      this.#remember(this.#accounts, k, rlp);
    }
    // The cache takes the encoding as it is (a put of an Account would encode it again).
    this._caches?.account?.put(address, rlp !== null ? encoded(rlp) : undefined);
    return rlp !== null ? accountOf(rlp) : undefined;
  }

  override async getStorage(address: Address, key: Uint8Array): Promise<Uint8Array> {
    if (key.length !== 32) return super.getStorage(address, key);
    const cached = this._caches?.storage?.get(address, key);
    if (cached !== undefined) return RLP.decode(cached ?? new Uint8Array(0)) as Uint8Array;
    const account = await this.getAccount(address);
    if (!account) return new Uint8Array();
    const k = `${bytesToHex(address.bytes)}${bytesToHex(account.storageRoot)}${bytesToHex(key)}`;
    let value = this.#slots.get(k);
    if (value === undefined) {
      value = await this._getStorageTrie(address, account).get(key);
      this.#remember(this.#slots, k, value);
    }
    this._caches?.storage?.put(address, key, value ?? Uint8Array.of(0x80));
    return RLP.decode(value ?? new Uint8Array(0)) as Uint8Array;
  }

  /**
   * Forgets, instead of writing to the trie, what the caches hold as changed. This state manager
   * only reads (writes happen inside checkpoints that are reverted), but @ethereumjs' caches count
   * an account or slot read outside a checkpoint as changed, so the stock flush, run by each
   * setStateRoot, wrote every account read since the last root back into the trie: work on the
   * first admission after each block, and trie nodes queued for the next accept's write. Test:
   * reader.test.ts "reads through the state reader write nothing".
   */
  override async flush(): Promise<void> {
    this._caches?.code?.flush();
    this._caches?.storage?.flush();
    this._caches?.account?.flush();
  }

  /**
   * A new root: the accounts read are stale, but a slot's value is keyed by its account's storage
   * root, which fixes it, so the slots stay (a slot read on every admission — the subnet-EVM's tx
   * allow list — would otherwise walk the storage trie again after each accepted block).
   */
  override async setStateRoot(stateRoot: Uint8Array, clearCache = true): Promise<void> {
    await super.setStateRoot(stateRoot, clearCache);
    this.#accounts.clear();
  }

  /**
   * Moves to `root`, a state reached from the current one by blocks that wrote `steps` (each
   * block's accounts, in order: Execution.accounts): the accounts read stay, updated with what
   * the blocks wrote, since no other account differs. Without it, every sender's first admission
   * after each accepted block walked the trie again.
   */
  async advance(root: Uint8Array, steps: ReadonlyArray<ReadonlyMap<string, Uint8Array | null>>): Promise<void> {
    // setStateRoot without its check that the trie holds `root` (a node read on the first admission
    // after each block): `root` is an accepted block's, written with it.
    await this.flush();
    this._trie.root(root);
    this._caches?.clear();
    this._storageTries = {};
    for (const accounts of steps) for (const [address, rlp] of accounts) this.#accounts.set(`0x${address}`, rlp);
    if (this.#accounts.size + this.#slots.size >= MEMO_MAX) {
      this.#accounts.clear();
      this.#slots.clear();
    }
  }
}

/** An accepted block's move of the accepted state: from its parent's root, writing `accounts`. */
export interface AcceptedStep {
  readonly from: Uint8Array;
  readonly accounts: ReadonlyMap<string, Uint8Array | null>;
}

/** Accepted blocks' steps kept for a live view to catch up with (more: it starts over). */
const MAX_STEPS = 64;

export interface StateView {
  readonly sm: MerkleStateManager;
  readonly vm: VM;
  /** The time bound of a call on `vm` (call-guard.ts). */
  readonly guard: CallGuard;
}

/**
 * A VM at the accepted root whose uses run one at a time (a serializer), following the accepted root
 * at its next use: through the accepted blocks' steps from where it is when they lead there (what
 * it read stays), else afresh.
 */
class LiveView {
  readonly queue = serializer();
  current: Uint8Array | undefined;
  /** Uses running or waiting. */
  load = 0;
  /** The accepted blocks' steps since the view last moved, in order. */
  steps: Array<AcceptedStep & { to: Uint8Array }> = [];

  constructor(readonly view: { sm: ReaderStateManager; vm: VM; guard: CallGuard }) {}

  static async create(common: Common, db: StateDB, hooks: ExecutionHooks, blockHash: BlockHashLookup): Promise<LiveView> {
    const trie = await createMPT({ db: db.shallowCopy(), useKeyHashing: true, common, valueEncoding: 'view', cacheSize: hooks.trieCacheSize ?? 50_000 });
    const sm = new ReaderStateManager({ common, trie, caches: new Caches() });
    const guard = new CallGuard();
    const vm = await makeVM(common, sm, hooks, blockHash, guard);
    return new LiveView({ sm, vm, guard });
  }

  step(root: Uint8Array, step: AcceptedStep | undefined): void {
    if (!step || this.steps.length >= MAX_STEPS) this.steps = [];
    if (step) this.steps.push({ ...step, to: root });
  }

  async run<T>(root: Uint8Array, fn: (view: StateView) => Promise<T>): Promise<T> {
    this.load++;
    try {
      return await this.queue(async () => {
        if (!this.current || !equalsBytes(this.current, root)) await this.#move(root);
        return fn(this.view);
      });
    } finally {
      this.load--;
    }
  }

  /**
   * Moves the view to `root`: through the steps from where it is when they lead there (the steps
   * after `root` kept for a later move: a trace view follows the parents of the blocks traced,
   * a block behind the accepted root), else afresh.
   */
  async #move(root: Uint8Array): Promise<void> {
    const steps = this.steps;
    this.steps = [];
    let at = this.current;
    const path: Array<ReadonlyMap<string, Uint8Array | null>> = [];
    let used = 0;
    for (const s of steps) {
      if (at && equalsBytes(at, root)) break;
      used++;
      if (!at || !equalsBytes(s.from, at)) continue;
      path.push(s.accounts);
      at = s.to;
    }
    if (path.length > 0 && at && equalsBytes(at, root)) {
      await this.view.sm.advance(root, path);
      this.steps = steps.slice(used);
    } else await this.view.sm.setStateRoot(root);
    this.current = root;
  }
}

/** Default number of VMs eth_call and eth_estimateGas run on at the accepted state, apart from reads. */
export const DEFAULT_CALL_VIEWS = 3;

/** Default number of VMs traces replay on (debug_trace*; the trace lane runs two at once). */
export const DEFAULT_TRACE_VIEWS = 2;

/** A trace VM: made at first use, and again after a trace left it unfit; its traces run one at a time. */
interface TraceSlot {
  load: number;
  view: Promise<LiveView> | undefined;
  readonly queue: ReturnType<typeof serializer>;
}

/** A call VM: made at first use; `load` counts the calls given to it (running or waiting). */
interface CallSlot {
  load: number;
  readonly view: Promise<LiveView>;
}

export class StateReader {
  #accepted: Uint8Array | undefined;
  readonly #slots: CallSlot[] = [];
  readonly #traceSlots: TraceSlot[] = [];
  /** Every live view: each follows the accepted root. */
  readonly #made: LiveView[] = [];

  private constructor(
    private readonly common: Common,
    private readonly db: StateDB,
    private readonly hooks: ExecutionHooks,
    private readonly blockHash: BlockHashLookup,
    /** State reads, admission and the chain rules' reads: never behind an eth_call. */
    private readonly live: LiveView,
    private readonly callViews: number,
  ) {
    this.#made.push(live);
  }

  /**
   * `callViews`: VMs for eth_call / eth_estimateGas at the accepted state (at most that many calls
   * run at once; the JSON-RPC front end's call lane runs no more than that). Reads and admission
   * have their own VM: before, a looping eth_call (up to rpcEvmTimeoutMs) held every eth_getBalance,
   * tx admission and block build behind it (test: reader.test.ts "reads are not queued behind calls").
   */
  static async create(common: Common, db: StateDB, hooks: ExecutionHooks, blockHash: BlockHashLookup, callViews = DEFAULT_CALL_VIEWS): Promise<StateReader> {
    const live = await LiveView.create(common, db, hooks, blockHash);
    return new StateReader(common, db, hooks, blockHash, live, Math.max(1, callViews));
  }

  /**
   * The accepted state moved (by an accepted block's `step`, when known): the live views follow at
   * their next use, keeping what they read when the steps from their root are known.
   */
  setAcceptedRoot(root: Uint8Array, step?: AcceptedStep): void {
    this.#accepted = root;
    for (const v of this.#made) v.step(root, step);
  }

  /**
   * Runs `fn` on the state at `root`, alone. `fn` must leave the state as it found it (reads, or
   * writes inside a checkpoint it reverts). For reads: EVM calls go to `call`.
   */
  at<T>(root: Uint8Array, fn: (view: StateView) => Promise<T>): Promise<T> {
    if (this.#accepted && equalsBytes(root, this.#accepted)) return this.live.run(root, fn);
    return this.#historical(root, fn);
  }

  /**
   * Runs `fn` (an eth_call or eth_estimateGas: EVM code) alone on a call VM at `root`: at the
   * accepted state, the least loaded of at most `callViews` VMs (a new one while all are busy and
   * fewer exist); at another root, a VM of its own.
   */
  async call<T>(root: Uint8Array, fn: (view: StateView) => Promise<T>): Promise<T> {
    if (!this.#accepted || !equalsBytes(root, this.#accepted)) return this.#historical(root, fn);
    let slot: CallSlot | undefined;
    for (const s of this.#slots) if (!slot || s.load < slot.load) slot = s;
    if ((!slot || slot.load > 0) && this.#slots.length < this.callViews) {
      const made: CallSlot = {
        load: 0,
        view: LiveView.create(this.common, this.db, this.hooks, this.blockHash).then((v) => {
          this.#made.push(v);
          return v;
        }),
      };
      made.view.catch(() => this.#slots.splice(this.#slots.indexOf(made), 1));
      this.#slots.push(made);
      slot = made;
    }
    slot!.load++;
    try {
      return await (await slot!.view).run(root, fn);
    } finally {
      slot!.load--;
    }
  }

  /**
   * Runs `fn` (a trace's replay: debug_trace*) alone on a trace VM moved to `root`, any root: the
   * least loaded of at most DEFAULT_TRACE_VIEWS, kept from one trace to the next with its Common,
   * opcode tables and what it read. Making a VM per trace was most of the cost of tracing an ERC-20
   * transfer (bench/trace.mjs). `fn` must leave the state as it found it (its writes inside a journal
   * checkpoint it reverts). A view left otherwise, or by a throw (@ethereumjs leaves the checkpoints of
   * the frames an error escapes open), is dropped: the next trace gets a new one.
   * Test: reader.test.ts "trace views".
   */
  async trace<T>(root: Uint8Array, fn: (view: StateView) => Promise<T>): Promise<T> {
    let slot: TraceSlot | undefined;
    for (const s of this.#traceSlots) if (!slot || s.load < slot.load) slot = s;
    if ((!slot || slot.load > 0) && this.#traceSlots.length < DEFAULT_TRACE_VIEWS) {
      slot = { load: 0, view: undefined, queue: serializer() };
      this.#traceSlots.push(slot);
    }
    const s = slot!;
    s.load++;
    try {
      return await s.queue(async () => {
        const made = (s.view ??= LiveView.create(this.common, this.db, this.hooks, this.blockHash).then((v) => (this.#made.push(v), v)));
        let view: LiveView;
        try {
          view = await made;
        } catch (e) {
          s.view = undefined;
          throw e;
        }
        let fit = false;
        try {
          const out = await view.run(root, fn);
          fit = view.view.sm.checkpointDepth === 0;
          return out;
        } finally {
          if (!fit) {
            s.view = undefined;
            this.#made.splice(this.#made.indexOf(view), 1);
          }
        }
      });
    } finally {
      s.load--;
    }
  }

  /**
   * Runs `fn` on the state manager at `root`, for reads only (`fn` must not write): the accepted
   * state's live view, or for another root a state manager with no VM, kept for the next read at
   * the same root. The chain rules read the preferred block's state this way on every build and
   * admission; through `at` each such read made a VM, hundreds of them in one run of the
   * subnet-EVM's pipelined transfers (bench/evm.mjs). Test: reader.test.ts "readState".
   */
  readState<T>(root: Uint8Array, fn: (sm: MerkleStateManager) => Promise<T>): Promise<T> {
    if (this.#accepted && equalsBytes(root, this.#accepted)) return this.at(root, ({ sm }) => fn(sm));
    let kept = this.#readOnly;
    if (!kept || !equalsBytes(kept.root, root)) {
      const sm = stateManagerAt(this.common, this.db, root, 1000);
      kept = this.#readOnly = { root, sm };
      sm.catch(() => {
        if (this.#readOnly === kept) this.#readOnly = undefined;
      });
    }
    return kept.sm.then(fn);
  }

  /**
   * The account trie at `root`, for reads only (eth_getProof's walks): over the state's node store
   * and its cache, apart from the views, so a proof waits behind no read or call.
   */
  trieAt(root: Uint8Array): Promise<MerklePatriciaTrie> {
    return createMPT({ db: this.db.shallowCopy(), useKeyHashing: true, common: this.common, valueEncoding: 'view', root });
  }

  /** The last state manager readState made for a root other than the accepted one. */
  #readOnly: { root: Uint8Array; sm: Promise<MerkleStateManager> } | undefined;

  /**
   * Runs `fn` on a VM of its own at `root` whose state writes stay in memory (OverlayDB), so `fn`
   * may commit and compute state roots (eth_simulateV1). `blockHash` answers BLOCKHASH before the
   * chain's blocks do (the simulated blocks').
   */
  async scratch<T>(root: Uint8Array, blockHash: BlockHashLookup, fn: (view: StateView) => Promise<T>): Promise<T> {
    const trie = await createMPT({ db: new OverlayDB(this.db), useKeyHashing: true, common: this.common, valueEncoding: 'view', cacheSize: 1000, root });
    const sm = new FastAccountStateManager({ common: this.common, trie, caches: new Caches() });
    const guard = new CallGuard();
    const vm = await makeVM(this.common, sm, this.hooks, async (n) => (await blockHash(n)) ?? this.blockHash(n), guard);
    return fn({ sm, vm, guard });
  }

  async #historical<T>(root: Uint8Array, fn: (view: StateView) => Promise<T>): Promise<T> {
    const sm = await stateManagerAt(this.common, this.db, root, 1000);
    const guard = new CallGuard();
    const vm = await makeVM(this.common, sm, this.hooks, this.blockHash, guard);
    return fn({ sm, vm, guard });
  }
}
