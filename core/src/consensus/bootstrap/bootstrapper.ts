/**
 * Bootstrapping: a node joining a network, or restarting after downtime, brings its chain up to
 * what the beacons have accepted before its engine starts.
 *
 * One run:
 * 1. Waits until beacons holding more than half of the beacon weight are connected (rechecking on a
 *    timer, logging `waiting for beacons` at most once a minute).
 * 2. Asks the connected beacons for their accepted frontier, then asks them which of the frontier
 *    IDs they have accepted; an ID accepted by more than half of the beacon weight is a target (the
 *    reference's rule). Unanswered requests count as no vote. No target: the attempt fails.
 * 3. For each target this VM has not accepted: GetAncestors to a beacon that said it accepted it
 *    (another one on a failure, a timeout or a bad reply), parsing each reply newest first and
 *    keeping the prefix in which every block is the one asked for or the parent of the previous
 *    (IDs are hashes of the bytes, so a beacon cannot forge a block under the chain the majority
 *    named). It goes on from the oldest block's parent until a block whose parent is this VM's last
 *    accepted block. Heights are not read while fetching (some VMs only know a block's height once
 *    its parent is known); a block whose height is known and at most the last accepted height + 1
 *    without having our last accepted block as its parent means the beacons' chain conflicts with
 *    ours: the run fails for good.
 * 4. Verifies and accepts the fetched blocks oldest first. A block that fails verification fails
 *    the attempt; one whose accept fails ends the run (the VM could not persist it).
 * 5. An attempt that failed is retried after `retryDelayMs`; after `maxFailedAttempts` in a row
 *    that accepted nothing, run() gives up.
 *    A round that fetched something is followed by another (the network moved on meanwhile), until
 *    a round fetches nothing or `maxRounds` were run; the engine catches up on the rest.
 *
 * Memory: blocks are held between fetching and executing, at most `maxHeldBlocks` blocks and
 * `maxHeldBytes` bytes, plus one reply (MAX_ANCESTORS blocks, MAX_MESSAGE_BYTES). A longer chain is
 * done in windows: fetching goes on down to our chain dropping the newest replies beyond the bound,
 * remembering the newest block of every reply (a checkpoint: 32 bytes per reply); the held blocks
 * are executed, then the next window is fetched from the checkpoint that fits the bound. Blocks
 * above the first window are thus fetched twice; per block the work stays O(1).
 *
 * Everything waits on the injected scheduler, and a run ends early when its signal aborts. Replies
 * from nodes that were not asked, for requests not outstanding, or with wrong contents are logged
 * at debug and ignored; no `on*` method throws. The same object answers other nodes' bootstrap
 * requests (server.ts), during and after its run: the network delivers every BootstrapTarget call
 * of a chain to it.
 *
 * One piece (past 600 lines) because the steps of a run (rounds, descents, windows, execution)
 * share its state, which each of them reads and moves: what is held, fetched and accepted, the
 * phase and heights progress reports, the beacons distrusted and the holder rotation. What stands
 * apart is in modules of its own: the requests outstanding (requests.ts), the answers to other
 * nodes (server.ts), progress output (progress.ts).
 */
import { Id, type Block, type ChainVM, type Logger, type ShortId } from '@cornice/sdk';
import { ConsensusError } from '../errors.js';
import { MAX_ANCESTORS, MAX_CONTAINER_IDS, MAX_MESSAGE_BYTES } from '../limits.js';
import type { AdaptiveTimeout } from '../requests/timeouts.js';
import type { Scheduler } from '../snowman/types.js';
import { BootstrapRequests, type RequestKind } from './requests.js';
import { BootstrapServer, isAccepted, knownHeight, type BootstrapServerLimits } from './server.js';
import type { Beacon, BootstrapProgress, BootstrapTarget, BootstrapTransport } from './types.js';

