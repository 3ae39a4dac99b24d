import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ShortId } from '@cornice/sdk';
import { ConsensusError } from '../../../src/consensus/errors.js';
import { type Bootstrapper, exceedsHalf } from '../../../src/consensus/bootstrap/bootstrapper.js';
import { MAX_ANCESTORS } from '../../../src/consensus/limits.js';
import { TestVM, type TestBlock } from '../../../src/testing/simulation.js';
import { captureLog } from '../../helpers/log.js';
import { nodeIdOf, seeded } from '../helpers.js';
import {
  answering,
  beaconId,
  chainProblem,
  chainVM,
  copyVM,
  deliverTo,
  drive,
  honestBeacons,
  joiner,
  JOINER,
  MemoryNet,
  runUntil,
  type NetMessage,
} from './helpers.js';

const test = suite('bootstrap: bootstrapper');

const LONG = 5_000;
const copies: TestVM[] = [];
/** The 5,000-block chain the beacons share (built once; only read). */
async function source(): Promise<TestVM> {
  return (await shared(1))[0] as TestVM;
}
/** `n` VMs holding the 5,000-block chain (built once; the beacons only read them). */
async function shared(n: number): Promise<TestVM[]> {
  if (copies.length === 0) copies.push(await chainVM(LONG, 1));
  while (copies.length < n) copies.push(await copyVM(copies[0] as TestVM));
  return copies.slice(0, n);
}

test('a new node joins: same last accepted block, every block accepted once in height order, the VM left bootstrapping', async () => {
  const net = new MemoryNet();
  const beacons = honestBeacons(net, await shared(3));
  const j = joiner(net, beacons);
  const result = await drive(net, j.boot.run());
  assert.is(chainProblem(j.vm, await source()), undefined);
  assert.equal(result, { fetched: LONG, accepted: LONG, height: LONG, rounds: 2 });
  assert.is(j.vm.acceptCalls, LONG);
  assert.equal(j.vm.states, ['bootstrapping'], 'the engine moves it to normalOp');
  // Batches, not a round trip per block.
  const gets = net.count('getAncestors');
  assert.ok(gets <= Math.ceil(LONG / MAX_ANCESTORS) + 1, `${gets} GetAncestors`);
  assert.is(j.progress.at(-1)?.phase, 'done');
  assert.is(j.progress.at(-1)?.targetHeight, LONG);
  assert.ok(j.progress.some((p) => p.phase === 'executing' && p.etaMs !== undefined), 'an ETA while executing');
  assert.is(j.boot.stats.outstandingRequests, 0);
  assert.is(net.clock.pending, 0, 'no timer left behind');
});

type Lie = 'fork blocks' | 'junk bytes' | 'the block asked for, then fork blocks';

/** A beacon that lies: its own fork as its frontier, "accepted" for everything, and bad ancestors. */
function liar(net: MemoryNet, id: ShortId, honest: TestVM, fork: TestVM, lie: Lie) {
  const t = net.transport(id);
  let asked = 0;
  net.add(id, {
    ...bindAll(answering(net, id, honest)),
    onGetAcceptedFrontier: async (from, rid) => t.acceptedFrontier(from, rid, [fork.lastAcceptedBlock.id]),
    onGetAccepted: async (from, rid, ids) => t.accepted(from, rid, ids),
    onGetAncestors: async (from, rid, blockId) => {
      asked += 1;
      const forkBlocks = fork.acceptedChain.slice(1).reverse().map((b) => b.bytes);
      if (lie === 'fork blocks') t.ancestors(from, rid, forkBlocks);
      else if (lie === 'junk bytes') t.ancestors(from, rid, [new Uint8Array(10), new Uint8Array(65)]);
      else t.ancestors(from, rid, [(honest.blocks.get(blockId.key) as TestBlock).bytes, ...forkBlocks]);
    },
  });
  return { asked: () => asked };
}

/** A target's methods bound to it (to override some of them in a plain object). */
function bindAll(b: Bootstrapper) {
  return {
    onGetAcceptedFrontier: b.onGetAcceptedFrontier.bind(b),
    onAcceptedFrontier: b.onAcceptedFrontier.bind(b),
    onGetAccepted: b.onGetAccepted.bind(b),
    onAccepted: b.onAccepted.bind(b),
    onGetAncestors: b.onGetAncestors.bind(b),
    onAncestors: b.onAncestors.bind(b),
    onBootstrapRequestFailed: b.onBootstrapRequestFailed.bind(b),
  };
}

