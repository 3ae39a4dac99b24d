import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cb58Decode, cb58Encode } from '@cornice/sdk';
import { MAX_CONTROL_KEYS, MAX_FX_IDS, MAX_GENESIS_BYTES } from '../../src/platform/api.js';
import { decodeTx } from '../../src/platform/codec.js';
import { DEFAULT_SUBNET_ID, EMPTY_SIGNATURE, type PlatformTx } from '../../src/platform/model.js';
import { LOADED_VMS, NOW, harness } from './fake-backend.js';
import { id, plain, shortId } from './samples.js';

const unsigned = (reply: { unsignedTx: string }): PlatformTx => decodeTx(cb58Decode(reply.unsignedTx));
const START = NOW + 60;
const END = START + 30 * 24 * 3600;

test('addDefaultSubnetValidator: the unsigned tx (65 zero bytes as sig); id defaults to this node; weight is a synonym', async () => {
  const h = harness();
  const args = { startTime: START, endTime: END, stakeAmount: '20000', payerNonce: 1, destination: shortId('dest').toString(), delegationFeeRate: 300_000 };
  const tx = unsigned(await h.client.addDefaultSubnetValidator(args));
  assert.equal(plain(tx), plain({
    kind: 'addDefaultSubnetValidator',
    nodeId: h.backend.nodeId,
    weight: 20_000n,
    start: START,
    end: END,
    networkId: 12345,
    nonce: 1n,
    destination: shortId('dest'),
    shares: 300_000,
    sig: EMPTY_SIGNATURE,
  }));
  const { stakeAmount: _, ...rest } = args;
  const byWeight = unsigned(await h.client.addDefaultSubnetValidator({ ...rest, weight: 20_000, id: shortId('other node').toString() }));
  assert.equal(plain(byWeight), plain({ ...tx, nodeId: shortId('other node') }));
  // Both given and equal is fine; delegationFeeRate defaults to 0.
  const { delegationFeeRate: __, ...noFee } = args;
  assert.is((unsigned(await h.client.addDefaultSubnetValidator({ ...noFee, weight: '20000' })) as { shares: number }).shares, 0);
});

test('addDefaultSubnetValidator: pre-checks and bad inputs', async () => {
  const h = harness();
  const ok = { startTime: START, endTime: END, stakeAmount: 20_000, payerNonce: 1, destination: shortId('dest').toString() };
  const e = (params: unknown, code?: number) => h.fails('addDefaultSubnetValidator', params, code).then((x) => x.message);
  assert.is(await e({ ...ok, payerNonce: 0 }, -32602), "payerNonce: sender's next nonce not specified");
  assert.is(await e({ ...ok, startTime: NOW - 1 }, -32000), 'start time must be in the future');
  assert.is(await e({ ...ok, stakeAmount: undefined }, -32602), 'stakeAmount: missing required field (or give weight)');
  assert.is(await e({ ...ok, weight: 1 }, -32602), 'weight: differs from stakeAmount: give one of them');
  assert.match(await e({ ...ok, delegationFeeRate: 1_000_001 }, -32602), /^delegationFeeRate: must be at most 1000000/);
  assert.match(await e({ ...ok, destination: undefined }, -32602), /^destination: missing required field/);
  assert.match(await e({ ...ok, startTime: '2^40' }, -32602), /^startTime: /);
  assert.match(await e({ ...ok, startTime: String(2 ** 53) }, -32602), /^startTime: value overflowed/);
  assert.match(await e({ ...ok, startTime: 2 ** 53 }, -32602), /^startTime: expected a non-negative integer/);
  assert.match(await e({ ...ok, stakeAmount: '18446744073709551616' }, -32602), /^stakeAmount: value overflowed uint64/);
  assert.match(await e({ ...ok, id: 'nope!' }, -32602), /^id: /);
  assert.match(await e({ ...ok, payerNonce: -1 }, -32602), /^payerNonce: /);
  assert.equal(h.backend.issued, []);
});

