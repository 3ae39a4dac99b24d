// The shared wire components against the reference vectors, tested once here for every chain that
// reads them (the platform chain in core, the asset VM plugin): UTXOs and their IDs, the layouts of
// the secp256k1fx values, the AVM genesis of the local X-Chain and its asset ID.
import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Reader } from '../../src/codec/reader.js';
import { Writer } from '../../src/codec/writer.js';
import { base58Encode } from '../../src/encoding/base58.js';
import { cb58Encode } from '../../src/encoding/cb58.js';
import { fromHex, toHex } from '../../src/encoding/hex.js';
import { sha256 } from '../../src/crypto/hash.js';
import { CodecError } from '../../src/errors/errors.js';
import { Id, ShortId } from '../../src/ids/id.js';
import {
  ANY_OUTPUT,
  TRANSFER_ONLY,
  assetIdOf,
  readAvmGenesis,
  readBaseTxFields,
  readCredential,
  readMintOperation,
  readUtxo,
  utxoIdOf,
  writeAvmGenesis,
  writeBaseTxFields,
  writeCredential,
  writeMintOperation,
  writeOutput,
  writeTransferableInput,
  writeTransferableOutput,
  writeUtxo,
  type CreateAssetTx,
  type GenesisAsset,
  type TypeIdReader,
  type TypeIdSlot,
} from '../../src/components/index.js';

const V = JSON.parse(readFileSync(new URL('../../../test/components/utxo-vectors.json', import.meta.url), 'utf8')).inputs;

/** A codec's type-ID check that takes what the slot allows, and records what it was asked. */
function recordingTypeIds(): { read: TypeIdReader; asked: Array<[TypeIdSlot, readonly number[]]> } {
  const asked: Array<[TypeIdSlot, readonly number[]]> = [];
  const read: TypeIdReader = (r, allowed, slot) => {
    asked.push([slot, allowed]);
    const typeId = r.u32();
    if (!allowed.includes(typeId)) throw new CodecError('Invalid', `${slot}: type ID ${typeId}`);
    return typeId;
  };
  return { read, asked };
}
const typeIds = recordingTypeIds().read;

const write = (f: (w: Writer) => void) => {
  const w = new Writer();
  f(w);
  return w.finish();
};
const readWhole = <T>(bytes: Uint8Array, f: (r: Reader) => T): T => {
  const r = new Reader(bytes);
  const v = f(r);
  r.end();
  return v;
};
const plain = (v: unknown): unknown => JSON.parse(JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? `${x}n` : x)));
const addr = (label: string) => ShortId.fromBytes(sha256(new TextEncoder().encode(label)).subarray(0, 20));
const id = (label: string) => Id.fromBytes(sha256(new TextEncoder().encode(label)));

test('UTXO vectors: TxID, OutputIndex, AssetID, type ID 7, TransferOutput; decode and re-encode byte for byte; their cb58 forms', () => {
  for (const [hexKey, cb58Key, index, amount] of [
    ['utxo1_hex', 'utxo1_cb58', 0, 1000n],
    ['utxo2_hex', 'utxo2_cb58', 3, 500n],
  ] as const) {
    const bytes = fromHex(V[hexKey]);
    const u = readWhole(bytes, (r) => readUtxo(r, typeIds));
    assert.is(toHex(write((w) => writeUtxo(w, u))), V[hexKey]);
    assert.is(cb58Encode(bytes), V[cb58Key]);
    assert.is(u.outputIndex, index);
    assert.is(u.assetId.toString(), V.assetID_cb58);
    assert.equal(plain(u.out), plain({ kind: 'transfer', amount, locktime: 0n, threshold: 1, addresses: [ShortId.fromBytes(fromHex(V.fromAddr_hex))] }));
    const layout = new Writer().id(u.txId).u32(index).id(u.assetId).u32(7).u64(amount).u64(0n).u32(1).u32(1).shortId(u.out.addresses[0]!).finish();
    assert.is(toHex(layout), V[hexKey]);
  }
});

