import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Id, type NodeError, silentLogger } from '@cornice/sdk';
import { ConsensusError } from '../../../src/consensus/errors.js';
import { DEFAULT_SNOW_PARAMS } from '../../../src/consensus/params.js';
import { EventQueue, TestVM, type TestBlock } from '../../../src/testing/simulation.js';
import { SnowmanEngine } from '../../../src/consensus/snowman/engine.js';
import type { ShortId } from '@cornice/sdk';
import type { SnowParams } from '../../../src/consensus/params.js';
import { fixedSampler, flush, harness, loopback, nodeIdOf, RecordingTransport, type Message } from '../helpers.js';

const test = suite('snowman engine');

/** Answers the engine's Gets one at a time: each must ask `from` for the next of `blocks`, in order. */
async function answerGets(h: ReturnType<typeof harness>, from: ReturnType<typeof nodeIdOf>, blocks: readonly TestBlock[]): Promise<void> {
  for (const expected of blocks) {
    const gets = h.transport.take('get') as Array<Extract<Message, { type: 'get' }>>;
    assert.is(gets.length, 1);
    assert.ok((gets[0] as { blockId: Id }).blockId.equals(expected.id));
    await h.engine.onPut(from, (gets[0] as Message).requestId, expected.bytes);
  }
}

test('a one-validator network accepts a block after exactly betaVirtuous successful polls (default params)', async () => {
  const h = harness();
  await h.engine.start();
  assert.equal(h.vm.states, ['bootstrapping', 'normalOp']);
  assert.ok(h.engine.lastAcceptedId.equals(h.vm.genesis.id));
  assert.ok(h.engine.preference.equals(h.vm.genesis.id));
  assert.ok(h.vm.waiting, 'the engine waits for the VM');

  h.vm.notify();
  await flush();
  assert.is(h.vm.buildCalls, 1);
  assert.is(h.engine.processing, 1);
  const block = h.vm.blocks.get(h.engine.preference.key) as TestBlock;
  assert.is(block.height, 1);
  assert.ok(h.vm.preferred === block, 'the VM was told the new preference');
  // concurrentRepolls polls went out at once, each to the one validator (drawn k times).
  const queries = h.transport.sent.filter((m) => m.type === 'pushQuery');
  assert.is(queries.length, DEFAULT_SNOW_PARAMS.concurrentRepolls);
  assert.is(h.engine.pollsInFlight, 4);

  const chits = await loopback(h, () => h.accepted.length > 0);
  assert.is(chits, DEFAULT_SNOW_PARAMS.betaVirtuous);
  assert.equal(h.accepted, [1]);
  assert.is(block.status, 'accepted');
  assert.ok(h.engine.lastAcceptedId.equals(block.id));
  assert.is(h.engine.processing, 0);
  assert.is(h.engine.stats.successfulPolls, 20);
  assert.is(h.engine.stats.failedPolls, 0);
  assert.is(h.vm.parseCalls, 0, 'its own queries carry blocks it knows: never parsed again');

  // Polls still in flight finish harmlessly and no new ones start while nothing is processing.
  await loopback(h);
  assert.is(h.engine.pollsInFlight, 0);
  assert.is(h.transport.sent.length, 0);
  assert.equal(h.vm.violations, []);
  await h.engine.stop();
});

test('a push query from another node with the same bytes is parsed (only the own node\'s queries skip it)', async () => {
  const h = harness();
  await h.engine.start();
  h.vm.notify();
  await flush();
  const q = h.transport.sent.find((m) => m.type === 'pushQuery') as Message & { bytes: Uint8Array };
  await h.engine.onPushQuery(nodeIdOf(9), 77, q.bytes);
  assert.is(h.vm.parseCalls, 1);
  await h.engine.onPushQuery(h.self, 78, q.bytes.slice());
  assert.is(h.vm.parseCalls, 2, 'a copy of the bytes is not a block this engine sent');
  await h.engine.stop();
});

