/**
 * The Snowman engine: decides a linear chain of blocks with one Snowball per tree node.
 *
 * Blocks form a tree rooted at the last accepted block. Each node of the tree that has processing
 * children (the root included) holds a Snowball deciding among them. A poll samples k validators
 * (stake-weighted, with replacement), sends each distinct one a PushQuery with our preferred tip and
 * weighs its Chits by how often it was drawn. Votes are transitive: a chit for B counts for B and every
 * processing ancestor of B. A finished poll is applied from the root down: a node's Snowball records
 * the votes its children got, and only a child with >= alpha votes is descended into; every other
 * subtree records an unsuccessful poll. When the root's Snowball finalizes on child C, C is accepted,
 * its siblings and all their descendants are rejected, and C becomes the root (repeated while
 * possible). The preference follows the Snowball preferences from the root to a leaf.
 *
 * Everything that changes the tree runs in one serialized task queue, so the VM's async calls never
 * interleave. Input from peers is checked, logged and dropped when bad; the on* handlers never throw.
 *
 * Liveness without spinning: while the validators that could answer (connected, not benched) hold
 * less than alpha/k of the stake, no poll is sent — the engine rechecks on a slow timer and says why
 * (rate-limited log, `stats.waiting`). A build that fails, or yields a block that fails verification
 * or is not new, is retried after an exponential backoff, and every build yields a turn of the event
 * loop, so a misbehaving VM cannot starve the node.
 */
import type { Block, ChainVM, Id, Logger, ShortId } from '@cornice/sdk';
import { ConsensusError } from '../errors.js';
import { snowParamsProblem, type SnowParams } from '../params.js';
import { Snowball } from '../snowball/snowball.js';
import type { EngineTransport, Reachability, Scheduler, ValidatorSampler } from './types.js';

/** Bounds on the engine's bookkeeping. */
export interface EngineLimits {
  /** Blocks held while their parent is fetched (oldest evicted beyond this). */
  maxHeldBlocks: number;
  /** How long a held block waits for its parent. */
  heldTtlMs: number;
  /** Outstanding Get requests. */
  maxOutstandingGets: number;
  /** How long a Get may stay unanswered before the block may be asked again (default: the query timeout). */
  getTimeoutMs: number;
  /** IDs of recently decided or dropped blocks remembered (so votes for them are not fetched again). */
  maxRecentlyDecided: number;
  /** Backoff after a failed build: the first delay, doubled per consecutive failure up to the max. */
  buildBackoffMinMs: number;
  buildBackoffMaxMs: number;
  /** While too little stake is reachable: how often to look again, and how often to say so in the log. */
  waitRecheckMs: number;
  waitLogIntervalMs: number;
  /**
   * A block whose verify failed is not verified again for this long (then it may be: a verify can
   * fail for a while and then pass, e.g. a timestamp a little ahead of this node's clock).
   */
  failedVerifyTtlMs: number;
  /**
   * Pacing of polls while nothing progresses (no successful poll, no block added or accepted): after
   * paceAfterMs each poll waits 1/paceSlope of the time stalled beyond it, within paceMinMs..paceMaxMs.
   */
  paceAfterMs: number;
  paceSlope: number;
  paceMinMs: number;
  paceMaxMs: number;
  /**
   * While nothing is processing, how often this node asks one validator for its last accepted block
   * (a PullQuery of our own; the Chits carry the answerer's last accepted block), so that a node that
   * missed blocks hears of them and fetches them.
   */
  frontierGossipMs: number;
  /** How long peers may report accepted blocks above ours, without an accept here, before `stats.behind` says so. */
  behindAfterMs: number;
}

export const DEFAULT_ENGINE_LIMITS: Readonly<EngineLimits> = Object.freeze({
  maxHeldBlocks: 1024,
  heldTtlMs: 60_000,
  maxOutstandingGets: 256,
  getTimeoutMs: 2_000,
  maxRecentlyDecided: 4096,
  buildBackoffMinMs: 100,
  buildBackoffMaxMs: 30_000,
  waitRecheckMs: 1_000,
  waitLogIntervalMs: 60_000,
  failedVerifyTtlMs: 2_000,
  paceAfterMs: 2_000,
  paceSlope: 20,
  paceMinMs: 10,
  paceMaxMs: 1_000,
  frontierGossipMs: 5_000,
  behindAfterMs: 5_000,
});

export interface SnowmanEngineOptions {
  vm: ChainVM;
  params: SnowParams;
  transport: EngineTransport;
  validators: ValidatorSampler;
  nodeId: ShortId;
  scheduler: Scheduler;
  log: Logger;
  /**
   * A poll ends this long after it was sent, whatever answered (default 2000, reference §8). Each
   * request's own deadline comes from the transport (RequestSender); this bounds the poll as a whole.
   */
  queryTimeoutMs?: number;
  /** Called after each block is accepted, in height order. */
  onAccepted?: (block: Block) => void;
  /** Called once when the engine halts (see halt()). */
  onHalt?: (reason: string) => void;
  /**
   * How long after its parent became preferred this node may build a block at `height` (ms; 0 or
   * absent: at once). Gives each height one proposer first, so that validators holding the same
   * gossiped txs do not all build competing blocks (see chains/proposers.ts).
   */
  proposerDelay?: (height: number) => number;
  /**
   * A poll drawn from this node alone (a one-node network) is answered in the engine, without
   * messages (default true; see #answerSelfPoll). Tests that drive the message flow by hand turn it off.
   */
  directSelfPolls?: boolean;
  limits?: Partial<EngineLimits>;
}

/** 'halted': a VM accept failed (or the chain halted it), so nothing more is decided; stop() still cleans up. */
export type EngineState = 'idle' | 'starting' | 'running' | 'halted' | 'stopping' | 'stopped';

export interface EngineStats {
  state: EngineState;
  lastAcceptedHeight: number;
  /** The last accepted block's ID (cb58), once started. */
  lastAcceptedId: string | undefined;
  processing: number;
  held: number;
  pollsInFlight: number;
  outstandingGets: number;
  /** Processing blocks on the preferred branch. */
  preferredDepth: number;
  rootChildren: number;
  rootConfidence: number;
  rootRogue: boolean;
  /** Polls applied in which some child of the root got alpha votes, and those in which none did. */
  successfulPolls: number;
  failedPolls: number;
  /** Polls sent since start. */
  pollsStarted: number;
  /** Of those, polls of this node alone asked again inside the task of the one before (#applyPoll). */
  selfPollsRepeated: number;
  /** Vote weight received, and the part of it that named blocks we did not know (ignored). */
  voteWeight: number;
  unknownVoteWeight: number;
  /** Why the engine halted, when it did. */
  haltReason: string | undefined;
  /** Set while polls are held back because too little stake is reachable. */
  waiting: Reachability | undefined;
  /** When the oldest processing block joined the tree (scheduler ms), if any is processing. */
  oldestProcessingSince: number | undefined;
  /** Consecutive failed builds (reset by a good one). */
  buildFailures: number;
  /** When the last block was accepted (or the engine started), scheduler ms. */
  lastAcceptedAt: number;
  /** Since when the VM has had txs to build (waitForEvent said so) without a block accepted since; undefined when none wait. */
  txsWaitingSince: number | undefined;
  /**
   * Set when peers have reported accepted blocks this node has not accepted, for behindAfterMs
   * without an accept here: the highest such height when known (the blocks are being fetched).
   */
  behind: { peerHeight: number | undefined; forMs: number } | undefined;
  /** Consecutive polls that ended without alpha votes at the root (the next ones are paced). */
  failedPollStreak: number;
}

