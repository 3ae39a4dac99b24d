import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cb58Decode, cb58Encode, recoverAddress } from '@cornice/sdk';
import { decodeTx, encodeTx, sortAddresses, sortOutputs, txIdOf, unsignedBytes, utxoId } from '../src/codec.js';
import type { OperationTx, Utxo } from '../src/model.js';
import { GOLD, PASSWORD, id, keyOf, mint, rejection, transfer, served, type Harness } from './fake-backend.js';
import { plain } from './helpers.js';

const A = keyOf('minter A');
const B = keyOf('minter B');
const C = keyOf('minter C');
const D = keyOf('holder D');
const x = (k: { address: { toString(): string } }) => `X-${k.address}`;

test('createFixedCapAsset: issues a CreateAssetTx (no inputs, no credentials) with one output per holder, sorted; its ID is the asset ID', served(async (h) => {
  // username and password are accepted and ignored, as the reference's: no such user is needed.
  const r = await h.avm.createFixedCapAsset({
    name: 'Test Coin',
    symbol: 'TST',
    denomination: 2,
    initialHolders: [
      { address: x(A), amount: 100 },
      { address: x(B), amount: '18446744073709551615' },
      { address: x(A), amount: 100 }, // the same holder twice: two UTXOs
    ],
    username: 'nobody',
    password: 'whatever',
  });
  const [tx] = h.backend.issued;
  assert.is(r.assetID, txIdOf(encodeTx(tx!)).toString());
  assert.equal(tx!.creds, []);
  const u = tx!.unsigned;
  assert.is(u.kind, 'createAsset');
  if (u.kind !== 'createAsset') return;
  assert.equal([u.name, u.symbol, u.denomination, u.ins, u.outs], ['Test Coin', 'TST', 2, [], []]);
  const expected = sortOutputs([transfer(100n, [A.address]), transfer(2n ** 64n - 1n, [B.address]), transfer(100n, [A.address])]);
  assert.equal(plain(u.states), plain([{ fxIndex: 0, outs: expected }]));
  // Without symbol or credentials.
  // Without symbol or credentials; integers as decimal strings too.
  const raw = await h.call('createFixedCapAsset', { name: '', denomination: '0', initialHolders: [{ address: x(A), amount: '1' }] });
  assert.ok(raw.result, JSON.stringify(raw.error));
  assert.is((h.backend.issued[1]!.unsigned as { symbol: string }).symbol, '');
}));

test('createVariableCapAsset: one MintOutput per minter set (minters sorted, repeats dropped); no supply', served(async (h) => {
  const r = await h.avm.createVariableCapAsset({
    name: 'Shares',
    symbol: 'SHR',
    denomination: 0,
    minterSets: [
      { minters: [x(C), x(A), x(B), x(A)], threshold: 2 },
      { minters: [x(D)], threshold: 1 },
    ],
    username: 'bob',
    password: PASSWORD,
  });
  const tx = h.backend.issued[0]!;
  assert.is(r.assetID, txIdOf(encodeTx(tx)).toString());
  const u = tx.unsigned;
  if (u.kind !== 'createAsset') return assert.unreachable(u.kind);
  const expected = sortOutputs([
    { kind: 'mint', threshold: 2, addresses: sortAddresses([A.address, B.address, C.address]) },
    { kind: 'mint', threshold: 1, addresses: [D.address] },
  ]);
  assert.equal(plain(u.states), plain([{ fxIndex: 0, outs: expected }]));
}));

