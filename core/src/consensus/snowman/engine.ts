/**
 * The Snowman engine: wires the parts that decide a linear chain and answers the messages of peers.
 *
 * - topological.ts: the pure consensus — the block tree rooted at the last accepted block, one
 *   Snowball per node with processing children, transitive votes, accept/reject decisions.
 * - polls.ts: when polls start (reachable stake, pacing), whom they ask, early termination, and
 *   recording their votes in the tree.
 * - ancestors.ts: held blocks, Gets for unknown blocks and ancestors, blocks decided or failing
 *   verify lately, and the accepted blocks peers report that this node lacks.
 * - builder.ts: the build loop, proposer windows and build backoff.
 * - frontier.ts: accepted-frontier gossip while idle.
 * - options.ts: options, limits and stats.
 *
 * The engine owns the lifecycle, the task queue, the VM calls that change the tree (verify, accept,
 * reject, setPreference) and the on* handlers. Everything that changes the tree
 * runs in one serialized task queue, so the VM's async calls never interleave. Input from peers is
 * checked, logged and dropped when bad; the on* handlers never throw.
 *
 * One piece (past 600 lines) because the lifecycle, the VM calls that change the tree and the on*
 * handlers all run through the one task queue and read one state (started, halted, the tree): split
 * apart, each piece would need the queue and that state back. What does not touch them is in the
 * modules above.
 */
import type { Block, ChainVM, Id, Logger, ShortId } from '@cornice/sdk';
import { ConsensusError } from '../errors.js';
import { snowParamsProblem, type SnowParams } from '../params.js';
import { Ancestors } from './ancestors.js';
import { Builder, type AddResult } from './builder.js';
import { DEFAULT_ENGINE_LIMITS, describe, heightOf, type EngineLimits, type EngineState, type EngineStats, type SnowmanEngineOptions } from './options.js';
import { FrontierGossip } from './frontier.js';
import { Poller, type Poll } from './polls.js';
import { Topological } from './topological.js';
import type { EngineTransport, Scheduler, ValidatorSampler } from './types.js';

export { DEFAULT_ENGINE_LIMITS, type EngineLimits, type EngineState, type EngineStats, type SnowmanEngineOptions } from './options.js';
export { answering, canPoll, describeReachability } from './polls.js';


export class SnowmanEngine {
  readonly #vm: ChainVM;
  readonly #params: SnowParams;
  readonly #transport: EngineTransport;
  readonly #validators: ValidatorSampler;
  readonly #nodeId: ShortId;
  readonly #scheduler: Scheduler;
  readonly #log: Logger;
  readonly #onAccepted: ((block: Block) => void) | undefined;
  readonly #onHalt: ((reason: string) => void) | undefined;
  readonly #limits: EngineLimits;

  #state: EngineState = 'idle';
  #haltReason: string | undefined;
  /** Resolves when the engine halts. */
  readonly #haltedSignal: Promise<void>;
  #signalHalted: () => void = () => {};
  #abort = new AbortController();
  #queue: Promise<void> = Promise.resolve();
  #nextRequestId = 0;

  /** The block tree, once started. */
  #tree: Topological | undefined;
  readonly #ancestors: Ancestors;
  readonly #polls: Poller;
  readonly #builder: Builder;

  readonly #frontier: FrontierGossip;
  #lastAcceptedAt = 0;

