/**
 * A deterministic discrete-event simulation of a network of validators running the Snowman engine,
 * for tests and benchmarks. Virtual time comes from an event queue; every random choice (message
 * delays and drops, validator samples, block payloads, who proposes, what adversaries do) comes from
 * PRNG streams derived from one seed; after each event the microtask queue is drained so the
 * engine's and the VM's async calls complete at that virtual instant. The same seed gives the same run.
 *
 * Honest validators run a SnowmanEngine over a TestVM behind a RequestSender (adaptive deadlines,
 * benchlist), as a node does. Proposals arrive at random times at a random honest node (sometimes at
 * two at once, which forks the chain). Adversarial validators run no engine; they follow one strategy:
 * - `mixed`: chits for a conflicting sibling they make up on the spot, or for a random block they
 *   know, or no answer; they also push made-up conflicting blocks to honest nodes;
 * - `coordinated`: every adversary votes for the same REAL conflicting block — one sibling per parent,
 *   made once by the coalition and pushed to every honest node, so honest nodes know and count it;
 * - `equivocate`: the coalition's conflicting block to half of the honest nodes, the queried block to
 *   the other half (answering different honest nodes differently to split them);
 * - `silent`: never answer (a crashed node that still has stake);
 * - `junk`: answer every query at once with a block ID nobody has.
 */
import { Id, ShortId, silentLogger, type Logger } from '@cornice/sdk';
import { DEFAULT_SNOW_PARAMS, type SnowParams } from '../consensus/params.js';
import { drainMicrotasks, EventQueue } from './sim/events.js';
import { Prng } from './sim/prng.js';
import { encodeTestBlock, TestVM, type TestBlock } from './sim/testvm.js';
import { Benchlist, type BenchlistConfig } from '../consensus/requests/benchlist.js';
import { RequestSender } from '../consensus/requests/sender.js';
import { AdaptiveTimeout, type TimeoutConfig } from '../consensus/requests/timeouts.js';
import { SnowmanEngine } from '../consensus/snowman/engine.js';
import { WeightedSampler } from '../consensus/snowman/sampler.js';
import type { EngineTransport } from '../consensus/snowman/types.js';

export { EventQueue, drainMicrotasks } from './sim/events.js';
export { Prng } from './sim/prng.js';
export {
  TestVM,
  TestBlock,
  TestVMError,
  encodeTestBlock,
  decodeTestBlock,
  TEST_GENESIS_BYTES,
  TEST_BLOCK_SIZE,
  type TestBlockFields,
  type TestBlockStatus,
  type TestVMOptions,
} from './sim/testvm.js';

export type AdversaryStrategy = 'mixed' | 'coordinated' | 'equivocate' | 'silent' | 'junk';

export interface AdversaryBehaviour {
  /** What the adversaries do (default `mixed`; the probabilities below apply to `mixed` only). */
  strategy: AdversaryStrategy;
  /** Probability that an answer names a conflicting sibling of the queried block. */
  conflictingVote: number;
  /** Probability that an answer names a random block the adversary knows. */
  randomVote: number;
  /** Probability that a query gets no answer. */
  silence: number;
  /** Mean virtual ms between conflicting blocks each adversary pushes to honest nodes (0: never). */
  buildEveryMs: number;
  /** Honest nodes each such block is pushed to. */
  pushTo: number;
}

export const DEFAULT_ADVERSARY: Readonly<AdversaryBehaviour> = Object.freeze({
  strategy: 'mixed',
  conflictingVote: 0.5,
  randomVote: 0.3,
  silence: 0.1,
  buildEveryMs: 300,
  pushTo: 3,
});

export interface SimulationOptions {
  seed: number;
  /** Honest validators. */
  honest: number;
  /** Adversarial validators (default 0). */
  adversaries?: number;
  /** Stake of each honest validator (default 100). */
  honestWeight?: number;
  /** Stake of each adversarial validator (default: honestWeight). */
  adversaryWeight?: number;
  params?: SnowParams;
  /** The honest nodes' request deadlines (default 300..1000 ms, starting at 300); the maximum also bounds a poll. */
  timeouts?: TimeoutConfig;
  /** The honest nodes' benchlist (default: 5 failures over 1 s bench for 30 s). */
  benchlist?: BenchlistConfig;
  /**
   * One-way message delay: uniform in [minMs, maxMs] (default 5..50), or a function drawing it from
   * `random` (floats in [0, 1)). Messages to oneself take 0.
   */
  delay?: { minMs: number; maxMs: number } | ((random: () => number) => number);
  /** Probability that a message between two nodes is lost (default 0). */
  dropRate?: number;
  /** Mean virtual ms between block proposals (exponential; default 200). */
  proposeEveryMs?: number;
  /** Probability that a proposal is made by two honest nodes at once (default 0.2). */
  forkRate?: number;
  adversary?: Partial<AdversaryBehaviour>;
  /** The run ends once every honest node accepted this many blocks. */
  targetBlocks: number;
  /** ... or when virtual time passes this (default 600 000 ms). */
  maxVirtualMs?: number;
  /** ... or after this many events (default 5 000 000). */
  maxEvents?: number;
  /** Engine logs (silent by default). */
  log?: Logger;
}