test('asset creation: bad names, symbols, denominations, holders and minter sets are -32602 naming the field', served(async (h) => {
  const fixed = { name: 'Coin', symbol: 'CN', denomination: 2, initialHolders: [{ address: x(A), amount: 1 }] };
  const variable = { name: 'Coin', denomination: 2, minterSets: [{ minters: [x(A)], threshold: 1 }] };
  const cases: Array<['createFixedCapAsset' | 'createVariableCapAsset', Record<string, unknown>, string]> = [
    ['createFixedCapAsset', { initialHolders: [] }, 'initialHolders: initialHolders must not be empty'],
    ['createFixedCapAsset', { initialHolders: [{ address: x(A), amount: 0 }] }, 'initialHolders[0].amount: must be positive'],
    ['createFixedCapAsset', { initialHolders: [{ address: x(A), amount: 1 }, { address: `P-${B.address}`, amount: 1 }] }, 'initialHolders[1].address: wrong blockchain ID'],
    ['createFixedCapAsset', { initialHolders: [{ address: 'X-nope', amount: 1 }] }, 'initialHolders[0].address: input string is smaller than the checksum size'],
    ['createFixedCapAsset', { name: ' Coin' }, 'name: unexpected whitespace provided'],
    ['createFixedCapAsset', { name: 'Café' }, 'name: unprintable ascii character was provided'],
    ['createFixedCapAsset', { name: 'N'.repeat(129) }, 'name: name is too long, maximum size is 128'],
    ['createFixedCapAsset', { name: 'N'.repeat(513) }, 'name: must be at most 512 characters (got 513)'],
    ['createFixedCapAsset', { symbol: 'TOOLONG' }, 'symbol: symbol is too long, maximum size is 4'],
    ['createFixedCapAsset', { symbol: 'A\tB' }, 'symbol: unprintable ascii character was provided'],
    ['createFixedCapAsset', { denomination: 33 }, 'denomination: must be at most 32'],
    ['createFixedCapAsset', { denomination: 256 }, 'denomination: value overflowed uint8'],
    ['createVariableCapAsset', { minterSets: [] }, 'minterSets: no minters provided'],
    ['createVariableCapAsset', { minterSets: [{ minters: [], threshold: 1 }] }, 'minterSets[0].minters: no minters provided'],
    ['createVariableCapAsset', { minterSets: [{ minters: [x(A), x(A)], threshold: 2 }] }, 'minterSets[0].threshold: must be between 1 and the number of distinct minters (1)'],
    ['createVariableCapAsset', { minterSets: [{ minters: [x(A)], threshold: 0 }] }, 'minterSets[0].threshold: must be between 1 and the number of distinct minters (1)'],
    ['createVariableCapAsset', { minterSets: [{ minters: [x(A), `avm-${B.address}`, `C-${C.address}`], threshold: 1 }] }, 'minterSets[0].minters[2]: wrong blockchain ID'],
  ];
  for (const [method, change, message] of cases) {
    const params = { ...(method === 'createFixedCapAsset' ? fixed : variable), ...change };
    const r = await h.call(method, params);
    assert.equal([r.error?.code, r.error?.message], [-32602, message], JSON.stringify(change));
  }
  assert.equal(h.backend.issued, []);
}));

/** A 2-of-3 minter set (A, B, C) of GOLD as an accepted UTXO; alice holds A, bob B, carol C. */
async function mintSetup(h: Harness) {
  const minted: Utxo = h.backend.addUtxo('gold genesis', 1, GOLD.assetId, mint([A.address, B.address, C.address], 2));
  const other: Utxo = h.backend.addUtxo('gold other', 0, GOLD.assetId, mint([A.address], 1)); // a second minter set of GOLD: A alone
  const users = {
    alice: await h.user('alice', [A]),
    bob: await h.user('bob', [B]),
    carol: await h.user('carol', [C]),
  };
  return { minted, other, users };
}