test('3 beacons, one lying (its own fork as frontier, "accepted" for all, bogus ancestors): the honest majority wins', async () => {
  const honest = await chainVM(1_000, 12);
  const fork = await chainVM(300, 77);
  for (const lie of ['fork blocks', 'junk bytes', 'the block asked for, then fork blocks'] as const) {
    const net = new MemoryNet();
    const beacons = honestBeacons(net, [await copyVM(honest), await copyVM(honest)], { maxAncestors: 100 });
    const bad = liar(net, beaconId(2), await copyVM(honest), fork, lie);
    beacons.push({ nodeId: beaconId(2), weight: 1n });
    const log = captureLog();
    const j = joiner(net, beacons, { log });
    const result = await drive(net, j.boot.run());
    assert.is(chainProblem(j.vm, honest), undefined, lie);
    assert.is(result.height, 1_000);
    assert.ok(bad.asked() >= 1, 'the liar was asked for ancestors');
    assert.ok(log.lines.some((l) => l.msg === 'bad ancestors reply'), 'its reply was refused');
    assert.ok(bad.asked() <= 2, `asked ${bad.asked()} times: not again once it lied`);
    assert.not.ok(j.vm.acceptedChain.some((b) => b.height > 0 && fork.blocks.has(b.id.key)), 'nothing of the fork accepted');
  }
});

test('a beacon that never sends ancestors: its request times out and another beacon is asked', async () => {
  const net = new MemoryNet();
  const beacons = honestBeacons(net, await shared(3));
  const silent = beaconId(0);
  net.filter = (m) => !(m.op === 'getAncestors' && m.to.equals(silent));
  const log = captureLog();
  const j = joiner(net, beacons, { log, limits: { ancestorsTimeoutMs: 7_000 } });
  const result = await drive(net, j.boot.run());
  assert.is(chainProblem(j.vm, await source()), undefined);
  assert.is(result.accepted, LONG);
  assert.ok(net.sent.some((m) => m.op === 'getAncestors' && m.to.equals(silent)), 'the silent beacon was asked');
  assert.ok(net.clock.now() >= 7_000, `waited for the deadline (${net.clock.now()} ms)`);
  assert.ok(log.lines.some((l) => l.msg === 'ancestors request failed'));
});

test('a request the network reports failed moves on at once, without waiting for its deadline', async () => {
  const net = new MemoryNet();
  const beacons = honestBeacons(net, await shared(3));
  const gone = beaconId(0);
  const j = joiner(net, beacons);
  net.filter = (m) => {
    if (m.op !== 'getAncestors' || !m.to.equals(gone)) return true;
    net.clock.setTimeout(() => j.boot.onBootstrapRequestFailed(gone, m.requestId), 0);
    return false;
  };
  await drive(net, j.boot.run());
  assert.is(chainProblem(j.vm, await source()), undefined);
  assert.ok(net.sent.some((m) => m.op === 'getAncestors' && m.to.equals(gone)));
  assert.ok(net.clock.now() < 1_000, `no deadline waited for (${net.clock.now()} ms)`);
});

test('a beacon that answers nothing counts as no vote; the other two are more than half', async () => {
  const net = new MemoryNet();
  const beacons = honestBeacons(net, await shared(3));
  net.filter = (m) => !m.to.equals(beaconId(1));
  const j = joiner(net, beacons);
  const result = await drive(net, j.boot.run());
  assert.is(chainProblem(j.vm, await source()), undefined);
  assert.is(result.height, LONG);
  assert.ok(net.clock.now() >= 2_000, 'frontier requests waited for their 2 s deadline');
});