export interface MessageCounts {
  sent: number;
  delivered: number;
  dropped: number;
  byType: Record<'pushQuery' | 'chits' | 'get' | 'put', number>;
}

export interface SimulationResult {
  seed: number;
  /** Every honest node accepted targetBlocks blocks before a limit was hit. */
  reachedTarget: boolean;
  /** Accepted block IDs (cb58) of each honest node, from height 1 up. */
  chains: string[][];
  /** Fewest / most blocks accepted by an honest node. */
  minAccepted: number;
  maxAccepted: number;
  /** checkSafety(): honest nodes that accepted different blocks at one height (empty when safe). */
  conflicts: string[];
  /** Breaches of the VM contract the test VMs saw (empty when the engine behaved). */
  violations: string[];
  /** Requests of honest nodes that timed out, and validators benched (summed over honest nodes) at the end. */
  timedOut: number;
  benched: number;
  /** Blocks honest nodes built, and blocks rejected across honest nodes. */
  blocksBuilt: number;
  rejected: number;
  virtualMs: number;
  realMs: number;
  events: number;
  messages: MessageCounts;
}

/** What a simulated validator answers to (a SnowmanEngine, or an adversary). */
interface Actor {
  onPushQuery(from: ShortId, requestId: number, bytes: Uint8Array): unknown;
  onChits(from: ShortId, requestId: number, preferred: Id, accepted?: Id): unknown;
  onGet(from: ShortId, requestId: number, blockId: Id): unknown;
  onPut(from: ShortId, requestId: number, bytes: Uint8Array): unknown;
  onQueryFailed(from: ShortId, requestId: number): unknown;
}

interface HonestNode {
  readonly id: ShortId;
  readonly vm: TestVM;
  readonly engine: SnowmanEngine;
  readonly sender: RequestSender;
  readonly chain: string[];
}

export const SIM_TIMEOUTS: Readonly<TimeoutConfig> = Object.freeze({ initialMs: 300, minimumMs: 300, maximumMs: 1_000, coefficient: 2, halflifeMs: 10_000 });
export const SIM_BENCHLIST: Readonly<BenchlistConfig> = Object.freeze({ failThreshold: 5, minFailingDurationMs: 1_000, durationMs: 30_000 });

/**
 * What the adversaries share: one real conflicting block per parent (a sibling of the first honest
 * block they see on it), known to every adversary and pushed to every honest node once.
 */
class Coalition {
  readonly vm: TestVM;
  /** parent key -> the coalition's block on it */
  readonly #byParent = new Map<string, TestBlock>();

  constructor(
    readonly rng: Prng,
    private readonly push: (block: TestBlock) => void,
  ) {
    this.vm = new TestVM({ random: rng.random });
  }

  /** The coalition's conflicting block on `b`'s parent, made (and pushed) on first use. */
  conflictFor(b: TestBlock): TestBlock {
    const known = this.#byParent.get(b.parentId.key);
    if (known) return known;
    const c = this.vm.intern(encodeTestBlock({ parentId: b.parentId, height: b.height, timestamp: b.timestamp, payload: this.rng.bytes(16) }));
    this.#byParent.set(b.parentId.key, c);
    if (this.#byParent.size > 4096) this.#byParent.delete(this.#byParent.keys().next().value as string);
    this.push(c);
    return c;
  }
}

function nodeId(index: number): ShortId {
  const b = new Uint8Array(20);
  new DataView(b.buffer).setUint32(0, index + 1);
  b[19] = 0x5a;
  return ShortId.fromBytes(b);
}

class Adversary implements Actor {
  readonly vm = new TestVM({ random: () => this.rng.next() });
  readonly #recent: TestBlock[] = [];
  #nextRequestId = 0;

  constructor(
    readonly id: ShortId,
    private readonly rng: Prng,
    private readonly behaviour: AdversaryBehaviour,
    private readonly transport: EngineTransport,
    private readonly honestIds: readonly ShortId[],
    private readonly coalition: Coalition,
  ) {
    this.#recent.push(this.vm.genesis);
  }

