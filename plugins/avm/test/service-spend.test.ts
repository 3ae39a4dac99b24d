import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cb58Decode, cb58Encode } from '@cornice/sdk';
import { decodeUtxo, encodeTx, encodeUtxo, sortTransferableOutputs, txIdOf, utxoId } from '../src/codec.js';
import { AvmError } from '../src/errors.js';
import type { TransferableOutput, Utxo } from '../src/model.js';
import { MAX_SPEND_INPUTS, MAX_SPEND_SCAN, MAX_UTXO_PAGE, MAX_UTXOS_READ } from '../src/service.js';
import { EWOQ, GOLD, NATIVE, NOW_SECONDS, id, keyOf, mint, rejection, transfer, served, type Harness } from './fake-backend.js';
import { plain } from './helpers.js';

const K1 = keyOf('k1');
const K2 = keyOf('k2');
const OTHER = keyOf('other');
const x = (k: { address: { toString(): string } }) => `X-${k.address}`;
const byId = (a: Utxo, b: Utxo) => utxoId(a).compare(utxoId(b));

/** bob holds K1 (first: change) and K2; GOLD UTXOs of every kind the spend must tell apart. */
async function walletSetup(h: Harness) {
  const bob = await h.user('bob', [K1, K2]);
  const b = h.backend;
  const spendable = [
    b.addUtxo('a', 0, GOLD.assetId, transfer(30n, [K2.address])),
    b.addUtxo('b', 1, GOLD.assetId, transfer(50n, [K1.address])),
    b.addUtxo('e', 0, GOLD.assetId, transfer(10n, [K1.address, K2.address], 2)), // bob holds both keys
    b.addUtxo('h', 2, GOLD.assetId, transfer(15n, [K1.address], 1, NOW_SECONDS)), // unlocked exactly now
  ].sort(byId);
  const unspendable = [
    b.addUtxo('c', 0, GOLD.assetId, transfer(40n, [K1.address], 1, NOW_SECONDS + 1n)), // locked
    b.addUtxo('d', 0, GOLD.assetId, transfer(25n, [K1.address, OTHER.address], 2)), // needs OTHER too
    b.addUtxo('f', 0, NATIVE.assetId, transfer(100n, [K1.address])), // another asset
    b.addUtxo('g', 0, GOLD.assetId, mint([K1.address], 1)), // a mint right, not funds
  ];
  return { bob, spendable, unspendable };
}

/** What the spend takes for `amount`: spendable UTXOs, largest first (equal ones in UTXO ID order), until covered. */
function greedy(utxos: Utxo[], amount: bigint): Utxo[] {
  const taken: Utxo[] = [];
  let sum = 0n;
  const largestFirst = [...utxos].sort((a, b) => (amountOf(a) === amountOf(b) ? byId(a, b) : amountOf(a) > amountOf(b) ? -1 : 1));
  for (const u of largestFirst) {
    if (sum >= amount) break;
    taken.push(u);
    sum += (u.out as { amount: bigint }).amount;
  }
  return taken;
}

const amountOf = (u: Utxo) => (u.out as { amount: bigint }).amount;

test('send: the largest UTXOs of the asset bob can spend now, until covered; change to his first address; signed', served(async (h) => {
  const { bob, spendable } = await walletSetup(h);
  for (const amount of [1n, 50n, 51n, 80n, 81n, 105n]) {
    h.backend.issued.length = 0;
    const { txID } = await h.avm.send({ ...bob, amount: amount.toString(), assetID: GOLD.assetId.toString(), to: x(OTHER) });
    const [tx] = h.backend.issued;
    assert.is(txID, txIdOf(encodeTx(tx!)).toString());
    const u = tx!.unsigned;
    assert.is(u.kind, 'base');
    const taken = greedy(spendable, amount);
    const spent = taken.reduce((s, t) => s + amountOf(t), 0n);
    // Inputs: exactly the greedy choice, sorted by (txID, index), each with bob's signing indices.
    const expectedIns = taken
      .map((t) => ({ txId: t.txId, outputIndex: t.outputIndex, assetId: GOLD.assetId, input: { amount: amountOf(t), sigIndices: t.out.threshold === 2 ? [0, 1] : [0] } }))
      .sort((a, b) => a.txId.compare(b.txId) || a.outputIndex - b.outputIndex);
    assert.equal(plain(u.ins), plain(expectedIns), `amount ${amount}`);
    // Outputs: amount to `to`, change (if any) to K1, unlocked, threshold 1, sorted.
    const outs: TransferableOutput[] = [{ assetId: GOLD.assetId, out: transfer(amount, [OTHER.address]) }];
    if (spent > amount) outs.push({ assetId: GOLD.assetId, out: transfer(spent - amount, [K1.address]) });
    assert.equal(plain(u.outs), plain(sortTransferableOutputs(outs)));
    // Credentials were checked by the fake (one per input, recovering to the owners).
    assert.is(tx!.creds.length, taken.length);
  }
}));

