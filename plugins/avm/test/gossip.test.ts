// The asset VM's gossip: a tx issued here goes to the chain's peers once; a tx a peer gossiped is
// pooled like an issued one and not gossiped again; bytes that are not a tx are refused clearly.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PrivateKey, ShortId, toHex } from '@cornice/sdk';
import { encodeTx } from '../src/index.js';
import { AVA_UTXO, EWOQ, baseTx, idOf, out, AVA, GENESIS_AMOUNT, rejectsWith, sendAva, settle, startVM } from './vm-helpers.js';

const BOB = PrivateKey.fromBytes(new Uint8Array(32).fill(0x22));
const PEER = ShortId.fromBytes(new Uint8Array(20).fill(0x33));

/** A VM whose gossip lands in `sent`. */
async function gossipingVM() {
  const sent: Uint8Array[] = [];
  const h = await startVM({ network: { gossip: (payload) => void sent.push(payload) } });
  return { ...h, sent };
}

test('issueTx of a new tx gossips its bytes once; issuing it again does not gossip it again', async () => {
  const { vm, sent } = await gossipingVM();
  const tx = sendAva(1_000n, BOB.address);
  const id = await vm.issueTx(tx);
  assert.equal(sent.map(toHex), [toHex(encodeTx(tx))]);
  assert.ok((await vm.issueTx(tx)).equals(id));
  assert.is(sent.length, 1);
  assert.is(await vm.txStatus(id), 'Processing');
});

test('issueTx of an invalid tx gossips nothing; neither does a tx already accepted', async () => {
  const { vm, sent } = await gossipingVM();
  const tooMuch = baseTx([{ utxo: AVA_UTXO, keys: [EWOQ] }], [out(AVA, GENESIS_AMOUNT + 1n, [BOB.address])]);
  await rejectsWith(vm.issueTx(tooMuch), 'InvalidTx');
  assert.is(sent.length, 0);
  const other = await gossipingVM();
  const tx = sendAva(5n, BOB.address);
  await other.vm.onGossip(PEER, encodeTx(tx));
  await settle(other.vm);
  assert.is(await other.vm.txStatus(idOf(tx)), 'Accepted');
  await other.vm.issueTx(tx);
  assert.is(other.sent.length, 0, 'accepted already: not gossiped');
});

test('onGossip pools a valid tx (Processing, built into a block) without gossiping it again', async () => {
  const issuer = await gossipingVM();
  const receiver = await gossipingVM();
  const tx = sendAva(2_000n, BOB.address);
  await issuer.vm.issueTx(tx);
  await receiver.vm.onGossip(PEER, issuer.sent[0]!);
  assert.is(await receiver.vm.txStatus(idOf(tx)), 'Processing');
  assert.is(receiver.sent.length, 0, 'gossip is not echoed');
  await receiver.vm.onGossip(PEER, issuer.sent[0]!); // the same tx from another peer: no-op
  const blocks = await settle(receiver.vm);
  assert.is(blocks.length, 1);
  assert.is(await receiver.vm.txStatus(idOf(tx)), 'Accepted');
  assert.is(receiver.sent.length, 0);
});

test('onGossip of bytes that are not a tx, or of an invalid tx, rejects with a clear error and pools nothing', async () => {
  const { vm, sent } = await gossipingVM();
  await rejectsWith(vm.onGossip(PEER, Uint8Array.of(1, 2, 3)), 'Malformed', /^gossiped bytes are not a tx: packer has insufficient length/);
  await rejectsWith(vm.onGossip(PEER, new Uint8Array(0)), 'Malformed', /^gossiped bytes are not a tx: /);
  await rejectsWith(vm.onGossip(PEER, new Uint8Array(200)), 'Malformed', /^gossiped bytes are not a tx: .*leftover bytes/);
  await rejectsWith(vm.onGossip(PEER, new Uint8Array(3 * 1024 * 1024)), 'InvalidTx', /gossiped tx of 3145728 bytes is too large/);
  const tooMuch = baseTx([{ utxo: AVA_UTXO, keys: [EWOQ] }], [out(AVA, GENESIS_AMOUNT + 1n, [BOB.address])]);
  await rejectsWith(vm.onGossip(PEER, encodeTx(tooMuch)), 'InvalidTx');
  assert.is(await vm.txStatus(idOf(tooMuch)), 'Unknown');
  assert.equal(await settle(vm), []);
  assert.is(sent.length, 0);
});

test.run();