export interface BootstrapLimits {
  /** Deadline of a GetAcceptedFrontier / GetAccepted request (the reference's 2 s), unless `timeouts` is given. */
  requestTimeoutMs: number;
  /** Deadline of a GetAncestors request: its reply carries up to 2 MiB. */
  ancestorsTimeoutMs: number;
  /** Tries for one batch of ancestors (a beacon each, in turn) before the attempt fails. */
  maxAncestorsTries: number;
  /** Attempts in a row that may fail without accepting anything before run() gives up. */
  maxFailedAttempts: number;
  /** Pause before retrying a failed attempt. */
  retryDelayMs: number;
  /** Most frontier rounds in one run. */
  maxRounds: number;
  /** Blocks held between fetching and executing (see the memory note above). */
  maxHeldBlocks: number;
  maxHeldBytes: number;
  /** While too little beacon weight is connected: how often to look again, and how often to say so. */
  beaconRecheckMs: number;
  waitLogIntervalMs: number;
  /** Frontier IDs taken from one beacon (an honest Snowman beacon sends one). */
  maxFrontierIdsPerBeacon: number;
}

export const DEFAULT_BOOTSTRAP_LIMITS: Readonly<BootstrapLimits> = Object.freeze({
  requestTimeoutMs: 2_000,
  ancestorsTimeoutMs: 10_000,
  maxAncestorsTries: 8,
  maxFailedAttempts: 10,
  retryDelayMs: 2_000,
  maxRounds: 10,
  maxHeldBlocks: 65_536,
  maxHeldBytes: 128 * 1024 * 1024,
  beaconRecheckMs: 250,
  waitLogIntervalMs: 60_000,
  maxFrontierIdsPerBeacon: 16,
});

export interface BootstrapperOptions {
  vm: ChainVM;
  transport: BootstrapTransport;
  /** The beacons (looked at again at each attempt); this node is left out when it is one. */
  beacons: () => readonly Beacon[];
  isConnected(node: ShortId): boolean;
  nodeId: ShortId;
  scheduler: Scheduler;
  log: Logger;
  /** The chain's name or alias, for progress and logs. */
  chain: string;
  /** When given (the node's shared adaptive timeout), frontier requests take their deadline from it and feed it. */
  timeouts?: AdaptiveTimeout;
  limits?: Partial<BootstrapLimits>;
  /** Limits of the answering half. */
  serverLimits?: Partial<BootstrapServerLimits>;
  onProgress?: (p: BootstrapProgress) => void;
}

export interface BootstrapResult {
  /** Blocks fetched (blocks above the first window count once per fetch) and accepted in this run. */
  fetched: number;
  accepted: number;
  /** Height of the last accepted block at the end. */
  height: number;
  rounds: number;
}

export interface BootstrapStats {
  running: boolean;
  progress: BootstrapProgress;
  /** Blocks held now, and the most held at once in the last run. */
  heldBlocks: number;
  peakHeldBlocks: number;
  outstandingRequests: number;
}

/** A target: a block more than half of the beacon weight has accepted, and who said so. */
interface Target {
  readonly id: Id;
  readonly holders: ShortId[];
}

interface LastAccepted {
  readonly id: Id;
  readonly height: number;
}

/** A fetched reply's newest block, by its distance from where the descent started. */
interface Top {
  readonly id: Id;
  readonly index: number;
}

interface Checkpoint {
  readonly id: Id;
  readonly height: number;
}

interface Descent {
  /** Held blocks, oldest first (the oldest's parent is the last accepted block). */
  readonly held: Block[];
  readonly tops: Top[];
  /** Blocks from the start down to the last accepted height + 1. */
  readonly depth: number;
}

interface BeaconSet {
  readonly nodes: Map<string, { nodeId: ShortId; weight: bigint }>;
  readonly total: bigint;
}

/** An attempt that failed for a reason another attempt may not meet (no agreement, bad or no replies, a block failing verify). */
class AttemptFailed extends ConsensusError {
  constructor(message: string) {
    super('BootstrapFailed', message);
  }
}

/** How many blocks are executed between two turns of the event loop (and progress reports). */
const YIELD_EVERY_BLOCKS = 128;
const PROGRESS_EVERY_BLOCKS = 1_024;

