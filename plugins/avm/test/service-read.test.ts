import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Id, cb58Encode } from '@cornice/sdk';
import { utxoId } from '../src/codec.js';
import { MAX_BALANCES, MAX_BALANCE_UTXO_IDS } from '../src/service.js';
import { CHAIN_ID, EWOQ, EWOQ_ADDRESS, GOLD, NATIVE, id, keyOf, mint, rejection, transfer, served } from './fake-backend.js';

const U64_MAX = (1n << 64n) - 1n;

test('getBalance: transfer outputs of the asset the address appears in (multisig and locked too), with their UTXO IDs', served(async (h) => {
  const other = keyOf('other').address;
  const b = h.backend;
  const u1 = b.addUtxo('t1', 0, NATIVE.assetId, transfer(100n, [EWOQ.address]));
  const u2 = b.addUtxo('t2', 3, NATIVE.assetId, transfer(20n, [EWOQ.address, other], 2));
  const u3 = b.addUtxo('t3', 1, NATIVE.assetId, transfer(5n, [EWOQ.address], 1, 1n << 40n));
  b.addUtxo('t4', 0, GOLD.assetId, transfer(7n, [EWOQ.address]));
  b.addUtxo('t5', 0, NATIVE.assetId, transfer(1000n, [other]));
  b.addUtxo('t6', 0, NATIVE.assetId, mint([EWOQ.address], 1));
  const expected = [u1, u2, u3].sort((x, y) => utxoId(x).compare(utxoId(y)));
  const reply = await h.avm.getBalance({ address: EWOQ_ADDRESS, assetID: NATIVE.assetId.toString() });
  assert.equal(reply, {
    balance: '125',
    utxoIDs: expected.map((u) => ({ txID: u.txId.toString(), outputIndex: u.outputIndex })),
  });
  // The native asset answers to its alias, its symbol and NATIVE (the backend resolves them).
  for (const alias of ['AVA', 'NATIVE']) assert.is((await h.avm.getBalance({ address: EWOQ_ADDRESS, assetID: alias })).balance, '125');
  assert.equal(await h.avm.getBalance({ address: EWOQ_ADDRESS, assetID: GOLD.assetId.toString() }), {
    balance: '7',
    utxoIDs: [{ txID: id('t4').toString(), outputIndex: 0 }],
  });
}));

test('getBalance: an address without UTXOs, or an ID of no known asset: 0 and []; an unknown alias: asset not found', served(async (h) => {
  assert.equal(await h.avm.getBalance({ address: EWOQ_ADDRESS, assetID: 'AVA' }), { balance: '0', utxoIDs: [] });
  assert.equal(await h.avm.getBalance({ address: EWOQ_ADDRESS, assetID: id('nothing').toString() }), { balance: '0', utxoIDs: [] });
  const e = await rejection(h.avm.getBalance({ address: EWOQ_ADDRESS, assetID: 'SILVER' }));
  assert.equal([e.rpcCode, e.message], [-32000, "asset 'SILVER' not found"]);
}));

test('balances above 2^64-1 are shown as 2^64-1 (a u64), never wrapped', served(async (h) => {
  h.backend.addUtxo('big1', 0, GOLD.assetId, transfer(U64_MAX, [EWOQ.address]));
  h.backend.addUtxo('big2', 0, GOLD.assetId, transfer(U64_MAX, [EWOQ.address]));
  assert.is((await h.avm.getBalance({ address: EWOQ_ADDRESS, assetID: GOLD.assetId.toString() })).balance, U64_MAX.toString());
  assert.equal((await h.avm.getAllBalances({ address: EWOQ_ADDRESS })).balances, [{ asset: GOLD.assetId.toString(), balance: U64_MAX.toString() }]);
}));

test('getAllBalances: every asset held, by asset ID; the alias where the asset has one', served(async (h) => {
  const b = h.backend;
  const stray = id('asset of no description');
  b.addUtxo('a', 0, NATIVE.assetId, transfer(3n, [EWOQ.address]));
  b.addUtxo('b', 0, NATIVE.assetId, transfer(4n, [EWOQ.address, keyOf('x').address], 2));
  b.addUtxo('c', 0, GOLD.assetId, transfer(9n, [EWOQ.address]));
  b.addUtxo('d', 0, stray, transfer(1n, [EWOQ.address]));
  b.addUtxo('e', 0, GOLD.assetId, mint([EWOQ.address], 1));
  const expected = [
    { id: NATIVE.assetId, entry: { asset: 'AVA', balance: '7' } },
    { id: GOLD.assetId, entry: { asset: GOLD.assetId.toString(), balance: '9' } },
    { id: stray, entry: { asset: stray.toString(), balance: '1' } },
  ].sort((x, y) => x.id.compare(y.id));
  assert.equal(await h.avm.getAllBalances({ address: EWOQ_ADDRESS }), { balances: expected.map((e) => e.entry) });
  assert.equal(await h.avm.getAllBalances({ address: `X-${keyOf('nobody').address}` }), { balances: [] });
}));

