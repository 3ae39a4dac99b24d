import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { type Id, ShortId } from '@cornice/sdk';
import { txId } from '../../src/platform/codec.js';
import { DEFAULT_SUBNET_ID, PLATFORM_CHAIN_ID, type ChainRecord, type Staker, type TimedTx } from '../../src/platform/model.js';
import { LOADED_VMS, addSubnet, harness, type FakeBackend } from './fake-backend.js';
import { id, shortId, sig } from './samples.js';

function validator(node: string, weight: bigint, start: number, end: number, dest = 'dest'): Staker {
  const tx: TimedTx = {
    kind: 'addDefaultSubnetValidator',
    nodeId: shortId(node),
    weight,
    start,
    end,
    networkId: 12345,
    nonce: 1n,
    destination: shortId(dest),
    shares: 0,
    sig: sig(1),
  };
  return { txId: txId(tx), tx };
}

function delegator(node: string, weight: bigint, start: number, end: number): Staker {
  const tx: TimedTx = { kind: 'addDefaultSubnetDelegator', nodeId: shortId(node), weight, start, end, networkId: 12345, nonce: 2n, destination: shortId('delegator dest'), sig: sig(2) };
  return { txId: txId(tx), tx };
}

function subnetValidator(node: string, weight: bigint, subnetId: Id, start: number, end: number): Staker {
  const tx: TimedTx = { kind: 'addNonDefaultSubnetValidator', nodeId: shortId(node), weight, start, end, subnetId, networkId: 12345, nonce: 3n, controlSigs: [], payerSig: sig(3) };
  return { txId: txId(tx), tx };
}

function chain(name: string, subnetId: Id, vm = LOADED_VMS.timestamp!): ChainRecord {
  return { id: id(`chain ${name}`), name, subnetId, vmId: vm, fxIds: [], genesisData: new Uint8Array(0) };
}

function withStakers(b: FakeBackend) {
  const subnet = addSubnet(b, [shortId('k1')], 1);
  b.acceptedState.current.set(DEFAULT_SUBNET_ID.key, [
    validator('n1', 20_000n, 100, 1_000),
    delegator('n1', 15_000n, 200, 1_500),
    validator('n2', 30_000n, 100, 2_000, 'dest2'),
  ]);
  b.acceptedState.pending.set(DEFAULT_SUBNET_ID.key, [validator('n3', 40_000n, 5_000, 9_000)]);
  b.acceptedState.current.set(subnet.id.key, [subnetValidator('n1', 7n, subnet.id, 300, 900)]);
  b.acceptedState.pending.set(subnet.id.key, [subnetValidator('n2', 9n, subnet.id, 3_000, 9_000)]);
  return subnet;
}

test('getCurrentValidators: Default Subnet entries (stakeAmount, address = destination; delegations listed too) by default', async () => {
  const h = harness();
  withStakers(h.backend);
  const expected = {
    validators: [
      { id: shortId('n1').toString(), startTime: '100', endTime: '1000', stakeAmount: '20000', address: shortId('dest').toString() },
      { id: shortId('n1').toString(), startTime: '200', endTime: '1500', stakeAmount: '15000', address: shortId('delegator dest').toString() },
      { id: shortId('n2').toString(), startTime: '100', endTime: '2000', stakeAmount: '30000', address: shortId('dest2').toString() },
    ],
  };
  assert.equal(await h.client.getCurrentValidators({}), expected);
  assert.equal(await h.client.getCurrentValidators(), expected);
  assert.equal(await h.client.getCurrentValidators({ subnetID: DEFAULT_SUBNET_ID.toString() }), expected);
  assert.equal((await h.call('getCurrentValidators', { SubnetID: null })).result, expected);
});