interface TreeNode {
  readonly block: Block;
  readonly key: string;
  readonly parentKey: string;
  readonly height: number;
  /** When it joined the tree (scheduler ms). */
  readonly since: number;
  /** Keys of processing children, in arrival order. */
  readonly children: string[];
  /** Decides among the children; created with the first child. */
  sb: Snowball | undefined;
  /** Validators sent this block in a PushQuery already: later polls ask them by ID (PullQuery). */
  pushedTo?: Set<string>;
}

/** A block's height, or undefined when its VM cannot tell yet (it throws until it knows the parent). */
function heightOf(block: Block): number | undefined {
  try {
    return block.height;
  } catch {
    return undefined;
  }
}

interface Poll {
  readonly requestId: number;
  /** Validators yet to answer (node key -> how often it was drawn). */
  readonly pending: Map<string, number>;
  /** The weight of `pending`. */
  pendingWeight: number;
  /** Votes so far (block key -> weight), and their weight. */
  readonly votes: Map<string, number>;
  received: number;
  timer: { cancel(): void } | undefined;
  /** Answered by this node alone (#answerSelfPoll): asked again, it answers the same at once. */
  readonly self: boolean;
}

interface Held {
  readonly block: Block;
  readonly since: number;
}

interface OutstandingGet {
  readonly requestId: number;
  readonly blockKey: string;
  readonly from: string;
  readonly since: number;
}

/** A set that forgets its oldest entries beyond `max`. */
class RecentSet {
  readonly #items = new Set<string>();
  constructor(private readonly max: number) {}
  add(key: string): void {
    if (this.#items.has(key)) return;
    this.#items.add(key);
    if (this.#items.size > this.max) {
      const oldest = this.#items.values().next().value;
      if (oldest !== undefined) this.#items.delete(oldest);
    }
  }
  has(key: string): boolean {
    return this.#items.has(key);
  }
  clear(): void {
    this.#items.clear();
  }
}

const describe = (err: unknown): string => (err instanceof Error ? `${err.name}: ${err.message}` : String(err));

/** A block's ID for a log line, even from a VM whose getter throws. */
function safeId(block: Block): string {
  try {
    return block.id.toString();
  } catch {
    return '?';
  }
}

/**
 * What became of a block given to the engine. 'dropped': invalid for good (remembered as decided);
 * 'failed': its verify threw (not remembered for long: see failedVerifyTtlMs).
 */
type AddResult = 'added' | 'known' | 'held' | 'dropped' | 'failed' | 'ignored';

/** How long a passed reachability check is trusted before the next poll looks again. */
const REACHABILITY_REUSE_MS = 100;

/**
 * Polls of this node alone answered in a row without a turn of the event loop (#answerSelfPoll);
 * the next waits for one, so that I/O still gets in.
 */
const SELF_POLL_BURST = 32;

/** What `waiting for validators: …` says: who is reachable against what a poll needs. */
export function describeReachability(r: Reachability, params: { k: number; alpha: number }): string {
  const pct = (x: number) => Math.floor(x * 100);
  const share = (w: number) => (r.totalWeight > 0 ? w / r.totalWeight : 0);
  const benched = r.benched > 0 ? ` (${r.benched} benched)` : '';
  const stake =
    r.unresponsive > 0
      ? `, ${r.unresponsive} not answering, ${pct(share(r.reachableWeight - r.unresponsiveWeight))}% of stake answering`
      : `, ${pct(share(r.reachableWeight))}% of stake`;
  return `${r.reachable} of ${r.validators} connected${benched}${stake}, need ${Math.ceil((params.alpha / params.k) * 100)}%`;
}

/**
 * Whether the reachable stake (connected, not benched) can give a poll alpha of k votes. Validators
 * that stopped answering count here — only a query shows they are back — but not in answering().
 */
export function canPoll(r: Reachability, params: { k: number; alpha: number }): boolean {
  return r.totalWeight > 0 && r.reachableWeight * params.k >= params.alpha * r.totalWeight;
}

/** Whether the stake that answers (reachable, and no failed request since its last answer) can give a poll alpha of k votes. */
export function answering(r: Reachability, params: { k: number; alpha: number }): boolean {
  return r.totalWeight > 0 && (r.reachableWeight - r.unresponsiveWeight) * params.k >= params.alpha * r.totalWeight;
}

export class SnowmanEngine {
  readonly #vm: ChainVM;
  readonly #params: SnowParams;
  readonly #transport: EngineTransport;
  readonly #validators: ValidatorSampler;
  readonly #nodeId: ShortId;
  readonly #proposerDelay: ((height: number) => number) | undefined;
  /** The preference this node first had something to build on, and when (the proposer delay counts from there). */
  #buildWindow: { key: string; since: number } | undefined;
  /** Set while the build loop waits for this node's proposer window. */
  #proposerSleep: Promise<void> | undefined;
  /** Blocks this engine sent in its queries, by their bytes object (see onPushQuery). */
  readonly #queried = new WeakMap<Uint8Array, Block>();
  readonly #scheduler: Scheduler;
  readonly #log: Logger;
  readonly #queryTimeoutMs: number;
  readonly #onAccepted: ((block: Block) => void) | undefined;
  readonly #onHalt: ((reason: string) => void) | undefined;
  readonly #limits: EngineLimits;

  #state: EngineState = 'idle';
  #haltReason: string | undefined;
  /** Resolves when the engine halts. */
  readonly #haltedSignal: Promise<void>;
  #signalHalted: () => void = () => {};
  #abort = new AbortController();
  #buildLoop: Promise<void> | undefined;
  #backoff: { cancel(): void; wake(): void } | undefined;
  #queue: Promise<void> = Promise.resolve();

  #root: TreeNode | undefined;
  readonly #processing = new Map<string, TreeNode>();
  #preference: Id | undefined;
  #preferenceKey = '';
  /** The preferred branch below the root (root's preferred child first). */
  #preferredPath: TreeNode[] = [];

  readonly #polls = new Map<number, Poll>();
  #pollRetry: { cancel(): void } | undefined;
  #waiting: Reachability | undefined;
  #reachableAt = Number.NEGATIVE_INFINITY;
  #lastWaitLog = Number.NEGATIVE_INFINITY;
  #buildFailures = 0;
  #nextRequestId = 0;

