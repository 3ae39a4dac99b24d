// The EVM's tx gossip: a tx sent to this node goes to the chain's peers (one RLP list per turn); a
// tx a peer gossiped is admitted like one sent here and not gossiped again; bytes that are not
// gossip are refused clearly.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryStore, ShortId, toHex } from '@cornice/sdk';
import { testChainContext } from '@cornice/core/testing';
import { RLP } from '@ethereumjs/rlp';
import { EvmVM } from '../src/chain-entry.js';
import { MAX_GOSSIP_BYTES, MAX_GOSSIP_TXS, decodeTxGossip, encodeTxGossip } from '../src/gossip.js';
import { EWOQ, GENESIS, addr, buildAndAccept, signedTx } from './helpers.js';

const PEER = ShortId.fromBytes(new Uint8Array(20).fill(0x33));
const nextTurn = () => new Promise((r) => setImmediate(r));

async function gossipingVM() {
  const sent: Uint8Array[] = [];
  const vm = new EvmVM();
  await vm.initialize(testChainContext({ db: new MemoryStore(), network: { gossip: (p) => void sent.push(p) } }), { genesis: GENESIS });
  await vm.setState('normalOp');
  return { vm, sent };
}

test('txs sent to this node in one turn are gossiped in one payload; a peer admits them in order and does not gossip them again', async () => {
  const a = await gossipingVM();
  const b = await gossipingVM();
  const raws = [0n, 1n, 2n].map((nonce) => signedTx({ nonce, to: addr(2), value: 1n }).serialize());
  await Promise.all(raws.map((raw) => a.vm.backend.sendRawTransaction(raw)));
  await nextTurn();
  assert.is(a.sent.length, 1);
  assert.equal(decodeTxGossip(a.sent[0]!).map(toHex), raws.map(toHex));
  await b.vm.onGossip(PEER, a.sent[0]!);
  assert.is(await b.vm.backend.nonce(EWOQ, 'pending'), 3n, "the peer's pool holds all three, in nonce order");
  await b.vm.onGossip(PEER, a.sent[0]!); // again, from another peer: nothing new
  await nextTurn();
  assert.is(b.sent.length, 0, 'gossip is not echoed');
  const block = await buildAndAccept(b.vm);
  assert.is(block.eth.transactions.length, 3, "the peer builds them into its block");
});

test('a tx sent to a node that is behind is gossiped once the block it waited for is accepted there', async () => {
  const ahead = await gossipingVM();
  const behind = await gossipingVM();
  await ahead.vm.backend.sendRawTransaction(signedTx({ nonce: 0n, to: addr(2), value: 1n }).serialize());
  const block = await buildAndAccept(ahead.vm);
  // Nonce 1 reaches the node that has not accepted nonce 0's block yet: future there, not announced.
  const next = signedTx({ nonce: 1n, to: addr(2), value: 1n }).serialize();
  await behind.vm.backend.sendRawTransaction(next);
  await nextTurn();
  assert.is(behind.sent.length, 0, 'a future tx is not gossiped');
  const parsed = await behind.vm.parseBlock(block.bytes);
  await parsed.verify();
  await behind.vm.setPreference(parsed.id);
  await parsed.accept();
  await nextTurn();
  assert.is(behind.sent.length, 1, 'the promoted tx is gossiped');
  assert.equal(decodeTxGossip(behind.sent[0]!).map(toHex), [toHex(next)]);
  await ahead.vm.onGossip(PEER, behind.sent[0]!);
  assert.is(await ahead.vm.backend.nonce(EWOQ, 'pending'), 2n, 'the node ahead has it to build');
});

test('a gossiped tx that fails its checks is skipped, the others admitted; a tx refused over RPC is not gossiped', async () => {
  const a = await gossipingVM();
  const bad = signedTx({ nonce: 0n, to: addr(2), value: 1n, chainId: 1n }).serialize(); // another chain
  const good = signedTx({ nonce: 0n, to: addr(2), value: 1n }).serialize();
  await a.vm.onGossip(PEER, RLP.encode([bad, good, Uint8Array.of(1, 2, 3)]));
  assert.is(await a.vm.backend.nonce(EWOQ, 'pending'), 1n);
  try {
    await a.vm.backend.sendRawTransaction(bad);
    assert.unreachable();
  } catch (e) {
    assert.match((e as Error).message, /chain id/);
  }
  await nextTurn();
  assert.is(a.sent.length, 0);
});

test('bytes that are not gossip are refused with MalformedGossip naming the problem', async () => {
  const { vm } = await gossipingVM();
  for (const [garbage, why] of [
    [Uint8Array.of(0xff, 1), /malformed/],
    [RLP.encode(Uint8Array.of(1, 2)), /not a list/],
    [RLP.encode([[Uint8Array.of(1)]]), /not a byte string/],
    [RLP.encode(Array.from({ length: MAX_GOSSIP_TXS + 1 }, () => Uint8Array.of(1))), /1025 txs/],
    [new Uint8Array(MAX_GOSSIP_BYTES + 1), /exceed/],
  ] as const) {
    try {
      await vm.onGossip(PEER, garbage);
      assert.unreachable();
    } catch (e) {
      assert.is((e as { code?: string }).code, 'MalformedGossip');
      assert.match((e as Error).message, why);
    }
  }
});

test('encodeTxGossip splits at the byte and count bounds; every payload decodes back', () => {
  const big = new Uint8Array(300 * 1024).fill(7);
  const payloads = encodeTxGossip([big, big, big, big]);
  assert.is(payloads.length, 2);
  for (const p of payloads) assert.ok(p.length <= MAX_GOSSIP_BYTES);
  assert.equal(payloads.flatMap(decodeTxGossip).map((t) => t.length), [big.length, big.length, big.length, big.length]);
  const many = encodeTxGossip(Array.from({ length: MAX_GOSSIP_TXS + 5 }, () => Uint8Array.of(1, 2)));
  assert.equal(many.map((p) => decodeTxGossip(p).length), [MAX_GOSSIP_TXS, 5]);
  assert.equal(encodeTxGossip([]), []);
});

test.run();
