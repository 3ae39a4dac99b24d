import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Id, PrivateKey, ShortId, vmIdFromName } from '@cornice/sdk';
import { PrefixedStore } from '@cornice/sdk';
import { sharedMemoryFor } from '../../src/chains/shared-memory.js';
import { decodeUtxo, encodeUtxo, txId, utxoId } from '../../src/platform/codec.js';
import { DEFAULT_SUBNET_ID, EMPTY_SIGNATURE, PLATFORM_CHAIN_ID, type IssuableTx } from '../../src/platform/model.js';
import { reward } from '../../src/platform/rewards.js';
import { DAY, EWOQ, GENESIS_BALANCE, NATIVE_ASSET, NETWORK_ID, NODE, OTHER_NODE, nowOf, settle, signed, startVM, subnetTx, validatorTx } from './helpers.js';

const now = nowOf;

async function rejects(p: Promise<unknown>, re: RegExp): Promise<void> {
  try {
    await p;
  } catch (e) {
    assert.match((e as Error).message, re);
    return;
  }
  assert.unreachable(`expected an error matching ${re}`);
}

test('genesis: account, validators, chains and time; the node is told of chains and validators', async () => {
  const h = await startVM();
  const acct = await h.vm.accepted().account(EWOQ.address);
  assert.is(acct.balance, GENESIS_BALANCE);
  assert.is(acct.nonce, 0n);
  const validators = await h.vm.accepted().currentStakers(DEFAULT_SUBNET_ID);
  assert.equal(validators.map((v) => v.tx.nodeId.toString()).sort(), [NODE.toString(), OTHER_NODE.toString()].sort());
  assert.is(h.created.length, 1);
  assert.is(h.created[0]!.name, 'X-Chain');
  assert.ok(h.validatorEvents.some((e) => e.subnetId.equals(DEFAULT_SUBNET_ID) && e.validators.length === 2));
  assert.is(await h.vm.lastAccepted().then((id) => id.toString()), '2KN3yAyLrYrKQ19YhbxtW1kBjHxndk2BZQs2q7UY1u8zUe83fu');
  // Idle: nothing to build.
  assert.equal(await settle(h.vm), []);
});