test('beacons not connected: waits (rechecking, saying so), then proceeds once more than half of the weight is connected', async () => {
  const net = new MemoryNet();
  const beacons = honestBeacons(net, await shared(3));
  const log = captureLog();
  const j = joiner(net, beacons, { log });
  j.connected.clear();
  const run = j.boot.run();
  let ended = false;
  void run.then(() => (ended = true), () => (ended = true));
  await runUntil(net, 90_000);
  assert.not.ok(ended);
  assert.is(net.sent.length, 0, 'nothing asked while waiting');
  assert.is(j.progress.at(-1)?.phase, 'waiting for beacons');
  const waits = log.lines.filter((l) => l.msg === 'waiting for beacons');
  assert.is(waits.length, 2, 'said at once, then once a minute');
  assert.is(waits[0]?.fields?.detail, '0 of 3 beacons connected, 0% of the beacon weight, need more than 50%');
  assert.ok(net.clock.pending <= 1, 'one timer while waiting');
  j.connected.add(beaconId(0).key);
  await runUntil(net, 95_000);
  assert.is(net.sent.length, 0, 'a third of the weight is not enough');
  j.connected.add(beaconId(2).key);
  const result = await drive(net, run);
  assert.is(result.height, LONG);
  assert.not.ok(net.sent.some((m) => m.to.equals(beaconId(1))), 'the beacon not connected was not asked');
  assert.is(chainProblem(j.vm, await source()), undefined);
});

test('already caught up: nothing fetched, one round', async () => {
  const net = new MemoryNet();
  const beacons = honestBeacons(net, await shared(3));
  const j = joiner(net, beacons, { vm: await copyVM(await source()) });
  const result = await drive(net, j.boot.run());
  assert.equal(result, { fetched: 0, accepted: 0, height: LONG, rounds: 1 });
  assert.is(net.count('getAncestors'), 0);
  assert.is(net.count('getAccepted'), 3);
});

test('restart mid-way: a new Bootstrapper on a VM holding part of the chain fetches only the rest', async () => {
  const net = new MemoryNet();
  const beacons = honestBeacons(net, await shared(3));
  const j = joiner(net, beacons, { vm: await copyVM(await source(), 2_000) });
  const result = await drive(net, j.boot.run());
  assert.equal(result, { fetched: LONG - 2_000, accepted: LONG - 2_000, height: LONG, rounds: 2 });
  assert.is(chainProblem(j.vm, await source()), undefined);
});

test('aborted while executing, then run again on the same VM: continues from what was accepted', async () => {
  const net = new MemoryNet();
  const beacons = honestBeacons(net, await shared(3));
  const ctl = new AbortController();
  const first = joiner(net, beacons, { extra: { onProgress: (p) => void (p.accepted >= 1_000 && ctl.abort()) } });
  const err = await drive(net, first.boot.run(ctl.signal)).catch((e: unknown) => e);
  assert.instance(err, ConsensusError);
  assert.is((err as ConsensusError).code, 'Aborted');
  const reached = first.vm.lastAcceptedBlock.height;
  assert.ok(reached >= 1_000 && reached < LONG, `stopped at ${reached}`);
  assert.is(first.boot.stats.running, false);
  const second = joiner(net, beacons, { vm: first.vm });
  const result = await drive(net, second.boot.run());
  assert.is(result.fetched, LONG - reached);
  assert.is(chainProblem(first.vm, await source()), undefined);
});

test('the network moves on meanwhile: another round fetches the new blocks, then a round fetches nothing', async () => {
  const net = new MemoryNet();
  const beaconVM = await chainVM(1_000, 3);
  const beacons = honestBeacons(net, [beaconVM]);
  let grown = false;
  const j = joiner(net, beacons, {
    extra: {
      onProgress: (p) => {
        if (p.phase !== 'executing' || grown) return;
        grown = true;
        let parent = beaconVM.lastAcceptedBlock;
        for (let i = 0; i < 50; i++) {
          const b = beaconVM.makeBlock(parent);
          b.status = 'accepted';
          beaconVM.acceptedChain.push(b);
          parent = b;
        }
      },
    },
  });
  const result = await drive(net, j.boot.run());
  assert.equal(result, { fetched: 1_050, accepted: 1_050, height: 1_050, rounds: 3 });
  assert.is(chainProblem(j.vm, beaconVM), undefined);
});