const describe = (err: unknown): string => (err instanceof Error ? `${err.name}: ${err.message}` : String(err));

/** Whether `weight` is more than half of `total`. */
export function exceedsHalf(weight: bigint, total: bigint): boolean {
  return total > 0n && weight * 2n > total;
}

function limitsProblem(l: BootstrapLimits): string | undefined {
  for (const [name, v] of Object.entries(l)) {
    if (!Number.isSafeInteger(v) || v < 1) return `bootstrap limit ${name} must be a positive integer (got ${String(v)})`;
  }
  return undefined;
}

export class Bootstrapper implements BootstrapTarget {
  readonly #o: BootstrapperOptions;
  readonly #limits: BootstrapLimits;
  readonly #log: Logger;
  readonly #server: BootstrapServer;
  readonly #requests: BootstrapRequests;

  #running = false;
  #phase: BootstrapProgress['phase'] = 'done';
  #fetched = 0;
  #accepted = 0;
  #height = 0;
  #targetHeight: number | undefined;
  /** When fetching began (scheduler ms): the accept rate behind the ETA counts from there. */
  #activeSince: number | undefined;
  #held = 0;
  #peakHeld = 0;
  #lastWaitLog = Number.NEGATIVE_INFINITY;
  /** Rotates GetAncestors over the beacons holding a target. */
  #nextHolder = 0;
  /** Beacons that sent a bad Ancestors reply in this run: asked only when no other one is left. */
  readonly #distrusted = new Set<string>();

  constructor(opts: BootstrapperOptions) {
    const limits = { ...DEFAULT_BOOTSTRAP_LIMITS, ...opts.limits };
    const problem = limitsProblem(limits);
    if (problem) throw new ConsensusError('InvalidParams', problem);
    this.#o = opts;
    this.#limits = limits;
    this.#log = opts.log.child({ module: 'bootstrap', chain: opts.chain });
    this.#server = new BootstrapServer({ vm: opts.vm, transport: opts.transport, log: this.#log, limits: opts.serverLimits });
    this.#requests = new BootstrapRequests(opts.scheduler, this.#log);
  }

  get stats(): BootstrapStats {
    return {
      running: this.#running,
      progress: this.#progress(),
      heldBlocks: this.#held,
      peakHeldBlocks: this.#peakHeld,
      outstandingRequests: this.#requests.outstanding,
    };
  }