  #remember(b: TestBlock): void {
    this.#recent.push(b);
    if (this.#recent.length > 64) this.#recent.shift();
  }

  /** A block at the same height as `b`, on the same parent, with another payload. */
  #sibling(b: TestBlock): TestBlock {
    const bytes = encodeTestBlock({
      parentId: b.parentId,
      height: b.height,
      timestamp: b.timestamp,
      payload: this.rng.bytes(16),
    });
    const s = this.vm.intern(bytes);
    this.#remember(s);
    return s;
  }

  onPushQuery(from: ShortId, requestId: number, bytes: Uint8Array): void {
    let b: TestBlock;
    try {
      b = this.vm.intern(bytes);
    } catch {
      return;
    }
    this.#remember(b);
    const { strategy, silence, conflictingVote, randomVote } = this.behaviour;
    if (strategy !== 'mixed') {
      const vote = this.#vote(strategy, from, b);
      if (vote) this.transport.chits(from, requestId, vote);
      return;
    }
    const r = this.rng.next();
    if (r < silence) return;
    let vote: Id = b.id;
    if (r < silence + conflictingVote && b.height > 0) vote = this.#sibling(b).id;
    else if (r < silence + conflictingVote + randomVote) vote = (this.#recent[this.rng.int(this.#recent.length)] ?? b).id;
    this.transport.chits(from, requestId, vote);
  }

  /** The chits of a non-mixed strategy for a query about `b` from `from`; undefined: no answer. */
  #vote(strategy: Exclude<AdversaryStrategy, 'mixed'>, from: ShortId, b: TestBlock): Id | undefined {
    switch (strategy) {
      case 'silent':
        return undefined;
      case 'junk':
        return Id.fromBytes(this.rng.bytes(32));
      case 'coordinated':
        return b.height > 0 ? this.coalition.conflictFor(b).id : b.id;
      case 'equivocate': {
        const half = this.honestIds.findIndex((id) => id.equals(from)) % 2 === 1;
        return half && b.height > 0 ? this.coalition.conflictFor(b).id : b.id;
      }
    }
  }

  onGet(from: ShortId, requestId: number, blockId: Id): void {
    if (this.behaviour.strategy === 'silent') return;
    const b = this.vm.blocks.get(blockId.key) ?? this.coalition.vm.blocks.get(blockId.key);
    if (b) this.transport.put(from, requestId, b.bytes);
  }

  onChits(): void {}
  onPut(): void {}
  onQueryFailed(): void {}

  /** Makes a conflicting block and pushes it to a few honest nodes. */
  pushConflict(): void {
    const target = this.#recent[this.#recent.length - 1];
    if (!target || target.height === 0) return;
    const s = this.#sibling(target);
    const to: ShortId[] = [];
    for (let i = 0; i < this.behaviour.pushTo; i++) {
      const id = this.honestIds[this.rng.int(this.honestIds.length)];
      if (id && !to.includes(id)) to.push(id);
    }
    this.#nextRequestId = (this.#nextRequestId + 1) >>> 0;
    this.transport.pushQuery(to, this.#nextRequestId, s.bytes);
  }
}

export class Simulation {
  readonly opts: SimulationOptions;
  readonly params: SnowParams;
  readonly queue = new EventQueue();
  readonly honest: HonestNode[] = [];
  readonly adversaries: Adversary[] = [];
  readonly messages: MessageCounts = { sent: 0, delivered: 0, dropped: 0, byType: { pushQuery: 0, chits: 0, get: 0, put: 0 } };
  readonly #actors = new Map<string, Actor>();
  readonly #rng: Prng;
  readonly #netRng: Prng;
  readonly #netRandom: () => number;
  #reached = 0;
  #events = 0;
  #pushes = 0;
  #running = false;