test('addDefaultSubnetDelegator: the unsigned tx; the same pre-checks', async () => {
  const h = harness();
  const args = { id: shortId('validator').toString(), startTime: START, endTime: END, weight: 15_000, payerNonce: '2', destination: shortId('d').toString() };
  assert.equal(plain(unsigned(await h.client.addDefaultSubnetDelegator(args))), plain({
    kind: 'addDefaultSubnetDelegator',
    nodeId: shortId('validator'),
    weight: 15_000n,
    start: START,
    end: END,
    networkId: 12345,
    nonce: 2n,
    destination: shortId('d'),
    sig: EMPTY_SIGNATURE,
  }));
  assert.is((await h.fails('addDefaultSubnetDelegator', { ...args, payerNonce: 0 }, -32602)).message, "payerNonce: sender's next nonce not specified");
  assert.is((await h.fails('addDefaultSubnetDelegator', { ...args, startTime: NOW - 100 }, -32000)).message, 'start time must be in the future');
  // Unknown fields are ignored, as the reference's decoder did: a delegator has no fee rate.
  assert.equal(plain(unsigned((await h.call('addDefaultSubnetDelegator', { ...args, delegationFeeRate: 1 })).result)), plain(unsigned(await h.client.addDefaultSubnetDelegator(args))));
});

test('addNonDefaultSubnetValidator: the unsigned tx (no control sigs, empty payer sig); stakeAmount is a synonym', async () => {
  const h = harness();
  const subnetID = id('subnet').toString();
  const args = { subnetID, startTime: START, endTime: END, weight: 1, payerNonce: 3 };
  const tx = unsigned(await h.client.addNonDefaultSubnetValidator(args));
  assert.equal(plain(tx), plain({
    kind: 'addNonDefaultSubnetValidator',
    nodeId: h.backend.nodeId,
    weight: 1n,
    start: START,
    end: END,
    subnetId: id('subnet'),
    networkId: 12345,
    nonce: 3n,
    controlSigs: [],
    payerSig: EMPTY_SIGNATURE,
  }));
  const { weight: _, ...rest } = args;
  assert.equal(plain(unsigned(await h.client.addNonDefaultSubnetValidator({ ...rest, stakeAmount: 1 }))), plain(tx));
  assert.is((await h.fails('addNonDefaultSubnetValidator', rest, -32602)).message, 'weight: missing required field (or give stakeAmount)');
  assert.is(
    (await h.fails('addNonDefaultSubnetValidator', { ...args, subnetID: DEFAULT_SUBNET_ID.toString() }, -32602)).message,
    'subnetID: must not be the Default Subnet (use addDefaultSubnetValidator)',
  );
  assert.is((await h.fails('addNonDefaultSubnetValidator', { ...args, payerNonce: 0 }, -32602)).message, "payerNonce: sender's next nonce not specified");
  assert.is((await h.fails('addNonDefaultSubnetValidator', { ...args, startTime: 5 }, -32000)).message, 'start time must be in the future');
  assert.match((await h.fails('addNonDefaultSubnetValidator', { ...args, subnetID: undefined }, -32602)).message, /^subnetID: missing required field/);
  // The spelling of the reference's API examples (SubnetID) is accepted (field names match case-insensitively).
  assert.equal(plain(unsigned((await h.call('addNonDefaultSubnetValidator', { ...rest, weight: 1, SubnetID: subnetID, subnetID: undefined })).result)), plain(tx));
});

test('createSubnet: control keys sorted and deduplicated for the caller; threshold 1..25 and at most the keys', async () => {
  const h = harness();
  const [k1, k2, k3] = [shortId('k1'), shortId('k2'), shortId('k3')];
  const given = [k3, k1, k2, k1].map(String);
  const tx = unsigned(await h.client.createSubnet({ controlKeys: given, threshold: 2, payerNonce: 1 }));
  const sorted = [k1, k2, k3].sort((a, b) => a.compare(b));
  assert.equal(plain(tx), plain({ kind: 'createSubnet', networkId: 12345, nonce: 1n, controlKeys: sorted, threshold: 2, sig: EMPTY_SIGNATURE }));
  const e = (params: object) => h.fails('createSubnet', { controlKeys: given, threshold: 2, payerNonce: 1, ...params }, -32602).then((x) => x.message);
  assert.is(await e({ threshold: 4 }), 'threshold: must be at most the number of distinct control keys (3)');
  assert.is(await e({ threshold: 0 }), 'threshold: must be at least 1');
  assert.is(await e({ threshold: 26, controlKeys: Array.from({ length: 30 }, (_, i) => shortId(`k${i}`).toString()) }), 'threshold: must be at most 25');
  assert.is(await e({ payerNonce: 0 }), "payerNonce: sender's next nonce not specified");
  assert.match(await e({ controlKeys: [k1.toString(), 'bad!'] }), /^controlKeys\[1\]: /);
  assert.match(await e({ controlKeys: Array(MAX_CONTROL_KEYS + 1).fill(k1.toString()) }), /^controlKeys: must have at most 256 items/);
  assert.match(await e({ controlKeys: 'k1' }), /^controlKeys: expected an array/);
  // 25 of 25 keys is the most.
  const keys25 = Array.from({ length: 25 }, (_, i) => shortId(`k${i}`).toString());
  assert.is((unsigned(await h.client.createSubnet({ controlKeys: keys25, threshold: 25, payerNonce: 1 })) as { threshold: number }).threshold, 25);
});