test('send: from and changeAddr (fields later API versions define): only the from addresses\' UTXOs and keys; change where asked', served(async (h) => {
  const { bob } = await walletSetup(h);
  const gold = GOLD.assetId.toString();
  const out = (amount: bigint, k: typeof K1): TransferableOutput => ({ assetId: GOLD.assetId, out: transfer(amount, [k.address]) });
  /** The inputs' amounts (sorted) and the outputs of the tx a send with `params` issues. */
  const sent = async (params: Record<string, unknown>) => {
    h.backend.issued.length = 0;
    const r = await h.call('send', { ...bob, assetID: gold, to: x(OTHER), ...params });
    assert.ok(r.result, JSON.stringify(r.error));
    const u = h.backend.issued[0]!.unsigned;
    return plain({ ins: u.ins.map((i) => i.input.amount).sort(), outs: u.outs });
  };
  const expect = (ins: bigint[], outs: TransferableOutput[]) => plain({ ins: ins.sort(), outs: sortTransferableOutputs(outs) });
  // From K2 alone: its 30 (not the 10 that needs K1 too, nor K1's 50); change to bob's first address (K1), as without from.
  assert.equal(await sent({ amount: '20', from: [x(K2)] }), expect([30n], [out(20n, OTHER), out(10n, K1)]));
  const short = await rejection(h.avm.send({ ...bob, amount: '31', assetID: gold, to: x(OTHER), from: [x(K2)] }));
  assert.equal([short.rpcCode, short.message], [-32000, 'insufficient funds']);
  // From K1 (the name matched case-insensitively) with change to K2.
  assert.equal(await sent({ amount: '45', FROM: [x(K1)], changeAddr: x(K2) }), expect([50n], [out(45n, OTHER), out(5n, K2)]));
  // from [] or null, changeAddr null: as without them.
  const plainSend = await sent({ amount: '81' });
  assert.equal(await sent({ amount: '81', from: [] }), plainSend);
  assert.equal(await sent({ amount: '81', from: null, changeAddr: null }), plainSend);
  // An address that is not bob's, or not of this chain: -32602 naming the item of from.
  h.backend.issued.length = 0;
  const notHis = await rejection(h.avm.send({ ...bob, amount: '1', assetID: gold, to: x(OTHER), from: [x(K1), x(OTHER)] }));
  assert.equal([notHis.rpcCode, notHis.message], [-32602, `from[1]: ${x(OTHER)} is not an address of user 'bob'`]);
  const otherChain = await rejection(h.avm.send({ ...bob, amount: '1', assetID: gold, to: x(OTHER), from: [`P-${K1.address}`] }));
  assert.is(otherChain.rpcCode, -32602);
  assert.match(otherChain.message, /^from\[0\]: /);
  const badChange = await rejection(h.avm.send({ ...bob, amount: '1', assetID: gold, to: x(OTHER), changeAddr: 'nope' }));
  assert.is(badChange.rpcCode, -32602);
  assert.match(badChange.message, /^changeAddr: /);
  assert.equal(h.backend.issued, []);
  // exportNATIVE takes them too: K2 holds no native token; K1's 100 with change to K2.
  const none = await rejection(h.avm.exportNATIVE({ ...bob, to: OTHER.address.toString(), amount: 1, from: [x(K2)] }));
  assert.equal([none.rpcCode, none.message], [-32000, 'insufficient funds']);
  await h.avm.exportNATIVE({ ...bob, to: OTHER.address.toString(), amount: 60, from: [x(K1)], changeAddr: x(K2) });
  assert.equal(plain(h.backend.issued[0]!.unsigned.outs), plain([{ assetId: NATIVE.assetId, out: transfer(40n, [K2.address]) }]));
}));

