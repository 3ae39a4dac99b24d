// Native-token import/export through a real shared memory with the platform chain (ID 32 zero bytes).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryStore, PrivateKey, type WriteBatch } from '@cornice/sdk';
import { decodeUtxo, utxoId, type Utxo } from '../src/index.js';
import {
  AVA,
  AVA_UTXO,
  CHAIN_ID,
  EWOQ,
  GENESIS_AMOUNT,
  GOLD,
  GOLD_UTXO,
  balance,
  exportFromPlatform,
  exportTx,
  idOf,
  importTx,
  out,
  rejectsWith,
  rejection,
  settle,
  startVM,
  transfer,
  type Harness,
} from './vm-helpers.js';

const ALICE = PrivateKey.fromBytes(new Uint8Array(32).fill(0x41));
const P_ACCOUNT = PrivateKey.fromBytes(new Uint8Array(32).fill(0x42)).address;

/** What the platform chain can import from the X-Chain, by UTXO ID. */
async function platformInbox(h: Harness, utxo: Utxo): Promise<Utxo | undefined> {
  const [bytes] = await h.platform.shared.get(CHAIN_ID, [utxoId(utxo).bytes]);
  return bytes && decodeUtxo(bytes);
}

test('import: a native UTXO the platform chain exported is listed, imported once, and leaves shared memory on accept', async () => {
  const h = await startVM();
  const { vm } = h;
  const atomic = await exportFromPlatform(h, ALICE.address, 5000n);
  const listed = await vm.atomicUtxos([ALICE.address]);
  assert.is(listed.length, 1);
  assert.ok(utxoId(listed[0]!).equals(utxoId(atomic)));
  assert.is((await vm.atomicUtxos([EWOQ.address])).length, 0);
  const tx = importTx([{ utxo: atomic, keys: [ALICE] }], [out(AVA, 4000n, [ALICE.address])]);
  await vm.issueTx(tx);
  assert.is((await vm.atomicUtxos([ALICE.address])).length, 1, 'still there while the import is processing');
  await settle(vm);
  assert.is(await vm.txStatus(idOf(tx)), 'Accepted');
  assert.is(await balance(vm, ALICE.address), 4000n);
  assert.is((await vm.atomicUtxos([ALICE.address])).length, 0);
  assert.is((await h.ctx.sharedMemory.get(h.vm.platformChainId, [utxoId(atomic).bytes]))[0], undefined);
  await rejectsWith(vm.issueTx(importTx([{ utxo: atomic, keys: [ALICE] }], [out(AVA, 1n, [ALICE.address])])), 'InvalidTx', /missing utxo/);
});

test('import: two imports of one UTXO in flight end Accepted and Rejected; a block importing it twice is refused', async () => {
  const h = await startVM();
  const atomic = await exportFromPlatform(h, ALICE.address, 5000n);
  const first = importTx([{ utxo: atomic, keys: [ALICE] }], [out(AVA, 5000n, [ALICE.address])]);
  const second = importTx([{ utxo: atomic, keys: [ALICE] }], [out(AVA, 4999n, [ALICE.address])]);
  await h.vm.issueTx(first);
  await h.vm.issueTx(second);
  const { encodeBlock, encodeTx } = await import('../src/index.js');
  const both = await h.vm.parseBlock(encodeBlock({ parentId: await h.vm.lastAccepted(), height: 1, timestamp: h.clock.seconds, txs: [encodeTx(first), encodeTx(second)] }));
  await rejectsWith(both.verify(), 'InvalidBlock', /missing utxo/);
  const blocks = await settle(h.vm);
  assert.is(blocks.length, 1);
  assert.is(await h.vm.txStatus(idOf(first)), 'Accepted');
  assert.is(await h.vm.txStatus(idOf(second)), 'Rejected');
  assert.is(await balance(h.vm, ALICE.address), 5000n);
});

test('import: wrong signer, and a non-native asset in shared memory, are refused', async () => {
  const h = await startVM();
  const atomic = await exportFromPlatform(h, ALICE.address, 5000n);
  await rejectsWith(h.vm.issueTx(importTx([{ utxo: atomic, keys: [EWOQ] }], [out(AVA, 1n, [EWOQ.address])])), 'InvalidTx', /credential does not produce expected signer/);
  const gold: Utxo = { ...atomic, txId: GOLD, assetId: GOLD };
  const { encodeUtxo } = await import('../src/index.js');
  const batch = h.platform.db.batch();
  h.platform.shared.apply(CHAIN_ID, { put: [[utxoId(gold).bytes, encodeUtxo(gold)]] }, batch);
  await batch.write();
  await rejectsWith(h.vm.issueTx(importTx([{ utxo: gold, keys: [ALICE] }], [out(GOLD, 1n, [ALICE.address])])), 'InvalidTx', /asset ID must be AVA in the atomic tx/);
  assert.is((await h.vm.atomicUtxos([ALICE.address])).length, 1, 'only native UTXOs are listed');
});

