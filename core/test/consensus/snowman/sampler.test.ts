import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { silentLogger } from '@cornice/sdk';
import { DEFAULT_SNOW_PARAMS } from '../../../src/consensus/params.js';
import { EventQueue, TestVM } from '../../../src/testing/simulation.js';
import { SnowmanEngine } from '../../../src/consensus/snowman/engine.js';
import { LoopbackTransport } from '../../../src/consensus/snowman/loopback.js';
import { WeightedSampler } from '../../../src/consensus/snowman/sampler.js';
import { flush, nodeIdOf, seeded } from '../helpers.js';

const test = suite('weighted sampler and loopback transport');

test('samples k with replacement, proportionally to weight; zero weight never drawn', () => {
  const [a, b, c] = [nodeIdOf(1), nodeIdOf(2), nodeIdOf(3)];
  const s = new WeightedSampler(
    [
      { nodeId: a, weight: 300 },
      { nodeId: b, weight: 100n },
      { nodeId: c, weight: 0 },
    ],
    seeded(42),
  );
  const counts = new Map<string, number>();
  for (let i = 0; i < 500; i++) {
    const bag = s.sample(20);
    assert.is(bag.length, 20);
    for (const id of bag) counts.set(id.key, (counts.get(id.key) ?? 0) + 1);
  }
  const fa = (counts.get(a.key) ?? 0) / 10_000;
  assert.ok(fa > 0.72 && fa < 0.78, `a drawn ${fa}`);
  assert.is(counts.get(c.key), undefined);
});

test('a validator that is not answering is left out of the draws, up to maxLeftOut of the stake (disconnected first)', () => {
  const ids = [1, 2, 3, 4, 5].map(nodeIdOf);
  const status = new Map<string, 'reachable' | 'unresponsive' | 'disconnected' | 'benched'>(ids.map((id) => [id.key, 'reachable']));
  const s = new WeightedSampler(ids.map((nodeId) => ({ nodeId, weight: 100 })), seeded(3), (id) => status.get(id.key)!, 0.25);
  const drawn = () => new Set(Array.from({ length: 50 }, () => s.sample(20)).flat().map((id) => id.key));
  assert.is(drawn().size, 5);
  status.set(ids[2]!.key, 'unresponsive');
  assert.not.ok(drawn().has(ids[2]!.key), 'a frozen fifth of the stake gets no seats: every poll can reach alpha on the others');
  status.set(ids[3]!.key, 'disconnected');
  const d = drawn();
  assert.not.ok(d.has(ids[3]!.key), 'the disconnected one goes first');
  assert.ok(d.has(ids[2]!.key), 'two fifths exceed the quarter: the unresponsive one is drawn again');
  assert.is(new WeightedSampler(ids.map((nodeId) => ({ nodeId, weight: 100 })), seeded(3), () => 'unresponsive', 0.25).sample(20).length, 20, 'everyone silent: drawn as before');
  const plain = new WeightedSampler(ids.map((nodeId) => ({ nodeId, weight: 100 })), seeded(3), (id) => status.get(id.key)!);
  assert.ok(new Set(Array.from({ length: 50 }, () => plain.sample(20)).flat().map((id) => id.key)).has(ids[3]!.key), 'maxLeftOut 0 (the default): everyone drawn');
});

test('one validator fills the whole bag; no validators give an empty one', () => {
  const a = nodeIdOf(1);
  const one = new WeightedSampler([{ nodeId: a, weight: 1 }]);
  const bag = one.sample(20);
  assert.is(bag.length, 20);
  assert.ok(bag.every((id) => id.equals(a)));
  assert.equal(new WeightedSampler([]).sample(20), []);
  assert.throws(() => new WeightedSampler([{ nodeId: a, weight: -1 }]), /weight/);
});

test('LoopbackTransport: a one-node engine decides alone through it', async () => {
  const self = nodeIdOf(1);
  const pending: Array<() => void> = [];
  const transport = new LoopbackTransport(self, (fn) => pending.push(fn));
  const vm = new TestVM();
  const clock = new EventQueue();
  const accepted: number[] = [];
  const engine = new SnowmanEngine({
    vm,
    params: DEFAULT_SNOW_PARAMS,
    transport,
    validators: new WeightedSampler([{ nodeId: self, weight: 1 }]),
    nodeId: self,
    scheduler: clock,
    log: silentLogger,
    directSelfPolls: false, // polls go through the transport too
    onAccepted: (b) => accepted.push(b.height),
  });
  transport.attach(engine);
  await engine.start();
  for (let i = 0; i < 3; i++) vm.notify();
  await flush();
  let steps = 0;
  while (pending.length > 0 && steps < 10_000) {
    (pending.shift() as () => void)();
    await flush();
    steps++;
  }
  assert.equal(accepted, [1, 2, 3]);
  assert.is(engine.processing, 0);
  assert.is(clock.now(), 0, 'no timeout was needed');
  // Messages to another node are dropped: there is no network (the RequestSender fails such
  // queries at their deadline; it never sends them).
  const other = nodeIdOf(2);
  transport.pushQuery([other], 1, vm.genesis.bytes);
  transport.get(other, 2, vm.genesis.id);
  assert.is(pending.length, 0);
  await engine.stop();
});

test.run();