test('replies not asked for (other node, other request ID, other kind, malformed) are ignored, never thrown', async () => {
  const net = new MemoryNet();
  const beacons = honestBeacons(net, await shared(3));
  const log = captureLog();
  const j = joiner(net, beacons, { log });
  const stranger = nodeIdOf(99);
  const fork = await chainVM(100, 9);
  const forged = (extra: NetMessage): void => void net.clock.setTimeout(() => void deliverTo(j.boot, extra), 0);
  net.filter = (m) => {
    if (m.op === 'getAccepted') {
      // A vote from a node that was not asked, and an answer of the wrong kind under this request ID.
      forged({ op: 'accepted', from: stranger, to: JOINER, requestId: m.requestId, ids: [fork.lastAcceptedBlock.id] });
      forged({ op: 'acceptedFrontier', from: m.to, to: JOINER, requestId: m.requestId, ids: [fork.lastAcceptedBlock.id] });
    }
    if (m.op === 'getAncestors') {
      const bogus = fork.acceptedChain.slice(1).reverse().map((b) => b.bytes);
      forged({ op: 'ancestors', from: stranger, to: JOINER, requestId: m.requestId, blocks: bogus });
      forged({ op: 'ancestors', from: m.to, to: JOINER, requestId: m.requestId + 1_000, blocks: bogus });
    }
    return true;
  };
  const run = j.boot.run();
  const garbage = j.boot as unknown as Record<string, (...args: unknown[]) => unknown>;
  assert.not.throws(() => {
    garbage.onAccepted?.(beaconId(0), 1, null);
    garbage.onAcceptedFrontier?.(beaconId(0), 1, [1, 'x', undefined]);
    garbage.onAncestors?.(beaconId(0), 1, 'junk');
    garbage.onBootstrapRequestFailed?.(stranger, 12345);
  });
  const result = await drive(net, run);
  assert.is(result.height, LONG);
  assert.is(chainProblem(j.vm, await source()), undefined);
  assert.ok(log.lines.filter((l) => l.msg === 'unexpected bootstrap reply').length >= 4);
  // After the run, replies are still ignored quietly.
  assert.not.throws(() => j.boot.onAncestors(beaconId(0), 1, [new Uint8Array(3)]));
});

test('the >50% rule: a block accepted by exactly half of the beacon weight is not a target; more than half is', async () => {
  assert.ok(exceedsHalf(6n, 10n));
  assert.not.ok(exceedsHalf(5n, 10n));
  assert.ok(exceedsHalf(1n, 1n));
  assert.not.ok(exceedsHalf(0n, 0n));
  const x = await chainVM(300, 21);
  const y = await chainVM(280, 22);
  for (const [wx, expected] of [
    [5n, undefined],
    [6n, x],
  ] as const) {
    const net = new MemoryNet();
    answering(net, beaconId(0), x);
    answering(net, beaconId(1), y);
    answering(net, beaconId(2), await copyVM(y));
    const beacons = [
      { nodeId: beaconId(0), weight: wx },
      { nodeId: beaconId(1), weight: 3n },
      { nodeId: beaconId(2), weight: 2n },
    ];
    const log = captureLog();
    const j = joiner(net, beacons, { log, limits: { maxFailedAttempts: 3, retryDelayMs: 500 } });
    const outcome = await drive(net, j.boot.run()).catch((e: unknown) => e);
    if (expected === undefined) {
      assert.instance(outcome, ConsensusError);
      assert.is((outcome as ConsensusError).code, 'BootstrapFailed');
      assert.match((outcome as Error).message, /failed 3 times in a row/);
      assert.match((outcome as Error).message, /more than half of the beacon weight \(best 50%, 3 of 3 beacons answered\)/);
      assert.is(log.lines.filter((l) => l.msg === 'bootstrap attempt failed').length, 3);
      assert.is(j.vm.lastAcceptedBlock.height, 0, 'nothing accepted');
    } else {
      assert.is(chainProblem(j.vm, expected), undefined);
    }
  }
});

test('a block that fails verification fails the attempt (retried), then the run with a clear error; what came before stays accepted', async () => {
  const net = new MemoryNet();
  const bad = new TestVM({ random: seeded(31) });
  let parent: TestBlock = bad.genesis;
  for (let h = 1; h <= 300; h++) {
    const b = bad.makeBlock(parent, { invalid: h === 150 });
    b.status = 'accepted'; // as if a faulty majority had accepted it
    bad.acceptedChain.push(b);
    parent = b;
  }
  answering(net, beaconId(0), bad);
  const j = joiner(net, [{ nodeId: beaconId(0), weight: 1n }], { limits: { maxFailedAttempts: 2, retryDelayMs: 100 } });
  const err = await drive(net, j.boot.run()).catch((e: unknown) => e);
  assert.instance(err, ConsensusError);
  assert.is((err as ConsensusError).code, 'BootstrapFailed');
  assert.match((err as Error).message, /failed 2 times in a row; the last time: block \w+ at height 150 failed verification: .*marked invalid/);
  assert.is(j.vm.lastAcceptedBlock.height, 149);
  assert.equal(j.vm.violations, []);
  assert.is(net.count('getAcceptedFrontier'), 2, 'two attempts');
});