test('getBalance reads only the asked asset: 10,241 UTXOs of other assets change nothing; past MAX_BALANCE_UTXO_IDS of it, the largest are listed and the balance counts all', served(async (h) => {
  const b = h.backend;
  for (let i = 0; i <= 10_240; i++) b.utxoList.push({ txId: id(`junk ${i % 10}`), outputIndex: i, assetId: id(`junk asset ${i % 10}`), out: transfer(1n, [EWOQ.address]) });
  const gold = Array.from({ length: MAX_BALANCE_UTXO_IDS + 6 }, (_, i) => b.addUtxo('gold', i, GOLD.assetId, transfer(BigInt(i + 1), [EWOQ.address])));
  const reply = await h.avm.getBalance({ address: EWOQ_ADDRESS, assetID: GOLD.assetId.toString() });
  const n = BigInt(gold.length);
  assert.is(reply.balance, ((n * (n + 1n)) / 2n).toString());
  const largest = gold.slice(6).sort((x, y) => utxoId(x).compare(utxoId(y)));
  assert.equal(reply.utxoIDs, largest.map((u) => ({ txID: u.txId.toString(), outputIndex: u.outputIndex })));
  assert.is(b.byAmountReads.length, MAX_BALANCE_UTXO_IDS);
  assert.ok(b.byAmountReads.every((u) => u.assetId.equals(GOLD.assetId)));
  assert.equal(await h.avm.getBalance({ address: EWOQ_ADDRESS, assetID: 'AVA' }), { balance: '0', utxoIDs: [] });
}));

test(`getAllBalances lists at most MAX_BALANCES assets by asset ID, and the native asset whenever held`, served(async (h) => {
  const b = h.backend;
  for (let i = 0; i < MAX_BALANCES + 10; i++) b.addUtxo(`junk ${i}`, 0, id(`junk asset ${i}`), transfer(1n, [EWOQ.address]));
  b.addUtxo('ava', 0, NATIVE.assetId, transfer(5n, [EWOQ.address]));
  const { balances } = await h.avm.getAllBalances({ address: EWOQ_ADDRESS });
  const native = balances.filter((x) => x.asset === 'AVA');
  assert.equal(native, [{ asset: 'AVA', balance: '5' }]);
  assert.ok(balances.length === MAX_BALANCES || balances.length === MAX_BALANCES + 1, String(balances.length));
}));

test('getTxStatus: the backend status; Unknown is a status; a missing or nil txID: -32602 nil transaction ID', served(async (h) => {
  const known = id('known tx');
  h.backend.statuses.set(known.key, 'Processing');
  assert.equal(await h.avm.getTxStatus({ txID: known.toString() }), { status: 'Processing' });
  assert.equal(await h.avm.getTxStatus({ txID: id('never seen').toString() }), { status: 'Unknown' });
  for (const params of [{}, { txID: Id.empty.toString() }, { txID: null }]) {
    const e = await rejection(h.avm.getTxStatus(params as never));
    assert.equal([e.rpcCode, e.message], [-32602, 'txID: nil transaction ID']);
  }
}));

test('getTx: the signed bytes in cb58; unknown: transaction is unknown; nil: nil transaction ID', served(async (h) => {
  const known = id('known tx');
  const bytes = Uint8Array.of(0, 0, 0, 0, 1, 2, 3);
  h.backend.txBytes.set(known.key, bytes);
  assert.equal(await h.avm.getTx({ txID: known.toString() }), { tx: cb58Encode(bytes) });
  const e = await rejection(h.avm.getTx({ txID: id('never seen').toString() }));
  assert.equal([e.rpcCode, e.message], [-32000, 'transaction is unknown']);
  const nil = await rejection(h.avm.getTx({}));
  assert.equal([nil.rpcCode, nil.message], [-32602, 'txID: nil transaction ID']);
}));

test('getAssetDescription: by ID, alias, symbol of the native asset or NATIVE; denomination as a string; unknown asset ID', served(async (h) => {
  const ava = { assetID: NATIVE.assetId.toString(), name: 'AVA', symbol: 'AVA', denomination: '9' };
  for (const assetID of [NATIVE.assetId.toString(), 'AVA', 'NATIVE']) assert.equal(await h.avm.getAssetDescription({ assetID }), ava);
  assert.equal(await h.avm.getAssetDescription({ assetID: GOLD.assetId.toString() }), {
    assetID: GOLD.assetId.toString(),
    name: 'Gold',
    symbol: 'GLD',
    denomination: '2',
  });
  for (const assetID of ['GLD', id('nothing').toString(), 'x']) {
    const e = await rejection(h.avm.getAssetDescription({ assetID }));
    assert.equal([e.rpcCode, e.message], [-32000, 'unknown asset ID'], assetID);
  }
}));

test('addresses answer to every alias of the chain and its ID; other chains: wrong blockchain ID naming the field', served(async (h) => {
  h.backend.addUtxo('a', 0, NATIVE.assetId, transfer(3n, [EWOQ.address]));
  const cb58 = EWOQ.address.toString();
  for (const address of [`X-${cb58}`, `avm-${cb58}`, `${CHAIN_ID}-${cb58}`]) {
    assert.is((await h.avm.getBalance({ address, assetID: 'AVA' })).balance, '3', address);
  }
  const cases: Array<[string, string]> = [
    [`P-${cb58}`, 'address: wrong blockchain ID'],
    [`${id('other chain')}-${cb58}`, 'address: wrong blockchain ID'],
    [cb58, 'address: invalid address'],
    [`X-${cb58.slice(0, -2)}`, 'address: invalid input checksum'],
  ];
  for (const [address, message] of cases) {
    const e = await rejection(h.avm.getAllBalances({ address }));
    assert.equal([e.rpcCode, e.message], [-32602, message], address);
  }
  // A chain without aliases writes (and reads) <chainID>-…
  h.backend.aliases = [];
  const bob = await h.user('bob', [EWOQ]);
  assert.equal(await h.avm.listAddresses(bob), { addresses: [`${CHAIN_ID}-${cb58}`] });
}));

test.run();
