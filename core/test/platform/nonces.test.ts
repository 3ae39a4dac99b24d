/**
 * Issue 31 point 7: queued txs of one account follow each other whatever their kinds (API.md,
 * issueTx). A block takes createSubnet/createChain txs first, then import/export, then staking txs;
 * a tx whose nonce is ahead of its account waits in the mempool for the queued tx before it instead
 * of being refused at issue or dropped at build.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PrivateKey, ShortId } from '@cornice/sdk';
import { EMPTY_SIGNATURE, type IssuableTx } from '../../src/platform/model.js';
import type { PlatformBlock } from '../../src/platform/blocks.js';
import { EWOQ, GENESIS_BALANCE, NATIVE_ASSET, NETWORK_ID, nowOf, settle, signed, startVM, subnetTx, validatorTx } from './helpers.js';

function exportTx(nonce: bigint, amount = 1_000n): IssuableTx {
  const to = ShortId.fromBytes(new Uint8Array(20).fill(0x21));
  return signed({
    kind: 'export',
    networkId: NETWORK_ID,
    nonce,
    outs: [{ assetId: NATIVE_ASSET, out: { kind: 'transfer', amount, locktime: 0n, threshold: 1, addresses: [to] } }],
    sig: EMPTY_SIGNATURE,
  } as IssuableTx);
}

const node = (n: number) => ShortId.fromBytes(new Uint8Array(20).fill(n));

test('a createSubnet (n+1) and an export (n+2) queued behind a staking tx (n) of the same account: issued, then built in nonce order', async () => {
  const h = await startVM();
  await h.vm.issueTx(validatorTx(h, { nonce: 1n, weight: 1_000_000n }));
  // Refused before: "account's last nonce is 0 so expected tx nonce to be 1 but was 2" (the decision
  // layer was checked without the staking tx, which a block takes after it).
  await h.vm.issueTx(subnetTx(2n, [PrivateKey.generate()], 1));
  await h.vm.issueTx(exportTx(3n));
  await h.vm.issueTx(validatorTx(h, { nonce: 4n, nodeId: node(6) }));
  const blocks = await settle(h.vm);
  // Nothing dropped: the subnet and the export waited for the staking tx, then went first again.
  assert.equal(blocks.map((b) => b.kind), ['proposal', 'commit', 'standard', 'atomic', 'proposal', 'commit']);
  const acct = await h.vm.accepted().account(EWOQ.address);
  assert.is(acct.nonce, 4n);
  assert.is(acct.balance, GENESIS_BALANCE - 2_000_000n - 1_000n);
  assert.is((await h.vm.accepted().subnets()).length, 1);
});

test("the next nonce while the account's staking tx is in a processing proposal block (the preferred block)", async () => {
  const h = await startVM();
  await h.vm.issueTx(validatorTx(h, { nonce: 1n }));
  const proposal = (await h.vm.buildBlock()) as PlatformBlock;
  assert.is(proposal.kind, 'proposal');
  await proposal.verify();
  await h.vm.setPreference(proposal.id);
  // Refused before: the proposal's tx was skipped as "on the preferred branch" while the state was
  // its parent's, without it.
  await h.vm.issueTx(validatorTx(h, { nonce: 2n, nodeId: node(6) }));
  await h.vm.issueTx(exportTx(3n));
  const option = (await h.vm.buildBlock()) as PlatformBlock;
  assert.is(option.kind, 'commit');
  await option.verify();
  await h.vm.setPreference(option.id);
  await proposal.accept();
  await option.accept();
  // The export (nonce 3) waits for the staking tx (nonce 2), though atomic blocks come first.
  assert.equal((await settle(h.vm)).map((b) => b.kind), ['proposal', 'commit', 'atomic']);
  assert.is((await h.vm.accepted().account(EWOQ.address)).nonce, 3n);
});

test('nonces still follow each other: a gap or a repeat is refused at issue, naming the expected nonce', async () => {
  const h = await startVM();
  await h.vm.issueTx(validatorTx(h, { nonce: 1n }));
  await assertRejects(h.vm.issueTx(subnetTx(3n, [PrivateKey.generate()], 1)), /expected tx nonce to be 2 but was 3/);
  await assertRejects(h.vm.issueTx(subnetTx(1n, [PrivateKey.generate()], 1)), /expected tx nonce to be 2 but was 1/);
  // And the balance counts the queued txs before it: the stake leaves too little for this export.
  await assertRejects(h.vm.issueTx(exportTx(2n, GENESIS_BALANCE)), /insufficient funds/);
});

test('a waiting tx whose predecessor is dropped (its start came too close) is dropped too, in the same build', async () => {
  const h = await startVM();
  await h.vm.issueTx(validatorTx(h, { nonce: 1n, start: nowOf(h) + 20 }));
  await h.vm.issueTx(subnetTx(2n, [PrivateKey.generate()], 1));
  h.clock.ms += 15_000; // the staking tx now starts within 10 s: dropped at build
  await assertRejects(h.vm.buildBlock(), /nothing to build/);
  // The account can start again from nonce 1.
  await h.vm.issueTx(subnetTx(1n, [PrivateKey.generate()], 1));
  assert.equal((await settle(h.vm)).map((b) => b.kind), ['standard']);
  assert.is((await h.vm.accepted().account(EWOQ.address)).nonce, 1n);
});

async function assertRejects(p: Promise<unknown>, re: RegExp): Promise<void> {
  try {
    await p;
  } catch (e) {
    assert.match((e as Error).message, re);
    return;
  }
  assert.unreachable(`expected an error matching ${re}`);
}

test.run();