  constructor(opts: SimulationOptions) {
    this.opts = opts;
    this.params = opts.params ?? DEFAULT_SNOW_PARAMS;
    this.#rng = new Prng(opts.seed);
    this.#netRng = this.#rng.fork();
    this.#netRandom = this.#netRng.random;
    const nHonest = opts.honest;
    const nAdv = opts.adversaries ?? 0;
    const honestWeight = opts.honestWeight ?? 100;
    const advWeight = opts.adversaryWeight ?? honestWeight;
    const validators = [
      ...Array.from({ length: nHonest }, (_, i) => ({ nodeId: nodeId(i), weight: honestWeight })),
      ...Array.from({ length: nAdv }, (_, i) => ({ nodeId: nodeId(nHonest + i), weight: advWeight })),
    ];
    const log = opts.log ?? silentLogger;
    for (let i = 0; i < nHonest; i++) {
      const id = nodeId(i);
      const rng = this.#rng.fork();
      const vm = new TestVM({ random: rng.random });
      const chain: string[] = [];
      const timeouts = opts.timeouts ?? SIM_TIMEOUTS;
      const sender = new RequestSender({
        link: this.#transport(id),
        isConnected: () => true,
        scheduler: this.queue,
        timeouts: new AdaptiveTimeout(timeouts, () => this.queue.now()),
        benchlist: new Benchlist(opts.benchlist ?? SIM_BENCHLIST, () => this.queue.now()),
        log: log.child({ node: i }),
      });
      const engine = new SnowmanEngine({
        vm,
        params: this.params,
        transport: sender,
        validators: new WeightedSampler(validators, rng.fork().random, (v) => sender.status(v), 1 - this.params.alpha / this.params.k),
        nodeId: id,
        scheduler: this.queue,
        log: log.child({ node: i }),
        queryTimeoutMs: timeouts.maximumMs,
        onAccepted: (block) => {
          chain.push(block.id.toString());
          if (chain.length === opts.targetBlocks) this.#reached += 1;
        },
      });
      sender.attach(engine);
      const node: HonestNode = { id, vm, engine, sender, chain };
      this.honest.push(node);
      this.#actors.set(id.key, sender);
    }
    const honestIds = this.honest.map((n) => n.id);
    const behaviour = { ...DEFAULT_ADVERSARY, ...opts.adversary };
    // The coalition's blocks go out from the first adversary, to every honest node. (Only strategies
    // that use it draw its random stream, so other runs keep the streams they always had.)
    const coalition = new Coalition(behaviour.strategy === 'coordinated' || behaviour.strategy === 'equivocate' ? this.#rng.fork() : new Prng(0), (block) => {
      const from = nodeId(nHonest);
      this.#pushes = (this.#pushes + 1) >>> 0;
      this.#transport(from).pushQuery(honestIds, this.#pushes, block.bytes);
    });
    for (let i = 0; i < nAdv; i++) {
      const id = nodeId(nHonest + i);
      const adv = new Adversary(id, this.#rng.fork(), behaviour, this.#transport(id), honestIds, coalition);
      this.adversaries.push(adv);
      this.#actors.set(id.key, adv);
    }
  }

  #transport(self: ShortId): EngineTransport {
    return {
      pushQuery: (to, requestId, block) => {
        for (const t of to) this.#send(self, t, 'pushQuery', (a) => a.onPushQuery(self, requestId, block));
      },
      chits: (to, requestId, preferred, accepted) => this.#send(self, to, 'chits', (a) => a.onChits(self, requestId, preferred, accepted)),
      get: (to, requestId, blockId) => this.#send(self, to, 'get', (a) => a.onGet(self, requestId, blockId)),
      put: (to, requestId, block) => this.#send(self, to, 'put', (a) => a.onPut(self, requestId, block)),
    };
  }

  #send(from: ShortId, to: ShortId, type: keyof MessageCounts['byType'], deliver: (a: Actor) => unknown): void {
    if (!this.#running) return;
    const target = this.#actors.get(to.key);
    if (!target) return;
    this.messages.sent += 1;
    this.messages.byType[type] += 1;
    const self = from.key === to.key;
    if (!self && this.#netRng.next() < (this.opts.dropRate ?? 0)) {
      this.messages.dropped += 1;
      return;
    }
    const delay = self ? 0 : this.#delay();
    this.queue.setTimeout(() => {
      this.messages.delivered += 1;
      const r = deliver(target);
      if (r instanceof Promise) r.catch(() => undefined);
    }, delay);
  }

