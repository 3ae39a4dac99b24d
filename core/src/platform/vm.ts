/**
 * The platform chain's VM (P-Chain): built into core, behind the same sdk ChainVM
 * contract as every plugin. Blocks are standard (createSubnet/createChain), atomic (import/export),
 * proposal (add validator/delegator, advance time, reward) and the proposal's Commit or Abort.
 * Chain time moves only through committed advance-time proposals, never past local time + 10 s.
 *
 * What the node learns of the state comes through PlatformEvents: chains that exist and each
 * subnet's current validators, once at initialize and after every accepting batch is durable.
 *
 * One piece (past 600 lines) because building, verifying, accepting and the backend the service
 * issues through move the same state together: the preferred branch and its processing blocks, the
 * states of their diffs, the mempool's view of what that branch has taken, and the one batch an
 * accept writes (state, block, shared memory) before the node is told. What stands apart is in
 * modules of its own: the rules (executor.ts), storage (state.ts), the pool (mempool.ts), the block
 * object and accepted-block store (blocks.ts), byte formats (codec.ts), the service (service.ts).
 */
import {
  BlockMap,
  EventWaiter,
  serializer,
  Id,
  NotFoundError,
  sha256,
  bytesEqual,
  vmIdFromName,
  defineVM,
  type Block,
  type ChainContext,
  type ChainHandler,
  type KeyValueStore,
  type VMEvent,
  type VMFactory,
  type VMInit,
  type VMState,
} from '@cornice/sdk';
import { blockIdOf, decodeBlock, encodeBlock, txId } from './codec.js';
import { decodeGenesis } from './genesis.js';
import { PlatformError } from './errors.js';
import {
  allSubnets,
  applyAsAccepted,
  applyAtomicTx,
  applyDecisionTx,
  checkProposalTime,
  nextStakerChange,
  nonceAhead,
  payerOf,
  prefersCommit,
  proposalOutcomes,
  validatorWeights,
  type ExecutorContext,
} from './executor.js';
import { BlockStore, PlatformBlock, type BlockHost } from './blocks.js';
import { DEFAULT_MEMPOOL_CAPACITY, KIND_ORDER, Mempool, type PooledTx } from './mempool.js';
import { systemScheduler } from '../consensus/snowman/scheduler.js';
import type { Scheduler } from '../consensus/snowman/types.js';
import {
  BATCH_SIZE,
  DEFAULT_SUBNET_ID,
  SYNC_BOUND_SECONDS,
  type BlockchainStatus,
  type IssuableTx,
  type PlatformBackend,
  type PlatformBlockFields,
  type PlatformEvents,
  type PlatformStateView,
  type PlatformTx,
  type ProposalTx,
} from './model.js';
import { AcceptedState, StateDiff, type StateReader } from './state.js';
import { platformService } from './service.js';

export interface PlatformVMDeps {
  events: PlatformEvents;
  /** A loaded VM's vmID from its vmID or alias; throws naming the loaded VMs otherwise. */
  resolveVm(vm: string): Id;
  /** Throws when `genesis` is not valid for the VM (its factory's checkGenesis); default: accepts all. */
  checkGenesis?(vmId: Id, genesis: Uint8Array): Promise<void>;
  /** Whether this node runs the chain (getBlockchainStatus 'Validating'). */
  isChainRunning(chainId: Id): boolean;
  /** The native asset's ID (the X-Chain's genesis asset), when this network has one. */
  nativeAssetId?: Id;
  /** Timers waitForEvent sleeps on (default: real, unref'd timers); tests inject virtual ones. */
  timers?: Pick<Scheduler, 'setTimeout'>;
  /** Most pending txs the mempool holds (default DEFAULT_MEMPOOL_CAPACITY). */
  mempoolCapacity?: number;
}

