/**
 * The engine's polls: when one may start (enough stake reachable, pacing while nothing progresses),
 * whom it asks (k validators drawn with replacement, one query to each distinct one, answers weighed
 * by multiplicity), when it ends (everyone answered, the outcome can no longer change, or
 * queryTimeoutMs), and how its votes are recorded in the tree. Polls drawn from this node alone are
 * answered here, without messages.
 */
import type { Block, Logger, ShortId } from '@cornice/sdk';
import type { SnowParams } from '../params.js';
import { describe, type EngineLimits } from './options.js';
import type { Topological } from './topological.js';
import type { EngineTransport, Reachability, Scheduler, ValidatorSampler } from './types.js';

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

export interface Poll {
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

/**
 * Whether the answers still outstanding could change what `poll` decides (avalanchego's early
 * termination): no, once everyone answered or failed, once even all of them could not bring alpha,
 * or once no block below alpha could reach it with them. A silent minority of validators then
 * costs no time (test "a poll ends as soon as its outcome cannot change").
 */
export function pollSettled(poll: Poll, alpha: number, tree: Pick<Topological, 'tally'>): boolean {
  const pending = poll.pendingWeight;
  if (pending <= 0) return true;
  if (poll.received + pending < alpha) return true;
  if (pending >= alpha) return false; // even a block nobody voted for yet could reach alpha
  for (const t of tree.tally(poll.votes).values()) if (t < alpha && t + pending >= alpha) return false;
  return true;
}

/** How long a passed reachability check is trusted before the next poll looks again. */
const REACHABILITY_REUSE_MS = 100;

/**
 * Polls of this node alone answered in a row without a turn of the event loop (#answerSelfPoll);
 * the next waits for one, so that I/O still gets in.
 */
const SELF_POLL_BURST = 32;

export interface PollerOptions {
  params: SnowParams;
  limits: EngineLimits;
  transport: Pick<EngineTransport, 'pushQuery' | 'pullQuery'>;
  validators: ValidatorSampler;
  nodeId: ShortId;
  scheduler: Scheduler;
  log: Logger;
  /** A poll ends this long after it was sent, whatever answered. */
  queryTimeoutMs: number;
  /** Answer polls drawn from this node alone without messages. */
  directSelfPolls: boolean;
  /** The engine's tree, once started. */
  tree: () => Topological | undefined;
  running: () => boolean;
  newRequestId: () => number;
  /** Whether a block is remembered as decided (votes for it are not counted as unknown). */
  isDecided: (key: string) => boolean;
  /** A poll ended: the engine applies it (in its task queue). */
  onFinished: (poll: Poll) => void;
  /** Polls resumed after too little stake was reachable. */
  onResumed: () => void;
}

export class Poller {
  readonly #o: PollerOptions;
  readonly #params: SnowParams;
  readonly #limits: EngineLimits;
  readonly #scheduler: Scheduler;
  readonly #polls = new Map<number, Poll>();
  /** Blocks this engine sent in its queries, by their bytes object (see SnowmanEngine.onPushQuery). */
  readonly #queried = new WeakMap<Uint8Array, Block>();
  #pollRetry: { cancel(): void } | undefined;
  /** Set while the next poll waits out the pacing of failed polls. */
  #pollPace: { cancel(): void } | undefined;
  #waiting: Reachability | undefined;
  #reachableAt = Number.NEGATIVE_INFINITY;
  #lastWaitLog = Number.NEGATIVE_INFINITY;
  /** Self-only polls answered since the event loop last turned (#answerSelfPoll). */
  #selfPollBurst = 0;
  /** The last successful poll, block added or accepted (scheduler ms): polls are paced when it is long ago. */
  #progressAt = 0;

  successfulPolls = 0;
  failedPolls = 0;
  failedPollStreak = 0;
  pollsStarted = 0;
  selfPollsRepeated = 0;
  voteWeight = 0;
  unknownVoteWeight = 0;

  constructor(opts: PollerOptions) {
    this.#o = opts;
    this.#params = opts.params;
    this.#limits = opts.limits;
    this.#scheduler = opts.scheduler;
  }

  /** Polls in flight. */
  get size(): number {
    return this.#polls.size;
  }

  has(requestId: number): boolean {
    return this.#polls.has(requestId);
  }

  /** Set while polls are held back because too little stake is reachable. */
  get waiting(): Reachability | undefined {
    return this.#waiting;
  }

  /** The block behind bytes this node sent in one of its queries, if it did. */
  queriedBlock(bytes: Uint8Array): Block | undefined {
    return this.#queried.get(bytes);
  }

  /** A block was added or accepted: polls are not paced for a while. */
  noteProgress(): void {
    this.#progressAt = this.#scheduler.now();
  }