test('send: locked, multisig-without-enough-keys, other-asset and mint UTXOs never count: insufficient funds', served(async (h) => {
  const { bob, spendable } = await walletSetup(h);
  const total = spendable.reduce((s, u) => s + amountOf(u), 0n);
  assert.is((await h.avm.send({ ...bob, amount: total.toString(), assetID: GOLD.assetId.toString(), to: x(OTHER) })).txID.length > 0, true);
  const e = await rejection(h.avm.send({ ...bob, amount: (total + 1n).toString(), assetID: GOLD.assetId.toString(), to: x(OTHER) }));
  assert.equal([e.rpcCode, e.message], [-32000, 'insufficient funds']);
  // A user without keys has nothing.
  const carol = await h.user('carol');
  const none = await rejection(h.avm.send({ ...carol, amount: 1, assetID: GOLD.assetId.toString(), to: x(OTHER) }));
  assert.is(none.message, 'insufficient funds');
}));

test('send: the native asset by NATIVE, its symbol, or its ID; the whole UTXO spent leaves no change', served(async (h) => {
  const bob = await h.user('bob', [EWOQ]);
  h.backend.addUtxo('n', 0, NATIVE.assetId, transfer(1000n, [EWOQ.address]));
  for (const assetID of ['NATIVE', 'AVA', NATIVE.assetId.toString()]) {
    h.backend.issued.length = 0;
    await h.avm.send({ ...bob, amount: 1000, assetID, to: x(OTHER) });
    assert.equal(plain(h.backend.issued[0]!.unsigned.outs), plain([{ assetId: NATIVE.assetId, out: transfer(1000n, [OTHER.address]) }]), assetID);
  }
}));

test('send: bad inputs are refused before anything is signed', served(async (h) => {
  const { bob } = await walletSetup(h);
  const ok = { ...bob, amount: '5', assetID: GOLD.assetId.toString(), to: x(OTHER) };
  const cases: Array<[Record<string, unknown>, number, string]> = [
    [{ amount: 0 }, -32602, 'amount: amount must be positive'],
    [{ amount: '-1' }, -32602, 'amount: expected a non-negative decimal integer but got "-1"'],
    [{ amount: '18446744073709551616' }, -32602, 'amount: value overflowed uint64'],
    [{ assetID: 'SILVER' }, -32000, "asset 'SILVER' not found"],
    [{ assetID: '' }, -32602, 'assetID: must not be empty'],
    [{ to: `P-${OTHER.address}` }, -32602, 'to: wrong blockchain ID'],
    [{ to: `${OTHER.address}` }, -32602, 'to: invalid address'],
    [{ to: 'X-abc' }, -32602, 'to: input string is smaller than the checksum size'],
    [{ password: 'Wrong-password-1' }, -32000, 'problem retrieving user: incorrect password for user "bob"'],
    [{ username: 'nobody' }, -32000, 'problem retrieving user: not found'],
  ];
  for (const [change, code, message] of cases) {
    const e = await rejection(h.avm.send({ ...ok, ...change } as never));
    assert.equal([e.rpcCode, e.message], [code, message], JSON.stringify(change));
  }
  assert.equal(h.backend.issued, []);
}));

test(`send: an amount that needs more than ${MAX_SPEND_INPUTS} UTXOs is refused with a clear text`, served(async (h) => {
  const bob = await h.user('bob', [K1]);
  for (let i = 0; i <= MAX_SPEND_INPUTS; i++) h.backend.addUtxo(`dust ${i}`, 0, GOLD.assetId, transfer(1n, [K1.address]));
  await h.avm.send({ ...bob, amount: MAX_SPEND_INPUTS, assetID: GOLD.assetId.toString(), to: x(OTHER) });
  assert.is(h.backend.issued[0]!.unsigned.ins.length, MAX_SPEND_INPUTS);
  const e = await rejection(h.avm.send({ ...bob, amount: MAX_SPEND_INPUTS + 1, assetID: GOLD.assetId.toString(), to: x(OTHER) }));
  assert.equal([e.rpcCode, e.message.startsWith(`the amount needs more than ${MAX_SPEND_INPUTS} UTXOs`)], [-32000, true]);
}));