/** vmID of the platform VM: `platformvm` zero-padded, as the reference node derives VM IDs. */
export const PLATFORM_VM_ID = vmIdFromName('platformvm');
const AVM_ID = vmIdFromName('avm');
/** Longest a waitForEvent sleeps before looking at the clock again. */
const MAX_IDLE_WAKE_MS = 60_000;

export function platformVMFactory(deps: PlatformVMDeps): VMFactory {
  return defineVM({ name: 'platformvm', version: '0.1.0', vmId: PLATFORM_VM_ID, create: () => new PlatformVM(deps) });
}

export class PlatformVM implements BlockHost, PlatformBackend {
  #ctx: ChainContext | undefined;
  #blocks!: BlockStore;
  #state!: AcceptedState;
  #lastAccepted!: PlatformBlock;
  #preferred!: Id;
  /** Blocks verified and not decided, and the last accepted one (a parsed block is held once verified). */
  readonly #live = new BlockMap<PlatformBlock>();
  /** Proposal ID -> the option (commit or abort) built or verified on it. */
  readonly #options = new Map<string, PlatformBlock>();
  readonly #mempool: Mempool;
  readonly #waiter: EventWaiter;
  #atomic: { chainId: Id; assetId: Id } | undefined;
  #shutDown = false;
  readonly #issuing = serializer();
  /** issueTx's check state for one preferred block (see #poolDiff). */
  #poolState: { preferred: string; pool: StateDiff } | undefined;