  /** Starts polls while something is processing, up to concurrentRepolls, unless paced or waiting for validators. */
  maybeStart(): void {
    const tree = this.#o.tree();
    if (!this.#o.running() || !tree || tree.size === 0 || this.#polls.size >= this.#params.concurrentRepolls) return;
    if (this.#pollPace || this.#paced()) return;
    if (!this.enoughReachable()) return;
    while (this.#o.running() && tree.size > 0 && this.#polls.size < this.#params.concurrentRepolls) {
      if (!this.#start(tree)) break;
    }
  }

  /**
   * Whether the next poll must wait because nothing has progressed for a while (then one timer starts
   * it later): after paceAfterMs without a successful poll, a block added or one accepted, each poll
   * waits (stalled − paceAfterMs) / paceSlope ms, within paceMinMs..paceMaxMs — 1 s after 22 s with
   * the defaults. Nodes stuck on blocks they could not agree on spun failed polls as fast as they could;
   * a split that polls can still break (a random sample reaching alpha) is left seconds at full
   * speed first (test "polls that make no progress are paced").
   */
  #paced(): boolean {
    const { paceAfterMs, paceSlope, paceMinMs, paceMaxMs } = this.#limits;
    const stalled = this.#scheduler.now() - this.#progressAt;
    if (this.failedPollStreak === 0 || stalled < paceAfterMs) return false;
    const delay = Math.min(paceMaxMs, Math.max(paceMinMs, (stalled - paceAfterMs) / paceSlope));
    this.#pollPace = this.#scheduler.setTimeout(() => {
      this.#pollPace = undefined;
      const tree = this.#o.tree();
      if (!this.#o.running() || !tree || tree.size === 0 || this.#polls.size >= this.#params.concurrentRepolls) return;
      if (this.enoughReachable()) this.#start(tree);
    }, delay);
    return true;
  }

  /**
   * Whether enough stake could answer for a poll to succeed. When not, polls wait: a recheck is
   * scheduled (one timer, however often this is called) and the reason logged at most once per
   * waitLogIntervalMs.
   */
  enoughReachable(): boolean {
    const now = this.#scheduler.now();
    // Reachability changes slowly (connections, benching): a recent pass is good enough, which keeps
    // the check off the per-poll path.
    if (!this.#waiting && now - this.#reachableAt < REACHABILITY_REUSE_MS) return true;
    const r = this.#o.validators.reachability();
    if (canPoll(r, this.#params)) {
      this.#reachableAt = now;
      if (this.#waiting) {
        this.#o.log.info('validators reachable; polling resumed', { detail: describeReachability(r, this.#params) });
        this.#waiting = undefined;
        this.#o.onResumed();
      }
      return true;
    }
    if (!this.#waiting || now - this.#lastWaitLog >= this.#limits.waitLogIntervalMs) {
      this.#lastWaitLog = now;
      this.#o.log.warn('waiting for validators', {
        detail: describeReachability(r, this.#params),
        connected: r.reachable,
        validators: r.validators,
        benched: r.benched,
        processing: this.#o.tree()?.size ?? 0,
      });
    }
    this.#waiting = r;
    this.#pollRetry ??= this.#scheduler.setTimeout(() => {
      this.#pollRetry = undefined;
      this.maybeStart();
    }, this.#limits.waitRecheckMs);
    return false;
  }

  #start(tree: Topological): boolean {
    const tip = tree.get(tree.preferred.key);
    if (!tip) return false;
    const sample = this.#o.validators.sample(this.#params.k).slice(0, this.#params.k);
    if (sample.length === 0) return false;
    const pending = new Map<string, number>();
    const to: ShortId[] = [];
    for (const id of sample) {
      const n = pending.get(id.key);
      if (n === undefined) to.push(id);
      pending.set(id.key, (n ?? 0) + 1);
    }
    const requestId = this.#o.newRequestId();
    this.pollsStarted += 1;
    const self = this.#o.directSelfPolls && to.length === 1 && to[0]!.equals(this.#o.nodeId);
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
    poll.timer = this.#scheduler.setTimeout(() => this.finish(requestId), this.#o.queryTimeoutMs);
    const transport = this.#o.transport;
    try {
      const pushed = (tip.pushedTo ??= new Set());
      if (transport.pullQuery && to.every((n) => pushed.has(n.key))) transport.pullQuery(to, requestId, tip.block.id);
      else {
        for (const n of to) pushed.add(n.key);
        // One read of `bytes` for both: a block may hand out a copy on each read (the EVM's does).
        const bytes = tip.block.bytes;
        this.#queried.set(bytes, tip.block);
        transport.pushQuery(to, requestId, bytes);
      }
    } catch (err) {
      this.#o.log.warn('pushQuery failed', { error: describe(err) });
    }
    return true;
  }