  #delay(): number {
    const spec = this.opts.delay ?? { minMs: 5, maxMs: 50 };
    if (typeof spec === 'function') return Math.max(0, spec(this.#netRandom));
    return spec.minMs + this.#netRng.next() * (spec.maxMs - spec.minMs);
  }

  #scheduleProposal(): void {
    const mean = this.opts.proposeEveryMs ?? 200;
    this.queue.setTimeout(() => {
      if (!this.#running) return;
      const n = this.honest.length;
      const i = this.#rng.int(n);
      this.honest[i]?.vm.notify();
      if (n > 1 && this.#rng.next() < (this.opts.forkRate ?? 0.2)) {
        const j = (i + 1 + this.#rng.int(n - 1)) % n;
        this.honest[j]?.vm.notify();
      }
      this.#scheduleProposal();
    }, this.#rng.exp(mean));
  }

  #scheduleAdversary(adv: Adversary, mean: number): void {
    this.queue.setTimeout(() => {
      if (!this.#running) return;
      adv.pushConflict();
      this.#scheduleAdversary(adv, mean);
    }, this.#rng.exp(mean));
  }

  /** Runs until every honest node accepted targetBlocks blocks, or a limit is hit; then stops the engines. */
  async run(): Promise<SimulationResult> {
    const t0 = performance.now();
    this.#running = true;
    for (const n of this.honest) await n.engine.start();
    await drainMicrotasks();
    this.#scheduleProposal();
    const advEvery = this.opts.adversary?.buildEveryMs ?? DEFAULT_ADVERSARY.buildEveryMs;
    const pushes = (this.opts.adversary?.strategy ?? DEFAULT_ADVERSARY.strategy) === 'mixed';
    if (advEvery > 0 && pushes) for (const a of this.adversaries) this.#scheduleAdversary(a, advEvery);
    const maxVirtualMs = this.opts.maxVirtualMs ?? 600_000;
    const maxEvents = this.opts.maxEvents ?? 5_000_000;
    while (this.#reached < this.honest.length && this.#events < maxEvents) {
      const t = this.queue.peekTime();
      if (t === undefined || t > maxVirtualMs) break;
      this.queue.runNext();
      this.#events += 1;
      await drainMicrotasks();
    }
    this.#running = false;
    const timedOut = this.honest.reduce((s, n) => s + n.sender.stats.timedOut, 0);
    const benched = this.honest.reduce((s, n) => s + n.sender.stats.benched, 0);
    for (const n of this.honest) {
      await n.engine.stop();
      n.sender.stop();
    }
    const realMs = performance.now() - t0;
    const counts = this.honest.map((n) => n.chain.length);
    return {
      seed: this.opts.seed,
      reachedTarget: this.#reached >= this.honest.length,
      chains: this.honest.map((n) => [...n.chain]),
      minAccepted: Math.min(...counts),
      maxAccepted: Math.max(...counts),
      conflicts: this.checkSafety(),
      violations: this.honest.flatMap((n, i) => n.vm.violations.map((v) => `node ${i}: ${v}`)),
      timedOut,
      benched,
      blocksBuilt: this.honest.reduce((s, n) => s + n.vm.buildCalls, 0),
      rejected: this.honest.reduce((s, n) => s + n.vm.rejectCalls, 0),
      virtualMs: this.queue.now(),
      realMs,
      events: this.#events,
      messages: { ...this.messages, byType: { ...this.messages.byType } },
    };
  }

  /** Heights at which two honest nodes accepted different blocks (empty when the run was safe). */
  checkSafety(): string[] {
    const conflicts: string[] = [];
    const maxLen = Math.max(0, ...this.honest.map((n) => n.chain.length));
    for (let h = 0; h < maxLen; h++) {
      let first: { node: number; id: string } | undefined;
      this.honest.forEach((n, i) => {
        const id = n.chain[h];
        if (id === undefined) return;
        if (!first) first = { node: i, id };
        else if (first.id !== id) conflicts.push(`height ${h + 1}: node ${first.node} accepted ${first.id}, node ${i} accepted ${id}`);
      });
    }
    return conflicts;
  }
}

/** Builds and runs one simulation. */
export function runSimulation(opts: SimulationOptions): Promise<SimulationResult> {
  return new Simulation(opts).run();
}

export interface ThroughputResult {
  /** Blocks accepted by every node. */
  blocks: number;
  realSeconds: number;
  virtualSeconds: number;
  /** Messages sent between (and to) the validators. */
  messages: number;
}

/**
 * The engine throughput figure: 20 honest validators with the default parameters, no drops and no
 * adversaries, run until every one accepted `blocks` blocks. `blocks / realSeconds` is the figure.
 */
export async function runThroughputBenchmark(opts: { blocks?: number; seed?: number } = {}): Promise<ThroughputResult> {
  const r = await runSimulation({
    seed: opts.seed ?? 1,
    honest: 20,
    params: DEFAULT_SNOW_PARAMS,
    dropRate: 0,
    delay: { minMs: 5, maxMs: 30 },
    proposeEveryMs: 50,
    forkRate: 0,
    targetBlocks: opts.blocks ?? 100,
    maxVirtualMs: 3_600_000,
  });
  return {
    blocks: r.minAccepted,
    realSeconds: r.realMs / 1000,
    virtualSeconds: r.virtualMs / 1000,
    messages: r.messages.sent,
  };
}
