/**
 * What keeps a chain deciding on a real network (issue: "the network keeps deciding"): polls end as
 * soon as their outcome cannot change, a node that missed blocks hears of them and fetches them,
 * polls that make no progress are paced, a VM with nothing left to build is not a warning.
 * Each test fails on the engine before these changes.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Block, ShortId } from '@cornice/sdk';
import { DEFAULT_SNOW_PARAMS } from '../../../src/consensus/params.js';
import { EventQueue, TestVM, TestVMError, type TestBlock } from '../../../src/testing/simulation.js';
import { SnowmanEngine } from '../../../src/consensus/snowman/engine.js';
import { createLogger } from '../../../src/log/logger.js';
import { fixedSampler, flush, harness, nodeIdOf, RecordingTransport, type Harness, type Message } from '../helpers.js';

const test = suite('engine on a faulty network');

const V = [1, 2, 3, 4, 5].map(nodeIdOf);
/** Five validators of equal stake, four seats each in a poll of k = 20. */
const FIVE = Array.from({ length: 20 }, (_, i) => V[i % 5]!);

/** Runs the virtual clock up to `until` ms, flushing microtasks after each event. */
async function runClock(clock: EventQueue, until: number): Promise<void> {
  for (;;) {
    const t = clock.peekTime();
    if (t === undefined || t > until) break;
    clock.runNext();
    await flush();
  }
  clock.advanceTo(until);
}

/** The distinct polls (by request ID) among the queries sent, taken out of the transport. */
function takePolls(h: Harness): number[] {
  const ids = new Set<number>();
  for (const m of h.transport.take('pushQuery')) ids.add(m.requestId);
  return [...ids];
}

test('a poll ends as soon as its outcome cannot change: a silent fifth of the stake costs no time', async () => {
  const h = harness({ bag: FIVE });
  await h.engine.start();
  h.vm.notify();
  await flush();
  const block = h.vm.blocks.get(h.engine.preference.key) as TestBlock;
  const [poll] = takePolls(h);
  assert.ok(poll !== undefined);
  // Four of five answer (16 of 20 votes); the fifth (frozen) never does.
  for (const v of V.slice(0, 3)) h.engine.onChits(v, poll, block.id);
  assert.ok(h.engine.stats.pollsStarted === 4 && h.engine.pollsInFlight === 4, 'three answers (12 votes): the poll still waits');
  h.engine.onChits(V[3]!, poll, block.id);
  await flush();
  assert.is(h.engine.stats.successfulPolls, 1, 'applied at once, without waiting for the fifth or the deadline');
  assert.is(h.clock.now(), 0);
  // A poll that can no longer reach alpha ends as soon as that is so: 8 votes each way, 4 missing.
  const [split] = takePolls(h);
  assert.ok(split !== undefined);
  h.engine.onChits(V[0]!, split, block.id);
  h.engine.onChits(V[1]!, split, block.id);
  h.engine.onChits(V[2]!, split, h.vm.genesis.id);
  const before = h.engine.stats.failedPolls;
  h.engine.onChits(V[3]!, split, h.vm.genesis.id);
  await flush();
  assert.is(h.engine.stats.failedPolls, before + 1);
  await h.engine.stop();
});

test('a poll waits while outstanding votes could still carry a deeper block over alpha', async () => {
  const h = harness({ bag: FIVE });
  await h.engine.start();
  const c1 = h.vm.makeBlock(h.vm.genesis);
  const c2 = h.vm.makeBlock(c1);
  await h.engine.issue(c1);
  await h.engine.issue(c2);
  const last = takePolls(h).at(-1)!;
  // 12 votes for c2 and 4 for c1: c1 has 16 (>= alpha); c2 has 12, and the 4 outstanding could make it 16.
  h.engine.onChits(V[0]!, last, c2.id);
  h.engine.onChits(V[1]!, last, c2.id);
  h.engine.onChits(V[2]!, last, c2.id);
  h.engine.onChits(V[3]!, last, c1.id);
  await flush();
  assert.is(h.engine.stats.successfulPolls, 0, 'the poll is still open');
  h.engine.onChits(V[4]!, last, c2.id);
  await flush();
  assert.is(h.engine.stats.successfulPolls, 1);
  await h.engine.stop();
});

/** Answers the engine's Gets for `blocks` (newest first), each from `from`. */
async function answerGets(h: Harness, from: ShortId, blocks: readonly TestBlock[]): Promise<void> {
  for (const expected of blocks) {
    const gets = h.transport.take('get') as Array<Extract<Message, { type: 'get' }>>;
    assert.is(gets.length, 1, `one Get for ${expected.height}`);
    assert.ok(gets[0]!.blockId.equals(expected.id), `the Get asks for height ${expected.height}`);
    assert.ok(gets[0]!.to.equals(from));
    await h.engine.onPut(from, gets[0]!.requestId, expected.bytes);
    await flush();
  }
}

