// The asset VM's gossip: a tx issued here goes to the chain's peers once; a tx a peer gossiped is
// pooled like an issued one and not gossiped again; bytes that are not gossip are refused clearly.
// The tests read a gossip payload only through another VM's onGossip (and check that it carries the
// tx's bytes), so they hold whether a payload is one tx or a batch of them.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PrivateKey, ShortId, toHex } from '@cornice/sdk';
import { encodeTx, type Tx } from '../src/index.js';
import { MAX_GOSSIP_BYTES, decodeGossip, encodeGossip } from '../src/gossip.js';
import { AVA, AVA_UTXO, EWOQ, GENESIS_AMOUNT, baseTx, idOf, out, rejection, sendAva, settle, startVM } from './vm-helpers.js';

const BOB = PrivateKey.fromBytes(new Uint8Array(32).fill(0x22));
const PEER = ShortId.fromBytes(new Uint8Array(20).fill(0x33));
/** A turn for gossip sent at the end of one. */
const nextTurn = () => new Promise((r) => setImmediate(r));

/** A VM whose gossip lands in `sent`. */
async function gossipingVM() {
  const sent: Uint8Array[] = [];
  const h = await startVM({ network: { gossip: (payload) => void sent.push(payload) } });
  return { ...h, sent };
}

const carries = (payload: Uint8Array, tx: Tx) => toHex(payload).includes(toHex(encodeTx(tx)));
/** Spends 1 more than ewoq's genesis UTXO holds; the same shape and size as sendAva(1n, BOB). */
const overdrawn = () => baseTx([{ utxo: AVA_UTXO, keys: [EWOQ] }], [out(AVA, 1n, [BOB.address]), out(AVA, GENESIS_AMOUNT, [EWOQ.address])]);

test('issueTx of a new tx gossips its bytes once; issuing it again does not gossip it again', async () => {
  const { vm, sent } = await gossipingVM();
  const tx = sendAva(1_000n, BOB.address);
  const id = await vm.issueTx(tx);
  await nextTurn();
  assert.is(sent.length, 1);
  assert.ok(carries(sent[0]!, tx), 'the payload carries the signed tx');
  assert.ok((await vm.issueTx(tx)).equals(id));
  await nextTurn();
  assert.is(sent.length, 1);
  assert.is(await vm.txStatus(id), 'Processing');
});

test('issueTx of an invalid tx gossips nothing; neither does a tx already accepted', async () => {
  const { vm, sent } = await gossipingVM();
  assert.match((await rejection(vm.issueTx(overdrawn()))).message, /.+/);
  await nextTurn();
  assert.is(sent.length, 0);
  const issuer = await gossipingVM();
  const tx = sendAva(5n, BOB.address);
  await issuer.vm.issueTx(tx);
  await nextTurn();
  await vm.onGossip(PEER, issuer.sent[0]!);
  await settle(vm);
  assert.is(await vm.txStatus(idOf(tx)), 'Accepted');
  await vm.issueTx(tx);
  await nextTurn();
  assert.is(sent.length, 0, 'accepted already: not gossiped');
});

test('onGossip pools a valid tx (Processing, then built into a block) without gossiping it again', async () => {
  const issuer = await gossipingVM();
  const receiver = await gossipingVM();
  const tx = sendAva(2_000n, BOB.address);
  await issuer.vm.issueTx(tx);
  await nextTurn();
  await receiver.vm.onGossip(PEER, issuer.sent[0]!);
  assert.is(await receiver.vm.txStatus(idOf(tx)), 'Processing');
  await receiver.vm.onGossip(PEER, issuer.sent[0]!); // the same tx from another peer: nothing new
  await nextTurn();
  assert.is(receiver.sent.length, 0, 'gossip is not echoed');
  assert.is((await settle(receiver.vm)).length, 1);
  assert.is(await receiver.vm.txStatus(idOf(tx)), 'Accepted');
});

test('onGossip of bytes that are not gossip rejects with a clear Malformed error; an invalid tx is not pooled', async () => {
  const { vm, sent } = await gossipingVM();
  for (const garbage of [Uint8Array.of(1, 2, 3), new Uint8Array(0), new Uint8Array(200).fill(0xff)]) {
    const e = await rejection(vm.onGossip(PEER, garbage));
    assert.is((e as { code?: string }).code, 'Malformed', e.message);
    assert.ok(e.message.length > 10, e.message);
  }
  assert.match((await rejection(vm.onGossip(PEER, new Uint8Array(3 * 1024 * 1024)))).message, /3145728 bytes/);
  // A well-formed payload whose tx fails its checks (the issuer's checks are bypassed by hand).
  const issuer = await gossipingVM();
  const valid = sendAva(1n, BOB.address);
  await issuer.vm.issueTx(valid);
  await nextTurn();
  const payload = issuer.sent[0]!;
  const at = toHex(payload).indexOf(toHex(encodeTx(valid))) / 2;
  const bad = encodeTx(overdrawn());
  assert.is(bad.length, encodeTx(valid).length, 'same size: the payload framing still fits');
  const forged = Uint8Array.from(payload);
  forged.set(bad, at);
  await vm.onGossip(PEER, forged).catch(() => undefined); // refused, or skipped: either way not pooled
  assert.is(await vm.txStatus(idOf(overdrawn())), 'Unknown');
  assert.equal(await settle(vm), []);
  await nextTurn();
  assert.is(sent.length, 0);
});

test('a turn of large txs encodes past the codec\'s default 256 KiB bound: one payload up to 1 MiB, more beyond, each read back', () => {
  // 30 txs of 12 KB (a 150-output fan-out is that size): 360 KB, one payload.
  const big = Array.from({ length: 30 }, (_, i) => new Uint8Array(12_000).fill(i + 1));
  const one = encodeGossip(big);
  assert.is(one.length, 1);
  assert.equal(decodeGossip(one[0]!), big);
  // 100 of them: 1.2 MB, split in two, in order.
  const more = Array.from({ length: 100 }, (_, i) => new Uint8Array(12_000).fill(i));
  const two = encodeGossip(more);
  assert.is(two.length, 2);
  for (const p of two) assert.ok(p.length <= MAX_GOSSIP_BYTES, `${p.length} bytes`);
  assert.equal(two.flatMap((p) => decodeGossip(p)), more);
});

test('a gossip that fails (the network throws) is logged, not a fault: the tx stays pooled and is accepted', async () => {
  let calls = 0;
  const h = await startVM({
    network: {
      gossip: () => {
        calls++;
        throw new Error('peer layer down');
      },
    },
  });
  const tx = sendAva(7n, BOB.address);
  const id = await h.vm.issueTx(tx);
  await nextTurn();
  assert.is(calls, 1);
  await settle(h.vm);
  assert.is(await h.vm.txStatus(id), 'Accepted');
});

test.run();