  /**
   * Finishes a poll whose sample is this node alone (a one-node network, or sybil protection off):
   * it needs no message. Through the transport each such poll would take two turns of the event loop,
   * and a block needs about beta of them, all on a one-node transfer's latency; these finish on
   * microtasks, at most SELF_POLL_BURST in a row (record() repeats one while the burst allows).
   * Tests: engine.test.ts "a one-node network polls itself without messages", "self polls answered
   * in a row are bounded"; bench/timestamp.mjs shows the latency.
   */
  #answerSelfPoll(requestId: number): void {
    const finish = () => this.finish(requestId);
    if (this.#takeSelfPoll()) queueMicrotask(finish);
    else void this.#scheduler.yield().then(finish);
  }

  /** Counts one more self poll answered in this turn of the event loop; false once SELF_POLL_BURST were. */
  #takeSelfPoll(): boolean {
    if (this.#selfPollBurst >= SELF_POLL_BURST) return false;
    if (this.#selfPollBurst++ === 0) void this.#scheduler.yield().then(() => (this.#selfPollBurst = 0));
    return true;
  }

  /** Counts `from`'s vote for `blockKey` in poll `requestId`; the poll when `from` was asked and had not answered yet. */
  vote(requestId: number, fromKey: string, blockKey: string): Poll | undefined {
    const poll = this.#polls.get(requestId);
    if (!poll) return undefined;
    const weight = poll.pending.get(fromKey);
    if (weight === undefined) return undefined; // not asked, or answered already
    poll.pending.delete(fromKey);
    poll.pendingWeight -= weight;
    poll.received += weight;
    poll.votes.set(blockKey, (poll.votes.get(blockKey) ?? 0) + weight);
    return poll;
  }

  /** `from`'s query in poll `requestId` failed: it counts nothing. False when there is no such query. */
  fail(requestId: number, fromKey: string): boolean {
    const poll = this.#polls.get(requestId);
    const weight = poll?.pending.get(fromKey);
    if (!poll || weight === undefined) return false;
    poll.pending.delete(fromKey);
    poll.pendingWeight -= weight;
    this.settle(poll);
    return true;
  }

  /** Finishes `poll` when the answers outstanding can no longer change its outcome. */
  settle(poll: Poll): void {
    const tree = this.#o.tree();
    if (tree && pollSettled(poll, this.#params.alpha, tree)) this.finish(poll.requestId);
  }

  finish(requestId: number): void {
    const poll = this.#polls.get(requestId);
    if (!poll) return;
    this.#polls.delete(requestId);
    poll.timer?.cancel();
    if (!this.#o.running()) return;
    this.#o.onFinished(poll);
  }

  /**
   * Records a finished poll's votes in the tree (transitively). A poll of this node alone that voted
   * for what is still its preference would get the same answer again at once (nothing else runs in
   * between): it is recorded again here, each time counted as another poll, until the root's child is
   * decided, a node on the path falters, or the turn's burst is spent: one task per poll (~33 for a
   * one-transfer EVM block) would be on the one-node latency from the block built to its accept.
   * Test: engine.test.ts "a one-node network asks its own poll again in the same task".
   */
  record(tree: Topological, poll: Poll): void {
    const root = tree.root;
    const weightOfPoll = poll.received;
    const tally = tree.tally(poll.votes, (key, weight) => {
      if (!this.#o.isDecided(key) && key !== root.key) this.unknownVoteWeight += weight;
    });
    this.voteWeight += weightOfPoll;
    const again = poll.self && poll.votes.size === 1 && poll.votes.has(tree.preferred.key);
    while (this.#recordOnce(tree, tally) && again && !tree.rootFinalized && this.#takeSelfPoll()) {
      this.pollsStarted += 1;
      this.selfPollsRepeated += 1;
      this.voteWeight += weightOfPoll;
    }
  }

  #recordOnce(tree: Topological, tally: ReadonlyMap<string, number>): boolean {
    const r = tree.recordPoll(tally);
    if (r.root === 'succeeded') {
      this.successfulPolls += 1;
      this.failedPollStreak = 0;
      this.#progressAt = this.#scheduler.now();
    } else if (r.root === 'failed') {
      this.failedPolls += 1;
      this.failedPollStreak += 1;
    }
    return r.succeeded;
  }

  /** Cancels the poll, pacing and recheck timers and forgets the polls in flight. */
  cancel(): void {
    this.#pollRetry?.cancel();
    this.#pollRetry = undefined;
    this.#pollPace?.cancel();
    this.#pollPace = undefined;
    for (const poll of this.#polls.values()) poll.timer?.cancel();
    this.#polls.clear();
  }
}