  constructor(opts: SnowmanEngineOptions) {
    const problem = snowParamsProblem(opts.params);
    if (problem !== undefined) throw new ConsensusError('InvalidParams', problem);
    this.#vm = opts.vm;
    this.#params = { ...opts.params };
    this.#transport = opts.transport;
    this.#validators = opts.validators;
    this.#nodeId = opts.nodeId;
    this.#scheduler = opts.scheduler;
    this.#log = opts.log.child({ module: 'snowman' });
    const queryTimeoutMs = opts.queryTimeoutMs ?? 2_000;
    this.#onAccepted = opts.onAccepted;
    this.#onHalt = opts.onHalt;
    this.#limits = { ...DEFAULT_ENGINE_LIMITS, getTimeoutMs: queryTimeoutMs, ...opts.limits };
    this.#haltedSignal = new Promise((resolve) => (this.#signalHalted = resolve));

    const running = () => this.#state === 'running';
    const tree = () => this.#tree;
    const newRequestId = () => this.#newRequestId();
    const common = { limits: this.#limits, scheduler: this.#scheduler, log: this.#log };
    this.#ancestors = new Ancestors({ ...common, transport: this.#transport, tree, running, newRequestId });
    this.#polls = new Poller({
      ...common,
      params: this.#params,
      transport: this.#transport,
      validators: this.#validators,
      nodeId: this.#nodeId,
      queryTimeoutMs,
      directSelfPolls: opts.directSelfPolls ?? true,
      tree,
      running,
      newRequestId,
      isDecided: (key) => this.#ancestors.isDecided(key),
      onFinished: (poll) => void this.#enqueue(() => this.#applyPoll(poll)).catch(() => undefined),
      onResumed: () => this.#frontier.arm(),
    });
    this.#frontier = new FrontierGossip({
      intervalMs: this.#limits.frontierGossipMs,
      k: this.#params.k,
      nodeId: this.#nodeId,
      validators: this.#validators,
      transport: this.#transport,
      scheduler: this.#scheduler,
      log: this.#log,
      active: () => running() && !this.#polls.waiting,
      idle: () => (this.#tree?.size ?? 0) === 0,
      lastAccepted: () => this.#tree?.root.block,
      newRequestId,
    });
    this.#builder = new Builder({
      ...common,
      vm: this.#vm,
      proposerDelay: opts.proposerDelay,
      running,
      tip: () => this.#tree && (this.#tree.get(this.#tree.preferred.key) ?? this.#tree.root),
      enqueue: (fn) => this.#enqueue(fn),
      add: (block) => this.#add(block, undefined),
    });
  }

  // ---- lifecycle -------------------------------------------------------------------------------

  /**
   * Takes the last accepted block as the root, moves the VM to 'bootstrapping' then 'normalOp' (the
   * chain's Bootstrapper ran before), and starts building a block whenever the VM asks.
   */
  async start(): Promise<void> {
    if (this.#state !== 'idle') throw new ConsensusError('AlreadyStarted', 'the engine was already started');
    this.#state = 'starting';
    const lastId = await this.#vm.lastAccepted();
    const last = await this.#vm.getBlock(lastId);
    this.#tree = new Topological(this.#params, last, last.height, this.#scheduler.now(), this.#ancestors);
    await this.#vm.setState('bootstrapping');
    await this.#vm.setState('normalOp');
    await this.#vm.setPreference(last.id);
    if (this.#state !== 'starting') return; // stopped while starting
    this.#state = 'running';
    this.#lastAcceptedAt = this.#scheduler.now();
    this.#log.info('consensus started', { nodeId: this.#nodeId.toString(), lastAccepted: last.id.toString(), height: last.height });
    // Say at once when this chain cannot make progress (polls check again when there is work).
    this.#polls.enoughReachable();
    this.#frontier.arm();
    this.#builder.start(this.#abort.signal);
  }

  /**
   * Aborts waitForEvent, cancels every timer and resolves once no task is running — or as soon as
   * the engine is halted, since a task may be stuck in a VM call that never settles.
   */
  async stop(): Promise<void> {
    if (this.#state === 'stopped') return;
    const wasRunning = this.#state === 'running' || this.#state === 'starting';
    this.#state = 'stopping';
    this.#abort.abort();
    this.#builder.wake();
    this.#cancelTimers();
    const loop = this.#builder.loop;
    if (loop) await Promise.race([loop, this.#haltedSignal]);
    // Wait for the task queue to settle (tasks enqueued meanwhile see the state and return at once).
    for (let q = this.#queue; ; q = this.#queue) {
      await Promise.race([q, this.#haltedSignal]);
      if (q === this.#queue || this.#haltReason !== undefined) break;
    }
    this.#ancestors.clear();
    this.#state = 'stopped';
    if (wasRunning) this.#log.info('consensus stopped');
  }

  /**
   * Stops deciding for good (stop() still cleans up): after a failed accept, or when the chain's
   * VM misbehaved (a call that never settled, an uncaught error). The reason shows in `stats`.
   */
  halt(reason: string): void {
    if (this.#haltReason !== undefined || this.#state === 'stopped') return;
    this.#haltReason = reason;
    this.#signalHalted();
    if (this.#state === 'stopping') return; // stop() is cleaning up; it no longer waits for stuck tasks
    this.#state = 'halted';
    this.#log.fatal('consensus halted', { reason });
    this.#abort.abort();
    this.#builder.wake();
    this.#cancelTimers();
    try {
      this.#onHalt?.(reason);
    } catch (err) {
      this.#log.error('onHalt callback failed', { error: describe(err) });
    }
  }

  /** Cancels the poll, pacing, recheck and gossip timers and forgets the polls in flight. */
  #cancelTimers(): void {
    this.#polls.cancel();
    this.#frontier.cancel();
  }

  /** Runs `fn` after every task queued before it. A failing task is logged; the queue goes on. */
  #enqueue<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.#queue.then(fn);
    this.#queue = p.then(
      () => undefined,
      (err: unknown) => this.#log.error('consensus task failed', { error: describe(err) }),
    );
    return p;
  }

  #newRequestId(): number {
    do {
      this.#nextRequestId = (this.#nextRequestId + 1) >>> 0;
      // 0xffffffff marks a gossiped block (network GOSSIP_REQUEST_ID).
    } while (this.#polls.has(this.#nextRequestId) || this.#ancestors.hasRequest(this.#nextRequestId) || this.#nextRequestId === 0xffff_ffff);
    return this.#nextRequestId;
  }

  // ---- public state ----------------------------------------------------------------------------

  /** The consensus parameters in use. */
  get params(): Readonly<SnowParams> {
    return this.#params;
  }

  /** The preferred tip (the last accepted block when nothing is processing). */
  get preference(): Id {
    if (!this.#tree) throw new ConsensusError('NotRunning', 'the engine has not started');
    return this.#tree.preferred.block.id;
  }

  get lastAcceptedId(): Id {
    if (!this.#tree) throw new ConsensusError('NotRunning', 'the engine has not started');
    return this.#tree.root.block.id;
  }

  get lastAcceptedHeight(): number {
    return this.#tree?.root.height ?? 0;
  }

  /** Blocks verified and not yet decided. */
  get processing(): number {
    return this.#tree?.size ?? 0;
  }

  /** Polls in flight. */
  get pollsInFlight(): number {
    return this.#polls.size;
  }

  /** Blocks waiting for an unknown parent. */
  get held(): number {
    return this.#ancestors.heldCount;
  }

  /** A snapshot for health checks and debugging. */
  get stats(): EngineStats {
    const tree = this.#tree;
    const root = tree?.root;
    const polls = this.#polls;
    return {
      state: this.#state,
      lastAcceptedHeight: root?.height ?? 0,
      lastAcceptedId: root?.block.id.toString(),
      processing: tree?.size ?? 0,
      held: this.#ancestors.heldCount,
      pollsInFlight: polls.size,
      outstandingGets: this.#ancestors.outstandingGets,
      preferredDepth: tree?.preferredDepth ?? 0,
      rootChildren: root?.children.length ?? 0,
      rootConfidence: root?.sb?.confidence ?? 0,
      rootRogue: root?.sb?.rogue ?? false,
      successfulPolls: polls.successfulPolls,
      failedPolls: polls.failedPolls,
      pollsStarted: polls.pollsStarted,
      selfPollsRepeated: polls.selfPollsRepeated,
      voteWeight: polls.voteWeight,
      unknownVoteWeight: polls.unknownVoteWeight,
      haltReason: this.#haltReason,
      waiting: polls.waiting,
      oldestProcessingSince: tree?.oldestSince,
      buildFailures: this.#builder.buildFailures,
      lastAcceptedAt: this.#lastAcceptedAt,
      txsWaitingSince: this.#builder.txsWaitingSince,
      behind: this.#ancestors.behindReport(this.#lastAcceptedAt),
      failedPollStreak: polls.failedPollStreak,
    };
  }

  // ---- issuing blocks --------------------------------------------------------------------------

  /** Verifies `block` and adds it to the tree (or holds it until its parent is known); starts polls. */
  async issue(block: Block): Promise<void> {
    if (this.#state !== 'running') throw new ConsensusError('NotRunning', 'the engine is not running');
    await this.#enqueue(() => this.#add(block, undefined));
  }

  /** Adds `first` and every held block it unblocks (runs inside the task queue); returns what became of `first`. */
  async #add(first: Block, source: ShortId | undefined): Promise<AddResult> {
    const work: Block[] = [first];
    let added = false;
    let firstResult: AddResult | undefined;
    while (work.length > 0) {
      const block = work.pop() as Block;
      const key = block.id.key;
      const result = await this.#addOne(block, key, source);
      firstResult ??= result;
      this.#ancestors.noteArrived(key, block);
      if (result === 'added') {
        added = true;
        for (const child of this.#ancestors.takeHeldChildren(key)) work.push(child);
      } else if (result === 'dropped') {
        this.#ancestors.dropHeldDescendants(key);
      } else if (result === 'failed') {
        // Not invalid for good: they may come again (and be fetched again) once it can be verified.
        this.#ancestors.dropHeldDescendants(key, false);
      }
    }
    if (added && this.#state === 'running') {
      await this.#updatePreference();
      this.#polls.maybeStart();
    }
    return firstResult ?? 'ignored';
  }

  /** Checks where `block` goes (tree, held, or nowhere), verifies it and adds it to the tree. */
  async #addOne(block: Block, key: string, source: ShortId | undefined): Promise<AddResult> {
    const tree = this.#tree;
    const ancestors = this.#ancestors;
    if (this.#state !== 'running' || !tree) return 'ignored';
    const root = tree.root;
    if (tree.isProcessing(key) || key === root.key) return 'known';
    if (ancestors.isDecided(key) || ancestors.failedLately(key)) return 'ignored';
    const parentKey = block.parentId.key;
    const parent = tree.lookup(parentKey);
    // Some VMs (the timestamp VM) know a block's height only once they know its parent.
    const known = heightOf(block);
    if (known === undefined && !parent) {
      ancestors.hold(block, key, parentKey, source);
      return 'held';
    }
    const height = known ?? Number.NaN;
    if (!Number.isSafeInteger(height)) return 'ignored';
    if (height <= root.height) {
      // A decided height: accepted here, or conflicting with what was (votes for it are not fetched again).
      ancestors.decided(key);
      return 'ignored';
    }
    if (!parent) {
      if (height === root.height + 1 || ancestors.isDecided(parentKey)) {
        // Its parent conflicts with the last accepted block, or was dropped or rejected.
        ancestors.decided(key);
        return 'dropped';
      }
      ancestors.hold(block, key, parentKey, source);
      return 'held';
    }
    if (height !== parent.height + 1) {
      this.#log.debug('block height does not follow its parent', { block: block.id.toString(), height, parentHeight: parent.height });
      ancestors.decided(key);
      return 'dropped';
    }
    try {
      await block.verify();
    } catch (err) {
      // Our own block failing is a VM bug worth a warning; a peer's is routine.
      const level = source === undefined ? 'warn' : 'debug';
      this.#log[level]('block failed verification', { block: block.id.toString(), height, error: describe(err), ...(source ? { from: source.toString() } : { own: true }) });
      ancestors.noteFailedVerify(key);
      return 'failed';
    }
    tree.add(block, key, parent, this.#scheduler.now());
    this.#log.trace('block issued', { block: block.id.toString(), height });
    this.#polls.noteProgress();
    return 'added';
  }

  // ---- deciding --------------------------------------------------------------------------------

  async #applyPoll(poll: Poll): Promise<void> {
    const tree = this.#tree;
    if (this.#state !== 'running' || !tree) return;
    this.#polls.record(tree, poll);
    await this.#decide(tree);
    if (this.#state !== 'running') return;
    await this.#updatePreference();
    this.#ancestors.gc();
    this.#polls.maybeStart();
  }

  /** Accepts the root's finalized child in the VM (rejecting its siblings' subtrees) while there is one. */
  async #decide(tree: Topological): Promise<void> {
    while (this.#state === 'running') {
      const final = tree.finalizedChild();
      if (!final) return;
      const chosen = final.node;
      if (!chosen) {
        this.#log.error('finalized block is not processing', { block: final.key });
        tree.forgetRootDecision();
        return;
      }
      try {
        await chosen.block.accept();
      } catch (err) {
        // The VM could not persist it: nothing after it can be decided safely.
        this.halt(`accept of block ${chosen.block.id.toString()} at height ${chosen.height} failed: ${describe(err)}`);
        return;
      }
      const rejected = tree.accept(chosen);
      this.#ancestors.decided(chosen.key);
      for (const node of rejected) this.#ancestors.decided(node.key);
      this.#lastAcceptedAt = this.#scheduler.now();
      this.#polls.noteProgress();
      this.#builder.accepted();
      this.#ancestors.clearBehind();
      this.#frontier.arm();
      this.#log.debug('block accepted', { block: chosen.block.id.toString(), height: chosen.height });
      for (const node of rejected) {
        try {
          await node.block.reject();
        } catch (err) {
          this.#log.error('block reject failed', { block: node.block.id.toString(), error: describe(err) });
        }
        this.#log.debug('block rejected', { block: node.block.id.toString(), height: node.height });
        this.#ancestors.dropHeldDescendants(node.key);
      }
      try {
        this.#onAccepted?.(chosen.block);
      } catch (err) {
        this.#log.error('onAccepted callback failed', { error: describe(err) });
      }
    }
  }

  /** Follows the Snowball preferences from the root to a leaf; tells the VM when the leaf changed. */
  async #updatePreference(): Promise<void> {
    const node = this.#tree?.updatePreference();
    if (!node) return;
    this.#builder.preferenceChanged();
    try {
      await this.#vm.setPreference(node.block.id);
    } catch (err) {
      this.#log.error('setPreference failed', { block: node.block.id.toString(), error: describe(err) });
    }
  }

  /**
   * What we vote when asked about a block at `height`: our preferred block at that height (accepted
   * or processing), or our preferred tip when our preferred chain is shorter. A vote counts for the
   * block's ancestors too, and a query carries the querier's preferred leaf, so this tells the
   * querier as much as our tip would while naming a block it most likely knows (avalanchego's
   * "preferred ID at height").
   */
  async #voteAtHeight(height: number | undefined): Promise<Id | undefined> {
    const tree = this.#tree;
    if (!tree) return undefined;
    if (height === undefined || !Number.isSafeInteger(height)) return tree.preferred.block.id;
    const vote = tree.preferredAt(height);
    if (vote) return vote;
    try {
      return await this.#vm.getBlockIdAtHeight(height);
    } catch {
      return tree.root.block.id;
    }
  }

  // ---- messages from peers ---------------------------------------------------------------------

  /**
   * A peer asks for our preference, carrying its preferred block: issue it (fetching unknown
   * ancestors from the peer), then answer with our preference at that block's height.
   */
  async onPushQuery(from: ShortId, requestId: number, bytes: Uint8Array): Promise<void> {
    if (this.#state !== 'running') return;
    try {
      // A query from this node carries one of its own blocks (loopback): no need to parse it again.
      let block: Block | undefined = from.equals(this.#nodeId) ? this.#polls.queriedBlock(bytes) : undefined;
      try {
        block ??= await this.#vm.parseBlock(bytes);
      } catch (err) {
        this.#log.debug('unparseable block in push query', { from: from.toString(), error: describe(err) });
      }
      if (block && this.#state === 'running') {
        const b = block;
        if (!this.#tree?.lookup(block.id.key)) await this.#enqueue(() => this.#add(b, from));
      }
      const vote = await this.#voteAtHeight(block ? heightOf(block) : undefined);
      if (this.#state === 'running' && vote) this.#transport.chits(from, requestId, vote, this.#tree?.root.block.id);
    } catch (err) {
      this.#log.warn('push query handling failed', { from: String(from), error: describe(err) });
    }
  }

  /**
   * A peer asks for our preference at a block it sent us before (by ID): answered with our preference
   * at that block's height; a block we do not know is fetched from the asker and answered with our
   * preference meanwhile.
   */
  async onPullQuery(from: ShortId, requestId: number, blockId: Id): Promise<void> {
    if (this.#state !== 'running') return;
    try {
      const key = blockId.key;
      const known = this.#tree?.lookup(key);
      const a = this.#ancestors;
      if (!known && !a.isHeld(key) && !a.isDecided(key) && !a.failedLately(key)) a.fetch(blockId, key, from);
      const vote = await this.#voteAtHeight(known?.height);
      if (this.#state === 'running' && vote) this.#transport.chits(from, requestId, vote, this.#tree?.root.block.id);
    } catch (err) {
      this.#log.warn('pull query handling failed', { from: String(from), error: describe(err) });
    }
  }

  /**
   * A validator's answer to one of our polls (or to our frontier gossip): its vote, and the last
   * block it accepted when it differs from the vote (`accepted`). An accepted block this node lacks
   * is fetched from the voter (Ancestors.noteAccepted).
   */
  onChits(from: ShortId, requestId: number, preferred: Id, accepted?: Id): void {
    if (this.#state !== 'running') return;
    try {
      if (accepted) this.#ancestors.noteAccepted(from, accepted);
      this.#frontier.arm();
      const key = preferred.key;
      const poll = this.#polls.vote(requestId, from.key, key);
      if (!poll) return;
      if (this.#ancestors.isHeld(key)) this.#ancestors.fetchMissingAncestor(key, from);
      else if (!this.#ancestors.knows(key)) this.#ancestors.fetch(preferred, key, from);
      this.#polls.settle(poll);
    } catch (err) {
      this.#log.warn('chits handling failed', { error: describe(err) });
    }
  }

  /** A query (or Get) to `from` failed: it counts nothing. */
  onQueryFailed(from: ShortId, requestId: number): void {
    if (this.#state !== 'running') return;
    try {
      const fromKey = from.key;
      if (this.#ancestors.takeGet(requestId, fromKey) !== undefined) return;
      this.#polls.fail(requestId, fromKey);
    } catch (err) {
      this.#log.warn('query failure handling failed', { error: describe(err) });
    }
  }

  /** A peer asks for a block: answer with its bytes when we have it. */
  async onGet(from: ShortId, requestId: number, blockId: Id): Promise<void> {
    if (this.#state !== 'running') return;
    try {
      const key = blockId.key;
      let block: Block | undefined = this.#tree?.lookup(key)?.block ?? this.#ancestors.heldBlock(key);
      if (!block) {
        try {
          block = await this.#vm.getBlock(blockId);
        } catch {
          this.#log.trace('get for an unknown block', { from: from.toString(), block: blockId.toString() });
          return;
        }
      }
      if (this.#state === 'running') this.#transport.put(from, requestId, block.bytes);
    } catch (err) {
      this.#log.warn('get handling failed', { error: describe(err) });
    }
  }

  /**
   * A block another node accepted, sent unasked (to nodes that are not validators, which no poll
   * reaches): issued like a pushed block — unknown ancestors fetched from the sender, then polled
   * among the validators — but not answered.
   */
  async onGossipedBlock(from: ShortId, bytes: Uint8Array): Promise<void> {
    if (this.#state !== 'running') return;
    try {
      let block: Block;
      try {
        block = await this.#vm.parseBlock(bytes);
      } catch (err) {
        this.#log.debug('unparseable gossiped block', { from: from.toString(), error: describe(err) });
        return;
      }
      const key = block.id.key;
      if (this.#state === 'running' && !this.#tree?.lookup(key) && (heightOf(block) ?? Number.POSITIVE_INFINITY) > (this.#tree?.root.height ?? 0)) {
        await this.#enqueue(() => this.#add(block, from));
      }
    } catch (err) {
      this.#log.warn('gossiped block handling failed', { from: String(from), error: describe(err) });
    }
  }

  /** The answer to one of our Gets. Unsolicited blocks, or blocks other than the one asked for, are dropped. */
  async onPut(from: ShortId, requestId: number, bytes: Uint8Array): Promise<void> {
    if (this.#state !== 'running') return;
    try {
      const blockKey = this.#ancestors.takeGet(requestId, from.key);
      if (blockKey === undefined) {
        this.#log.debug('unexpected put', { from: from.toString(), requestId });
        return;
      }
      let block: Block;
      try {
        block = await this.#vm.parseBlock(bytes);
      } catch (err) {
        this.#log.debug('unparseable block in put', { from: from.toString(), error: describe(err) });
        return;
      }
      if (block.id.key !== blockKey) {
        this.#log.debug('put carried another block than asked for', { from: from.toString(), block: block.id.toString() });
        return;
      }
      await this.#enqueue(() => this.#add(block, from));
    } catch (err) {
      this.#log.warn('put handling failed', { error: describe(err) });
    }
  }
}