test('send: dust and other assets sent to bob never stop him spending what he holds: the largest UTXOs, only of the asset, few read', served(async (h) => {
  const bob = await h.user('bob', [K1, K2]);
  const b = h.backend;
  // What anyone can send him for free or for next to nothing: 10,240 UTXOs of other assets, 5,000 native dust UTXOs.
  for (let i = 0; i < 10_240; i++) b.utxoList.push({ txId: id(`junk ${i % 10}`), outputIndex: i, assetId: id(`junk asset ${i % 10}`), out: transfer(1n, [K1.address]) });
  for (let i = 0; i < 5_000; i++) b.utxoList.push({ txId: id('dust'), outputIndex: i, assetId: NATIVE.assetId, out: transfer(1n, [i % 2 ? K1.address : K2.address]) });
  const big = b.addUtxo('savings', 0, NATIVE.assetId, transfer(1_000_000n, [K2.address]));
  const second = b.addUtxo('pocket', 3, NATIVE.assetId, transfer(5_000n, [K1.address]));
  await h.avm.send({ ...bob, amount: 1_000_000, assetID: 'AVA', to: x(OTHER) });
  assert.equal(plain(h.backend.issued[0]!.unsigned.ins.map((i) => i.txId)), plain([big.txId]));
  await h.avm.exportNATIVE({ ...bob, to: OTHER.address.toString(), amount: 1_004_000 });
  assert.equal(plain(h.backend.issued[1]!.unsigned.ins.map((i) => i.txId).sort((a, c) => a.compare(c))), plain([big.txId, second.txId].sort((a, c) => a.compare(c))));
  // Only UTXOs of the asset were read, and only as many as the spends needed.
  assert.ok(b.byAmountReads.every((u) => u.assetId.equals(NATIVE.assetId)));
  assert.is(b.byAmountReads.length, 1 + 2);
  // 64 inputs at most: the 62 largest dust UTXOs on top of the two big ones do not cover this.
  const e = await rejection(h.avm.send({ ...bob, amount: 1_005_000 + 63, assetID: 'AVA', to: x(OTHER) }));
  assert.equal([e.rpcCode, e.message.startsWith(`the amount needs more than ${MAX_SPEND_INPUTS} UTXOs`)], [-32000, true]);
  assert.ok(b.byAmountReads.length <= 3 + MAX_SPEND_INPUTS + 1);
  // Up to it, dust makes up the rest.
  await h.avm.send({ ...bob, amount: 1_005_000 + 62, assetID: 'AVA', to: x(OTHER) });
  assert.is(h.backend.issued[2]!.unsigned.ins.length, MAX_SPEND_INPUTS);
}));

test(`send: past the ${MAX_SPEND_SCAN} largest UTXOs it does not look; UTXOs bob cannot spend among them are skipped, with a clear error when they hide the rest`, served(async (h) => {
  const bob = await h.user('bob', [K1]);
  const b = h.backend;
  for (let i = 0; i < MAX_SPEND_SCAN; i++) b.utxoList.push({ txId: id('decoy'), outputIndex: i, assetId: GOLD.assetId, out: transfer(1_000n, [K1.address, OTHER.address], 2) });
  b.addUtxo('mine', 0, GOLD.assetId, transfer(10n, [K1.address]));
  const e = await rejection(h.avm.send({ ...bob, amount: 5, assetID: GOLD.assetId.toString(), to: x(OTHER) }));
  assert.equal([e.rpcCode, (e.data as { code?: string }).code], [-32000, 'Limit']);
  assert.match(e.message, new RegExp(`^the ${MAX_SPEND_SCAN} largest UTXOs of this asset`));
  assert.is(b.byAmountReads.length, MAX_SPEND_SCAN + 1);
  b.utxoList.splice(0, 10);
  await h.avm.send({ ...bob, amount: 5, assetID: GOLD.assetId.toString(), to: x(OTHER) });
  assert.equal(plain(b.issued[0]!.unsigned.ins.map((i) => i.txId)), plain([id('mine')]));
}));

test('send: the VM refusing the tx passes its error through (-32000)', served(async (h) => {
  const { bob } = await walletSetup(h);
  h.backend.issueError = new AvmError('InvalidTx', 'missing utxo');
  const e = await rejection(h.avm.send({ ...bob, amount: 1, assetID: GOLD.assetId.toString(), to: x(OTHER) }));
  assert.equal([e.rpcCode, e.message], [-32000, 'missing utxo']);
}));

