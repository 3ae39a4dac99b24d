// The AssetVM on a real one-node chain (Snowman engine, chain manager): issued txs end Accepted, a
// conflicting pair ends Accepted + Rejected, and the engine is not kept busy when nothing is buildable.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { postRpc, runVM } from '@cornice/core/testing';
import { PrivateKey, type Id } from '@cornice/sdk';
import { vmFactory, type AssetVM, type Tx } from '../src/index.js';
import { AVA, AVA_UTXO, EWOQ, GENESIS, GENESIS_AMOUNT, baseTx, out } from './vm-helpers.js';

const ALICE = PrivateKey.fromBytes(new Uint8Array(32).fill(0x51));
const BOB = PrivateKey.fromBytes(new Uint8Array(32).fill(0x52));

/** Resolves once every tx has its final status (or fails after `ms`). */
async function settled(vm: AssetVM, ids: Id[], ms = 10_000): Promise<string[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const statuses = await Promise.all(ids.map((id) => vm.txStatus(id)));
    if (statuses.every((s) => s === 'Accepted' || s === 'Rejected')) return statuses;
    if (Date.now() > deadline) throw new TypeError(`txs still ${statuses.join(', ')} after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

test('on a real chain: a chain of transfers is accepted, a conflicting pair ends Accepted and Rejected', async () => {
  const h = await runVM(vmFactory, { genesis: GENESIS, aliases: ['X'] });
  try {
    const vm = h.vm as AssetVM;
    const chain = { chainId: h.chainId };
    // 20 transfers, each spending the previous one's change.
    const ids: Id[] = [];
    let from = AVA_UTXO;
    let left = GENESIS_AMOUNT;
    for (let i = 0; i < 20; i++) {
      const tx: Tx = baseTx([{ utxo: from, keys: [EWOQ] }], [out(AVA, 1n, [ALICE.address]), out(AVA, left - 1n, [EWOQ.address])], chain);
      ids.push(await vm.issueTx(tx));
      left -= 1n;
      const changeIndex = tx.unsigned.outs.findIndex((o) => o.out.kind === 'transfer' && o.out.amount === left);
      from = { txId: ids[i]!, outputIndex: changeIndex, assetId: AVA, out: tx.unsigned.outs[changeIndex]!.out };
    }
    assert.ok((await settled(vm, ids)).every((s) => s === 'Accepted'));
    const spent = { ...from };
    // Issued together, so both are in flight: issued one after the other, the first may be accepted
    // before the second is checked, which is then refused (its input is spent).
    const [first, second] = await Promise.all([
      vm.issueTx(baseTx([{ utxo: spent, keys: [EWOQ] }], [out(AVA, 5n, [BOB.address])], chain)),
      vm.issueTx(baseTx([{ utxo: spent, keys: [EWOQ] }], [out(AVA, 6n, [BOB.address])], chain)),
    ]);
    const [a, b] = await settled(vm, [first, second]);
    assert.equal([a, b].sort(), ['Accepted', 'Rejected']);
    // Nothing left to build: the engine sits in waitForEvent (no blocks, no failed builds).
    const height = h.accepted.length;
    await new Promise((r) => setTimeout(r, 200));
    assert.is(h.accepted.length, height);
    assert.is(h.chain.engine.processing, 0);
  } finally {
    await h.stop();
  }
});

test('over HTTP: importKey(ewoq), send, getTxStatus Accepted, balances moved; a malformed tx is -32000 naming it', async () => {
  const h = await runVM(vmFactory, { genesis: GENESIS, aliases: ['X'] });
  try {
    const user = { username: 'avm-user', password: 'Corn1ce-avm-Pass!' };
    assert.equal((await postRpc(`${h.node.url}/ext/keystore`, 'keystore.createUser', user)).result, { success: true });
    const imported = await h.call('avm.importKey', { ...user, privateKey: EWOQ.toCb58() });
    assert.is(imported.result?.address, `X-${EWOQ.address}`);
    const to = `X-${ALICE.address}`;
    const sent = await h.call('avm.send', { ...user, amount: '12345', assetID: 'AVA', to });
    assert.ok(sent.result?.txID, JSON.stringify(sent));
    const txID = sent.result.txID as string;
    for (let i = 0; i < 500; i++) {
      const { result } = await h.call('avm.getTxStatus', { txID });
      if (result?.status === 'Accepted') break;
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.is((await h.call('avm.getTxStatus', { txID })).result?.status, 'Accepted');
    assert.is((await h.call('avm.getBalance', { address: to, assetID: 'AVA' })).result?.balance, '12345');
    assert.is((await h.call('avm.getBalance', { address: `X-${EWOQ.address}`, assetID: AVA.toString() })).result?.balance, String(GENESIS_AMOUNT - 12345n));
    const bad = await h.call('avm.issueTx', { tx: 'ewoqjP7PxY4yr3iLTpLisriqt94hdyDFNgchSxGGztUrTXtNN' });
    assert.is(bad.error?.code, -32000, JSON.stringify(bad));
  } finally {
    await h.stop();
  }
});

test.run();