test('a VM whose blocks hand out a copy of their bytes on each read (the EVM\'s): its own queries are not parsed again either', async () => {
  const h = harness();
  const build = h.vm.buildBlock.bind(h.vm);
  h.vm.buildBlock = async () => {
    const block = await build();
    return new Proxy(block, {
      get(target, prop) {
        if (prop === 'bytes') return target.bytes.slice();
        const v = Reflect.get(target, prop, target) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
  };
  await h.engine.start();
  h.vm.notify();
  await flush();
  await loopback(h, () => h.accepted.length > 0);
  assert.equal(h.accepted, [1]);
  assert.is(h.vm.parseCalls, 0);
  await h.engine.stop();
});

test('19 successful polls then a failed one: the count starts over', async () => {
  const other = nodeIdOf(9);
  const h = harness();
  await h.engine.start();
  h.vm.notify();
  await flush();
  const chits = await loopback(h, () => h.engine.stats.successfulPolls === 19);
  assert.is(chits, 19);
  // The next poll gets a vote for the last accepted block (genesis): it counts for no child.
  const q = h.transport.sent.find((m) => m.type === 'pushQuery') as Message;
  h.transport.sent.splice(h.transport.sent.indexOf(q), 1);
  h.engine.onChits(h.self, q.requestId, h.vm.genesis.id);
  h.engine.onChits(other, q.requestId, h.vm.genesis.id); // not asked: ignored
  await flush();
  assert.is(h.engine.stats.failedPolls, 1);
  assert.is(h.engine.stats.rootConfidence, 0);
  const more = await loopback(h, () => h.accepted.length > 0);
  assert.is(more, 20);
  await h.engine.stop();
});

test('a block whose verify throws is dropped for a while with its held descendants, not remembered as decided; it is verified again when it comes back', async () => {
  const h = harness({ limits: { failedVerifyTtlMs: 2_000 } });
  await h.engine.start();
  const bad = h.vm.makeBlock(h.vm.genesis, { invalid: true });
  const child = h.vm.makeBlock(bad);
  await h.engine.issue(bad);
  assert.is(h.engine.processing, 0);
  assert.is(bad.verifyCalls, 1);
  assert.is(bad.status, 'processing', 'never verified, never decided');
  await h.engine.issue(child);
  assert.is(h.engine.processing, 0);
  assert.is(h.engine.held, 1, 'a child of a block that failed waits (its parent may pass when it comes again)');
  assert.is(child.verifyCalls, 0);
  // Issuing it again within the TTL does not verify it again.
  await h.engine.issue(bad);
  assert.is(bad.verifyCalls, 1);
  assert.is(h.transport.sent.length, 0, 'nothing to poll');
  // A child held before its parent failed is let go with it.
  const bad2 = h.vm.makeBlock(h.vm.genesis, { invalid: true });
  const orphan = h.vm.makeBlock(bad2);
  await h.engine.issue(orphan);
  assert.is(h.engine.held, 2);
  await h.engine.issue(bad2);
  assert.is(h.engine.held, 1);
  assert.is(orphan.verifyCalls, 0);
  assert.is(h.vm.acceptCalls + h.vm.rejectCalls, 0);
  // Past the TTL a block that verifies now (its verify failed for a while: a parent the VM had not
  // registered, a timestamp ahead of this node's clock) is verified again and joins, with its child.
  // On main before this, it and every descendant were remembered as decided: the C-Chain stalled.
  const flaky = h.vm.makeBlock(h.vm.genesis);
  const flakyChild = h.vm.makeBlock(flaky);
  const verify = flaky.verify.bind(flaky);
  let tries = 0;
  flaky.verify = async () => {
    if (tries++ === 0) throw new Error('parent is not verified');
    return verify();
  };
  await h.engine.issue(flaky);
  assert.is(h.engine.processing, 0);
  await h.engine.issue(flaky);
  assert.is(tries, 1, 'not again within the TTL');
  h.clock.advanceTo(2_001);
  await h.engine.issue(flakyChild);
  assert.is(h.engine.held, 2, 'the child waits for its parent');
  await h.engine.issue(flaky);
  assert.is(tries, 2);
  assert.is(h.engine.processing, 2, 'the block and its child joined');
  assert.equal(h.vm.violations, []);
  await h.engine.stop();
});

test('conflicting children: the preferred one is accepted after betaRogue polls; the other and its descendants are rejected', async () => {
  const h = harness();
  await h.engine.start();
  const a1 = h.vm.makeBlock(h.vm.genesis);
  const a2 = h.vm.makeBlock(h.vm.genesis);
  const b = h.vm.makeBlock(a2);
  const c = h.vm.makeBlock(b);
  const rejected: string[] = [];
  for (const blk of [a2, b, c]) {
    const orig = blk.reject.bind(blk);
    blk.reject = async () => {
      rejected.push(blk.id.key);
      await orig();
    };
  }
  await h.engine.issue(a1);
  await h.engine.issue(a2);
  await h.engine.issue(b);
  await h.engine.issue(c);
  assert.is(h.engine.processing, 4);
  assert.ok(h.engine.preference.equals(a1.id), 'the first child stays preferred');
  assert.ok(h.engine.stats.rootRogue);
  const chits = await loopback(h, () => h.accepted.length > 0);
  assert.is(chits, DEFAULT_SNOW_PARAMS.betaRogue);
  assert.is(a1.status, 'accepted');
  assert.is(a2.status, 'rejected');
  assert.is(b.status, 'rejected');
  assert.is(c.status, 'rejected');
  assert.equal(rejected, [a2.id.key, b.id.key, c.id.key], 'parents are rejected before their children');
  assert.is(h.engine.processing, 0);
  // Blocks on the rejected branch are ignored from now on.
  const late = h.vm.makeBlock(c);
  await h.engine.issue(late);
  assert.is(h.engine.processing, 0);
  assert.is(late.verifyCalls, 0);
  assert.equal(h.vm.violations, []);
  await h.engine.stop();
});

test('a chain issued out of order is held until its parents arrive and accepted in height order', async () => {
  const h = harness();
  await h.engine.start();
  const chain: TestBlock[] = [];
  let parent: TestBlock = h.vm.genesis;
  for (let i = 0; i < 5; i++) chain.push((parent = h.vm.makeBlock(parent)));
  for (const blk of [chain[4], chain[2], chain[3], chain[1]] as TestBlock[]) await h.engine.issue(blk);
  assert.is(h.engine.processing, 0);
  assert.is(h.engine.held, 4);
  await h.engine.issue(chain[0] as TestBlock);
  assert.is(h.engine.held, 0);
  assert.is(h.engine.processing, 5);
  assert.ok(h.engine.preference.equals((chain[4] as TestBlock).id));
  // Each poll's vote for the tip counts for all five (transitive): all finalize together.
  const chits = await loopback(h, () => h.accepted.length === 5);
  assert.is(chits, 20);
  assert.equal(h.accepted, [1, 2, 3, 4, 5]);
  assert.equal(
    h.vm.acceptedChain.map((b) => b.height),
    [0, 1, 2, 3, 4, 5],
  );
  assert.equal(h.vm.violations, []);
  await h.engine.stop();
});

test('a vote for an unknown block is ignored and the block is fetched from the voter', async () => {
  const peer = nodeIdOf(2);
  const h = harness({ bag: Array.from({ length: 20 }, () => peer) });
  await h.engine.start();
  const a = h.vm.makeBlock(h.vm.genesis);
  await h.engine.issue(a);
  const queries = h.transport.take('pushQuery');
  assert.is(queries.length, 4);
  assert.ok(queries.every((q) => q.to.equals(peer)));
  // The peer prefers x, a child of a that we have not seen.
  const peerVm = new TestVM();
  const pa = (await peerVm.parseBlock(a.bytes)) as TestBlock;
  const x = peerVm.makeBlock(pa);
  const [q1, q2] = queries as [Message, Message];
  h.engine.onChits(peer, q1.requestId, x.id);
  await flush();
  const gets = h.transport.take('get');
  assert.is(gets.length, 1);
  const get = gets[0] as Extract<Message, { type: 'get' }>;
  assert.ok(get.to.equals(peer));
  assert.ok(get.blockId.equals(x.id));
  assert.is(h.engine.stats.failedPolls, 1, 'the vote counted nothing');
  assert.is(h.engine.stats.unknownVoteWeight, 20);
  // A second vote for x does not fetch it again.
  h.engine.onChits(peer, q2.requestId, x.id);
  await flush();
  assert.is(h.transport.take('get').length, 0);
  // The peer answers; x joins the tree on top of a and becomes the preference.
  await h.engine.onPut(peer, get.requestId, x.bytes);
  assert.is(h.engine.processing, 2);
  assert.ok(h.engine.preference.equals(x.id));
  // Now votes for x count (for a too).
  const next = h.transport.take('pushQuery');
  assert.ok(next.length >= 1);
  h.engine.onChits(peer, (next[0] as Message).requestId, x.id);
  await flush();
  assert.is(h.engine.stats.successfulPolls, 1);
  await h.engine.stop();
});

test('a pushed block with unknown ancestors: ancestors are fetched from the pusher, then chits answered', async () => {
  const peer = nodeIdOf(2);
  const h = harness({ bag: [peer] , params: { ...DEFAULT_SNOW_PARAMS, k: 1, alpha: 1 } });
  await h.engine.start();
  const peerVm = new TestVM();
  const a = peerVm.makeBlock(peerVm.genesis);
  const b = peerVm.makeBlock(a);
  const c = peerVm.makeBlock(b);
  await h.engine.onPushQuery(peer, 77, c.bytes);
  // Answered at once with our preference (genesis: nothing is processing yet).
  const [chit] = h.transport.take('chits') as [Extract<Message, { type: 'chits' }>];
  assert.is(chit.requestId, 77);
  assert.ok(chit.preferred.equals(h.vm.genesis.id));
  assert.is(h.engine.held, 1);
  await answerGets(h, peer, [b, a]);
  assert.is(h.engine.held, 0);
  assert.is(h.engine.processing, 3);
  assert.ok(h.engine.preference.equals(c.id));
  // Asked again about b, we answer with our preferred block at b's height: b itself.
  await h.engine.onPushQuery(peer, 78, b.bytes);
  const [chit2] = h.transport.take('chits') as [Extract<Message, { type: 'chits' }>];
  assert.ok(chit2.preferred.equals(b.id));
  // Asked about a block above our tip, we answer with our tip.
  const d = peerVm.makeBlock(peerVm.makeBlock(c));
  await h.engine.onPushQuery(peer, 79, d.bytes);
  const [chit3] = h.transport.take('chits') as [Extract<Message, { type: 'chits' }>];
  assert.ok(chit3.preferred.equals(c.id));
  await h.engine.stop();
});

test('a VM that knows a block\'s height only once it knows the parent (the timestamp VM): pushed blocks are held, fetched and answered', async () => {
  const peer = nodeIdOf(2);
  const h = harness({ bag: [peer], params: { ...DEFAULT_SNOW_PARAMS, k: 1, alpha: 1 } });
  await h.engine.start();
  const known = new Set<string>([h.vm.genesis.id.key]);
  const parse = h.vm.parseBlock.bind(h.vm);
  h.vm.parseBlock = async (bytes: Uint8Array) => {
    const block = await parse(bytes);
    known.add(block.id.key);
    return new Proxy(block, {
      get(target, prop) {
        if (prop === 'height' && !known.has(target.parentId.key)) throw new Error(`height of block ${target.id} is unknown until its parent ${target.parentId} is`);
        const v = Reflect.get(target, prop, target) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
  };
  const peerVm = new TestVM();
  const a = peerVm.makeBlock(peerVm.genesis);
  const b = peerVm.makeBlock(a);
  const c = peerVm.makeBlock(b);
  await h.engine.onPushQuery(peer, 90, c.bytes);
  const [chit] = h.transport.take('chits') as [Extract<Message, { type: 'chits' }>];
  assert.ok(chit.preferred.equals(h.vm.genesis.id), 'answered with the preference, not an error');
  assert.is(h.engine.held, 1);
  await answerGets(h, peer, [b, a]);
  assert.is(h.engine.processing, 3);
  assert.ok(h.engine.preference.equals(c.id));
  await h.engine.stop();
});

test('a lost Get is asked again once it timed out', async () => {
  const peer = nodeIdOf(2);
  const h = harness({ bag: [peer], params: { ...DEFAULT_SNOW_PARAMS, k: 1, alpha: 1 }, queryTimeoutMs: 500 });
  await h.engine.start();
  const peerVm = new TestVM();
  const a = peerVm.makeBlock(peerVm.genesis);
  const b = peerVm.makeBlock(a);
  await h.engine.onPushQuery(peer, 1, b.bytes);
  assert.is(h.transport.take('get').length, 1);
  // Pushed again before the Get timed out: not asked twice.
  await h.engine.onPushQuery(peer, 2, b.bytes);
  assert.is(h.transport.take('get').length, 0);
  h.clock.advanceTo(h.clock.now() + 501);
  await h.engine.onPushQuery(peer, 3, b.bytes);
  const gets = h.transport.take('get');
  assert.is(gets.length, 1);
  await h.engine.onPut(peer, (gets[0] as Message).requestId, a.bytes);
  assert.is(h.engine.processing, 2);
  await h.engine.stop();
});

test('a peer serving Get: processing and accepted blocks, nothing for unknown ones', async () => {
  const peer = nodeIdOf(2);
  const h = harness();
  await h.engine.start();
  const a = h.vm.makeBlock(h.vm.genesis);
  await h.engine.issue(a);
  h.transport.take();
  await h.engine.onGet(peer, 5, a.id);
  await h.engine.onGet(peer, 6, h.vm.genesis.id);
  await h.engine.onGet(peer, 7, Id.fromBytes(new Uint8Array(32).fill(9)));
  const puts = h.transport.take('put') as Array<Extract<Message, { type: 'put' }>>;
  assert.equal(
    puts.map((p) => p.requestId),
    [5, 6],
  );
  assert.equal(puts[0]?.bytes, a.bytes);
  assert.ok(puts.every((p) => p.to.equals(peer)));
  await h.engine.stop();
});

test('malformed or unexpected input from peers never throws and changes nothing', async () => {
  const peer = nodeIdOf(2);
  const h = harness({ bag: [peer, peer, peer], params: { ...DEFAULT_SNOW_PARAMS, k: 3, alpha: 2 } });
  await h.engine.start();
  // Garbage bytes in a push query: still answered with our preference.
  await h.engine.onPushQuery(peer, 1, new Uint8Array([1, 2, 3]));
  const [chit] = h.transport.take('chits') as [Extract<Message, { type: 'chits' }>];
  assert.ok(chit.preferred.equals(h.vm.genesis.id));
  // Unsolicited put, put for an unknown request, put carrying another block than asked.
  const a = h.vm.makeBlock(h.vm.genesis);
  await h.engine.onPut(peer, 12345, a.bytes);
  assert.is(h.engine.processing, 0);
  // Chits and failures for polls that do not exist.
  h.engine.onChits(peer, 999, a.id);
  h.engine.onQueryFailed(peer, 999);
  // Input that is not even of the right type.
  h.engine.onChits(null as never, 1, null as never);
  await h.engine.onPushQuery(null as never, 1, null as never);
  await h.engine.onGet(peer, 1, null as never);
  await h.engine.onPut(peer, 1, undefined as never);
  // A block with a bad height for its parent.
  const bytes = h.vm.makeBlock(a).bytes.slice();
  new DataView(bytes.buffer).setBigUint64(32, 7n); // height 7 on a parent at height 1
  await h.engine.issue(a);
  await h.engine.onPushQuery(peer, 2, bytes);
  assert.is(h.engine.processing, 1);
  // A put for a real request that carries a different block is dropped.
  const peerVm = new TestVM();
  const x = peerVm.makeBlock((await peerVm.parseBlock(a.bytes)) as TestBlock);
  const q = h.transport.take('pushQuery')[0] as Message;
  h.engine.onChits(peer, q.requestId, x.id);
  await flush();
  const get = h.transport.take('get')[0] as Message;
  await h.engine.onPut(peer, get.requestId, peerVm.makeBlock(x).bytes);
  assert.is(h.engine.processing, 1);
  // The same answer twice counts once.
  h.engine.onChits(peer, q.requestId, a.id);
  assert.equal(h.vm.violations, []);
  assert.is(h.engine.stats.state, 'running');
  await h.engine.stop();
});

test('multiplicity weighting: a validator drawn n times counts n; missing answers count nothing after the timeout', async () => {
  const p1 = nodeIdOf(2);
  const p2 = nodeIdOf(3);
  const bag = [...Array.from({ length: 15 }, () => p1), ...Array.from({ length: 5 }, () => p2)];
  const h = harness({ bag, queryTimeoutMs: 1000 });
  await h.engine.start();
  const a = h.vm.makeBlock(h.vm.genesis);
  await h.engine.issue(a);
  const queries = h.transport.take('pushQuery');
  assert.is(queries.length, 8, '4 polls, each to the 2 distinct validators');
  const [first, second, third] = [...new Set(queries.map((q) => q.requestId))] as [number, number, number];
  // p1 alone carries 15 = alpha.
  h.engine.onChits(p1, first, a.id);
  h.engine.onQueryFailed(p2, first);
  await flush();
  assert.is(h.engine.stats.successfulPolls, 1);
  // p2 alone (5) is not enough; p1 silent until the timeout.
  h.engine.onChits(p2, second, a.id);
  h.engine.onChits(p2, third, a.id);
  await flush();
  assert.is(h.engine.stats.failedPolls, 0, 'still waiting for p1');
  while (h.engine.stats.failedPolls < 2 && h.clock.runNext()) await flush();
  assert.is(h.engine.stats.failedPolls, 2);
  assert.ok(h.clock.now() >= 1000);
  // New polls replaced the finished ones: never more than concurrentRepolls in flight.
  assert.is(h.engine.pollsInFlight, 4);
  await h.engine.stop();
});

test('stop() aborts waitForEvent, cancels every timer and quiets the engine', async () => {
  const peer = nodeIdOf(2);
  const h = harness({ bag: [peer] , params: { ...DEFAULT_SNOW_PARAMS, k: 1, alpha: 1 } });
  await h.engine.start();
  await h.engine.issue(h.vm.makeBlock(h.vm.genesis));
  assert.ok(h.vm.waiting);
  assert.ok(h.clock.pending > 0, 'poll timers are running');
  await h.engine.stop();
  assert.not.ok(h.vm.waiting, 'waitForEvent was aborted');
  assert.is(h.clock.pending, 0, 'no timer left');
  assert.is(h.engine.stats.state, 'stopped');
  h.transport.take();
  // Everything after stop is ignored.
  const b = h.vm.makeBlock(h.vm.genesis);
  await h.engine.onPushQuery(peer, 1, b.bytes);
  h.engine.onChits(peer, 1, b.id);
  await h.engine.onGet(peer, 1, h.vm.genesis.id);
  h.vm.notify();
  await flush();
  assert.is(h.transport.sent.length, 0);
  assert.is(h.vm.buildCalls, 0);
  try {
    await h.engine.issue(b);
    assert.unreachable('issue after stop');
  } catch (err) {
    assert.instance(err, ConsensusError);
    assert.is((err as ConsensusError).code, 'NotRunning');
  }
  await h.engine.stop(); // twice is fine
});

test('stop() while a block is being built or verified waits for it', async () => {
  const h = harness();
  await h.engine.start();
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const a = h.vm.makeBlock(h.vm.genesis);
  const verify = a.verify.bind(a);
  a.verify = async () => {
    await gate;
    await verify();
  };
  const issuing = h.engine.issue(a);
  await flush();
  let stopped = false;
  const stopping = h.engine.stop().then(() => (stopped = true));
  await flush();
  assert.not.ok(stopped, 'waits for the verify in progress');
  release();
  await issuing;
  await stopping;
  assert.ok(stopped);
  assert.is(h.clock.pending, 0);
});

test('invalid parameters are refused; start twice is refused; a waitForEvent failure is survived', async () => {
  try {
    harness({ params: { ...DEFAULT_SNOW_PARAMS, alpha: 3 } });
    assert.unreachable();
  } catch (err) {
    assert.instance(err, ConsensusError);
    assert.is((err as NodeError).code, 'InvalidParams');
    assert.match((err as Error).message, /--snow-quorum-size/);
  }
  const h = harness();
  let calls = 0;
  const wait = h.vm.waitForEvent.bind(h.vm);
  h.vm.waitForEvent = (signal) => (++calls === 1 ? Promise.reject(new Error('boom')) : wait(signal));
  await h.engine.start();
  try {
    await h.engine.start();
    assert.unreachable();
  } catch (err) {
    assert.is((err as ConsensusError).code, 'AlreadyStarted');
  }
  await flush();
  assert.is(calls, 1);
  // The engine backs off on the scheduler, then waits again.
  assert.ok(h.clock.runNext());
  await flush();
  assert.is(calls, 2);
  assert.ok(h.vm.waiting);
  await h.engine.stop();
});

test('a failing accept halts the engine instead of deciding past it', async () => {
  const h = harness();
  await h.engine.start();
  const a = h.vm.makeBlock(h.vm.genesis);
  a.accept = async () => {
    throw new Error('disk full');
  };
  await h.engine.issue(a);
  await loopback(h);
  assert.is(h.accepted.length, 0);
  assert.is(h.engine.stats.state, 'halted');
  assert.is(a.status, 'verified');
  assert.is(h.engine.pollsInFlight, 0);
  assert.is(h.clock.pending, 0);
  await h.engine.stop();
  assert.is(h.engine.stats.state, 'stopped');
});

test('held blocks are bounded', async () => {
  const h = harness({ limits: { maxHeldBlocks: 3 } });
  await h.engine.start();
  const peerVm = new TestVM();
  let p = peerVm.makeBlock(peerVm.genesis);
  for (let i = 0; i < 10; i++) {
    p = peerVm.makeBlock(p);
    await h.engine.issue((await h.vm.parseBlock(p.bytes)) as TestBlock);
  }
  assert.is(h.engine.held, 3);
  await h.engine.stop();
});

test('held blocks and unanswered Gets expire', async () => {
  const peer = nodeIdOf(2);
  const h = harness({ limits: { heldTtlMs: 5_000 }, queryTimeoutMs: 1_000 });
  await h.engine.start();
  const peerVm = new TestVM();
  const orphan = peerVm.makeBlock(peerVm.makeBlock(peerVm.makeBlock(peerVm.genesis)));
  await h.engine.onPushQuery(peer, 1, orphan.bytes);
  assert.is(h.engine.held, 1);
  assert.is(h.engine.stats.outstandingGets, 1);
  h.transport.take();
  // Later, our own block keeps polls going; a poll applied after the TTL collects the garbage.
  h.clock.advanceTo(6_000);
  await h.engine.issue(h.vm.makeBlock(h.vm.genesis));
  await loopback(h, () => h.engine.stats.successfulPolls > 0);
  assert.is(h.engine.held, 0);
  assert.is(h.engine.stats.outstandingGets, 0);
  await h.engine.stop();
});

test('SnowmanEngine is constructible from the package index', async () => {
  const mod = await import('../../../src/consensus/index.js');
  assert.is(mod.SnowmanEngine, SnowmanEngine);
  assert.type(mod.snowParamsProblem, 'function');
  assert.type(mod.WeightedSampler, 'function');
  assert.type(mod.LoopbackTransport, 'function');
});

/**
 * An engine with the node's defaults for self polls, on a virtual clock whose yield() (one turn of
 * the event loop) waits until the test calls turn().
 */
function directEngine(bag: (self: ShortId) => ShortId[], params: SnowParams = DEFAULT_SNOW_PARAMS) {
  const self = nodeIdOf(1);
  const vm = new TestVM();
  const transport = new RecordingTransport(self);
  const clock = new EventQueue();
  const turns: Array<() => void> = [];
  const accepted: number[] = [];
  const engine = new SnowmanEngine({
    vm,
    params,
    transport,
    validators: fixedSampler(bag(self)),
    nodeId: self,
    scheduler: { now: () => clock.now(), setTimeout: (fn, ms) => clock.setTimeout(fn, ms), yield: () => new Promise<void>((r) => turns.push(r)) },
    log: silentLogger,
    onAccepted: (b) => accepted.push(b.height),
  });
  /** One turn of the event loop: every yield() asked so far resolves, then microtasks run. */
  const turn = async () => {
    for (const r of turns.splice(0)) r();
    await flush();
  };
  /** Turns the event loop until `until` holds (at most 50 turns); the self polls answered in each turn. */
  const turnUntil = async (until: () => boolean) => {
    const perTurn: number[] = [];
    for (let i = 0; i < 50 && !until(); i++) {
      const before = engine.stats.successfulPolls;
      await turn();
      perTurn.push(engine.stats.successfulPolls - before);
    }
    return perTurn.filter((n) => n > 0);
  };
  /** Awaits `p`, turning the event loop as the engine asks (start and stop wait for turns). */
  const settle = async (p: Promise<unknown>) => {
    let done = false;
    const settled = p.finally(() => (done = true));
    await turnUntil(() => done);
    await settled;
  };
  return { self, vm, transport, engine, accepted, turnUntil, start: () => settle(engine.start()), stop: () => settle(engine.stop()) };
}

test('a one-node network polls itself without messages: a block is accepted after betaVirtuous polls, all in one turn of the event loop', async () => {
  const h = directEngine((self) => Array.from({ length: 20 }, () => self));
  await h.start();
  h.vm.notify();
  const perTurn = await h.turnUntil(() => h.accepted.length > 0);
  assert.equal(h.accepted, [1]);
  assert.equal(perTurn, [DEFAULT_SNOW_PARAMS.betaVirtuous], 'every poll in the same turn');
  assert.is(h.engine.stats.failedPolls, 0);
  assert.equal(h.transport.sent.filter((m) => m.type === 'pushQuery'), [], 'no query went through the transport');
  assert.is(h.engine.processing, 0);
  assert.equal(h.vm.violations, []);
  await h.stop();
});

test('a one-node network asks its own poll again in the same task: betaVirtuous polls, most of them repeats', async () => {
  const h = directEngine((self) => Array.from({ length: 20 }, () => self));
  await h.start();
  h.vm.notify();
  await h.turnUntil(() => h.accepted.length > 0);
  assert.equal(h.accepted, [1]);
  const { successfulPolls, pollsStarted, selfPollsRepeated, failedPolls } = h.engine.stats;
  assert.is(successfulPolls, DEFAULT_SNOW_PARAMS.betaVirtuous);
  assert.is(failedPolls, 0);
  // The polls started at once (concurrentRepolls) are answered; the first is asked again until the block is decided.
  assert.ok(selfPollsRepeated >= DEFAULT_SNOW_PARAMS.betaVirtuous - DEFAULT_SNOW_PARAMS.concurrentRepolls, `repeated ${selfPollsRepeated}`);
  assert.ok(pollsStarted >= successfulPolls && pollsStarted <= successfulPolls + DEFAULT_SNOW_PARAMS.concurrentRepolls, `started ${pollsStarted}`);
  await h.stop();
});

test('self polls answered in a row are bounded: then the event loop turns before the next', async () => {
  const params = { ...DEFAULT_SNOW_PARAMS, betaVirtuous: 80, betaRogue: 80 };
  const h = directEngine((self) => Array.from({ length: 20 }, () => self), params);
  await h.start();
  h.vm.notify();
  const perTurn = await h.turnUntil(() => h.accepted.length > 0);
  assert.equal(h.accepted, [1]);
  assert.is(h.engine.stats.successfulPolls, 80);
  assert.ok(perTurn.length >= 3, `80 polls took ${perTurn.length} turns`);
  assert.ok(Math.max(...perTurn) <= 32 + params.concurrentRepolls, `polls per turn: ${perTurn.join(', ')}`);
  await h.stop();
});

test('a sample with any other node in it goes through the transport', async () => {
  const other = nodeIdOf(2);
  const h = directEngine((self) => [...Array.from({ length: 19 }, () => self), other]);
  await h.start();
  h.vm.notify();
  await h.turnUntil(() => h.engine.processing > 0);
  const queries = h.transport.sent.filter((m) => m.type === 'pushQuery');
  // Each poll asks both nodes, this one included, through the transport.
  assert.is(queries.filter((m) => m.to.equals(h.self)).length, DEFAULT_SNOW_PARAMS.concurrentRepolls);
  assert.is(queries.filter((m) => m.to.equals(other)).length, DEFAULT_SNOW_PARAMS.concurrentRepolls);
  assert.equal(h.accepted, []);
  await h.stop();
});

test.run();