test('createMintTx: an unsigned OperationTx spending the first mint output the minters satisfy; no credentials', served(async (h) => {
  const { minted, other } = await mintSetup(h);
  const { tx } = await h.avm.createMintTx({ amount: 500, assetID: GOLD.assetId.toString(), to: x(D), minters: [x(C), x(B)] });
  const decoded = decodeTx(cb58Decode(tx));
  assert.equal(decoded.creds, []);
  const u = decoded.unsigned as OperationTx;
  assert.is(u.kind, 'operation');
  assert.equal([u.ins, u.outs], [[], []]);
  const owners = (minted.out as { addresses: typeof A.address[] }).addresses;
  const expectedIndices = [B, C].map((k) => owners.findIndex((a) => a.equals(k.address))).sort((m, n) => m - n);
  assert.equal(
    plain(u.ops),
    plain([
      {
        assetId: GOLD.assetId,
        utxos: [{ txId: minted.txId, outputIndex: 1 }],
        op: { kind: 'mint', sigIndices: expectedIndices, mintOutput: minted.out, transferOutput: transfer(500n, [D.address]) },
      },
    ]),
  );
  // A alone satisfies only the 1-of-1 set: that output is used.
  const single = decodeTx(cb58Decode((await h.avm.createMintTx({ amount: 1, assetID: GOLD.assetId.toString(), to: x(D), minters: [x(A)] })).tx));
  assert.equal(plain((single.unsigned as OperationTx).ops[0]!.utxos), plain([{ txId: id('gold other'), outputIndex: 0 }]));
  // A and C satisfy both: the first in UTXO ID order is used.
  const both = decodeTx(cb58Decode((await h.avm.createMintTx({ amount: 1, assetID: GOLD.assetId.toString(), to: x(D), minters: [x(A), x(C)] })).tx));
  const first = [minted, other].sort((m, n) => utxoId(m).compare(utxoId(n)))[0]!;
  assert.equal(plain((both.unsigned as OperationTx).ops[0]!.utxos), plain([{ txId: first.txId, outputIndex: first.outputIndex }]));
}));

test('createMintTx: minters short of every set, amount 0, unknown asset', served(async (h) => {
  await mintSetup(h);
  const ok = { amount: 5, assetID: GOLD.assetId.toString(), to: x(D), minters: [x(B), x(C)] };
  const cases: Array<[Record<string, unknown>, number, string]> = [
    [{ minters: [x(B)] }, -32000, "provided addresses don't have the authority to mint the provided asset"],
    [{ minters: [] }, -32000, "provided addresses don't have the authority to mint the provided asset"],
    [{ amount: 0 }, -32602, 'amount: amount minted must be positive'],
    [{ assetID: 'SILVER' }, -32000, "asset 'SILVER' not found"],
    [{ assetID: id('no asset').toString() }, -32000, `asset '${id('no asset')}' not found`],
    [{ to: `P-${D.address}` }, -32602, 'to: wrong blockchain ID'],
    [{ minters: [x(B), 'X-'] }, -32602, 'minters[1]: zero length string'],
  ];
  for (const [change, code, message] of cases) {
    const e = await rejection(h.avm.createMintTx({ ...ok, ...change } as never));
    assert.equal([e.rpcCode, e.message], [code, message], JSON.stringify(change));
  }
  assert.ok((await h.avm.createMintTx(ok)).tx);
}));