  readonly #held = new Map<string, Held>();
  readonly #heldByParent = new Map<string, Set<string>>();
  readonly #getsByBlock = new Map<string, OutstandingGet>();
  readonly #getsByRequest = new Map<number, OutstandingGet>();
  readonly #recentlyDecided: RecentSet;
  #lastGc = Number.NEGATIVE_INFINITY;
  #successfulPolls = 0;
  #failedPolls = 0;
  #pollsStarted = 0;
  #selfPollsRepeated = 0;
  readonly #directSelfPolls: boolean;
  /** Self-only polls answered since the event loop last turned (#answerSelfPoll). */
  #selfPollBurst = 0;
  #voteWeight = 0;
  #unknownVoteWeight = 0;
  /** Blocks whose verify failed lately (key -> when): not verified again before failedVerifyTtlMs. */
  readonly #failedVerify = new Map<string, number>();
  #failedPollStreak = 0;
  /** The last successful poll, block added or accepted (scheduler ms): polls are paced when it is long ago. */
  #progressAt = 0;
  /** Set while the next poll waits out the pacing of failed polls. */
  #pollPace: { cancel(): void } | undefined;
  #frontierTimer: { cancel(): void } | undefined;
  #frontierTurn = 0;
  #lastAcceptedAt = 0;
  #txsWaitingSince: number | undefined;
  /** The highest accepted block peers reported that this node lacks (see stats.behind). */
  #behind: { key: string; height: number | undefined; since: number } | undefined;

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
    this.#queryTimeoutMs = opts.queryTimeoutMs ?? 2_000;
    this.#directSelfPolls = opts.directSelfPolls ?? true;
    this.#onAccepted = opts.onAccepted;
    this.#proposerDelay = opts.proposerDelay;
    this.#onHalt = opts.onHalt;
    this.#limits = { ...DEFAULT_ENGINE_LIMITS, getTimeoutMs: this.#queryTimeoutMs, ...opts.limits };
    this.#recentlyDecided = new RecentSet(this.#limits.maxRecentlyDecided);
    this.#haltedSignal = new Promise((resolve) => (this.#signalHalted = resolve));
  }

  // ---- lifecycle -------------------------------------------------------------------------------