test('exportNATIVE (and exportAVA): the exported output to the bare P-Chain account, change to the first key', served(async (h) => {
  const bob = await h.user('bob', [K1, K2]);
  h.backend.addUtxo('n1', 0, NATIVE.assetId, transfer(70n, [K2.address]));
  h.backend.addUtxo('n2', 0, GOLD.assetId, transfer(700n, [K2.address]));
  for (const method of ['exportNATIVE', 'exportAVA']) {
    h.backend.issued.length = 0;
    const r = await h.call(method, { ...bob, to: OTHER.address.toString(), amount: '30' });
    assert.ok(r.result, JSON.stringify(r.error));
    const u = h.backend.issued[0]!.unsigned;
    assert.is(u.kind, 'export');
    if (u.kind !== 'export') return;
    assert.equal(plain(u.exportedOuts), plain([{ assetId: NATIVE.assetId, out: transfer(30n, [OTHER.address]) }]));
    assert.equal(plain(u.outs), plain([{ assetId: NATIVE.assetId, out: transfer(40n, [K1.address]) }]));
    assert.equal(plain(u.ins.map((i) => i.txId)), plain([id('n1')]));
  }
  const e = await rejection(h.avm.exportNATIVE({ ...bob, to: OTHER.address.toString(), amount: 71 }));
  assert.equal([e.rpcCode, e.message], [-32000, 'insufficient funds']);
  const zero = await rejection(h.avm.exportNATIVE({ ...bob, to: OTHER.address.toString(), amount: 0 }));
  assert.equal([zero.rpcCode, zero.message], [-32602, 'amount: amount must be positive']);
  // `to` is a bare account: the X- form is not one.
  const prefixed = await rejection(h.avm.exportNATIVE({ ...bob, to: x(OTHER), amount: 1 }));
  assert.is(prefixed.rpcCode, -32602);
  assert.match(prefixed.message, /^to: /);
}));

test('importNATIVE (and importAVA): sweeps every native UTXO exported to the user into one output to `to`', served(async (h) => {
  const bob = await h.user('bob', [K1, K2]);
  const atomic = (label: string, assetId = NATIVE.assetId, out = transfer(10n, [K1.address])): Utxo => ({ txId: id(label), outputIndex: 0, assetId, out });
  h.backend.atomicList = [
    atomic('p1', NATIVE.assetId, transfer(10n, [K1.address])),
    atomic('p2', NATIVE.assetId, transfer(20n, [K2.address])),
    atomic('p3', GOLD.assetId, transfer(5n, [K1.address])), // not the native asset
    atomic('p4', NATIVE.assetId, transfer(7n, [OTHER.address])), // not bob's
    atomic('p5', NATIVE.assetId, transfer(9n, [K1.address], 1, NOW_SECONDS + 60n)), // locked
  ];
  for (const method of ['importNATIVE', 'importAVA']) {
    h.backend.issued.length = 0;
    const r = await h.call(method, { ...bob, to: x(K2) });
    assert.ok(r.result, JSON.stringify(r.error));
    const u = h.backend.issued[0]!.unsigned;
    assert.is(u.kind, 'import');
    if (u.kind !== 'import') return;
    assert.equal(u.ins, []);
    assert.equal(plain(u.outs), plain([{ assetId: NATIVE.assetId, out: transfer(30n, [K2.address]) }]));
    assert.equal(plain(u.importedIns.map((i) => i.txId)), plain([id('p1'), id('p2')].sort((a, b) => a.compare(b))));
  }
  // `to` must be one of the user's addresses.
  const e = await rejection(h.avm.importNATIVE({ ...bob, to: x(OTHER) }));
  assert.equal([e.rpcCode, e.message], [-32000, `the user holds no key for to ${x(OTHER)}`]);
  const carol = await h.user('carol', [OTHER]);
  h.backend.atomicList = [];
  const none = await rejection(h.avm.importNATIVE({ ...carol, to: x(OTHER) }));
  assert.equal([none.rpcCode, none.message], [-32000, 'no spendable funds were found']);
}));

test('the native-token methods answer to the chain\'s own symbol only (export<symbol>/import<symbol>, and NATIVE)', served(async (h) => {
  const bob = await h.user('bob', [K1]);
  h.backend.addUtxo('n', 0, NATIVE.assetId, transfer(10n, [K1.address]));
  assert.ok((await h.call('exportXYZ', { ...bob, to: OTHER.address.toString(), amount: 1 })).result);
  assert.ok((await h.call('exportNATIVE', { ...bob, to: OTHER.address.toString(), amount: 1 })).result);
  const ava = await h.call('exportAVA', { ...bob, to: OTHER.address.toString(), amount: 1 });
  assert.is(ava.error?.code, -32601);
  assert.is(h.backend.issued.length, 2);
}, { nativeSymbol: 'XYZ' }));