  constructor(private readonly deps: PlatformVMDeps) {
    this.#mempool = new Mempool(() => this.#wake(), deps.mempoolCapacity ?? DEFAULT_MEMPOOL_CAPACITY);
    // Idle, it still looks at the clock once a minute (a validator's start time may come).
    this.#waiter = new EventWaiter({
      timers: deps.timers ?? systemScheduler,
      now: () => this.#ctx!.clock.now(),
      maxSleepMs: MAX_IDLE_WAKE_MS,
      idleSleepMs: MAX_IDLE_WAKE_MS,
    });
  }

  // ---- ChainVM ----

  async initialize(ctx: ChainContext, init: VMInit): Promise<void> {
    this.#ctx = ctx;
    this.#blocks = new BlockStore(ctx.db);
    this.#state = new AcceptedState(ctx.db);
    const genesisHash = sha256(init.genesis);
    const stored = await this.#blocks.genesisHash();
    if (stored && !bytesEqual(stored, genesisHash)) {
      throw new PlatformError('InvalidGenesis', 'the platform chain database was made from another genesis');
    }
    if (!(await this.#blocks.lastAccepted())) await this.#writeGenesis(init.genesis, genesisHash);
    await this.#state.load();
    const lastId = (await this.#blocks.lastAccepted())!;
    this.#lastAccepted = await this.#loadAccepted(lastId);
    this.#live.add(this.#lastAccepted);
    this.#preferred = lastId;
    const avm = (await this.#state.chains()).find((c) => c.vmId.equals(AVM_ID) && c.subnetId.equals(DEFAULT_SUBNET_ID));
    this.#atomic = avm && this.deps.nativeAssetId ? { chainId: avm.id, assetId: this.deps.nativeAssetId } : undefined;
    for (const chain of await this.#state.chains()) this.deps.events.chainCreated(chain);
    for (const subnet of await allSubnets(this.#state)) this.deps.events.validatorsChanged(subnet, await validatorWeights(this.#state, subnet));
  }

  async #writeGenesis(bytes: Uint8Array, hash: Uint8Array): Promise<void> {
    let genesis;
    try {
      genesis = decodeGenesis(bytes);
    } catch (e) {
      throw new PlatformError('InvalidGenesis', `platform genesis is malformed: ${(e as Error).message}`);
    }
    const ctx = this.#ctx!;
    const diff = StateDiff.on(this.#state);
    diff.time = genesis.timestamp;
    for (const a of genesis.accounts) diff.setAccount({ ...a });
    for (const v of genesis.validators) diff.setStaker({ txId: txIdOf(v), tx: v }, 'current');
    for (const c of genesis.chains) {
      if (c.networkId !== ctx.networkId) continue; // reference: chains of another network are ignored
      diff.addChain({ id: txIdOf(c), name: c.chainName, subnetId: c.subnetId, vmId: c.vmId, fxIds: c.fxIds, genesisData: c.genesisData });
    }
    const block = encodeBlock({ kind: 'commit', parentId: Id.empty });
    const batch = ctx.db.batch();
    this.#state.write(diff, batch);
    this.#blocks.writeAccepted(batch, blockIdOf(block), 0, genesis.timestamp, block);
    this.#blocks.setGenesisHash(batch, hash);
    await batch.write();
  }

  async setState(_state: VMState): Promise<void> {}

  async buildBlock(): Promise<Block> {
    this.#running();
    const preferred = await this.#getLive(this.#preferred);
    if (preferred.fields.kind === 'proposal') {
      await this.#outcomesOf(preferred);
      const kind = prefersCommit(preferred.fields.tx, this.now()) ? 'commit' : 'abort';
      return this.#newBlock({ kind, parentId: preferred.id }, preferred.height + 1);
    }
    const parentId = preferred.id;
    const parent = () => this.#stateAt(parentId);
    const c = this.#executorContext();
    const taken = this.#onPreferredBranch();
    // A tx whose nonce is ahead of its account's waits (stays pooled) while the account's next tx is
    // pooled; a build that dropped txs and skipped waiting ones goes once more, so that a tx whose
    // predecessor was just dropped is dropped now too (nonces.test.ts "… dropped too, in the same build").
    for (let pass = 0; ; pass++) {
      const sizeBefore = this.#mempool.size;
      let waited = false;
      const decisions = [...this.#mempool.decision.values()].filter((p) => !taken.has(p.id.key));
      if (decisions.length > 0) {
        const diff = new StateDiff(parent);
        const txs = [];
        for (const { id, tx } of decisions) {
          if (txs.length >= BATCH_SIZE) break;
          const attempt = new StateDiff(() => diff);
          try {
            await applyDecisionTx(tx, attempt, c);
            attempt.mergeInto(diff);
            txs.push(tx);
          } catch (e) {
            if (await this.#waits(tx, diff, taken)) waited = true;
            else this.#drop(id, e);
          }
        }
        if (txs.length > 0) return this.#newBlock({ kind: 'standard', parentId, txs }, preferred.height + 1);
      }
      for (const { id, tx } of [...this.#mempool.atomic.values()]) {
        if (taken.has(id.key)) continue;
        try {
          await applyAtomicTx(tx, new StateDiff(parent), c);
          return this.#newBlock({ kind: 'atomic', parentId, tx }, preferred.height + 1);
        } catch (e) {
          if (await this.#waits(tx, parent(), taken)) waited = true;
          else this.#drop(id, e);
        }
      }
      const next = await this.#nextProposal(parent(), taken);
      if (next.proposal) return this.#newBlock({ kind: 'proposal', parentId, tx: next.proposal }, preferred.height + 1);
      if (pass > 0 || !(waited || next.waited) || this.#mempool.size === sizeBefore) break;
    }
    throw new PlatformError('NothingToBuild', 'nothing to build: no pending txs and no validator set change due');
  }

  /**
   * Whether `tx`, refused on `state`, is from an account whose nonce on `state` is behind the tx's
   * while the mempool holds (off the preferred branch) the account's next tx: it then waits for it.
   */
  async #waits(tx: IssuableTx, state: StateReader, taken: ReadonlySet<string>): Promise<boolean> {
    if (!(await nonceAhead(tx, state))) return false;
    const payer = payerOf(tx);
    return this.#mempool.holds(payer, (await state.account(payer)).nonce + 1n, taken);
  }

  /**
   * The proposal due on a decision state, built only when no decision or atomic tx can be (buildBlock),
   * as the reference node orders them: a reward when chain time is the
   * next Default Subnet staker's end, an advance of time when local time reached the next staker
   * change, else the first pending timed tx that still starts far enough ahead (`waited`: a
   * timed tx was skipped because its account's earlier tx is still pooled).
   */
  async #nextProposal(state: StateReader, taken: ReadonlySet<string>): Promise<{ proposal?: ProposalTx; waited?: boolean }> {
    const next = (await state.currentStakers(DEFAULT_SUBNET_ID))[0];
    if (next && next.tx.end === state.timestamp()) return { proposal: { kind: 'rewardValidator', txId: next.txId } };
    const change = await nextStakerChange(state, await allSubnets(state));
    const now = this.now();
    if (change !== undefined && now >= change) return { proposal: { kind: 'advanceTime', time: change } };
    let waited = false;
    for (const { id, tx } of [...this.#mempool.timed.values()]) {
      if (taken.has(id.key)) continue;
      if (tx.start < now + SYNC_BOUND_SECONDS) {
        this.#mempool.remove(id);
        this.#poolState = undefined;
        this.#ctx!.log.info('dropping tx to add validator because start time too late', { txId: id.toString(), start: tx.start, now });
        continue;
      }
      try {
        await proposalOutcomes(tx, () => state, this.#executorContext());
        return { proposal: tx };
      } catch (e) {
        if (await this.#waits(tx, state, taken)) waited = true;
        else this.#drop(id, e);
      }
    }
    return { waited };
  }

  /** Removes a tx that no longer applies from the mempool, saying why. */
  #drop(id: Id, e: unknown): void {
    this.#mempool.remove(id);
    this.#poolState = undefined;
    this.#ctx!.log.info('dropping invalid tx from the mempool', { txId: id.toString(), error: (e as Error).message });
  }

  /**
   * IDs of the txs in the processing blocks of the preferred branch (from `from` down). Txs stay in
   * the mempool until their block is accepted; these are already in the preferred state, so building
   * and issueTx's checks skip them.
   */
  #onPreferredBranch(from: Id = this.#preferred): Set<string> {
    const out = new Set<string>();
    for (let b = this.#live.get(from.key); b && b.status === 'processing'; b = this.#live.get(b.parentId.key)) {
      for (const tx of txsOf(b.fields)) out.add(txIdOf(tx).key);
    }
    return out;
  }

  async parseBlock(bytes: Uint8Array): Promise<Block> {
    this.#running();
    const id = blockIdOf(bytes);
    const known = this.#live.get(id.key);
    if (known) return known;
    const stored = await this.#blocks.get(id);
    if (stored) return this.#loadAccepted(id);
    let fields: PlatformBlockFields;
    try {
      fields = decodeBlock(bytes);
    } catch (e) {
      throw new PlatformError('Malformed', `not a platform block: ${(e as Error).message}`);
    }
    // The engine needs the height before verify: from a parent in memory or in the store, else later.
    const parentHeight = this.heightOf(fields.parentId) ?? (await this.#blocks.get(fields.parentId))?.height;
    return new PlatformBlock(this, id, bytes.slice(), fields, parentHeight === undefined ? -1 : parentHeight + 1, 'processing');
  }

  async getBlock(id: Id): Promise<Block> {
    this.#running();
    const live = this.#live.get(id.key);
    if (live) return live;
    return this.#loadAccepted(id);
  }

  async setPreference(id: Id): Promise<void> {
    if (!id.equals(this.#preferred)) this.#poolState = undefined;
    this.#preferred = id;
    this.#wake();
  }

  async lastAccepted(): Promise<Id> {
    return this.#lastAccepted.id;
  }

  async getBlockIdAtHeight(height: number): Promise<Id> {
    const id = Number.isSafeInteger(height) && height >= 0 ? await this.#blocks.idAtHeight(height) : undefined;
    if (!id) throw new NotFoundError(`no accepted block at height ${height}`);
    return id;
  }

  /**
   * Resolves 'pendingTxs' once a block can be built on the preferred block; until then it sleeps
   * until something is issued, the preference changes, or the next staker change time comes.
   */
  async waitForEvent(signal: AbortSignal): Promise<VMEvent> {
    return this.#waiter.wait(signal, () => this.#buildableOrWakeTime(), () => this.#stillWaiting(signal));
  }

  #stillWaiting(signal: AbortSignal): void {
    if (this.#shutDown) throw new PlatformError('NotRunning', 'the platform VM is shut down');
    if (signal.aborted) throw new PlatformError('NotRunning', 'waiting for an event was aborted');
  }

  /** 'now' when buildBlock has something to do; else the unix second when it may (undefined: not by time). */
  async #buildableOrWakeTime(): Promise<'now' | number | undefined> {
    const preferred = this.#live.get(this.#preferred.key);
    if (!preferred) return undefined;
    if (!preferred.isDecision) return this.#options.has(preferred.id.key) ? undefined : 'now';
    const taken = this.#onPreferredBranch();
    for (const p of [...this.#mempool.decision.values(), ...this.#mempool.atomic.values()]) if (!taken.has(p.id.key)) return 'now';
    const state = this.#stateAt(preferred.id);
    const next = (await state.currentStakers(DEFAULT_SUBNET_ID))[0];
    if (next && next.tx.end === state.timestamp()) return 'now';
    const change = await nextStakerChange(state, await allSubnets(state));
    const now = this.now();
    if (change !== undefined && now >= change) return 'now';
    for (const { id } of this.#mempool.timed.values()) if (!taken.has(id.key)) return 'now'; // to propose it, or drop it if late
    return change;
  }

  #wake(): void {
    this.#waiter.wake();
  }

  async createHandlers(): Promise<ChainHandler[]> {
    const ctx = this.#running();
    return [{ path: '', services: [platformService(this, { nativeSymbol: ctx.nativeAsset.symbol })] }];
  }

  async shutdown(): Promise<void> {
    this.#shutDown = true;
    this.#wake();
  }

  // ---- blocks (BlockHost) ----

  heightOf(id: Id): number | undefined {
    return this.#live.get(id.key)?.height;
  }

  async verify(block: PlatformBlock): Promise<void> {
    this.#running();
    if (block.verified) return;
    const parent = await this.#getLive(block.parentId);
    if (parent.status === 'accepted' && !parent.id.equals(this.#lastAccepted.id)) {
      throw new PlatformError('InvalidBlock', `block ${block.id} builds on ${parent.id}, which is not the last accepted block`);
    }
    const f = block.fields;
    const c = this.#executorContext();
    const parentState = () => this.#stateAt(parent.id);
    if (f.kind === 'commit' || f.kind === 'abort') {
      if (parent.isDecision) throw new PlatformError('InvalidBlock', `a ${f.kind} block's parent must be a proposal block`);
      const outcomes = await this.#outcomesOf(parent);
      block.diff = f.kind === 'commit' ? outcomes.onCommit : outcomes.onAbort;
      this.#options.set(parent.id.key, block);
    } else {
      if (!parent.isDecision) throw new PlatformError('InvalidBlock', `a ${f.kind} block's parent must be a decision block, not a proposal`);
      if (f.kind === 'proposal') {
        checkProposalTime(f.tx, this.now());
        block.outcomes = await proposalOutcomes(f.tx, parentState, c);
      } else if (f.kind === 'standard') {
        if (f.txs.length === 0) throw new PlatformError('InvalidBlock', 'a standard block needs at least one tx');
        const diff = new StateDiff(parentState);
        for (const tx of f.txs) await applyDecisionTx(tx, diff, c);
        block.diff = diff;
      } else {
        const diff = new StateDiff(parentState);
        await applyAtomicTx(f.tx, diff, c);
        block.diff = diff;
      }
    }
    block.height = parent.height + 1;
    block.timestamp = (block.diff ?? parentState()).timestamp();
    block.verified = true;
    this.#live.add(block);
  }

  async accept(block: PlatformBlock): Promise<void> {
    const ctx = this.#running();
    if (block.status === 'accepted') return;
    if (!block.parentId.equals(this.#lastAccepted.id)) {
      throw new PlatformError('InvalidBlock', `block ${block.id} is not a child of the last accepted block ${this.#lastAccepted.id}`);
    }
    if (!block.verified) await this.verify(block);
    const diff = block.diff;
    const batch = ctx.db.batch();
    this.#blocks.writeAccepted(batch, block.id, block.height, block.timestamp, block.bytes);
    if (diff) {
      this.#state.write(diff, batch);
      if (this.#atomic && (diff.exportedUtxos.length > 0 || diff.consumedUtxos.size > 0)) {
        ctx.sharedMemory.apply(
          this.#atomic.chainId,
          { put: diff.exportedUtxos.map((u) => [u.utxoId.bytes, u.bytes]), remove: [...diff.consumedUtxos.values()].map((id) => id.bytes) },
          batch,
        );
      }
    }
    await batch.write();
    if (diff) this.#state.commit(diff);
    const previous = this.#lastAccepted;
    block.status = 'accepted';
    this.#lastAccepted = block;
    if (!previous.id.equals(block.id)) this.#live.delete(previous.id.key);
    if (block.kind === 'commit' || block.kind === 'abort') this.#options.delete(block.parentId.key);
    for (const tx of txsOf(block.fields)) this.#mempool.remove(txIdOf(tx));
    this.#poolState = undefined;
    if (diff) {
      for (const chain of diff.newChains) this.deps.events.chainCreated(chain);
      for (const subnet of diff.changedSubnets()) this.deps.events.validatorsChanged(subnet, await validatorWeights(this.#state, subnet));
    }
    this.#wake();
  }

  async reject(block: PlatformBlock): Promise<void> {
    if (block.status === 'accepted') throw new PlatformError('InvalidBlock', `block ${block.id} was accepted; it cannot be rejected`);
    block.status = 'rejected';
    this.#live.delete(block.id.key);
    if (this.#options.get(block.parentId.key) === block) this.#options.delete(block.parentId.key);
    // Its txs are still in the mempool (they leave it only when accepted).
    this.#poolState = undefined;
    this.#wake();
  }

  // ---- PlatformBackend ----

  get networkId(): number {
    return this.#running().networkId;
  }

  get nodeId() {
    return this.#running().nodeId;
  }

  now(): number {
    return Math.floor(this.#running().clock.now() / 1000);
  }

  accepted(): PlatformStateView {
    return this.#state;
  }

  preferred(): PlatformStateView {
    return this.#preferredDecisionState();
  }

  /** One issueTx at a time, so each is checked after the previous one joined the mempool. */
  issueTx(tx: IssuableTx): Promise<Id> {
    return this.#issuing(() => this.#issue(tx));
  }

  async #issue(tx: IssuableTx): Promise<Id> {
    this.#running();
    const id = txIdOf(tx);
    if (this.#mempool.has(id)) return id;
    // Before the checks, which re-apply every pooled tx: a full pool answers at once.
    this.#mempool.checkRoom();
    if ('start' in tx && tx.start < this.now() + SYNC_BOUND_SECONDS) {
      throw new PlatformError('InvalidTx', `start time must be in the future: at least ${SYNC_BOUND_SECONDS} s after the node's time (${this.now()}), got ${tx.start}`);
    }
    // Checked on the preferred state after every pooled tx (#poolDiff), so the txs of one account
    // follow each other whatever their kinds, and a tx that passes here is not dropped at build for
    // its nonce: a build waits for the account's earlier txs (#waits). Test: nonces.test.ts.
    const c = this.#executorContext();
    const { state, pool } = await this.#poolDiff(c);
    const attempt = new StateDiff(() => pool);
    await applyAsAccepted(tx, attempt, c);
    this.#mempool.add(id, tx);
    // Unless a block or preference change dropped that state meanwhile (it is then rebuilt from the
    // mempool, this tx included): add the tx to it.
    if (this.#poolState === state) attempt.mergeInto(pool);
    return id;
  }

  /**
   * The preferred state with every pooled tx applied (those not already on the preferred branch), in
   * the order builds take them: by kind (decision, atomic, timed), in arrival order, except that a tx
   * whose nonce is ahead of its account's goes right after the account's tx before it (a build
   * waits for that one, then takes it first again: decision and atomic txs come before timed ones).
   * Between accounts the order matters little: a decision or atomic tx depends on no timed tx of
   * another account (only on subnets, UTXOs, and its own account's nonce and balance, which only its
   * own txs take from). Kept until the preference changes or the mempool loses a tx.
   */
  async #poolDiff(c: ExecutorContext): Promise<{ state: { preferred: string; pool: StateDiff }; pool: StateDiff }> {
    const key = this.#preferred.key;
    if (this.#poolState?.preferred === key) return { state: this.#poolState, pool: this.#poolState.pool };
    // A processing proposal at the tip: its tx is not in the state it builds on, so it counts as pooled
    // (nonces.test.ts "… in a processing proposal block").
    const tip = this.#live.get(key);
    const base = tip && !tip.isDecision && tip.status !== 'accepted' ? tip.parentId : this.#preferred;
    const taken = this.#onPreferredBranch(base);
    const below = this.#preferredDecisionState();
    const pool = new StateDiff(() => below);
    const state = { preferred: key, pool };
    this.#poolState = state;
    /** Txs waiting for their account's earlier tx, by account. */
    const parked = new Map<string, PooledTx[]>();
    const apply = async (pooled: PooledTx): Promise<boolean> => {
      if (await nonceAhead(pooled.tx, pool)) {
        const payer = payerOf(pooled.tx).key;
        parked.set(payer, [...(parked.get(payer) ?? []), pooled]);
        return false;
      }
      const attempt = new StateDiff(() => pool);
      try {
        await applyAsAccepted(pooled.tx, attempt, c);
      } catch {
        return false; // a pooled tx that no longer applies is dropped at build time
      }
      attempt.mergeInto(pool);
      return true;
    };
    for (const kind of KIND_ORDER) {
      for (const pooled of this.#mempool.ofKind(kind)) {
        if (taken.has(pooled.id.key)) continue;
        // Then the account's parked txs that now follow, in nonce order.
        for (let p: PooledTx | undefined = pooled; p && (await apply(p)); ) {
          const waiting = parked.get(payerOf(p.tx).key);
          const at = waiting?.findIndex((w) => w.tx.nonce === p!.tx.nonce + 1n) ?? -1;
          p = at >= 0 ? waiting!.splice(at, 1)[0] : undefined;
        }
      }
    }
    return { state, pool };
  }

  async blockchainStatus(chainId: Id): Promise<BlockchainStatus> {
    if (this.deps.isChainRunning(chainId)) return 'Validating';
    if (await this.#state.chain(chainId)) return 'Created';
    if (await this.#preferredDecisionState().chain(chainId)) return 'Preferred';
    return 'Unknown';
  }

  async checkGenesis(vmId: Id, genesis: Uint8Array): Promise<void> {
    await this.deps.checkGenesis?.(vmId, genesis);
  }

  resolveVm(vm: string): Id {
    const vmId = this.deps.resolveVm(vm);
    if (vmId.equals(PLATFORM_VM_ID)) throw new PlatformError('UnknownVM', 'the platform VM runs only the platform chain; it cannot be instantiated by createBlockchain');
    return vmId;
  }

  atomicPeer(): { chainId: Id; assetId: Id } | undefined {
    return this.#atomic;
  }

  atomicUtxos(): AsyncIterable<[Uint8Array, Uint8Array]> {
    const ctx = this.#running();
    if (!this.#atomic) return (async function* () {})();
    return ctx.sharedMemory.list(this.#atomic.chainId);
  }

  openUser(username: string, password: string): Promise<KeyValueStore> {
    return this.#running().keystore.openUser(username, password);
  }

  // ---- internals ----

  #running(): ChainContext {
    if (!this.#ctx) throw new PlatformError('NotRunning', 'the platform VM is not initialized');
    if (this.#shutDown) throw new PlatformError('NotRunning', 'the platform VM is shut down');
    return this.#ctx;
  }

  #executorContext(): ExecutorContext {
    const ctx = this.#running();
    const atomic = this.#atomic;
    return {
      networkId: ctx.networkId,
      atomic,
      readUtxo: async (utxoId) => (atomic ? (await ctx.sharedMemory.get(atomic.chainId, [utxoId.bytes]))[0] : undefined),
    };
  }

  /** The state after a decision block (accepted blocks: the accepted state). */
  #stateAt(id: Id): StateReader {
    const block = this.#live.get(id.key);
    if (!block || block.status === 'accepted') return this.#state;
    if (!block.diff) throw new PlatformError('InvalidBlock', `block ${id} is a proposal block; it has no state of its own`);
    return block.diff;
  }

  /** The state of the preferred branch, at its last decision block. */
  #preferredDecisionState(): StateReader {
    let block = this.#live.get(this.#preferred.key);
    if (block && !block.isDecision && block.status !== 'accepted') block = this.#live.get(block.parentId.key);
    return block ? this.#stateAt(block.id) : this.#state;
  }

  async #outcomesOf(proposal: PlatformBlock) {
    if (!proposal.outcomes) {
      if (proposal.fields.kind !== 'proposal') throw new PlatformError('InvalidBlock', `block ${proposal.id} is not a proposal`);
      const parentId = proposal.parentId;
      proposal.outcomes = await proposalOutcomes(proposal.fields.tx, () => this.#stateAt(parentId), this.#executorContext());
    }
    return proposal.outcomes;
  }

  async #getLive(id: Id): Promise<PlatformBlock> {
    const live = this.#live.get(id.key);
    if (live) return live;
    const block = await this.#loadAccepted(id).catch(() => undefined);
    if (!block) throw new PlatformError('InvalidBlock', `parent block ${id} is unknown`);
    return block;
  }

  async #loadAccepted(id: Id): Promise<PlatformBlock> {
    const stored = await this.#blocks.get(id);
    if (!stored) throw new NotFoundError(`block ${id} is unknown`);
    const block = new PlatformBlock(this, id, stored.bytes, decodeBlock(stored.bytes), stored.height, 'accepted');
    block.timestamp = stored.timestamp;
    return block;
  }

  async #newBlock(fields: PlatformBlockFields, height: number): Promise<PlatformBlock> {
    const bytes = encodeBlock(fields);
    const block = new PlatformBlock(this, blockIdOf(bytes), bytes, fields, height, 'processing');
    if (fields.kind === 'commit' || fields.kind === 'abort') this.#options.set(fields.parentId.key, block);
    return block;
  }
}

const txIds = new WeakMap<object, Id>();

/** A tx's ID, computed once per tx object (the mempool, blocks and checks share the objects). */
function txIdOf(tx: PlatformTx): Id {
  let id = txIds.get(tx);
  if (!id) txIds.set(tx, (id = txId(tx)));
  return id;
}

function txsOf(f: PlatformBlockFields): IssuableTx[] {
  switch (f.kind) {
    case 'standard':
      return f.txs;
    case 'atomic':
      return [f.tx];
    case 'proposal':
      return f.tx.kind === 'advanceTime' || f.tx.kind === 'rewardValidator' ? [] : [f.tx];
    default:
      return [];
  }
}