test('beacons whose chain conflicts with what this node accepted: the run fails at once, naming the height', async () => {
  const net = new MemoryNet();
  honestBeacons(net, await shared(1));
  const j = joiner(net, [{ nodeId: beaconId(0), weight: 1n }], { vm: await chainVM(10, 55) });
  const err = await drive(net, j.boot.run()).catch((e: unknown) => e);
  assert.instance(err, ConsensusError);
  assert.match((err as Error).message, /conflicts with this node's: block \w+ at height 11 does not descend from the last accepted block \w+ at height 10/);
  assert.is(net.count('getAcceptedFrontier'), 1, 'not retried');
  assert.is(j.vm.lastAcceptedBlock.height, 10);
});

test('no beacons, or this node as the only beacon: done at once (a network\'s first node)', async () => {
  for (const beacons of [[], [{ nodeId: JOINER, weight: 10n }]]) {
    const net = new MemoryNet();
    const j = joiner(net, beacons);
    const result = await drive(net, j.boot.run());
    assert.equal(result, { fetched: 0, accepted: 0, height: 0, rounds: 0 });
    assert.is(net.sent.length, 0);
    assert.equal(j.vm.states, ['bootstrapping']);
    assert.equal(j.progress.map((p) => p.phase), ['done']);
  }
});

test('aborting while waiting for beacons rejects with Aborted and leaves no timer', async () => {
  const net = new MemoryNet();
  const beacons = honestBeacons(net, await shared(1));
  const j = joiner(net, beacons);
  j.connected.clear();
  const ctl = new AbortController();
  const run = j.boot.run(ctl.signal).catch((e: unknown) => e);
  await runUntil(net, 3_500);
  ctl.abort();
  const err = await run;
  assert.is((err as ConsensusError).code, 'Aborted');
  assert.is(net.clock.pending, 0);
  const again = await j.boot.run(ctl.signal).catch((e: unknown) => e);
  assert.is((again as ConsensusError).code, 'Aborted', 'an aborted signal ends the next run at once');
});

test('a long chain in windows: held blocks stay within the bound, blocks above the first window are fetched again', async () => {
  const net = new MemoryNet();
  const beacons = honestBeacons(net, await shared(2), { maxAncestors: 128 });
  const j = joiner(net, beacons, { limits: { maxHeldBlocks: 500 } });
  const result = await drive(net, j.boot.run());
  assert.is(chainProblem(j.vm, await source()), undefined);
  assert.is(result.accepted, LONG);
  assert.ok(result.fetched > LONG && result.fetched < 2 * LONG, `fetched ${result.fetched}`);
  assert.ok(j.boot.stats.peakHeldBlocks <= 500 + 128, `peak ${j.boot.stats.peakHeldBlocks}`);
  assert.is(j.boot.stats.heldBlocks, 0);
});

test('a lossy network (10% of messages lost): still joins, by timeouts and retries', async () => {
  const net = new MemoryNet();
  const beacons = honestBeacons(net, await shared(3), { maxAncestors: 256 });
  const random = seeded(4242);
  net.filter = () => random() >= 0.1;
  const j = joiner(net, beacons);
  const result = await drive(net, j.boot.run());
  assert.is(result.height, LONG);
  assert.is(chainProblem(j.vm, await source()), undefined);
});

test('run() while running is refused; invalid limits are refused', async () => {
  const net = new MemoryNet();
  const beacons = honestBeacons(net, await shared(1));
  const j = joiner(net, beacons);
  const run = j.boot.run();
  const second = await j.boot.run().catch((e: unknown) => e);
  assert.is((second as ConsensusError).code, 'AlreadyStarted');
  await drive(net, run);
  assert.throws(() => joiner(net, beacons, { limits: { maxHeldBlocks: 0 } }), /maxHeldBlocks must be a positive integer/);
  assert.throws(() => joiner(net, beacons, { limits: { requestTimeoutMs: Number.NaN } }), /requestTimeoutMs/);
});

test.run();