test('native-token methods on a chain without the native asset: a clear -32000', served(async (h) => {
  h.backend.native = undefined;
  const bob = await h.user('bob', [K1]);
  const e = await rejection(h.avm.exportNATIVE({ ...bob, to: OTHER.address.toString(), amount: 1 }));
  assert.equal([e.rpcCode, e.message], [-32000, 'this chain has no native asset (AVA) to move to or from the P-Chain']);
  assert.is((await rejection(h.avm.importNATIVE({ ...bob, to: x(K1) }))).rpcCode, -32000);
}));

test('getUTXOs: cb58 UTXO bytes of every UTXO naming any of the addresses (mint and multisig too), in UTXO ID order; [] for none', served(async (h) => {
  const { spendable, unspendable } = await walletSetup(h);
  const other = h.backend.addUtxo('z', 0, GOLD.assetId, transfer(1n, [OTHER.address]));
  const { utxos } = await h.avm.getUTXOs({ addresses: [x(K1), x(K2), x(K1)] });
  const mine = [...spendable, ...unspendable].sort(byId);
  assert.equal(utxos, mine.map((u) => cb58Encode(encodeUtxo(u))));
  assert.equal(plain(decodeUtxo(cb58Decode(utxos[0]!))), plain(mine[0]));
  const others = [other, unspendable[1]!].sort(byId); // OTHER's own, and the 2-of-2 with K1
  assert.equal((await h.avm.getUTXOs({ addresses: [x(OTHER)] })).utxos, others.map((u) => cb58Encode(encodeUtxo(u))));
  assert.equal(await h.avm.getUTXOs({ addresses: [] }), { utxos: [] });
  assert.equal(await h.avm.getUTXOs({ addresses: [`X-${keyOf('nobody').address}`] }), { utxos: [] });
  const e = await rejection(h.avm.getUTXOs({ addresses: [x(K1), `P-${K2.address}`] }));
  assert.equal([e.rpcCode, e.message], [-32602, 'addresses[1]: wrong blockchain ID']);
}));

test('getUTXOs pages as avalanchego\'s: limit and startIndex in, numFetched and endIndex out; addresses in order, each one\'s UTXOs in UTXO ID order, each UTXO once', served(async (h) => {
  const b = h.backend;
  const [lo, hi] = [K1.address, K2.address].sort((a, c) => a.compare(c));
  for (let i = 0; i < 5; i++) b.addUtxo(`lo ${i}`, 0, GOLD.assetId, transfer(1n, [lo!]));
  for (let i = 0; i < 4; i++) b.addUtxo(`hi ${i}`, 0, NATIVE.assetId, transfer(1n, [hi!]));
  const ofAddress = (a: typeof lo) => b.utxoList.filter((u) => u.out.addresses.some((o) => o.equals(a!))).sort(byId);
  const expected = [...ofAddress(lo), ...ofAddress(hi)];
  const wire = (u: Utxo) => cb58Encode(encodeUtxo(u));
  const got: string[] = [];
  let startIndex: { address: string; utxo: string } | undefined;
  const pages: number[] = [];
  for (;;) {
    const page = await h.avm.getUTXOs({ addresses: [`X-${hi}`, `X-${lo}`], limit: 4, ...(startIndex ? { startIndex } : {}) });
    got.push(...page.utxos);
    pages.push(Number(page.numFetched));
    assert.is(page.numFetched, String(page.utxos.length));
    startIndex = page.endIndex!;
    if (page.utxos.length < 4) break;
  }
  assert.equal(got, expected.map(wire));
  assert.equal(pages, [4, 4, 1]);
  // The last page ends on the last UTXO read: the last of the last address.
  assert.equal(startIndex, { address: `X-${hi}`, utxo: utxoId(expected.at(-1)!).toString() });
  // A UTXO of several of the addresses comes once a page (across pages it may come again, as avalanchego's).
  const shared = b.addUtxo('shared', 0, GOLD.assetId, transfer(1n, [K1.address, K2.address]));
  const once = await h.avm.getUTXOs({ addresses: [`X-${hi}`, `X-${lo}`], limit: 20 });
  assert.equal(once.utxos.filter((u) => u === wire(shared)).length, 1);
  assert.is(once.numFetched, '10');
  // A limit of 0 or above the page size is the page size; a startIndex alone pages too.
  const whole = await h.avm.getUTXOs({ addresses: [`X-${lo}`], limit: 0 });
  assert.equal([whole.numFetched, h.backend.pageQueries.at(-1)!.limit], ['6', MAX_UTXO_PAGE]);
  b.utxoList.pop();
  await h.avm.getUTXOs({ addresses: [`X-${lo}`], limit: MAX_UTXO_PAGE + 1 });
  assert.is(h.backend.pageQueries.at(-1)!.limit, MAX_UTXO_PAGE);
  const rest = await h.avm.getUTXOs({ addresses: [`X-${lo}`, `X-${hi}`], startIndex: { address: `X-${hi}`, utxo: utxoId(ofAddress(hi)[1]!).toString() } });
  assert.equal(rest.utxos, ofAddress(hi).slice(2).map(wire));
  // Bad pagination params name the field; no address to page through is refused.
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ limit: -1 }, 'limit: expected a non-negative integer but got -1'],
    [{ startIndex: { address: `P-${lo}`, utxo: utxoId(shared).toString() } }, 'startIndex.address: wrong blockchain ID'],
    [{ startIndex: { address: `X-${lo}`, utxo: 'nope' } }, 'startIndex.utxo: '],
    [{ startIndex: { address: `X-${lo}` } }, 'startIndex.utxo: missing required field'],
    [{ addresses: [], limit: 1 }, 'addresses: no addresses provided'],
  ];
  for (const [change, message] of cases) {
    const e = await rejection(h.avm.getUTXOs({ addresses: [`X-${lo}`], ...change } as never));
    assert.equal([e.rpcCode, e.message.startsWith(message)], [-32602, true], `${JSON.stringify(change)}: ${e.message}`);
  }
}));

