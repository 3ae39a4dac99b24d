import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Id, ShortId } from '@cornice/sdk';
import { ValidatorSets, validatorSampler } from '../../src/validators/validators.js';

const node = (n: number) => ShortId.fromBytes(new Uint8Array(20).fill(n));
const self = node(1);
let seed = 1;
const random = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;

test('sybil protection on: the subnet validators, stake-weighted, with replacement', () => {
  const sets = new ValidatorSets([
    { nodeId: node(2), weight: 3n },
    { nodeId: node(3), weight: 1n },
  ]);
  const sampler = validatorSampler({ sybilProtection: true, sets, subnetId: Id.empty, connected: () => [self], status: () => 'reachable', random });
  const draws = sampler.sample(4000);
  assert.is(draws.length, 4000);
  const twos = draws.filter((d) => d.equals(node(2))).length;
  assert.ok(twos > 2800 && twos < 3200, `~75% for the 3:1 stake, got ${twos}`);
  assert.not.ok(draws.some((d) => d.equals(self)), 'a node that is not a validator is never sampled');
  const other = validatorSampler({ sybilProtection: true, sets, subnetId: Id.fromBytes(new Uint8Array(32).fill(5)), connected: () => [self], status: () => 'reachable' });
  assert.equal(other.sample(20), [], 'a subnet without validators yields no sample');
});

test('sybil protection off: the connected nodes with equal weight; a lone node samples itself k times', () => {
  const sets = new ValidatorSets([{ nodeId: node(2), weight: 100n }]);
  const lone = validatorSampler({ sybilProtection: false, sets, subnetId: Id.empty, connected: () => [self], status: () => 'reachable', random });
  const k = lone.sample(20);
  assert.is(k.length, 20);
  assert.ok(k.every((d) => d.equals(self)));
  const pair = validatorSampler({ sybilProtection: false, sets, subnetId: Id.empty, connected: () => [self, node(4)], status: () => 'reachable', random });
  const draws = pair.sample(2000);
  const mine = draws.filter((d) => d.equals(self)).length;
  assert.ok(mine > 850 && mine < 1150, `equal weight, got ${mine}`);
});

test('reachability: connected, benched and disconnected validators by stake', () => {
  const sets = new ValidatorSets([1, 2, 3, 4, 5].map((n) => ({ nodeId: node(n), weight: 2000n })));
  const status = (id: ShortId) => (id.equals(self) ? 'reachable' : id.equals(node(2)) ? 'benched' : 'disconnected');
  const sampler = validatorSampler({ sybilProtection: true, sets, subnetId: Id.empty, connected: () => [self], status });
  assert.equal(sampler.reachability(), { validators: 5, reachable: 1, benched: 1, unresponsive: 0, totalWeight: 10000, reachableWeight: 2000, unresponsiveWeight: 0 });
  const dev = validatorSampler({ sybilProtection: false, sets, subnetId: Id.empty, connected: () => [self], status });
  assert.equal(dev.reachability(), { validators: 1, reachable: 1, benched: 0, unresponsive: 0, totalWeight: 1, reachableWeight: 1, unresponsiveWeight: 0 }, 'sybil protection off: the connected nodes');
});

test.run();