test('createBlockchain: by alias or vmID, subnetID or SubnetID; fxIDs optional', async () => {
  const h = harness();
  const subnet = id('subnet');
  const genesis = new Uint8Array(32).fill(5);
  const args = { subnetID: subnet.toString(), vmID: 'timestamp', name: 'my chain', payerNonce: 4, genesisData: cb58Encode(genesis) };
  const tx = unsigned(await h.client.createBlockchain(args));
  assert.equal(plain(tx), plain({
    kind: 'createChain',
    networkId: 12345,
    subnetId: subnet,
    nonce: 4n,
    chainName: 'my chain',
    vmId: LOADED_VMS.timestamp,
    fxIds: [],
    genesisData: genesis,
    controlSigs: [],
    payerSig: EMPTY_SIGNATURE,
  }));
  assert.equal(plain(unsigned(await h.client.createBlockchain({ ...args, vmID: LOADED_VMS.timestamp!.toString() }))), plain(tx));
  const { subnetID: _, ...noSubnet } = args;
  assert.equal(plain(unsigned((await h.call('createBlockchain', { ...noSubnet, SubnetID: subnet.toString() })).result)), plain(tx));
  const withFx = unsigned(await h.client.createBlockchain({ ...args, vmID: 'kv', fxIDs: [id('fx').toString()] }));
  assert.equal(plain(withFx), plain({ ...tx, vmId: LOADED_VMS.kv, fxIds: [id('fx')] }));
});

test('createBlockchain: refusals with the reference texts; an unknown VM is named with the loaded ones', async () => {
  const h = harness();
  const args = { subnetID: id('subnet').toString(), vmID: 'timestamp', name: 'c', payerNonce: 4, genesisData: cb58Encode(new Uint8Array(1)) };
  const e = (params: object, code: number) => h.fails('createBlockchain', { ...args, ...params }, code).then((x) => x.message);
  assert.is(await e({ subnetID: undefined }, -32602), 'subnetID: subnet not specified');
  assert.is(await e({ vmID: undefined }, -32602), 'vmID: VM not specified');
  assert.is(await e({ vmID: '' }, -32602), 'vmID: VM not specified');
  assert.is(await e({ payerNonce: 0 }, -32602), "payerNonce: sender's next nonce not specified");
  assert.is(await e({ subnetID: DEFAULT_SUBNET_ID.toString() }, -32602), "subnetID: new blockchain can't be validated by default Subnet");
  assert.is(await e({ vmID: 'evm' }, -32000), "no VM with ID or alias 'evm' is loaded (loaded: timestamp, platform, kv)");
  assert.match(await e({ genesisData: 'not cb58' }, -32602), /^genesisData: /);
  assert.match(await e({ genesisData: cb58Encode(new Uint8Array(MAX_GENESIS_BYTES + 1)) }, -32602), /^genesisData: must be at most/);
  assert.match(await e({ genesisData: undefined }, -32602), /^genesisData: missing required field/);
  assert.match(await e({ name: 'n'.repeat(257) }, -32602), /^name: must be at most 256 characters/);
  assert.match(await e({ name: undefined }, -32602), /^name: missing required field/);
  assert.match(await e({ fxIDs: Array(MAX_FX_IDS + 1).fill(id('fx').toString()) }, -32602), /^fxIDs: must have at most 16 items/);
  assert.match(await e({ vmID: 'v'.repeat(257) }, -32602), /^vmID: must be at most 256/);
  // The VM's own genesis check (VMFactory.checkGenesis), with its reason.
  assert.is(await e({ genesisData: cb58Encode(new TextEncoder().encode('bad genesis')) }, -32602), 'genesisData: not valid genesis data for this VM: bad genesis: field x is wrong');
});

test.run();