test('a node that missed blocks catches up from the accepted block in chits; the frontier is gossiped while idle; stats.behind says so until caught up', async () => {
  const h = harness({ bag: FIVE, limits: { frontierGossipMs: 5_000, behindAfterMs: 5_000 } });
  await h.engine.start();
  // The others accepted b1..b3 while this node was away (a frozen process, a lost message).
  const b1 = h.vm.makeBlock(h.vm.genesis);
  const b2 = h.vm.makeBlock(b1);
  const b3 = h.vm.makeBlock(b2);
  await runClock(h.clock, 4_999);
  assert.is(h.transport.sent.length, 0, 'nothing before frontierGossipMs');
  await runClock(h.clock, 5_000);
  const gossip = h.transport.take('pushQuery') as Array<Extract<Message, { type: 'pushQuery' }>>;
  assert.is(gossip.length, 1, 'one query for our frontier to one validator');
  assert.ok(!gossip[0]!.to.equals(h.self));
  assert.equal(gossip[0]!.bytes, h.vm.genesis.bytes, 'carrying our last accepted block');
  const peer = gossip[0]!.to;
  // It answers with its vote at our height and, second, its last accepted block.
  h.engine.onChits(peer, gossip[0]!.requestId, h.vm.genesis.id, b3.id);
  await flush();
  await answerGets(h, peer, [b3, b2, b1]);
  assert.is(h.engine.processing, 3, 'fetched down to our last accepted block, verified, polled');
  assert.is(h.engine.stats.behind, undefined, 'not yet: behindAfterMs');
  await runClock(h.clock, 10_001);
  assert.equal(h.engine.stats.behind?.peerHeight, 3);
  // Every validator votes b3 (and says it accepted it): the three are accepted, behind clears.
  for (let round = 0; round < 40 && h.accepted.length < 3; round++) {
    for (const poll of takePolls(h)) for (const v of V) h.engine.onChits(v, poll, b3.id, b3.id);
    await flush();
  }
  assert.equal(h.accepted, [1, 2, 3]);
  assert.is(h.engine.stats.behind, undefined);
  assert.equal(h.vm.violations, []);
  await h.engine.stop();
});

test('an accepted block a validator names that is already decided here costs nothing', async () => {
  const h = harness({ bag: FIVE });
  await h.engine.start();
  h.engine.onChits(V[1]!, 1, h.vm.genesis.id, h.vm.genesis.id);
  assert.is(h.transport.sent.length, 0);
  assert.is(h.engine.stats.behind, undefined);
  await h.engine.stop();
});

test('polls that make no progress are paced: full speed for paceAfterMs, then slower, at most one a second', async () => {
  const h = harness({ bag: FIVE });
  await h.engine.start();
  h.vm.notify();
  await flush();
  const block = h.vm.blocks.get(h.engine.preference.key) as TestBlock;
  const started = (from: number, to: number, log: Array<[number, number]>) => log.filter(([t]) => t >= from && t < to).reduce((s, [, n]) => s + n, 0);
  const log: Array<[number, number]> = [];
  // Validators stuck on a split: 8 votes for the block, 12 for its parent — never alpha.
  for (let t = 0; t <= 30_000; t += 10) {
    const polls = takePolls(h);
    log.push([h.clock.now(), polls.length]);
    for (const poll of polls) for (const [i, v] of V.entries()) h.engine.onChits(v, poll, i < 2 ? block.id : h.vm.genesis.id);
    await flush();
    await runClock(h.clock, t + 10);
  }
  const early = started(0, 2_000, log);
  const late = started(20_000, 30_000, log);
  assert.ok(early >= 150, `polls at full speed at first: ${early} in 2 s`);
  assert.ok(late <= 12, `then paced to about one a second: ${late} in the last 10 s`);
  assert.is(h.engine.stats.successfulPolls, 0);
  await h.engine.stop();
});

test("a VM with nothing left to build (code 'NothingToBuild': another node's block took its txs) is logged at debug, not warn", async () => {
  class Taken extends TestVM {
    override async buildBlock(): Promise<Block> {
      this.buildCalls += 1;
      throw new TestVMError('NothingToBuild' as never, 'no executable transaction');
    }
  }
  const lines: Array<Record<string, unknown>> = [];
  const vm = new Taken();
  const self = nodeIdOf(1);
  const engine = new SnowmanEngine({
    vm,
    params: DEFAULT_SNOW_PARAMS,
    transport: new RecordingTransport(self),
    validators: fixedSampler([self]),
    nodeId: self,
    scheduler: new EventQueue(),
    log: createLogger({ level: 'trace', write: (l) => lines.push(JSON.parse(l)) }),
  });
  await engine.start();
  vm.notify();
  await flush();
  assert.is(vm.buildCalls, 1);
  const line = lines.find((l) => l.msg === 'nothing to build');
  assert.is(line?.level, 'debug');
  assert.match(String(line?.error), /no executable transaction/);
  assert.is(lines.filter((l) => l.level === 'warn').length, 0);
  assert.is(engine.stats.buildFailures, 1, 'with the same backoff');
  await engine.stop();
});

test.run();