test('UTXO ID = SHA-256(u64 BE index ‖ txID); the client library prints base58(txID ‖ u32 index) instead', () => {
  const u = readWhole(fromHex(V.utxo1_hex), (r) => readUtxo(r, typeIds));
  const manual = new Writer().u64(BigInt(u.outputIndex)).id(u.txId).finish();
  assert.is(toHex(utxoIdOf(u.txId, u.outputIndex).bytes), toHex(sha256(manual)));
  assert.is(base58Encode(new Writer().id(u.txId).u32(u.outputIndex).finish()), V.utxo1_id_as_slopes_prints);
  assert.not.ok(utxoIdOf(u.txId, 1).equals(utxoIdOf(u.txId, 0)));
});

test('layouts: TransferableOutput (7), TransferableInput (5), Credential (9), MintOutput (6), MintOperation (8), BaseTx fields', () => {
  const owners = { threshold: 1, addresses: [addr('a'), addr('b')] };
  const out = { assetId: id('asset'), out: { kind: 'transfer' as const, amount: 7n, locktime: 9n, ...owners } };
  const ownersBytes = (w: Writer) => w.u32(1).u32(2).shortId(addr('a')).shortId(addr('b'));
  const outBytes = new Writer().id(id('asset')).u32(7).u64(7n).u64(9n);
  ownersBytes(outBytes);
  assert.is(toHex(write((w) => writeTransferableOutput(w, out))), toHex(outBytes.finish()));

  const input = { txId: id('tx'), outputIndex: 2, assetId: id('asset'), input: { amount: 7n, sigIndices: [0, 1] } };
  const inBytes = new Writer().id(id('tx')).u32(2).id(id('asset')).u32(5).u64(7n).u32(2).u32(0).u32(1).finish();
  assert.is(toHex(write((w) => writeTransferableInput(w, input))), toHex(inBytes));

  const sig = new Uint8Array(65).fill(3);
  assert.is(toHex(write((w) => writeCredential(w, { sigs: [sig] }))), toHex(new Writer().u32(9).u32(1).fixedBytes(sig).finish()));

  const mintBytes = new Writer().u32(6);
  ownersBytes(mintBytes);
  assert.is(toHex(write((w) => writeOutput(w, { kind: 'mint', ...owners }))), toHex(mintBytes.finish()));

  const op = { kind: 'mint' as const, sigIndices: [0], mintOutput: { kind: 'mint' as const, ...owners }, transferOutput: out.out };
  const opBytes = new Writer().u32(8).u32(1).u32(0);
  ownersBytes(opBytes);
  opBytes.u64(7n).u64(9n);
  ownersBytes(opBytes);
  assert.is(toHex(write((w) => writeMintOperation(w, op))), toHex(opBytes.finish()));

  const base = { networkId: 12345, chainId: id('chain'), outs: [out], ins: [input] };
  const baseBytes = write((w) => writeBaseTxFields(w, base));
  assert.is(toHex(baseBytes), toHex(new Writer().u32(12345).id(id('chain')).u32(1).fixedBytes(write((w) => writeTransferableOutput(w, out))).u32(1).fixedBytes(inBytes).finish()));

  // Each reads back as written.
  assert.equal(plain(readWhole(baseBytes, (r) => readBaseTxFields(r, typeIds))), plain(base));
  assert.equal(plain(readWhole(write((w) => writeCredential(w, { sigs: [sig] })), (r) => readCredential(r, typeIds))), plain({ sigs: [sig] }));
  assert.equal(plain(readWhole(write((w) => writeMintOperation(w, op)), (r) => readMintOperation(r, typeIds))), plain(op));
});

test("every interface value's type ID goes through the codec's TypeIdReader, with what its slot allows", () => {
  const { read, asked } = recordingTypeIds();
  const owners = { threshold: 1, addresses: [addr('a')] };
  const base = {
    networkId: 1,
    chainId: id('chain'),
    outs: [{ assetId: id('asset'), out: { kind: 'transfer' as const, amount: 1n, locktime: 0n, ...owners } }],
    ins: [{ txId: id('tx'), outputIndex: 0, assetId: id('asset'), input: { amount: 1n, sigIndices: [0] } }],
  };
  readWhole(write((w) => writeBaseTxFields(w, base)), (r) => readBaseTxFields(r, read));
  readWhole(write((w) => writeCredential(w, { sigs: [] })), (r) => readCredential(r, read));
  const utxo = { txId: id('tx'), outputIndex: 0, assetId: id('asset'), out: { kind: 'mint' as const, ...owners } };
  readWhole(write((w) => writeUtxo(w, utxo)), (r) => readUtxo(r, read));
  assert.equal(asked, [
    ['txOutput', TRANSFER_ONLY],
    ['txInput', [5]],
    ['credential', [9]],
    ['utxoOutput', ANY_OUTPUT],
  ]);
  // A codec that takes fewer refuses, with its own words.
  assert.throws(() => readWhole(write((w) => writeUtxo(w, utxo)), (r) => readUtxo(r, read, TRANSFER_ONLY)), /utxoOutput: type ID 6/);
});