test(`getUTXOs without limit and startIndex: the reference's {utxos}; more than ${MAX_UTXOS_READ} is a clear error pointing at pagination, which reads them all`, served(async (h) => {
  for (let i = 0; i <= MAX_UTXOS_READ; i++) h.backend.utxoList.push({ txId: id('many'), outputIndex: i, assetId: GOLD.assetId, out: transfer(1n, [K1.address]) });
  const e = await rejection(h.avm.getUTXOs({ addresses: [x(K1)] }));
  assert.equal([e.rpcCode, e.message], [-32000, `these addresses own more than ${MAX_UTXOS_READ} UTXOs, more than one call reads; page through them with limit and startIndex`]);
  let n = 0;
  let startIndex: { address: string; utxo: string } | undefined;
  for (let pages = 0; pages < 20; pages++) {
    const page = await h.avm.getUTXOs({ addresses: [x(K1)], limit: MAX_UTXO_PAGE, ...(startIndex ? { startIndex } : {}) });
    n += page.utxos.length;
    startIndex = page.endIndex;
    if (page.utxos.length < MAX_UTXO_PAGE) break;
  }
  assert.is(n, MAX_UTXOS_READ + 1);
}));

test('issueTx: a signed tx is handed to the VM; its ID; malformed bytes get the codec text (-32000), bad cb58 -32602', served(async (h) => {
  const { bob } = await walletSetup(h);
  await h.avm.send({ ...bob, amount: 1, assetID: GOLD.assetId.toString(), to: x(OTHER) });
  const tx = h.backend.issued[0]!;
  const bytes = encodeTx(tx);
  h.backend.issued.length = 0;
  assert.equal(await h.avm.issueTx({ tx: cb58Encode(bytes) }), { txID: txIdOf(bytes).toString() });
  assert.equal(plain(h.backend.issued), plain([tx]));
  const trailing = await rejection(h.avm.issueTx({ tx: cb58Encode(Uint8Array.of(...bytes, 0)) }));
  assert.equal([trailing.rpcCode, trailing.message], [-32000, 'has 1 leftover bytes after unmarshalling']);
  const badCb58 = await rejection(h.avm.issueTx({ tx: 'not-cb58!' }));
  assert.equal(badCb58.rpcCode, -32602);
  assert.match(badCb58.message, /^tx: /);
  // What the VM says of a tx (here: the fake's credential check) passes through.
  const forged = { ...tx, creds: tx.creds.map((c) => ({ sigs: c.sigs.map(() => new Uint8Array(65).fill(1)) })) };
  const e = await rejection(h.avm.issueTx({ tx: cb58Encode(encodeTx(forged)) }));
  assert.is(e.rpcCode, -32000);
}));

test.run();