  /**
   * Takes the last accepted block as the root, moves the VM to 'bootstrapping' then 'normalOp' (real
   * bootstrapping arrives with networking), and starts building a block whenever the VM asks.
   */
  async start(): Promise<void> {
    if (this.#state !== 'idle') throw new ConsensusError('AlreadyStarted', 'the engine was already started');
    this.#state = 'starting';
    const lastId = await this.#vm.lastAccepted();
    const last = await this.#vm.getBlock(lastId);
    this.#root = { block: last, key: last.id.key, parentKey: last.parentId.key, height: last.height, since: this.#scheduler.now(), children: [], sb: undefined };
    await this.#vm.setState('bootstrapping');
    await this.#vm.setState('normalOp');
    this.#preference = last.id;
    this.#preferenceKey = this.#root.key;
    await this.#vm.setPreference(last.id);
    if (this.#state !== 'starting') return; // stopped while starting
    this.#state = 'running';
    this.#lastAcceptedAt = this.#scheduler.now();
    this.#log.info('consensus started', { nodeId: this.#nodeId.toString(), lastAccepted: last.id.toString(), height: last.height });
    // Say at once when this chain cannot make progress (polls check again when there is work).
    this.#enoughReachable();
    this.#armFrontierGossip();
    this.#buildLoop = this.#runBuildLoop();
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
    this.#backoff?.wake();
    this.#cancelTimers();
    if (this.#buildLoop) await Promise.race([this.#buildLoop, this.#haltedSignal]);
    // Wait for the task queue to settle (tasks enqueued meanwhile see the state and return at once).
    for (let q = this.#queue; ; q = this.#queue) {
      await Promise.race([q, this.#haltedSignal]);
      if (q === this.#queue || this.#haltReason !== undefined) break;
    }
    this.#held.clear();
    this.#heldByParent.clear();
    this.#getsByBlock.clear();
    this.#getsByRequest.clear();
    this.#state = 'stopped';
    if (wasRunning) this.#log.info('consensus stopped');
  }

  async #runBuildLoop(): Promise<void> {
    const signal = this.#abort.signal;
    while (this.#state === 'running') {
      let event: string;
      try {
        event = await this.#vm.waitForEvent(signal);
      } catch (err) {
        if (this.#state !== 'running' || signal.aborted) break;
        await this.#buildFailed('waitForEvent failed', { error: describe(err) });
        continue;
      }
      if (this.#state !== 'running') break;
      if (event !== 'pendingTxs') continue;
      this.#txsWaitingSince ??= this.#scheduler.now();
      const wait = this.#proposerWait();
      if (wait > 0) {
        // Then ask the VM again (another node's block may have taken the txs); a new preference
        // (a new height, another window) wakes it early.
        this.#proposerSleep = this.#sleep(wait);
        await this.#proposerSleep;
        this.#proposerSleep = undefined;
        continue;
      }
      const outcome = await this.#enqueue(() => this.#build()).catch((err: unknown) => ({ problem: 'block building failed', error: describe(err) }));
      if (this.#state !== 'running') break;
      if (outcome === undefined) {
        this.#buildFailures = 0;
        // Let HTTP, timers and signals through even if the VM asks for blocks without pause.
        await this.#scheduler.yield();
      } else {
        const { problem, ...fields } = outcome;
        await this.#buildFailed(problem, fields);
      }
    }
  }

  /**
   * Ms before this node may build on its preference: its proposer window for the next height, counted
   * from when it first had txs to build on this preference (the txs reach every node at about the
   * same time, so the windows line up across nodes).
   */
  #proposerWait(): number {
    if (!this.#proposerDelay) return 0;
    const tip = this.#processing.get(this.#preferenceKey) ?? this.#root;
    if (!tip) return 0;
    const now = this.#scheduler.now();
    if (this.#buildWindow?.key !== tip.key) this.#buildWindow = { key: tip.key, since: now };
    return this.#buildWindow.since + this.#proposerDelay(tip.height + 1) - now;
  }

  /** Builds one block and issues it; undefined when a new block joined the tree, else what went wrong. */
  async #build(): Promise<{ problem: string; level?: 'warn' | 'debug'; [field: string]: unknown } | undefined> {
    if (this.#state !== 'running') return undefined;
    let block: Block;
    try {
      block = await this.#vm.buildBlock();
    } catch (err) {
      // The txs went into another node's block meanwhile: routine on a network (see ChainVM).
      const routine = (err as { code?: unknown } | null)?.code === 'NothingToBuild';
      return { problem: routine ? 'nothing to build' : 'buildBlock failed', error: describe(err), ...(routine ? { level: 'debug' as const } : {}) };
    }
    const result = await this.#add(block, undefined);
    if (result === 'added' || result === 'held' || this.#state !== 'running') return undefined;
    return { problem: result === 'dropped' || result === 'failed' ? 'built block failed verification' : 'built block is not new', block: safeId(block), result };
  }

  /** Logs a failed build at warn and sleeps for the next backoff step (stop() cuts it short). */
  async #buildFailed(problem: string, { level = 'warn', ...fields }: Record<string, unknown> & { level?: 'warn' | 'debug' }): Promise<void> {
    this.#buildFailures += 1;
    const { buildBackoffMinMs: min, buildBackoffMaxMs: max } = this.#limits;
    const delayMs = Math.min(max, min * 2 ** Math.min(this.#buildFailures - 1, 30));
    this.#log[level](problem, { ...fields, failures: this.#buildFailures, retryInMs: delayMs });
    await this.#sleep(delayMs);
  }

  /** A scheduler sleep that stop() cuts short. */
  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = this.#scheduler.setTimeout(() => {
        this.#backoff = undefined;
        resolve();
      }, ms);
      this.#backoff = {
        cancel: () => timer.cancel(),
        wake: () => {
          timer.cancel();
          this.#backoff = undefined;
          resolve();
        },
      };
    });
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

  // ---- public state ----------------------------------------------------------------------------

  /** The consensus parameters in use. */
  get params(): Readonly<SnowParams> {
    return this.#params;
  }

  /** The preferred tip (the last accepted block when nothing is processing). */
  get preference(): Id {
    if (!this.#preference) throw new ConsensusError('NotRunning', 'the engine has not started');
    return this.#preference;
  }

  get lastAcceptedId(): Id {
    if (!this.#root) throw new ConsensusError('NotRunning', 'the engine has not started');
    return this.#root.block.id;
  }

  get lastAcceptedHeight(): number {
    return this.#root?.height ?? 0;
  }

  /** Blocks verified and not yet decided. */
  get processing(): number {
    return this.#processing.size;
  }

  /** Polls in flight. */
  get pollsInFlight(): number {
    return this.#polls.size;
  }

  /** Blocks waiting for an unknown parent. */
  get held(): number {
    return this.#held.size;
  }

  /** A snapshot for health checks and debugging. */
  get stats(): EngineStats {
    const root = this.#root;
    let depth = 0;
    for (let n = root; n?.sb; n = this.#processing.get(n.sb.preference)) depth += 1;
    let oldest: number | undefined;
    for (const n of this.#processing.values()) if (oldest === undefined || n.since < oldest) oldest = n.since;
    return {
      state: this.#state,
      lastAcceptedHeight: root?.height ?? 0,
      lastAcceptedId: root?.block.id.toString(),
      processing: this.#processing.size,
      held: this.#held.size,
      pollsInFlight: this.#polls.size,
      outstandingGets: this.#getsByRequest.size,
      preferredDepth: depth,
      rootChildren: root?.children.length ?? 0,
      rootConfidence: root?.sb?.confidence ?? 0,
      rootRogue: root?.sb?.rogue ?? false,
      successfulPolls: this.#successfulPolls,
      failedPolls: this.#failedPolls,
      pollsStarted: this.#pollsStarted,
      selfPollsRepeated: this.#selfPollsRepeated,
      voteWeight: this.#voteWeight,
      unknownVoteWeight: this.#unknownVoteWeight,
      haltReason: this.#haltReason,
      waiting: this.#waiting,
      oldestProcessingSince: oldest,
      buildFailures: this.#buildFailures,
      lastAcceptedAt: this.#lastAcceptedAt,
      txsWaitingSince: this.#txsWaitingSince,
      behind: this.#behindReport(),
      failedPollStreak: this.#failedPollStreak,
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
      // The block a peer said it accepted, now fetched: how far behind this node is.
      if (this.#behind?.key === key && this.#behind.height === undefined) this.#behind.height = heightOf(block);
      if (result === 'added') {
        added = true;
        for (const child of this.#takeHeldChildren(key)) work.push(child);
      } else if (result === 'dropped') {
        this.#dropHeldDescendants(key);
      } else if (result === 'failed') {
        // Not invalid for good: they may come again (and be fetched again) once it can be verified.
        this.#dropHeldDescendants(key, false);
      }
    }
    if (added && this.#state === 'running') {
      await this.#updatePreference();
      this.#maybeStartPolls();
    }
    return firstResult ?? 'ignored';
  }

  async #addOne(block: Block, key: string, source: ShortId | undefined): Promise<AddResult> {
    const root = this.#root;
    if (this.#state !== 'running' || !root) return 'ignored';
    if (this.#processing.has(key) || key === root.key) return 'known';
    if (this.#recentlyDecided.has(key) || this.#failedLately(key)) return 'ignored';
    const parentKey = block.parentId.key;
    const parent = parentKey === root.key ? root : this.#processing.get(parentKey);
    // Some VMs (the timestamp VM) know a block's height only once they know its parent.
    const known = heightOf(block);
    if (known === undefined && !parent) {
      this.#hold(block, key, parentKey, source);
      return 'held';
    }
    const height = known ?? Number.NaN;
    if (!Number.isSafeInteger(height)) return 'ignored';
    if (height <= root.height) {
      // A decided height: accepted here, or conflicting with what was (votes for it are not fetched again).
      this.#recentlyDecided.add(key);
      return 'ignored';
    }
    if (!parent) {
      if (height === root.height + 1 || this.#recentlyDecided.has(parentKey)) {
        // Its parent conflicts with the last accepted block, or was dropped or rejected.
        this.#recentlyDecided.add(key);
        return 'dropped';
      }
      this.#hold(block, key, parentKey, source);
      return 'held';
    }
    if (height !== parent.height + 1) {
      this.#log.debug('block height does not follow its parent', { block: block.id.toString(), height, parentHeight: parent.height });
      this.#recentlyDecided.add(key);
      return 'dropped';
    }
    try {
      await block.verify();
    } catch (err) {
      // Our own block failing is a VM bug worth a warning; a peer's is routine.
      const level = source === undefined ? 'warn' : 'debug';
      this.#log[level]('block failed verification', { block: block.id.toString(), height, error: describe(err), ...(source ? { from: source.toString() } : { own: true }) });
      this.#noteFailedVerify(key);
      return 'failed';
    }
    const node: TreeNode = { block, key, parentKey, height, since: this.#scheduler.now(), children: [], sb: undefined };
    this.#processing.set(key, node);
    parent.children.push(key);
    if (parent.sb) parent.sb.add(key);
    else parent.sb = new Snowball(this.#params, key);
    this.#log.trace('block issued', { block: block.id.toString(), height });
    this.#progressAt = this.#scheduler.now();
    return 'added';
  }

  #hold(block: Block, key: string, parentKey: string, source: ShortId | undefined): void {
    if (!this.#held.has(key)) {
      while (this.#held.size >= this.#limits.maxHeldBlocks) {
        const oldest = this.#held.keys().next().value;
        if (oldest === undefined) break;
        this.#unhold(oldest);
      }
      this.#held.set(key, { block, since: this.#scheduler.now() });
      let siblings = this.#heldByParent.get(parentKey);
      if (!siblings) this.#heldByParent.set(parentKey, (siblings = new Set()));
      siblings.add(key);
    }
    if (source) this.#fetchMissingAncestor(key, source);
  }

  /** Asks `from` for the unknown parent at the bottom of the held chain that `key` belongs to. */
  #fetchMissingAncestor(key: string, from: ShortId): void {
    let h = this.#held.get(key);
    for (let i = 0; h && i <= this.#held.size; i++) {
      const parent = this.#held.get(h.block.parentId.key);
      if (!parent) break;
      h = parent;
    }
    // A missing link at or below the last accepted height can only conflict with it: leave it to expire.
    const lowest = h ? heightOf(h.block) : undefined;
    if (!h || (lowest !== undefined && lowest <= (this.#root?.height ?? 0) + 1)) return;
    const missing = h.block.parentId;
    const missingKey = missing.key;
    if (this.#processing.has(missingKey) || missingKey === this.#root?.key || this.#recentlyDecided.has(missingKey) || this.#failedLately(missingKey)) return;
    this.#fetch(missing, missingKey, from);
  }

  #unhold(key: string): Held | undefined {
    const h = this.#held.get(key);
    if (!h) return undefined;
    this.#held.delete(key);
    const parentKey = h.block.parentId.key;
    const siblings = this.#heldByParent.get(parentKey);
    siblings?.delete(key);
    if (siblings?.size === 0) this.#heldByParent.delete(parentKey);
    return h;
  }

  #takeHeldChildren(parentKey: string): Block[] {
    const keys = this.#heldByParent.get(parentKey);
    if (!keys) return [];
    const out: Block[] = [];
    for (const k of [...keys]) {
      const h = this.#unhold(k);
      if (h) out.push(h.block);
    }
    return out;
  }

  /**
   * Remembers a block whose verify threw, for failedVerifyTtlMs: a verify may fail for a while and
   * then pass (a timestamp ahead of this node's clock, a VM that lost track of the parent's state), so
   * it is not remembered as decided; a block that comes again later is verified again (test "a block
   * whose verify failed is verified again when it comes back").
   */
  #noteFailedVerify(key: string): void {
    this.#failedVerify.delete(key);
    this.#failedVerify.set(key, this.#scheduler.now());
    if (this.#failedVerify.size > this.#limits.maxRecentlyDecided) {
      const oldest = this.#failedVerify.keys().next().value;
      if (oldest !== undefined) this.#failedVerify.delete(oldest);
    }
  }

  #failedLately(key: string): boolean {
    const at = this.#failedVerify.get(key);
    if (at === undefined) return false;
    if (this.#scheduler.now() - at < this.#limits.failedVerifyTtlMs) return true;
    this.#failedVerify.delete(key);
    return false;
  }

  /**
   * Lets go of the held blocks waiting on `key`, remembering them as decided when `key` is invalid for
   * good (`remember`), not when its verify merely failed (they may come again once it passes).
   */
  #dropHeldDescendants(key: string, remember = true): void {
    const stack = [key];
    while (stack.length > 0) {
      const k = stack.pop() as string;
      const children = this.#heldByParent.get(k);
      if (!children) continue;
      for (const c of [...children]) {
        this.#unhold(c);
        if (remember) this.#recentlyDecided.add(c);
        stack.push(c);
      }
    }
  }

  // ---- polls -----------------------------------------------------------------------------------

  #maybeStartPolls(): void {
    if (this.#state !== 'running' || this.#processing.size === 0 || this.#polls.size >= this.#params.concurrentRepolls) return;
    if (this.#pollPace || this.#paced()) return;
    if (!this.#enoughReachable()) return;
    while (this.#state === 'running' && this.#processing.size > 0 && this.#polls.size < this.#params.concurrentRepolls) {
      if (!this.#startPoll()) break;
    }
  }

  /**
   * Whether the next poll must wait because nothing has progressed for a while (then one timer starts
   * it later): after paceAfterMs without a successful poll, a block added or one accepted, each poll
   * waits (stalled − paceAfterMs) / paceSlope ms, within paceMinMs..paceMaxMs — 1 s after 22 s with
   * the defaults. Nodes stuck on blocks they could not agree on spun ~1,000 failed polls a second;
   * a split that polls can still break (a random sample reaching alpha) is left seconds at full
   * speed first (test "polls that make no progress are paced").
   */
  #paced(): boolean {
    const { paceAfterMs, paceSlope, paceMinMs, paceMaxMs } = this.#limits;
    const stalled = this.#scheduler.now() - this.#progressAt;
    if (this.#failedPollStreak === 0 || stalled < paceAfterMs) return false;
    const delay = Math.min(paceMaxMs, Math.max(paceMinMs, (stalled - paceAfterMs) / paceSlope));
    this.#pollPace = this.#scheduler.setTimeout(() => {
      this.#pollPace = undefined;
      if (this.#state !== 'running' || this.#processing.size === 0 || this.#polls.size >= this.#params.concurrentRepolls) return;
      if (this.#enoughReachable()) this.#startPoll();
    }, delay);
    return true;
  }

  /**
   * Whether enough stake could answer for a poll to succeed. When not, polls wait: a recheck is
   * scheduled (one timer, however often this is called) and the reason logged at most once per
   * waitLogIntervalMs.
   */
  #enoughReachable(): boolean {
    const now = this.#scheduler.now();
    // Reachability changes slowly (connections, benching): a recent pass is good enough, which keeps
    // the check off the per-poll path.
    if (!this.#waiting && now - this.#reachableAt < REACHABILITY_REUSE_MS) return true;
    const r = this.#validators.reachability();
    if (canPoll(r, this.#params)) {
      this.#reachableAt = now;
      if (this.#waiting) {
        this.#log.info('validators reachable; polling resumed', { detail: describeReachability(r, this.#params) });
        this.#waiting = undefined;
        this.#armFrontierGossip();
      }
      return true;
    }
    if (!this.#waiting || now - this.#lastWaitLog >= this.#limits.waitLogIntervalMs) {
      this.#lastWaitLog = now;
      this.#log.warn('waiting for validators', {
        detail: describeReachability(r, this.#params),
        connected: r.reachable,
        validators: r.validators,
        benched: r.benched,
        processing: this.#processing.size,
      });
    }
    this.#waiting = r;
    this.#pollRetry ??= this.#scheduler.setTimeout(() => {
      this.#pollRetry = undefined;
      this.#maybeStartPolls();
    }, this.#limits.waitRecheckMs);
    return false;
  }

  #startPoll(): boolean {
    const tip = this.#processing.get(this.#preferenceKey);
    if (!tip) return false;
    const sample = this.#validators.sample(this.#params.k).slice(0, this.#params.k);
    if (sample.length === 0) return false;
    const pending = new Map<string, number>();
    const to: ShortId[] = [];
    for (const id of sample) {
      const n = pending.get(id.key);
      if (n === undefined) to.push(id);
      pending.set(id.key, (n ?? 0) + 1);
    }
    const requestId = this.#newRequestId();
    this.#pollsStarted += 1;
    const self = this.#directSelfPolls && to.length === 1 && to[0]!.equals(this.#nodeId);
    const poll: Poll = { requestId, pending, pendingWeight: sample.length, votes: new Map(), received: 0, timer: undefined, self };
    this.#polls.set(requestId, poll);
    if (self) {
      // This node's answer is its preference, the tip polled, as a query through the transport says.
      poll.votes.set(tip.key, pending.get(to[0]!.key)!);
      poll.received = poll.pendingWeight;
      poll.pendingWeight = 0;
      pending.clear();
      this.#answerSelfPoll(requestId);
      return true;
    }
    poll.timer = this.#scheduler.setTimeout(() => this.#finishPoll(requestId), this.#queryTimeoutMs);
    try {
      const pushed = (tip.pushedTo ??= new Set());
      if (this.#transport.pullQuery && to.every((n) => pushed.has(n.key))) this.#transport.pullQuery(to, requestId, tip.block.id);
      else {
        for (const n of to) pushed.add(n.key);
        // One read of `bytes` for both: a block may hand out a copy on each read (the EVM's does).
        const bytes = tip.block.bytes;
        this.#queried.set(bytes, tip.block);
        this.#transport.pushQuery(to, requestId, bytes);
      }
    } catch (err) {
      this.#log.warn('pushQuery failed', { error: describe(err) });
    }
    return true;
  }

  /**
   * Finishes a poll whose sample is this node alone (a one-node network, or sybil protection off):
   * it needs no message. Through the transport each such poll took two turns of the event loop, and
   * a block needs about beta of them (~0.7 ms of a one-node transfer's latency here); these finish on
   * microtasks, at most SELF_POLL_BURST in a row (#applyPoll repeats one while the burst allows).
   */
  #answerSelfPoll(requestId: number): void {
    const finish = () => this.#finishPoll(requestId);
    if (this.#takeSelfPoll()) queueMicrotask(finish);
    else void this.#scheduler.yield().then(finish);
  }

  /** Counts one more self poll answered in this turn of the event loop; false once SELF_POLL_BURST were. */
  #takeSelfPoll(): boolean {
    if (this.#selfPollBurst >= SELF_POLL_BURST) return false;
    if (this.#selfPollBurst++ === 0) void this.#scheduler.yield().then(() => (this.#selfPollBurst = 0));
    return true;
  }

  #newRequestId(): number {
    do {
      this.#nextRequestId = (this.#nextRequestId + 1) >>> 0;
      // 0xffffffff marks a gossiped block (network GOSSIP_REQUEST_ID).
    } while (this.#polls.has(this.#nextRequestId) || this.#getsByRequest.has(this.#nextRequestId) || this.#nextRequestId === 0xffff_ffff);
    return this.#nextRequestId;
  }

  #finishPoll(requestId: number): void {
    const poll = this.#polls.get(requestId);
    if (!poll) return;
    this.#polls.delete(requestId);
    poll.timer?.cancel();
    if (this.#state !== 'running') return;
    void this.#enqueue(() => this.#applyPoll(poll)).catch(() => undefined);
  }

  /** The processing block a vote for `key` counts for: the block itself, or the nearest processing ancestor of a held one. */
  #voteTarget(key: string): TreeNode | undefined {
    let k = key;
    for (let i = 0; i <= this.#held.size; i++) {
      const node = this.#processing.get(k);
      if (node) return node;
      const h = this.#held.get(k);
      if (!h) return undefined;
      k = h.block.parentId.key;
    }
    return undefined;
  }

  /**
   * Records one poll's `tally` from `root` down the voted path (the nodes off it falter); true when
   * there was a path (the root has children) and every node on it reached alpha.
   */
  #record(root: TreeNode, tally: ReadonlyMap<string, number>): boolean {
    const alpha = this.#params.alpha;
    const faltering: TreeNode[] = [];
    let allOk = root.sb !== undefined;
    for (let node: TreeNode | undefined = root; node?.sb; ) {
      const counts = new Map<string, number>();
      for (const c of node.children) {
        const t = tally.get(c);
        if (t !== undefined) counts.set(c, t);
      }
      const ok = node.sb.recordPoll(counts);
      allOk &&= ok;
      if (node === root) {
        if (ok) {
          this.#successfulPolls += 1;
          this.#failedPollStreak = 0;
          this.#progressAt = this.#scheduler.now();
        } else {
          this.#failedPolls += 1;
          this.#failedPollStreak += 1;
        }
      }
      let next: TreeNode | undefined;
      for (const c of node.children) {
        const child = this.#processing.get(c);
        if (!child) continue;
        if (next === undefined && (tally.get(c) ?? 0) >= alpha) next = child;
        else faltering.push(child);
      }
      node = next;
    }
    while (faltering.length > 0) {
      const n = faltering.pop() as TreeNode;
      if (!n.sb) continue;
      n.sb.recordUnsuccessfulPoll();
      for (const c of n.children) {
        const child = this.#processing.get(c);
        if (child) faltering.push(child);
      }
    }
    return allOk;
  }

  /** Transitive tally of `votes`: a vote for B counts for B and each processing ancestor. */
  #tally(votes: ReadonlyMap<string, number>, onUnknown?: (key: string, weight: number) => void): Map<string, number> {
    const tally = new Map<string, number>();
    for (const [key, weight] of votes) {
      const target = this.#voteTarget(key);
      if (!target) onUnknown?.(key, weight);
      for (let n = target; n; n = this.#processing.get(n.parentKey)) {
        tally.set(n.key, (tally.get(n.key) ?? 0) + weight);
      }
    }
    return tally;
  }

  /**
   * Whether the answers still outstanding could change what `poll` decides (avalanchego's early
   * termination): no, once everyone answered or failed, once even all of them could not bring alpha,
   * or once no block below alpha could reach it with them. A silent minority of validators then
   * costs no time (test "a poll ends as soon as its outcome cannot change").
   */
  #pollSettled(poll: Poll): boolean {
    const pending = poll.pendingWeight;
    if (pending <= 0) return true;
    const alpha = this.#params.alpha;
    if (poll.received + pending < alpha) return true;
    if (pending >= alpha) return false; // even a block nobody voted for yet could reach alpha
    for (const t of this.#tally(poll.votes).values()) if (t < alpha && t + pending >= alpha) return false;
    return true;
  }

  async #applyPoll(poll: Poll): Promise<void> {
    const root = this.#root;
    if (this.#state !== 'running' || !root) return;
    const weightOfPoll = poll.received;
    const tally = this.#tally(poll.votes, (key, weight) => {
      if (!this.#recentlyDecided.has(key) && key !== root.key) this.#unknownVoteWeight += weight;
    });
    this.#voteWeight += weightOfPoll;
    // A poll of this node alone that voted for what is still its preference would get the same
    // answer again at once (nothing else runs in between): it is asked again here, each time
    // counted as another poll, until the root's child is decided, a node on the path falters, or
    // the turn's burst is spent. One task per poll, ~33 a one-transfer EVM block, took ~0.33 ms
    // from the block built to its accept; now ~0.2 ms.
    const again = poll.self && poll.votes.size === 1 && poll.votes.has(this.#preferenceKey);
    while (this.#record(root, tally) && again && !root.sb?.finalized && this.#takeSelfPoll()) {
      this.#pollsStarted += 1;
      this.#selfPollsRepeated += 1;
      this.#voteWeight += weightOfPoll;
    }
    await this.#decide();
    if (this.#state !== 'running') return;
    await this.#updatePreference();
    this.#gc();
    this.#maybeStartPolls();
  }

  /** Accepts the root's finalized child (rejecting its siblings' subtrees) while there is one. */
  async #decide(): Promise<void> {
    for (let root = this.#root; root?.sb?.finalized && this.#state === 'running'; root = this.#root) {
      const chosenKey = root.sb.preference;
      const chosen = this.#processing.get(chosenKey);
      if (!chosen) {
        this.#log.error('finalized block is not processing', { block: chosenKey });
        root.sb = undefined;
        return;
      }
      try {
        await chosen.block.accept();
      } catch (err) {
        // The VM could not persist it: nothing after it can be decided safely.
        this.halt(`accept of block ${chosen.block.id.toString()} at height ${chosen.height} failed: ${describe(err)}`);
        return;
      }
      this.#processing.delete(chosenKey);
      this.#recentlyDecided.add(chosenKey);
      this.#root = chosen;
      this.#lastAcceptedAt = this.#progressAt = this.#scheduler.now();
      this.#txsWaitingSince = undefined;
      this.#clearBehind();
      this.#armFrontierGossip();
      this.#log.debug('block accepted', { block: chosen.block.id.toString(), height: chosen.height });
      const stack = root.children.filter((k) => k !== chosenKey).reverse();
      while (stack.length > 0) {
        const key = stack.pop() as string;
        const node = this.#processing.get(key);
        if (!node) continue;
        this.#processing.delete(key);
        this.#recentlyDecided.add(key);
        try {
          await node.block.reject();
        } catch (err) {
          this.#log.error('block reject failed', { block: node.block.id.toString(), error: describe(err) });
        }
        this.#log.debug('block rejected', { block: node.block.id.toString(), height: node.height });
        this.#dropHeldDescendants(key);
        for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i] as string);
      }
      try {
        this.#onAccepted?.(chosen.block);
      } catch (err) {
        this.#log.error('onAccepted callback failed', { error: describe(err) });
      }
    }
  }

  /** Cancels the poll, pacing, recheck and gossip timers and forgets the polls in flight. */
  #cancelTimers(): void {
    this.#pollRetry?.cancel();
    this.#pollRetry = undefined;
    this.#pollPace?.cancel();
    this.#pollPace = undefined;
    this.#frontierTimer?.cancel();
    this.#frontierTimer = undefined;
    for (const poll of this.#polls.values()) poll.timer?.cancel();
    this.#polls.clear();
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
    this.#backoff?.wake();
    this.#cancelTimers();
    try {
      this.#onHalt?.(reason);
    } catch (err) {
      this.#log.error('onHalt callback failed', { error: describe(err) });
    }
  }

  /** Follows the Snowball preferences from the root to a leaf; tells the VM when the leaf changed. */
  async #updatePreference(): Promise<void> {
    let node = this.#root;
    if (!node) return;
    const path: TreeNode[] = [];
    while (node.sb) {
      const next = this.#processing.get(node.sb.preference);
      if (!next) break;
      node = next;
      path.push(node);
    }
    this.#preferredPath = path;
    if (node.key === this.#preferenceKey) return;
    this.#preference = node.block.id;
    this.#preferenceKey = node.key;
    if (this.#proposerSleep) this.#backoff?.wake();
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
    const root = this.#root;
    if (!root || !this.#preference) return undefined;
    if (height === undefined || !Number.isSafeInteger(height)) return this.#preference;
    if (height > root.height) {
      // Indexed by height from the path's first node (the path may trail a root that just moved).
      const first = this.#preferredPath[0];
      const node = first ? this.#preferredPath[height - first.height] : undefined;
      return node && node.height === height ? node.block.id : this.#preference;
    }
    if (height === root.height) return root.block.id;
    try {
      return await this.#vm.getBlockIdAtHeight(height);
    } catch {
      return root.block.id;
    }
  }

  /** Forgets held blocks and Get requests that are too old (at most once a second). */
  #gc(): void {
    const now = this.#scheduler.now();
    if (now - this.#lastGc < 1_000) return;
    this.#lastGc = now;
    const rootHeight = this.#root?.height ?? 0;
    for (const [key, h] of this.#held) {
      if (now - h.since > this.#limits.heldTtlMs || (heightOf(h.block) ?? Number.POSITIVE_INFINITY) <= rootHeight) {
        this.#unhold(key);
      }
    }
    for (const [rid, g] of this.#getsByRequest) {
      if (now - g.since > this.#limits.getTimeoutMs) {
        this.#getsByRequest.delete(rid);
        this.#getsByBlock.delete(g.blockKey);
      }
    }
  }

  // ---- fetching --------------------------------------------------------------------------------

  #knows(key: string): boolean {
    return (
      this.#processing.has(key) ||
      key === this.#root?.key ||
      this.#held.has(key) ||
      this.#recentlyDecided.has(key) ||
      this.#getsByBlock.has(key) ||
      this.#failedLately(key)
    );
  }

  #fetch(blockId: Id, blockKey: string, from: ShortId): void {
    if (this.#state !== 'running') return;
    const now = this.#scheduler.now();
    const previous = this.#getsByBlock.get(blockKey);
    if (previous) {
      if (now - previous.since <= this.#limits.getTimeoutMs) return;
      this.#getsByBlock.delete(blockKey);
      this.#getsByRequest.delete(previous.requestId);
    }
    if (this.#getsByRequest.size >= this.#limits.maxOutstandingGets) {
      this.#lastGc = Number.NEGATIVE_INFINITY;
      this.#gc();
      if (this.#getsByRequest.size >= this.#limits.maxOutstandingGets) return;
    }
    const requestId = this.#newRequestId();
    const g: OutstandingGet = { requestId, blockKey, from: from.key, since: now };
    this.#getsByBlock.set(blockKey, g);
    this.#getsByRequest.set(requestId, g);
    try {
      this.#transport.get(from, requestId, blockId);
    } catch (err) {
      this.#log.warn('get failed', { error: describe(err) });
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
      let block: Block | undefined = from.equals(this.#nodeId) ? this.#queried.get(bytes) : undefined;
      try {
        block ??= await this.#vm.parseBlock(bytes);
      } catch (err) {
        this.#log.debug('unparseable block in push query', { from: from.toString(), error: describe(err) });
      }
      if (block && this.#state === 'running') {
        const key = block.id.key;
        const b = block;
        if (!this.#processing.has(key) && key !== this.#root?.key) {
          await this.#enqueue(() => this.#add(b, from));
        }
      }
      const vote = await this.#voteAtHeight(block ? heightOf(block) : undefined);
      if (this.#state === 'running' && vote) this.#transport.chits(from, requestId, vote, this.#root?.block.id);
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
      const known = this.#processing.get(key) ?? (key === this.#root?.key ? this.#root : undefined);
      if (!known && !this.#held.has(key) && !this.#recentlyDecided.has(key) && !this.#failedLately(key)) this.#fetch(blockId, key, from);
      const vote = await this.#voteAtHeight(known?.height);
      if (this.#state === 'running' && vote) this.#transport.chits(from, requestId, vote, this.#root?.block.id);
    } catch (err) {
      this.#log.warn('pull query handling failed', { from: String(from), error: describe(err) });
    }
  }

  /**
   * A validator's answer to one of our polls (or to our frontier gossip): its vote, and the last
   * block it accepted when it differs from the vote (`accepted`). An accepted block this node lacks
   * is fetched from the voter (#noteAccepted).
   */
  onChits(from: ShortId, requestId: number, preferred: Id, accepted?: Id): void {
    if (this.#state !== 'running') return;
    try {
      if (accepted) this.#noteAccepted(from, accepted);
      this.#armFrontierGossip();
      const poll = this.#polls.get(requestId);
      if (!poll) return;
      const fromKey = from.key;
      const weight = poll.pending.get(fromKey);
      if (weight === undefined) return; // not asked, or answered already
      poll.pending.delete(fromKey);
      poll.pendingWeight -= weight;
      poll.received += weight;
      const key = preferred.key;
      poll.votes.set(key, (poll.votes.get(key) ?? 0) + weight);
      if (this.#held.has(key)) this.#fetchMissingAncestor(key, from);
      else if (!this.#knows(key)) this.#fetch(preferred, key, from);
      if (this.#pollSettled(poll)) this.#finishPoll(requestId);
    } catch (err) {
      this.#log.warn('chits handling failed', { error: describe(err) });
    }
  }

  /**
   * A validator says it accepted `accepted`. When this node has not: the block (and, one Get at a
   * time, its missing ancestors) is fetched from that validator and then polled like any other, so a
   * node that missed blocks catches up while running; `stats.behind` says so until it has (test
   * "a node that missed blocks catches up from the accepted block in chits").
   */
  #noteAccepted(from: ShortId, accepted: Id): void {
    const root = this.#root;
    if (!root) return;
    const key = accepted.key;
    if (key === root.key || this.#recentlyDecided.has(key) || this.#failedLately(key)) return;
    const processing = this.#processing.get(key);
    const held = this.#held.get(key);
    const height = processing?.height ?? (held ? heightOf(held.block) : undefined);
    if (height !== undefined && height <= root.height) return;
    if (!this.#behind || (height !== undefined && (this.#behind.height === undefined || height > this.#behind.height))) {
      this.#behind = { key, height, since: this.#behind?.since ?? this.#scheduler.now() };
    }
    if (processing) return; // polls decide it
    if (held) this.#fetchMissingAncestor(key, from);
    else if (!this.#getsByBlock.has(key)) this.#fetch(accepted, key, from);
  }

  /** stats.behind: peers reported accepted blocks above ours and nothing was accepted here for behindAfterMs. */
  #behindReport(): EngineStats['behind'] {
    const b = this.#behind;
    if (!b) return undefined;
    const forMs = this.#scheduler.now() - Math.max(b.since, this.#lastAcceptedAt);
    return forMs >= this.#limits.behindAfterMs ? { peerHeight: b.height, forMs } : undefined;
  }

  /** Forgets the behind report once this node has reached it (or found it at a decided height). */
  #clearBehind(): void {
    const b = this.#behind;
    const root = this.#root;
    if (!b || !root) return;
    if (b.key === root.key || (b.height !== undefined && b.height <= root.height) || (b.height === undefined && this.#recentlyDecided.has(b.key))) {
      this.#behind = undefined;
    }
  }

  /**
   * While nothing is processing, every frontierGossipMs: a PullQuery for our last accepted block to
   * one validator other than this node. Its Chits name its last accepted block (#noteAccepted), so a
   * node that missed the last blocks of a quiet chain hears of them (avalanchego's accepted-frontier
   * gossip). One timer per chain, armed only while another validator could answer: a one-node chain,
   * or one waiting for validators, schedules nothing (test "an idle engine … schedules nothing").
   * Armed again at start, after an accept, when polls resume and when a validator answers.
   */
  #armFrontierGossip(): void {
    if (this.#frontierTimer || this.#state !== 'running' || this.#waiting || this.#limits.frontierGossipMs <= 0) return;
    if (this.#otherValidators().length === 0) return;
    this.#frontierTimer = this.#scheduler.setTimeout(() => {
      this.#frontierTimer = undefined;
      if (this.#state !== 'running' || this.#waiting) return;
      try {
        if (this.#processing.size === 0) this.#gossipFrontier();
      } catch (err) {
        this.#log.warn('frontier gossip failed', { error: describe(err) });
      }
      this.#armFrontierGossip();
    }, this.#limits.frontierGossipMs);
  }

  #otherValidators(): ShortId[] {
    return this.#validators.sample(this.#params.k).filter((n) => !n.equals(this.#nodeId));
  }

  #gossipFrontier(): void {
    const root = this.#root;
    const others = this.#otherValidators();
    const to = others[this.#frontierTurn++ % Math.max(1, others.length)];
    if (!root || !to) return;
    const requestId = this.#newRequestId();
    if (this.#transport.pullQuery) this.#transport.pullQuery([to], requestId, root.block.id);
    else this.#transport.pushQuery([to], requestId, root.block.bytes);
  }

  /** A query (or Get) to `from` failed: it counts nothing. */
  onQueryFailed(from: ShortId, requestId: number): void {
    if (this.#state !== 'running') return;
    try {
      const fromKey = from.key;
      const g = this.#getsByRequest.get(requestId);
      if (g && g.from === fromKey) {
        this.#getsByRequest.delete(requestId);
        this.#getsByBlock.delete(g.blockKey);
        return;
      }
      const poll = this.#polls.get(requestId);
      const weight = poll?.pending.get(fromKey);
      if (!poll || weight === undefined) return;
      poll.pending.delete(fromKey);
      poll.pendingWeight -= weight;
      if (this.#pollSettled(poll)) this.#finishPoll(requestId);
    } catch (err) {
      this.#log.warn('query failure handling failed', { error: describe(err) });
    }
  }

  /** A peer asks for a block: answer with its bytes when we have it. */
  async onGet(from: ShortId, requestId: number, blockId: Id): Promise<void> {
    if (this.#state !== 'running') return;
    try {
      const key = blockId.key;
      let block: Block | undefined =
        this.#processing.get(key)?.block ?? (key === this.#root?.key ? this.#root.block : undefined) ?? this.#held.get(key)?.block;
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
      if (this.#state === 'running' && !this.#processing.has(key) && key !== this.#root?.key && (heightOf(block) ?? Number.POSITIVE_INFINITY) > (this.#root?.height ?? 0)) {
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
      const g = this.#getsByRequest.get(requestId);
      if (!g || g.from !== from.key) {
        this.#log.debug('unexpected put', { from: from.toString(), requestId });
        return;
      }
      this.#getsByRequest.delete(requestId);
      this.#getsByBlock.delete(g.blockKey);
      let block: Block;
      try {
        block = await this.#vm.parseBlock(bytes);
      } catch (err) {
        this.#log.debug('unparseable block in put', { from: from.toString(), error: describe(err) });
        return;
      }
      if (block.id.key !== g.blockKey) {
        this.#log.debug('put carried another block than asked for', { from: from.toString(), block: block.id.toString() });
        return;
      }
      await this.#enqueue(() => this.#add(block, from));
    } catch (err) {
      this.#log.warn('put handling failed', { error: describe(err) });
    }
  }
}