  /**
   * Bootstraps the chain (the VM is told 'bootstrapping' first; the engine moves it to 'normalOp').
   * Rejects with ConsensusError 'Aborted' when `signal` aborts, 'BootstrapFailed' when it gives up.
   */
  async run(signal: AbortSignal = new AbortController().signal): Promise<BootstrapResult> {
    if (this.#running) throw new ConsensusError('AlreadyStarted', `bootstrapping of ${this.#o.chain} is already running`);
    this.#running = true;
    this.#fetched = 0;
    this.#accepted = 0;
    this.#targetHeight = undefined;
    this.#activeSince = undefined;
    this.#peakHeld = 0;
    this.#distrusted.clear();
    const startedAt = this.#o.scheduler.now();
    let rounds = 0;
    try {
      this.#checkAborted(signal);
      await this.#o.vm.setState('bootstrapping');
      this.#height = (await this.#lastAccepted()).height;
      const beacons = this.#beaconSet();
      if (beacons.total > 0n) {
        this.#log.info('bootstrap started', { beacons: beacons.nodes.size, height: this.#height });
        for (;;) {
          rounds += 1;
          const fetched = await this.#round(signal);
          if (fetched === 0 || rounds >= this.#limits.maxRounds) break;
        }
      }
      this.#emit('done');
      this.#log.info('bootstrap finished', { fetched: this.#fetched, accepted: this.#accepted, height: this.#height, rounds, ms: this.#o.scheduler.now() - startedAt });
      return { fetched: this.#fetched, accepted: this.#accepted, height: this.#height, rounds };
    } catch (err) {
      if (!signal.aborted) this.#log.error('bootstrap failed', { reason: describe(err), accepted: this.#accepted, height: this.#height });
      throw err;
    } finally {
      this.#requests.endAll();
      this.#held = 0;
      this.#running = false;
    }
  }

  // ---- one round: frontier, fetch, execute (retried) -------------------------------------------

  /** Agrees on a frontier and brings the chain up to it; returns how many blocks were fetched. */
  async #round(signal: AbortSignal): Promise<number> {
    for (let failures = 0; ; ) {
      const acceptedBefore = this.#accepted;
      try {
        const targets = await this.#frontier(signal);
        let fetched = 0;
        for (const t of targets) {
          if (await isAccepted(this.#o.vm, t.id)) continue;
          fetched += await this.#catchUpTo(t, signal);
        }
        return fetched;
      } catch (err) {
        this.#checkAborted(signal);
        if (!(err instanceof AttemptFailed)) throw err;
        // Failures count in a row: an attempt that accepted blocks before failing made progress.
        failures = this.#accepted > acceptedBefore ? 1 : failures + 1;
        this.#held = 0;
        this.#log.warn('bootstrap attempt failed', { attempt: failures, reason: err.message });
        if (failures >= this.#limits.maxFailedAttempts) {
          throw new ConsensusError('BootstrapFailed', `bootstrapping ${this.#o.chain} failed ${failures} times in a row; the last time: ${err.message}`);
        }
        await this.#sleep(this.#limits.retryDelayMs, signal);
      }
    }
  }

  /** Waits for the beacons, then asks them for the blocks more than half of their weight has accepted. */
  async #frontier(signal: AbortSignal): Promise<Target[]> {
    const beacons = await this.#waitForBeacons(signal);
    if (beacons.total === 0n) return [];
    this.#emit('frontier');
    const frontiers = await this.#ask<readonly Id[]>('frontier', this.#connected(beacons), signal, (to, rid) =>
      this.#o.transport.getAcceptedFrontier(to, rid),
    );
    const union = this.#union(frontiers);
    if (union.length === 0) throw new AttemptFailed('no beacon answered with its accepted frontier');
    const votes = await this.#ask<readonly Id[]>('accepted', this.#connected(beacons), signal, (to, rid) => this.#o.transport.getAccepted(to, rid, union));
    const tally = new Map<string, { id: Id; weight: bigint; holders: ShortId[] }>();
    for (const id of union) tally.set(id.key, { id, weight: 0n, holders: [] });
    for (const [nodeKey, ids] of votes) {
      const beacon = beacons.nodes.get(nodeKey);
      if (!beacon) continue;
      const counted = new Set<string>();
      for (const id of ids) {
        const t = tally.get(id.key);
        if (!t || counted.has(id.key)) continue;
        counted.add(id.key);
        t.weight += beacon.weight;
        t.holders.push(beacon.nodeId);
      }
    }
    const targets = [...tally.values()].filter((t) => exceedsHalf(t.weight, beacons.total));
    if (targets.length === 0) {
      let best = 0n;
      for (const t of tally.values()) if (t.weight > best) best = t.weight;
      throw new AttemptFailed(
        `no block of the accepted frontier is accepted by more than half of the beacon weight (best ${Number((best * 100n) / beacons.total)}%, ${votes.size} of ${beacons.nodes.size} beacons answered)`,
      );
    }
    return targets;
  }

  /** The frontier IDs to ask about: each beacon's first ID first, so a beacon sending many cannot crowd out the others. */
  #union(frontiers: Map<string, readonly Id[]>): Id[] {
    const lists = [...frontiers.values()].map((ids) => ids.slice(0, this.#limits.maxFrontierIdsPerBeacon));
    const seen = new Set<string>();
    const union: Id[] = [];
    for (let i = 0; i < this.#limits.maxFrontierIdsPerBeacon; i++) {
      for (const ids of lists) {
        const id = ids[i];
        if (id === undefined || seen.has(id.key)) continue;
        if (union.length >= MAX_CONTAINER_IDS) return union;
        seen.add(id.key);
        union.push(id);
      }
    }
    return union;
  }

  /** Fetches and executes the blocks up to `target`, window by window; returns how many were fetched. */
  async #catchUpTo(target: Target, signal: AbortSignal): Promise<number> {
    const before = this.#fetched;
    /** Newest blocks of replies above what was executed, highest first. */
    let checkpoints: Checkpoint[] = [];
    let start = target.id;
    for (;;) {
      const last = await this.#lastAccepted();
      const d = await this.#descend(start, target.holders, last, signal);
      const startHeight = last.height + d.depth;
      if (start === target.id) this.#targetHeight = Math.max(this.#targetHeight ?? 0, startHeight);
      const executedTop = last.height + d.held.length;
      const fresh: Checkpoint[] = [];
      for (const t of d.tops) {
        const height = startHeight - t.index;
        if (height > executedTop) fresh.push({ id: t.id, height });
      }
      checkpoints = [...checkpoints.filter((c) => c.height > startHeight), ...fresh];
      await this.#execute(d.held, last, signal);
      if (checkpoints.length === 0) return this.#fetched - before;
      // The next window: the highest checkpoint that fits the bound, else the lowest one.
      const fits = checkpoints.find((c) => c.height - executedTop <= this.#limits.maxHeldBlocks);
      start = (fits ?? (checkpoints[checkpoints.length - 1] as Checkpoint)).id;
    }
  }

  /**
   * Fetches from `start` down to the block whose parent is `last`, holding the lowest blocks within
   * the bounds (newer replies are dropped, their newest block kept as a checkpoint).
   */
  async #descend(start: Id, holders: readonly ShortId[], last: LastAccepted, signal: AbortSignal): Promise<Descent> {
    this.#activeSince ??= this.#o.scheduler.now();
    const replies: { blocks: Block[]; bytes: number }[] = [];
    const tops: Top[] = [];
    let heldBlocks = 0;
    let heldBytes = 0;
    let depth = 0;
    for (let want = start; ; ) {
      this.#emit('fetching');
      const { blocks, reached } = await this.#fetchBatch(want, holders, last, signal);
      let bytes = 0;
      for (const b of blocks) bytes += b.bytes.length;
      tops.push({ id: want, index: depth });
      depth += blocks.length;
      this.#fetched += blocks.length;
      replies.push({ blocks, bytes });
      heldBlocks += blocks.length;
      heldBytes += bytes;
      while (replies.length > 1 && (heldBlocks > this.#limits.maxHeldBlocks || heldBytes > this.#limits.maxHeldBytes)) {
        const dropped = replies.shift() as { blocks: Block[]; bytes: number };
        heldBlocks -= dropped.blocks.length;
        heldBytes -= dropped.bytes;
      }
      this.#held = heldBlocks;
      this.#peakHeld = Math.max(this.#peakHeld, heldBlocks);
      if (reached) break;
      want = (blocks[blocks.length - 1] as Block).parentId;
    }
    const held: Block[] = [];
    for (let r = replies.length - 1; r >= 0; r--) {
      const blocks = (replies[r] as { blocks: Block[] }).blocks;
      for (let i = blocks.length - 1; i >= 0; i--) held.push(blocks[i] as Block);
    }
    return { held, tops, depth };
  }

  /** One reply's worth of ancestors of `want` (at least one block), from the beacons holding it in turn. */
  async #fetchBatch(want: Id, holders: readonly ShortId[], last: LastAccepted, signal: AbortSignal): Promise<{ blocks: Block[]; reached: boolean }> {
    for (let attempt = 0; attempt < this.#limits.maxAncestorsTries; attempt++) {
      const node = this.#pickHolder(holders);
      if (!node) throw new AttemptFailed(`none of the beacons that accepted block ${want.toString()} is connected`);
      const answers = await this.#ask<readonly Uint8Array[]>('ancestors', [node], signal, (_to, rid) => this.#o.transport.getAncestors(node, rid, want));
      const reply = answers.get(node.key);
      if (reply === undefined) {
        this.#log.debug('ancestors request failed', { from: node.toString(), block: want.toString() });
        continue;
      }
      const linked = await this.#link(reply, want, last, signal);
      if (linked.problem !== undefined) {
        this.#distrusted.add(node.key);
        this.#log.debug('bad ancestors reply', { from: node.toString(), block: want.toString(), problem: linked.problem, usable: linked.blocks.length });
      }
      if (linked.blocks.length > 0) return linked;
    }
    throw new AttemptFailed(`no beacon sent the ancestors of block ${want.toString()} (${this.#limits.maxAncestorsTries} tries)`);
  }

  /** The next connected holder in turn, trusted ones first; undefined when none is connected. */
  #pickHolder(holders: readonly ShortId[]): ShortId | undefined {
    let fallback: ShortId | undefined;
    for (let i = 0; i < holders.length; i++) {
      const node = holders[(this.#nextHolder + i) % holders.length] as ShortId;
      if (!this.#o.isConnected(node) || node.equals(this.#o.nodeId)) continue;
      if (this.#distrusted.has(node.key)) {
        fallback ??= node;
        continue;
      }
      this.#nextHolder = (this.#nextHolder + i + 1) % holders.length;
      return node;
    }
    return fallback;
  }

  /**
   * Parses a reply newest first, keeping the blocks linked from `want` (each the parent of the one
   * before) up to the one whose parent is `last`; the problem that ended it early, if any.
   */
  async #link(reply: readonly Uint8Array[], want: Id, last: LastAccepted, signal: AbortSignal): Promise<{ blocks: Block[]; reached: boolean; problem?: string }> {
    const blocks: Block[] = [];
    let expect = want;
    const n = Array.isArray(reply) ? Math.min(reply.length, MAX_ANCESTORS) : 0;
    if (n === 0) return { blocks, reached: false, problem: 'empty reply' };
    // Parsed all at once (a VM's parse may read its store: the reads overlap), then linked in order.
    const parsed = await Promise.all(
      reply.slice(0, n).map(async (bytes): Promise<Block | string> => {
        if (!(bytes instanceof Uint8Array) || bytes.length > MAX_MESSAGE_BYTES) return 'not a block';
        try {
          return await this.#o.vm.parseBlock(bytes);
        } catch (err) {
          return `unparseable block: ${describe(err)}`;
        }
      }),
    );
    this.#checkAborted(signal);
    for (let i = 0; i < n; i++) {
      const block = parsed[i] as Block | string;
      if (typeof block === 'string') return { blocks, reached: false, problem: block };
      if (!block.id.equals(expect)) return { blocks, reached: false, problem: `got block ${block.id.toString()} instead of ${expect.toString()}` };
      blocks.push(block);
      if (block.parentId.equals(last.id)) return { blocks, reached: true };
      expect = block.parentId;
    }
    // Heights fall along the reply (and a VM that derives a block's height from its parent's knows
    // the newer ones only when it knows the older), so the oldest block tells whether some block sits
    // at or below the last accepted height + 1 without being its child: the beacons' chain then
    // conflicts with ours. (Asking every block would be quadratic for such a VM.)
    const oldestHeight = knownHeight(blocks[blocks.length - 1] as Block);
    if (oldestHeight !== undefined && oldestHeight <= last.height + 1) {
      const first = blocks.find((b) => (knownHeight(b) ?? Number.POSITIVE_INFINITY) <= last.height + 1) as Block;
      throw new ConsensusError(
        'BootstrapFailed',
        `the chain accepted by the beacons conflicts with this node's: block ${first.id.toString()} at height ${knownHeight(first)} does not descend from the last accepted block ${last.id.toString()} at height ${last.height}`,
      );
    }
    return { blocks, reached: false };
  }

  /** Verifies and accepts `blocks` (oldest first; the first one's parent is `last`). */
  async #execute(blocks: Block[], last: LastAccepted, signal: AbortSignal): Promise<void> {
    this.#emit('executing');
    for (let i = 0; i < blocks.length; i++) {
      const block = blocks[i] as Block;
      const height = last.height + 1 + i;
      try {
        await block.verify();
      } catch (err) {
        throw new AttemptFailed(`block ${block.id.toString()} at height ${height} failed verification: ${describe(err)}`);
      }
      try {
        await block.accept();
      } catch (err) {
        throw new ConsensusError('BootstrapFailed', `accept of block ${block.id.toString()} at height ${height} failed: ${describe(err)}`);
      }
      this.#accepted += 1;
      this.#height = height;
      this.#held = blocks.length - i - 1;
      if ((i + 1) % YIELD_EVERY_BLOCKS === 0) {
        await this.#o.scheduler.yield();
        this.#checkAborted(signal);
        if ((i + 1) % PROGRESS_EVERY_BLOCKS === 0) this.#emit('executing');
      }
    }
    this.#held = 0;
    this.#emit('executing');
  }

  // ---- beacons ---------------------------------------------------------------------------------

  /** The beacons other than this node, with positive weight (a node listed twice counts its weights together). */
  #beaconSet(): BeaconSet {
    const nodes = new Map<string, { nodeId: ShortId; weight: bigint }>();
    let total = 0n;
    let list: readonly Beacon[] = [];
    try {
      list = this.#o.beacons();
    } catch (err) {
      this.#log.warn('beacons unavailable', { error: describe(err) });
    }
    for (const b of list) {
      if (typeof b?.weight !== 'bigint' || b.weight <= 0n || b.nodeId.equals(this.#o.nodeId)) continue;
      const known = nodes.get(b.nodeId.key);
      if (known) known.weight += b.weight;
      else nodes.set(b.nodeId.key, { nodeId: b.nodeId, weight: b.weight });
      total += b.weight;
    }
    return { nodes, total };
  }

  #connected(beacons: BeaconSet): ShortId[] {
    const out: ShortId[] = [];
    for (const b of beacons.nodes.values()) if (this.#o.isConnected(b.nodeId)) out.push(b.nodeId);
    return out;
  }

  /** Returns the beacons once more than half of their weight is connected (or there are none left). */
  async #waitForBeacons(signal: AbortSignal): Promise<BeaconSet> {
    for (;;) {
      const beacons = this.#beaconSet();
      let connected = 0n;
      let count = 0;
      for (const b of beacons.nodes.values()) {
        if (!this.#o.isConnected(b.nodeId)) continue;
        connected += b.weight;
        count += 1;
      }
      if (beacons.total === 0n || exceedsHalf(connected, beacons.total)) return beacons;
      this.#emit('waiting for beacons');
      const now = this.#o.scheduler.now();
      if (now - this.#lastWaitLog >= this.#limits.waitLogIntervalMs) {
        this.#lastWaitLog = now;
        const pct = Number((connected * 100n) / beacons.total);
        this.#log.info('waiting for beacons', { detail: `${count} of ${beacons.nodes.size} beacons connected, ${pct}% of the beacon weight, need more than 50%` });
      }
      await this.#sleep(this.#limits.beaconRecheckMs, signal);
    }
  }

  // ---- requests --------------------------------------------------------------------------------

  async #ask<T>(kind: RequestKind, to: readonly ShortId[], signal: AbortSignal, send: (to: readonly ShortId[], requestId: number) => void): Promise<Map<string, T>> {
    const timeouts = this.#o.timeouts;
    const answers = await this.#requests.ask<T>({
      kind,
      to,
      signal,
      send,
      timeoutMs: kind === 'ancestors' ? this.#limits.ancestorsTimeoutMs : (timeouts?.currentMs ?? this.#limits.requestTimeoutMs),
      // Ancestors replies measure transfer size more than latency: they stay out of the average.
      observe: kind === 'ancestors' || !timeouts ? undefined : (ms) => timeouts.observe(ms),
    });
    this.#checkAborted(signal);
    return answers;
  }