test('export: the exported outputs reach the platform chain when the block is accepted, numbered after the outs', async () => {
  const h = await startVM();
  const tx = exportTx([{ utxo: AVA_UTXO, keys: [EWOQ] }], [out(AVA, GENESIS_AMOUNT - 700n, [EWOQ.address])], [out(AVA, 700n, [P_ACCOUNT])]);
  const id = await h.vm.issueTx(tx);
  const exported: Utxo = { txId: id, outputIndex: 1, assetId: AVA, out: transfer(700n, [P_ACCOUNT]) };
  assert.is(await platformInbox(h, exported), undefined, 'nothing before acceptance');
  await settle(h.vm);
  const seen = await platformInbox(h, exported);
  assert.ok(seen);
  assert.ok(seen.assetId.equals(AVA));
  assert.is(seen.outputIndex, 1);
  assert.equal(seen.out, transfer(700n, [P_ACCOUNT]));
  assert.is(await balance(h.vm, EWOQ.address), GENESIS_AMOUNT - 700n);
  assert.is((await h.vm.utxosById([utxoId(exported)]))[0], undefined, 'an exported output is not a local UTXO');
});

test('export: only the native asset, and only what the inputs hold', async () => {
  const h = await startVM();
  await rejectsWith(h.vm.issueTx(exportTx([{ utxo: GOLD_UTXO, keys: [EWOQ] }], [], [out(GOLD, 1000n, [P_ACCOUNT])])), 'InvalidTx', /asset ID must be AVA in the atomic tx/);
  await rejectsWith(h.vm.issueTx(exportTx([{ utxo: AVA_UTXO, keys: [EWOQ] }], [], [out(AVA, GENESIS_AMOUNT + 1n, [P_ACCOUNT])])), 'InvalidTx', /insufficient funds/);
});

test('accepting is atomic: a failed batch leaves the block, the UTXOs and shared memory as they were', async () => {
  const root = new FlakyStore();
  const h = await startVM({ root });
  const atomic = await exportFromPlatform(h, ALICE.address, 5000n);
  await h.vm.issueTx(importTx([{ utxo: atomic, keys: [ALICE] }], [out(AVA, 5000n, [ALICE.address])]));
  const tx = exportTx([{ utxo: AVA_UTXO, keys: [EWOQ] }], [], [out(AVA, 700n, [P_ACCOUNT])]);
  await h.vm.issueTx(tx);
  const block = await h.vm.buildBlock();
  await block.verify();
  await h.vm.setPreference(block.id);
  const genesis = await h.vm.lastAccepted();
  root.failNextWrite = true;
  await rejection(block.accept());
  assert.ok((await h.vm.lastAccepted()).equals(genesis));
  assert.is(await balance(h.vm, EWOQ.address), GENESIS_AMOUNT);
  assert.is((await h.vm.atomicUtxos([ALICE.address])).length, 1);
  assert.is(await platformInbox(h, { txId: idOf(tx), outputIndex: 0, assetId: AVA, out: transfer(700n, [P_ACCOUNT]) }), undefined);
  assert.is(await h.vm.txStatus(idOf(tx)), 'Processing');
  await block.accept();
  assert.ok((await h.vm.lastAccepted()).equals(block.id));
  assert.is((await h.vm.atomicUtxos([ALICE.address])).length, 0);
  assert.ok(await platformInbox(h, { txId: idOf(tx), outputIndex: 0, assetId: AVA, out: transfer(700n, [P_ACCOUNT]) }));
  assert.is(await balance(h.vm, ALICE.address), 5000n);
});

/** A memory store whose next batch write can be made to fail. */
class FlakyStore extends MemoryStore {
  failNextWrite = false;
  override batch(): WriteBatch {
    const inner = super.batch();
    const outer: WriteBatch = {
      put: (k, v) => (inner.put(k, v), outer),
      delete: (k) => (inner.delete(k), outer),
      get length() {
        return inner.length;
      },
      write: async () => {
        if (this.failNextWrite) {
          this.failNextWrite = false;
          throw new TypeError('disk full');
        }
        await inner.write();
      },
    };
    return outer;
  }
}

test.run();