test('writers refuse what the format cannot hold', () => {
  const owners = { threshold: 1, addresses: [addr('a')] };
  const codec = (f: () => unknown, text: string) => assert.throws(f, (e: unknown) => e instanceof CodecError && (e as Error).message === text);
  codec(() => write((w) => writeCredential(w, { sigs: [new Uint8Array(64)] })), 'a signature must be 65 bytes (got 64)');
  codec(() => write((w) => writeTransferableOutput(w, { assetId: id('a'), out: { kind: 'mint', ...owners } })), 'a tx output must be a secp256k1fx.TransferOutput');
  codec(() => write((w) => writeOutput(w, { kind: 'nft' } as never)), 'unknown output kind nft');
});

/** The local X-Chain genesis: one asset AVA, 45,000,000 AVA (9 decimals) to the ewoq address. */
const LOCAL_X_GENESIS_HEX =
  '00000001' + '0003' + '415641' + // one asset, alias "AVA"
  '00000000' + '00'.repeat(32) + '00000000' + '00000000' + // NetID 0, BCID empty, no outs, no ins
  '0003415641' + '0003415641' + '09' + // name, symbol, denomination 9
  '00000001' + '00000000' + '00000001' + // one initial state, FxID 0, one output
  '00000007' + '009fdf42f6e48000' + '0000000000000000' + '00000001' + '00000001' + '3cb7d3842e8cee6a0ebd09f1fe884f6861e1b29c';
const AVA_ASSET_ID = 'n8XH5JY1EX5VYqDeAhB4Zd4GKxi9UNQy6oPpMsCAj1Q6xkiiL';
const EWOQ = ShortId.fromString('6Y3kysjF9jnHnYkdS9yGAuoHyae2eNmeV');

test('the AVM genesis of the local X-Chain: its bytes, the AVA asset ID = SHA-256(u32(1) ‖ CreateAssetTx fields ‖ u32(0))', () => {
  const ava: CreateAssetTx = {
    kind: 'createAsset',
    networkId: 0,
    chainId: Id.empty,
    outs: [],
    ins: [],
    name: 'AVA',
    symbol: 'AVA',
    denomination: 9,
    states: [{ fxIndex: 0, outs: [{ kind: 'transfer', amount: 45_000_000_000_000_000n, locktime: 0n, threshold: 1, addresses: [EWOQ] }] }],
  };
  const bytes = write((w) => writeAvmGenesis(w, [{ alias: 'AVA', tx: ava }]));
  assert.is(toHex(bytes), LOCAL_X_GENESIS_HEX);
  const [back] = readWhole(bytes, (r) => readAvmGenesis(r, typeIds));
  assert.equal(plain(back), plain({ alias: 'AVA', tx: ava }));
  assert.is(assetIdOf(ava).toString(), AVA_ASSET_ID);
  const fields = bytes.subarray(4 + 2 + 3);
  assert.is(toHex(assetIdOf(ava).bytes), toHex(sha256(new Writer().u32(1).fixedBytes(fields).u32(0).finish())));
});

test('a genesis is written sorted by alias (as bytes); an asset that is not a CreateAssetTx is refused', () => {
  const tx = (name: string): CreateAssetTx => ({ kind: 'createAsset', networkId: 0, chainId: Id.empty, outs: [], ins: [], name, symbol: '', denomination: 0, states: [] });
  const assets: GenesisAsset[] = [
    { alias: 'b', tx: tx('B') },
    { alias: 'B', tx: tx('upper B') },
    { alias: 'a', tx: tx('A') },
  ];
  const back = readWhole(write((w) => writeAvmGenesis(w, assets)), (r) => readAvmGenesis(r, typeIds));
  assert.equal(back.map((a) => a.alias), ['B', 'a', 'b']);
  assert.throws(() => write((w) => writeAvmGenesis(w, [{ alias: 'x', tx: { kind: 'base' } as never }])), /genesis asset x is not a CreateAssetTx/);
});

test.run();