test('getCurrentValidators / getPendingValidators of a subnet: weight, no stakeAmount or address', async () => {
  const h = harness();
  const subnet = withStakers(h.backend);
  assert.equal(await h.client.getCurrentValidators({ subnetID: subnet.id.toString() }), {
    validators: [{ id: shortId('n1').toString(), startTime: '300', endTime: '900', weight: '7' }],
  });
  assert.equal(await h.client.getPendingValidators({ subnetID: subnet.id.toString() }), {
    validators: [{ id: shortId('n2').toString(), startTime: '3000', endTime: '9000', weight: '9' }],
  });
  assert.equal(await h.client.getPendingValidators({}), {
    validators: [{ id: shortId('n3').toString(), startTime: '5000', endTime: '9000', stakeAmount: '40000', address: shortId('dest').toString() }],
  });
});

test('validators of a subnet that does not exist: a clear error; a malformed subnetID: -32602', async () => {
  const h = harness();
  const unknown = id('no such subnet').toString();
  for (const m of ['getCurrentValidators', 'getPendingValidators']) {
    assert.is((await h.fails(m, { subnetID: unknown }, -32000)).message, `couldn't find subnet with ID ${unknown}`);
    assert.match((await h.fails(m, { subnetID: 'abc!' }, -32602)).message, /^subnetID: /);
  }
  assert.is((await h.fails('sampleValidators', { size: 1, subnetID: unknown }, -32000)).message, `couldn't find subnet with ID ${unknown}`);
});

test('sampleValidators: distinct node IDs (a delegation adds weight, not a node), sorted; too many -> the reference text', async () => {
  let seed = 7;
  const random = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
  const h = harness({ random });
  const subnet = withStakers(h.backend);
  const n1 = shortId('n1').toString();
  const n2 = shortId('n2').toString();
  // Sorted by raw bytes, as the reference's ids.SortShortIDs.
  const bothSorted = [shortId('n1'), shortId('n2')].sort((a, b) => a.compare(b)).map(String);
  assert.equal(bothSorted, [n2, n1]);
  assert.equal(await h.client.sampleValidators({ size: 0 }), { validators: [] });
  assert.equal(await h.client.sampleValidators({ size: 2 }), { validators: bothSorted });
  assert.equal(await h.client.sampleValidators({ size: '2' as never }), { validators: bothSorted });
  for (let i = 0; i < 20; i++) {
    const one = (await h.client.sampleValidators({ size: 1 })).validators;
    assert.is(one.length, 1);
    assert.ok([n1, n2].includes(one[0]!));
  }
  assert.is(
    (await h.fails('sampleValidators', { size: 3 }, -32000)).message,
    'current number of validators (2) is insufficient to sample 3 validators',
  );
  assert.equal(await h.client.sampleValidators({ size: 1, subnetID: subnet.id.toString() }), { validators: [n1] });
  assert.match((await h.fails('sampleValidators', {}, -32602)).message, /^size: missing required field/);
  assert.match((await h.fails('sampleValidators', { size: 65536 }, -32602)).message, /^size: value overflowed uint16/);
  assert.match((await h.fails('sampleValidators', { size: -1 }, -32602)).message, /^size: /);
});

test('sampleValidators draws by weight', async () => {
  let seed = 11;
  const random = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
  const h = harness({ random });
  h.backend.acceptedState.current.set(DEFAULT_SUBNET_ID.key, [validator('heavy', 900_000n, 1, 2), validator('light', 100_000n, 1, 2)]);
  let heavy = 0;
  for (let i = 0; i < 200; i++) if ((await h.client.sampleValidators({ size: 1 })).validators[0] === shortId('heavy').toString()) heavy++;
  assert.ok(heavy > 150 && heavy < 200, `heavy drawn ${heavy} of 200`);
});