  #sleep(ms: number, signal: AbortSignal): Promise<void> {
    this.#checkAborted(signal);
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        timer.cancel();
        reject(this.#abortedError());
      };
      const timer = this.#o.scheduler.setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  #checkAborted(signal: AbortSignal): void {
    if (signal.aborted) throw this.#abortedError();
  }

  #abortedError(): ConsensusError {
    return new ConsensusError('Aborted', `bootstrapping of ${this.#o.chain} was aborted`);
  }

  async #lastAccepted(): Promise<LastAccepted> {
    const id = await this.#o.vm.lastAccepted();
    const block = await this.#o.vm.getBlock(id);
    return { id, height: block.height };
  }

  // ---- progress --------------------------------------------------------------------------------

  #progress(): BootstrapProgress {
    let etaMs: number | undefined;
    const elapsed = this.#activeSince === undefined ? 0 : this.#o.scheduler.now() - this.#activeSince;
    if (this.#targetHeight !== undefined && this.#accepted > 0 && elapsed > 0) {
      etaMs = Math.max(0, Math.round(((this.#targetHeight - this.#height) * elapsed) / this.#accepted));
    }
    if (this.#phase === 'done') etaMs = 0;
    return {
      chain: this.#o.chain,
      phase: this.#phase,
      fetched: this.#fetched,
      accepted: this.#accepted,
      targetHeight: this.#targetHeight,
      height: this.#height,
      etaMs,
    };
  }

  #emit(phase: BootstrapProgress['phase']): void {
    this.#phase = phase;
    if (!this.#o.onProgress) return;
    try {
      this.#o.onProgress(this.#progress());
    } catch (err) {
      this.#log.warn('progress callback failed', { error: describe(err) });
    }
  }

  // ---- BootstrapTarget: requests from other nodes (answered from the VM) -----------------------

  onGetAcceptedFrontier(from: ShortId, requestId: number): Promise<void> {
    return this.#server.onGetAcceptedFrontier(from, requestId);
  }

  onGetAccepted(from: ShortId, requestId: number, blockIds: readonly Id[]): Promise<void> {
    return this.#server.onGetAccepted(from, requestId, blockIds);
  }

  onGetAncestors(from: ShortId, requestId: number, blockId: Id): Promise<void> {
    return this.#server.onGetAncestors(from, requestId, blockId);
  }

  // ---- BootstrapTarget: answers to our requests ------------------------------------------------

  onAcceptedFrontier(from: ShortId, requestId: number, blockIds: readonly Id[]): void {
    this.#answer('frontier', from, requestId, this.#ids(blockIds));
  }

  onAccepted(from: ShortId, requestId: number, blockIds: readonly Id[]): void {
    this.#answer('accepted', from, requestId, this.#ids(blockIds));
  }

  onAncestors(from: ShortId, requestId: number, blocks: readonly Uint8Array[]): void {
    this.#answer('ancestors', from, requestId, Array.isArray(blocks) ? blocks : []);
  }

  onBootstrapRequestFailed(from: ShortId, requestId: number): void {
    try {
      this.#requests.failed(from, requestId);
    } catch (err) {
      this.#log.debug('request failure handling failed', { error: describe(err) });
    }
  }

  #answer(kind: RequestKind, from: ShortId, requestId: number, value: unknown): void {
    try {
      if (!this.#requests.answer(kind, from, requestId, value)) {
        this.#log.debug('unexpected bootstrap reply', { kind, from: String(from), requestId });
      }
    } catch (err) {
      this.#log.debug('bootstrap reply handling failed', { kind, error: describe(err) });
    }
  }

  /** The IDs of a reply (at most MAX_CONTAINER_IDS; anything else dropped). */
  #ids(blockIds: readonly Id[]): Id[] {
    if (!Array.isArray(blockIds)) return [];
    return blockIds.slice(0, MAX_CONTAINER_IDS).filter((id): id is Id => id instanceof Id);
  }
}