test('createSubnet: accepted in a standard block; the nonce moves; a wrong nonce gets the reference text', async () => {
  const h = await startVM();
  const keys = [PrivateKey.generate(), PrivateKey.generate(), PrivateKey.generate()];
  const tx = subnetTx(1n, keys, 2);
  const id = await h.vm.issueTx(tx);
  const blocks = await settle(h.vm);
  assert.equal(blocks.map((b) => b.kind), ['standard']);
  const subnet = await h.vm.accepted().subnet(id);
  assert.ok(subnet);
  assert.is(subnet!.threshold, 2);
  assert.is((await h.vm.accepted().account(EWOQ.address)).nonce, 1n);
  await rejects(h.vm.issueTx(subnetTx(1n, keys, 1)), /account's last nonce is 1 so expected tx nonce to be 2 but was 1/);
  await rejects(h.vm.issueTx(subnetTx(2n, keys, 4)), /threshold \(4\) must be between 1 and the number of control keys \(3\)/);
  const unsorted = signed({ kind: 'createSubnet', networkId: NETWORK_ID, nonce: 2n, controlKeys: [ShortId.fromBytes(new Uint8Array(20).fill(9)), ShortId.fromBytes(new Uint8Array(20).fill(3))], threshold: 1, sig: EMPTY_SIGNATURE } as IssuableTx);
  await rejects(h.vm.issueTx(unsorted), /control keys must be sorted and unique/);
});

test('txs from one account can follow each other in the mempool (nonce n+1, n+2)', async () => {
  const h = await startVM();
  const k = [PrivateKey.generate()];
  await h.vm.issueTx(subnetTx(1n, k, 1));
  await h.vm.issueTx(subnetTx(2n, k, 1));
  await settle(h.vm);
  assert.is((await h.vm.accepted().subnets()).length, 2);
  assert.is((await h.vm.accepted().account(EWOQ.address)).nonce, 2n);
});

test('Default Subnet validator: pending, current at startTime, stake plus reward back at endTime', async () => {
  const h = await startVM();
  const stake = 5_000_000_000_000n;
  const tx = validatorTx(h, { nonce: 1n, weight: stake, days: 30 });
  const start = (tx as { start: number }).start;
  const end = (tx as { end: number }).end;
  const addId = await h.vm.issueTx(tx);
  const blocks = await settle(h.vm);
  assert.equal(blocks.map((b) => b.kind), ['proposal', 'commit']);
  assert.is((await h.vm.accepted().pendingStakers(DEFAULT_SUBNET_ID)).length, 1);
  assert.is((await h.vm.accepted().account(EWOQ.address)).balance, GENESIS_BALANCE - stake);
  // Before startTime nothing moves.
  assert.equal(await settle(h.vm), []);
  h.clock.ms = start * 1000;
  const events = h.validatorEvents.length;
  assert.equal((await settle(h.vm)).map((b) => b.kind), ['proposal', 'commit']);
  assert.is(h.vm.accepted().timestamp(), start);
  const current = await h.vm.accepted().currentStakers(DEFAULT_SUBNET_ID);
  assert.ok(current.some((s) => s.txId.equals(addId)));
  assert.ok(h.validatorEvents.length > events, 'the node hears of the new validator');
  // At endTime: advance time, then the reward proposal.
  h.clock.ms = end * 1000 + 5000;
  const ending = await settle(h.vm);
  assert.equal(ending.map((b) => b.kind), ['proposal', 'commit', 'proposal', 'commit']);
  assert.not.ok((await h.vm.accepted().currentStakers(DEFAULT_SUBNET_ID)).some((s) => s.txId.equals(addId)));
  const expected = GENESIS_BALANCE + reward(stake, end - start);
  assert.ok(reward(stake, end - start) > 0n);
  assert.is((await h.vm.accepted().account(EWOQ.address)).balance, expected);
});

test('delegator: stake debited; at its end the reward is split by the validator delegation fee', async () => {
  const h = await startVM();
  const owner = PrivateKey.generate();
  const validatorDest = ShortId.fromBytes(new Uint8Array(20).fill(0x33));
  const delegatorDest = ShortId.fromBytes(new Uint8Array(20).fill(0x44));
  const nodeId = ShortId.fromBytes(new Uint8Array(20).fill(0x55));
  const start = now(h) + 60;
  const vtx = signed({ kind: 'addDefaultSubnetValidator', nodeId, weight: 1_000_000_000n, start, end: start + 10 * DAY, networkId: NETWORK_ID, nonce: 1n, destination: validatorDest, shares: 300_000, sig: EMPTY_SIGNATURE } as IssuableTx);
  await h.vm.issueTx(vtx);
  await settle(h.vm);
  const stake = 4_000_000_000_000n;
  const dStart = start + DAY;
  const dEnd = start + 5 * DAY;
  // Outside the validator's period: refused.
  const outside = signed({ kind: 'addDefaultSubnetDelegator', nodeId, weight: stake, start: dStart, end: start + 11 * DAY, networkId: NETWORK_ID, nonce: 2n, destination: delegatorDest, sig: EMPTY_SIGNATURE } as IssuableTx);
  await rejects(h.vm.issueTx(outside), /all subnets must be a subset of the default subnet/);
  const dtx = signed({ kind: 'addDefaultSubnetDelegator', nodeId, weight: stake, start: dStart, end: dEnd, networkId: NETWORK_ID, nonce: 2n, destination: delegatorDest, sig: EMPTY_SIGNATURE } as IssuableTx);
  await h.vm.issueTx(dtx);
  await settle(h.vm);
  const afterStakes = GENESIS_BALANCE - 1_000_000_000n - stake;
  assert.is((await h.vm.accepted().account(EWOQ.address)).balance, afterStakes, 'delegated stake is debited');
  h.clock.ms = (dEnd + 100) * 1000;
  await settle(h.vm);
  const total = reward(stake, dEnd - dStart);
  const validatorCut = total - (700_000n * total) / 1_000_000n;
  assert.is((await h.vm.accepted().account(delegatorDest)).balance, stake + total - validatorCut);
  assert.is((await h.vm.accepted().account(validatorDest)).balance, validatorCut);
  void owner;
});

test('staking rules: minimum stake, period bounds, start after chain time, one entry per node', async () => {
  const h = await startVM();
  await rejects(h.vm.issueTx(validatorTx(h, { nonce: 1n, weight: 9_999n })), /weight of this validator is too low/);
  await rejects(h.vm.issueTx(validatorTx(h, { nonce: 1n, days: 0.5 })), /staking period is too short/);
  await rejects(h.vm.issueTx(validatorTx(h, { nonce: 1n, days: 366 })), /staking period is too long/);
  await rejects(h.vm.issueTx(validatorTx(h, { nonce: 1n, start: now(h) - 5 })), /start time must be in the future/);
  await rejects(h.vm.issueTx(validatorTx(h, { nonce: 1n, nodeId: NODE })), /already a current or pending validator of the Default Subnet/);
  await rejects(h.vm.issueTx(validatorTx(h, { nonce: 1n, weight: GENESIS_BALANCE + 1n })), /insufficient funds: account balance 20000000000000 < tx fee \(0\) \+ send amount \(20000000000001\)/);
  await rejects(h.vm.issueTx(validatorTx(h, { nonce: 1n, shares: 1_000_001 })), /delegation fee rate/);
  await rejects(h.vm.issueTx({ ...(validatorTx(h, { nonce: 1n }) as object), networkId: 1 } as IssuableTx), /network/);
});

test('non-default subnet validator: threshold control signatures, and Default Subnet validation for the whole period', async () => {
  const h = await startVM();
  const keys = [PrivateKey.generate(), PrivateKey.generate(), PrivateKey.generate()];
  const subnetId = await h.vm.issueTx(subnetTx(1n, keys, 2));
  await settle(h.vm);
  const start = now(h) + 60;
  const base = { kind: 'addNonDefaultSubnetValidator', nodeId: NODE, weight: 10n, start, end: start + 2 * DAY, subnetId, networkId: NETWORK_ID, nonce: 2n, controlSigs: [], payerSig: EMPTY_SIGNATURE } as IssuableTx;
  await rejects(h.vm.issueTx(signed(base, EWOQ, [keys[0]!])), /expected 2 control signatures but got 1/);
  const stranger = PrivateKey.generate();
  await rejects(h.vm.issueTx(signed(base, EWOQ, [keys[0]!, stranger])), /not from a control key/);
  await rejects(
    h.vm.issueTx(signed({ ...base, nodeId: ShortId.fromBytes(new Uint8Array(20).fill(7)) } as IssuableTx, EWOQ, [keys[0]!, keys[1]!])),
    /all subnets must be a subset of the default subnet/,
  );
  await h.vm.issueTx(signed(base, EWOQ, [keys[0]!, keys[2]!]));
  await settle(h.vm);
  assert.is((await h.vm.accepted().pendingStakers(subnetId)).length, 1);
  h.clock.ms = start * 1000;
  await settle(h.vm);
  const current = await h.vm.accepted().currentStakers(subnetId);
  assert.equal(current.map((s) => s.tx.nodeId.toString()), [NODE.toString()]);
  assert.ok(h.validatorEvents.some((e) => e.subnetId.equals(subnetId) && e.validators.length === 1));
  // At its end it leaves the subnet (no reward on non-default subnets).
  h.clock.ms = (start + 2 * DAY) * 1000;
  await settle(h.vm);
  assert.is((await h.vm.accepted().currentStakers(subnetId)).length, 0);
});

test('createChain: Default Subnet refused; control signatures; status Preferred/Created/Validating; the node is told', async () => {
  const h = await startVM();
  const keys = [PrivateKey.generate(), PrivateKey.generate()];
  const subnetId = await h.vm.issueTx(subnetTx(1n, keys, 1));
  await settle(h.vm);
  const chain = { kind: 'createChain', networkId: NETWORK_ID, subnetId, nonce: 2n, chainName: 'my chain', vmId: vmIdFromName('timestamp'), fxIds: [], genesisData: new Uint8Array(), controlSigs: [], payerSig: EMPTY_SIGNATURE } as IssuableTx;
  await rejects(h.vm.issueTx(signed({ ...chain, subnetId: DEFAULT_SUBNET_ID } as IssuableTx, EWOQ, [keys[0]!])), /new blockchain can't be validated by default Subnet/);
  await rejects(h.vm.issueTx(signed(chain, EWOQ, [])), /expected 1 control signatures but got 0/);
  const id = await h.vm.issueTx(signed(chain, EWOQ, [keys[1]!]));
  assert.is(await h.vm.blockchainStatus(id), 'Unknown');
  const block = await h.vm.buildBlock();
  await block.verify();
  await h.vm.setPreference(block.id);
  assert.is(await h.vm.blockchainStatus(id), 'Preferred');
  await block.accept();
  assert.is(await h.vm.blockchainStatus(id), 'Created');
  assert.ok(h.created.some((c) => c.id.equals(id) && c.name === 'my chain'));
  h.running.add(id.key);
  assert.is(await h.vm.blockchainStatus(id), 'Validating');
});

test('state survives a restart', async () => {
  const h = await startVM();
  const subnetId = await h.vm.issueTx(subnetTx(1n, [PrivateKey.generate()], 1));
  await h.vm.issueTx(validatorTx(h, { nonce: 2n }));
  await settle(h.vm);
  const last = await h.vm.lastAccepted();
  const h2 = await h.restart();
  assert.ok((await h2.vm.lastAccepted()).equals(last));
  assert.ok(await h2.vm.accepted().subnet(subnetId));
  assert.is((await h2.vm.accepted().pendingStakers(DEFAULT_SUBNET_ID)).length, 1);
  assert.is((await h2.vm.accepted().account(EWOQ.address)).nonce, 2n);
  assert.ok(h2.created.some((c) => c.name === 'X-Chain'), 'chains are announced again at start');
});

test('exportNATIVE puts a UTXO for the X-Chain into shared memory with the accepting batch; import takes X exports', async () => {
  const h = await startVM();
  const to = ShortId.fromBytes(new Uint8Array(20).fill(0x21));
  const exportTx = signed({
    kind: 'export',
    networkId: NETWORK_ID,
    nonce: 1n,
    outs: [{ assetId: NATIVE_ASSET, out: { kind: 'transfer', amount: 1_000n, locktime: 0n, threshold: 1, addresses: [to] } }],
    sig: EMPTY_SIGNATURE,
  } as IssuableTx);
  const exportId = await h.vm.issueTx(exportTx);
  assert.equal((await settle(h.vm)).map((b) => b.kind), ['atomic']);
  assert.is((await h.vm.accepted().account(EWOQ.address)).balance, GENESIS_BALANCE - 1_000n);
  const xShared = sharedMemoryFor(new PrefixedStore(h.root, 'shared'), h.xChainId);
  const [utxo] = await xShared.get(PLATFORM_CHAIN_ID, [utxoId(exportId, 0).bytes]);
  assert.ok(utxo, 'the X-Chain can read the exported UTXO');
  assert.is(decodeUtxo(utxo!).out.amount, 1_000n);

  // The X-Chain exports 5,000 to a P account (written as the X side would, in its own batch).
  const owner = PrivateKey.generate();
  const xTx = Id.fromBytes(new Uint8Array(32).fill(0x77));
  const xDb = new PrefixedStore(new PrefixedStore(h.root, 'chains'), h.xChainId.bytes);
  const batch = xDb.batch();
  xShared.apply(PLATFORM_CHAIN_ID, { put: [[utxoId(xTx, 0).bytes, encodeUtxo({ txId: xTx, outputIndex: 0, assetId: NATIVE_ASSET, out: { kind: 'transfer', amount: 5_000n, locktime: 0n, threshold: 1, addresses: [owner.address] } })]] }, batch);
  await batch.write();
  const importTx = {
    kind: 'import',
    networkId: NETWORK_ID,
    nonce: 1n,
    account: owner.address,
    ins: [{ txId: xTx, outputIndex: 0, assetId: NATIVE_ASSET, input: { amount: 5_000n, sigIndices: [0] } }],
    sig: EMPTY_SIGNATURE,
    creds: [{ sigs: [] as Uint8Array[] }],
  } as IssuableTx;
  const withCred = { ...importTx, creds: [{ sigs: [owner.sign((await import('../../src/platform/codec.js')).unsignedTxBytes(importTx))] }] } as IssuableTx;
  const signedImport = signed(withCred, owner);
  await h.vm.issueTx(signedImport);
  await settle(h.vm);
  assert.is((await h.vm.accepted().account(owner.address)).balance, 5_000n);
  assert.is((await h.vm.accepted().account(owner.address)).nonce, 1n);
  // Consumed: gone from shared memory; importing again fails.
  const [left] = await sharedMemoryFor(new PrefixedStore(h.root, 'shared'), PLATFORM_CHAIN_ID).get(h.xChainId, [utxoId(xTx, 0).bytes]);
  assert.is(left, undefined);
  await rejects(h.vm.issueTx(signed({ ...(withCred as object), nonce: 2n } as IssuableTx, owner)), /missing utxo/);
  void txId;
});

test('issueTx while blocks are built, verified, preferred and accepted: every tx is either accepted or refused cleanly', async () => {
  const h = await startVM();
  const senders = Array.from({ length: 8 }, () => PrivateKey.generate());
  const issued: Array<Promise<unknown>> = [];
  for (let round = 1; round <= 6; round++) {
    for (const key of senders) issued.push(h.vm.issueTx(signed(subnetTx(BigInt(round), [key], 1), key)));
    // Blocks are made while those checks are still running.
    await settle(h.vm, 200);
  }
  const results = await Promise.allSettled(issued);
  const failures = results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason));
  assert.equal(failures, []);
  await settle(h.vm, 200);
  for (const key of senders) assert.is((await h.vm.accepted().account(key.address)).nonce, 6n);
});

test('waitForEvent sleeps while idle and wakes when a tx is issued', async () => {
  const h = await startVM();
  const abort = new AbortController();
  let woke = false;
  const waiting = h.vm.waitForEvent(abort.signal).then((e) => (woke = e === 'pendingTxs'));
  await new Promise((r) => setImmediate(r));
  assert.is(woke, false);
  await h.vm.issueTx(subnetTx(1n, [PrivateKey.generate()], 1));
  await waiting;
  assert.is(woke, true);
  abort.abort();
});

test.run();