test('signMintTx 2-of-3: each minter signs at its place, in any order; the result issues; a third minter is not needed', served(async (h) => {
  const { users } = await mintSetup(h);
  const { tx } = await h.avm.createMintTx({ amount: 500, assetID: GOLD.assetId.toString(), to: x(D), minters: [x(B), x(C)] });
  const unsigned = decodeTx(cb58Decode(tx)).unsigned as OperationTx;
  const msg = unsignedBytes(unsigned);
  const slots = unsigned.ops[0]!.op.sigIndices.length;
  assert.is(slots, 2);

  const byCarol = await h.avm.signMintTx({ ...users.carol, tx, minter: x(C) });
  const half = decodeTx(cb58Decode(byCarol.tx));
  assert.equal(plain(half.unsigned), plain(unsigned)); // only the credential changes
  assert.is(half.creds.length, 1);
  assert.is(half.creds[0]!.sigs.length, 2);
  const owners = [A, B, C].map((k) => k.address).sort((m, n) => m.compare(n));
  const slotOf = (k: typeof A) => unsigned.ops[0]!.op.sigIndices.findIndex((i) => owners[i]!.equals(k.address));
  assert.ok(recoverAddress(msg, half.creds[0]!.sigs[slotOf(C)]!).equals(C.address));
  assert.equal(half.creds[0]!.sigs[slotOf(B)], new Uint8Array(65)); // B's place still empty

  const full = await h.avm.signMintTx({ ...users.bob, tx: byCarol.tx, minter: x(B) });
  // The other order gives the same tx.
  const other = await h.avm.signMintTx({ ...users.carol, tx: (await h.avm.signMintTx({ ...users.bob, tx, minter: x(B) })).tx, minter: x(C) });
  assert.is(other.tx, full.tx);
  // The fake VM checks every signature against the mint output's owners.
  assert.equal(await h.avm.issueTx({ tx: full.tx }), { txID: txIdOf(cb58Decode(full.tx)).toString() });

  // A is a minter of the set but not one of the chosen signers.
  const e = await rejection(h.avm.signMintTx({ ...users.alice, tx, minter: x(A) }));
  assert.equal([e.rpcCode, e.message], [-32000, 'address not required to sign']);
}));

test('signMintTx: a key the user lacks, other txs, spent outputs, bad bytes and users are refused', served(async (h) => {
  const { users } = await mintSetup(h);
  const { tx } = await h.avm.createMintTx({ amount: 500, assetID: GOLD.assetId.toString(), to: x(D), minters: [x(B), x(C)] });
  const refused = async (params: Record<string, unknown>, code: number, message: string | RegExp) => {
    const e = await rejection(h.avm.signMintTx(params as never));
    assert.is(e.rpcCode, code, JSON.stringify(params).slice(0, 100));
    if (typeof message === 'string') assert.is(e.message, message);
    else assert.match(e.message, message);
  };
  await refused({ ...users.alice, tx, minter: x(B) }, -32000, 'problem retrieving private key of minter: not found');
  await refused({ ...users.carol, tx, minter: `P-${C.address}` }, -32602, 'minter: wrong blockchain ID');
  await refused({ ...users.carol, tx, minter: x(C), password: 'Wrong-password-1' }, -32000, 'problem retrieving user: incorrect password for user "carol"');
  await refused({ ...users.carol, tx: 'not-cb58!', minter: x(C) }, -32602, /^tx: /);
  await refused({ ...users.carol, tx: cb58Encode(Uint8Array.of(0, 0, 0, 2)), minter: x(C) }, -32000, /./);

  // A send (BaseTx) is not a mint tx.
  const base = {
    unsigned: { kind: 'base' as const, networkId: h.backend.networkId, chainId: h.backend.chainId, outs: [], ins: [] },
    creds: [],
  };
  await refused({ ...users.carol, tx: cb58Encode(encodeTx(base)), minter: x(C) }, -32000, 'transaction must be a mint transaction');
  // Two operations: not the one-input tx signMintTx handles.
  const decoded = decodeTx(cb58Decode(tx));
  const u = decoded.unsigned as OperationTx;
  const twoOps = { unsigned: { ...u, ops: [u.ops[0]!, { ...u.ops[0]!, utxos: [{ txId: id('x'), outputIndex: 0 }] }] }, creds: [] };
  await refused({ ...users.carol, tx: cb58Encode(encodeTx(twoOps)), minter: x(C) }, -32000, 'can only sign transactions with one input');
  // The mint output is spent (gone from the accepted UTXOs).
  h.backend.utxoList = h.backend.utxoList.filter((x2) => !x2.txId.equals(id('gold genesis')));
  await refused({ ...users.alice, tx, minter: x(C) }, -32000, 'unknown utxo: the mint output this tx spends is spent or unknown');
}));

test.run();