test('getSubnets: all but the Default Subnet, threshold as a string; ids filters', async () => {
  const h = harness();
  const a = addSubnet(h.backend, [shortId('k2'), shortId('k1')], 2, 'a');
  const b = addSubnet(h.backend, [shortId('k3')], 1, 'b');
  h.backend.acceptedState.subnetList.push({ id: DEFAULT_SUBNET_ID, controlKeys: [], threshold: 0 }); // never listed
  const reply = (s: typeof a) => ({ id: s.id.toString(), controlKeys: s.controlKeys.map(String), threshold: String(s.threshold) });
  assert.equal(await h.client.getSubnets({}), { subnets: [reply(a), reply(b)] });
  assert.equal(await h.client.getSubnets(), { subnets: [reply(a), reply(b)] });
  assert.equal(await h.client.getSubnets({ ids: [b.id.toString()] }), { subnets: [reply(b)] });
  assert.equal(await h.client.getSubnets({ ids: [DEFAULT_SUBNET_ID.toString(), id('none').toString()] }), { subnets: [] });
  assert.equal((await h.client.getSubnets({})).subnets[0]!.threshold, '2');
  assert.match((await h.fails('getSubnets', { ids: ['bad!'] }, -32602)).message, /^ids\[0\]: /);
  assert.match((await h.fails('getSubnets', { ids: Array(1025).fill(a.id.toString()) }, -32602)).message, /^ids: must have at most 1024 items/);
});

test('getBlockchains (never the P-Chain), validatedBy, validates', async () => {
  const h = harness();
  const subnet = addSubnet(h.backend, [shortId('k1')], 1);
  const x = chain('X-Chain', DEFAULT_SUBNET_ID, id('avm'));
  const ts = chain('my timestamps', subnet.id);
  h.backend.acceptedState.chainList.push({ ...chain('P', DEFAULT_SUBNET_ID), id: PLATFORM_CHAIN_ID }, x, ts);
  assert.equal(await h.client.getBlockchains(), {
    blockchains: [
      { id: x.id.toString(), name: 'X-Chain', subnetID: DEFAULT_SUBNET_ID.toString(), vmID: id('avm').toString() },
      { id: ts.id.toString(), name: 'my timestamps', subnetID: subnet.id.toString(), vmID: LOADED_VMS.timestamp!.toString() },
    ],
  });
  assert.equal(await h.client.validatedBy({ blockchainID: ts.id.toString() }), { subnetID: subnet.id.toString() });
  assert.equal(await h.client.validatedBy({ blockchainID: x.id.toString() }), { subnetID: DEFAULT_SUBNET_ID.toString() });
  assert.equal(await h.client.validatedBy({ blockchainID: PLATFORM_CHAIN_ID.toString() }), { subnetID: DEFAULT_SUBNET_ID.toString() });
  assert.is((await h.fails('validatedBy', { blockchainID: id('nope').toString() }, -32000)).message, 'there is no blockchain with the specified ID');
  assert.match((await h.fails('validatedBy', {}, -32602)).message, /^blockchainID: missing required field/);

  assert.equal(await h.client.validates({ subnetID: subnet.id.toString() }), { blockchainIDs: [ts.id.toString()] });
  assert.equal(await h.client.validates({ subnetID: DEFAULT_SUBNET_ID.toString() }), { blockchainIDs: [x.id.toString()] });
  const other = addSubnet(h.backend, [shortId('k1')], 1, 'empty');
  assert.equal(await h.client.validates({ subnetID: other.id.toString() }), { blockchainIDs: [] });
  const unknown = id('nope').toString();
  assert.is((await h.fails('validates', { subnetID: unknown }, -32000)).message, `couldn't find subnet with ID ${unknown}`);
  assert.equal((await h.call('getBlockchains', { x: 1 })).result, await h.client.getBlockchains(), 'an unknown field is ignored');
});

test('getBlockchainStatus: the backend says', async () => {
  const h = harness();
  const a = id('a');
  h.backend.statuses.set(a.key, 'Validating');
  assert.equal(await h.client.getBlockchainStatus({ blockchainID: a.toString() }), { status: 'Validating' });
  assert.equal(await h.client.getBlockchainStatus({ blockchainID: id('b').toString() }), { status: 'Unknown' });
  assert.match((await h.fails('getBlockchainStatus', { blockchainID: ShortId.empty.toString() }, -32602)).message, /^blockchainID: expected 32 bytes/);
});

test.run();
