// The AVM byte formats against the reference vectors (test/vectors, copied from the reference client
// library's output), round trips of every tx kind, and malformed input.
import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  Id,
  ShortId,
  cb58Decode,
  cb58Encode,
  fromHex,
  recoverAddress,
  recoverPublicKey,
  sha256,
  toHex,
} from '@cornice/sdk';
import {
  TYPE_ID,
  checkSyntax,
  compareTransferableOutputs,
  compareUtxoRefs,
  decodeTx,
  decodeUtxo,
  decodedUnsignedBytes,
  encodeOutput,
  encodeTx,
  encodeUtxo,
  exportedUtxos,
  isSorted,
  numCredentials,
  producedUtxos,
  signTx,
  sortAddresses,
  sortOutputs,
  sortTransferableOutputs,
  txIdOf,
  unsignedBytes,
  utxoId,
  type Tx,
} from '../src/index.js';
import { signedHash } from '../src/rules.js';
import { ASSET_A, ASSET_B, CTX, addr, ewoq, id, mint, out, plain, sampleTxs, sig, throwsAvm, transfer } from './helpers.js';

const vectorsDir = new URL('../../test/vectors/', import.meta.url);
const V = JSON.parse(readFileSync(new URL('avm-vectors.json', vectorsDir), 'utf8'));
const I = V.inputs;

test('baseTx vector: parses, re-encodes byte for byte, and its unsigned bytes, hash and tx ID are the given ones', () => {
  const signed = fromHex(V.baseTx.signed_hex);
  const tx = decodeTx(signed);
  assert.is(toHex(encodeTx(tx)), V.baseTx.signed_hex);
  const unsigned = unsignedBytes(tx.unsigned);
  assert.is(toHex(unsigned), V.baseTx.unsigned_hex);
  assert.is(toHex(sha256(unsigned)), V.baseTx.sha256_unsigned_hex);
  assert.is(toHex(txIdOf(signed).bytes), V.baseTx.txID_sha256_signed_hex);
  assert.is(txIdOf(signed).toString(), V.baseTx.txID_cb58);
  // The cb58 form issueTx takes is the signed bytes.
  assert.is(toHex(cb58Decode(V.baseTx.signed_cb58_as_sent_in_issueTx)), V.baseTx.signed_hex);
  assert.is(cb58Encode(signed), V.baseTx.signed_cb58_as_sent_in_issueTx);
});

test('a decoded tx keeps the unsigned bytes it was read from: the same as its re-encoding, hashed by signedHash without re-encoding', () => {
  for (const hex of [V.baseTx.signed_hex, V.createAssetTx.signed_hex]) {
    const tx = decodeTx(fromHex(hex));
    const kept = decodedUnsignedBytes(tx)!;
    assert.ok(kept, 'kept');
    assert.is(toHex(kept), toHex(unsignedBytes(tx.unsigned)));
    assert.ok(hex.startsWith(toHex(kept)), 'a prefix of the signed bytes');
    assert.is(toHex(signedHash(tx)), toHex(sha256(unsignedBytes(tx.unsigned))));
  }
  for (const tx of Object.values(sampleTxs())) {
    assert.is(decodedUnsignedBytes(tx), undefined, 'a tx built in code has none');
    const decoded = decodeTx(encodeTx(tx));
    assert.is(toHex(decodedUnsignedBytes(decoded)!), toHex(unsignedBytes(tx.unsigned)), tx.unsigned.kind);
  }
});

test('baseTx vector: its fields are the inputs the vectors name; it passes every syntactic rule', () => {
  const { unsigned, creds } = decodeTx(fromHex(V.baseTx.signed_hex));
  assert.is(unsigned.kind, 'base');
  assert.is(unsigned.networkId, I.networkID);
  assert.is(unsigned.chainId.toString(), I.blockchainID_cb58);
  assert.is(toHex(unsigned.chainId.bytes), I.blockchainID_hex);
  assert.equal(plain(unsigned.outs), plain([
    { assetId: Id.fromString(I.assetID_cb58), out: { kind: 'transfer', amount: 300n, locktime: 0n, threshold: 1, addresses: [ShortId.fromBytes(fromHex(I.fromAddr_hex))] } },
    { assetId: Id.fromString(I.assetID_cb58), out: { kind: 'transfer', amount: 1200n, locktime: 0n, threshold: 1, addresses: [ShortId.fromBytes(fromHex(I.toAddr_hex))] } },
  ]));
  assert.is(unsigned.outs[1]!.out.addresses[0]!.toString(), I.toAddr_str.slice(2));
  assert.equal(unsigned.ins.map((i) => [toHex(i.txId.bytes), i.outputIndex, i.input.amount, i.input.sigIndices]), [
    ['01'.repeat(32), 3, 500n, [0]],
    ['aa'.repeat(32), 0, 1000n, [0]],
  ]);
  assert.is(creds.length, 2);
  checkSyntax({ unsigned, creds }, CTX);
});

test('baseTx vector: every signature recovers to the sender over SHA-256(unsigned bytes); signing again gives the same bytes', () => {
  const tx = decodeTx(fromHex(V.baseTx.signed_hex));
  const unsigned = unsignedBytes(tx.unsigned);
  for (const cred of tx.creds) {
    for (const s of cred.sigs) assert.is(toHex(recoverAddress(unsigned, s).bytes), I.fromAddr_hex);
  }
  const last = tx.creds.at(-1)!.sigs.at(-1)!;
  assert.is(toHex(recoverPublicKey(sha256(unsigned), last)), V.baseTx.recovered_pubkey_of_last_sig);
  assert.is(toHex(ewoq().publicKey), I.fromPubKey_compressed_hex);
  assert.is(`X-${ewoq().address.toString()}`, I.fromAddr_str);
  // RFC 6979: our signer reproduces the reference client's signatures exactly.
  assert.is(toHex(encodeTx(signTx(tx.unsigned, [[ewoq()], [ewoq()]]))), V.baseTx.signed_hex);
});

test('the annotated baseTx: its fields, in order, are the signed bytes (534 of them)', () => {
  const text = readFileSync(new URL('avm-basetx-annotated.txt', vectorsDir), 'utf8');
  const fields = text
    .split('\n')
    .filter((l) => l.trim() && !l.startsWith('('))
    .map((l) => l.trim().split(/\s+/).at(-1)!);
  assert.ok(fields.every((f) => /^[0-9a-f]+$/.test(f)), 'every line ends with hex');
  assert.is(fields.join(''), V.baseTx.signed_hex);
  assert.match(text, `(consumed ${fromHex(V.baseTx.signed_hex).length} of 534 bytes)`);
});

test('createAssetTx vector: parses, re-encodes byte for byte; its tx ID is the asset ID; its initial states are UTXOs of the new asset', () => {
  const signed = fromHex(V.createAssetTx.signed_hex);
  const tx = decodeTx(signed);
  assert.is(toHex(encodeTx(tx)), V.createAssetTx.signed_hex);
  assert.is(toHex(unsignedBytes(tx.unsigned)), V.createAssetTx.unsigned_hex);
  assert.is(toHex(cb58Decode(V.createAssetTx.signed_cb58)), V.createAssetTx.signed_hex);
  const assetId = txIdOf(signed);
  assert.is(toHex(assetId.bytes), V.createAssetTx.assetID_eq_txID_hex);
  assert.is(assetId.toString(), V.createAssetTx.assetID_cb58);
  const u = tx.unsigned;
  assert.ok(u.kind === 'createAsset');
  assert.equal([u.name, u.symbol, u.denomination, u.states.length, u.states[0]!.fxIndex, tx.creds.length], ['Test Coin', 'TST', 2, 1, 0, 0]);
  const from = ShortId.fromBytes(fromHex(I.fromAddr_hex));
  const to = ShortId.fromBytes(fromHex(I.toAddr_hex));
  assert.equal(plain(u.states[0]!.outs), plain([transfer(7n, [from, to]), transfer(5000n, [from])]));
  checkSyntax(tx, CTX);
  const utxos = producedUtxos(assetId, u);
  assert.equal(utxos.map((x) => [x.outputIndex, x.assetId.toString()]), [
    [0, V.createAssetTx.assetID_cb58],
    [1, V.createAssetTx.assetID_cb58],
  ]);
});

// The UTXO layout, its vectors and the UTXO ID are the shared component's (sdk/test/components).
test('the baseTx vector spends exactly the UTXO vectors', () => {
  const base = decodeTx(fromHex(V.baseTx.signed_hex)).unsigned;
  for (const [hexKey, amount] of [
    ['utxo1_hex', 1000n],
    ['utxo2_hex', 500n],
  ] as const) {
    const u = decodeUtxo(fromHex(I[hexKey]));
    assert.is(toHex(encodeUtxo(u)), I[hexKey]);
    assert.equal(plain(u.out), plain(transfer(amount, [ShortId.fromBytes(fromHex(I.fromAddr_hex))])));
    const spending = base.ins.find((i) => i.txId.equals(u.txId) && i.outputIndex === u.outputIndex)!;
    assert.ok(spending, 'the baseTx spends it');
    assert.is(spending.input.amount, amount);
    assert.ok(utxoId(spending).equals(utxoId(u)));
  }
});

test('a UTXO ID is hashed once per ref object, and again when the ref\'s fields change', () => {
  const u = decodeUtxo(fromHex(I.utxo1_hex));
  const first = utxoId(u);
  assert.is(utxoId(u), first, 'the same ref gives the same ID object (no second hash)');
  const ref = { txId: u.txId, outputIndex: u.outputIndex };
  assert.is.not(utxoId(ref), first, 'another object with the same fields is hashed on its own');
  assert.ok(utxoId(ref).equals(first));
  ref.outputIndex = 5;
  assert.ok(utxoId(ref).equals(u.txId.prefix(5)), 'a changed index gives its own ID');
  ref.txId = id('another tx');
  assert.ok(utxoId(ref).equals(id('another tx').prefix(5)), 'a changed tx ID gives its own ID');
});

test('every tx kind round-trips; unsigned bytes are the signed bytes without the credentials', () => {
  for (const [kind, tx] of Object.entries(sampleTxs())) {
    const bytes = encodeTx(tx);
    const back = decodeTx(bytes);
    assert.equal(plain(back), plain(tx), kind);
    const unsigned = unsignedBytes(tx.unsigned);
    assert.equal(bytes.subarray(0, unsigned.length), unsigned, kind);
    assert.is(new DataView(unsigned.buffer).getUint32(0), TYPE_ID[`${kind === 'base' ? 'baseTx' : kind === 'createAsset' ? 'createAssetTx' : `${kind}Tx`}` as keyof typeof TYPE_ID], kind);
    assert.is(numCredentials(tx.unsigned), tx.creds.length, kind);
    checkSyntax(tx, CTX);
  }
});

test('layouts of OperationTx (MintOperation holds its outputs as structs), ImportTx and ExportTx, field by field', () => {
  const s = sampleTxs();
  const h = (x: { bytes: Uint8Array }) => toHex(x.bytes);
  const u32 = (n: number) => n.toString(16).padStart(8, '0');
  const u64 = (n: bigint) => n.toString(16).padStart(16, '0');
  const chain = u32(12345) + toHex(CTX.chainId.bytes);
  const owners = (a: string) => u32(1) + u32(1) + h(addr(a));
  const transferOut = (amount: bigint, a: string) => u64(amount) + u64(0n) + owners(a);
  const inp = (tx: string, index: number, amount: bigint) => h(id(tx)) + u32(index) + h(ASSET_A) + u32(5) + u64(amount) + u32(1) + u32(0);
  const cred = (n: number) => u32(9) + u32(1) + toHex(sig(n));
  assert.is(
    toHex(encodeTx(s.operation)),
    u32(2) + chain + u32(0) + u32(1) + inp('t3', 0, 1n) +
      u32(1) + h(ASSET_B) + u32(1) + h(id('t4')) + u32(2) + u32(8) + u32(1) + u32(0) + owners('a1') + transferOut(50n, 'a2') +
      u32(2) + cred(4) + cred(5),
  );
  assert.is(
    toHex(encodeTx(s.import)),
    u32(3) + chain + u32(1) + h(ASSET_A) + u32(7) + transferOut(90n, 'a1') + u32(0) + u32(1) + inp('t5', 0, 100n) + u32(1) + cred(6),
  );
  assert.is(
    toHex(encodeTx(s.export)),
    u32(4) + chain + u32(1) + h(ASSET_A) + u32(7) + transferOut(10n, 'a1') + u32(1) + inp('t6', 0, 100n) +
      u32(1) + h(ASSET_A) + u32(7) + transferOut(90n, 'a2') + u32(1) + cred(7),
  );
  // A MintOutput as an interface value: type ID 6 + owners (no amount, no locktime).
  assert.is(toHex(encodeOutput(mint([addr('a1')]))), u32(6) + owners('a1'));
});

test('producedUtxos numbers BaseTx outs, then initial states or each mint\'s [MintOutput, TransferOutput]; exports are numbered after the outs', () => {
  const s = sampleTxs();
  const txId = id('the tx');
  const refs = (tx: Tx) => producedUtxos(txId, tx.unsigned).map((u) => [u.outputIndex, u.assetId.toString(), u.out.kind]);
  assert.equal(refs(s.base), [
    [0, s.base.unsigned.outs[0]!.assetId.toString(), 'transfer'],
    [1, s.base.unsigned.outs[1]!.assetId.toString(), 'transfer'],
  ]);
  assert.equal(refs(s.createAsset), [
    [0, txId.toString(), 'mint'],
    [1, txId.toString(), 'transfer'],
  ]);
  assert.equal(refs(s.operation), [
    [0, ASSET_B.toString(), 'mint'],
    [1, ASSET_B.toString(), 'transfer'],
  ]);
  assert.equal(refs(s.import), [[0, ASSET_A.toString(), 'transfer']]);
  assert.equal(refs(s.export), [[0, ASSET_A.toString(), 'transfer']]);
  const e = s.export.unsigned;
  assert.ok(e.kind === 'export');
  assert.equal(exportedUtxos(txId, e).map((u) => [u.outputIndex, plain(u.out)]), [[1, plain(transfer(90n, [addr('a2')]))]]);
  // Every produced UTXO encodes and decodes (mint outputs included).
  for (const tx of Object.values(s)) for (const u of producedUtxos(txId, tx.unsigned)) assert.equal(plain(decodeUtxo(encodeUtxo(u))), plain(u));
});

test('sort orders: outputs by asset then output bytes (amounts big-endian), mint (6) before transfer (7), inputs by (txID, index), addresses unique', () => {
  const [lo, hi] = [ASSET_A, ASSET_B].sort((a, b) => a.compare(b)) as [Id, Id];
  const outs = [out(hi, 1n, [addr('x')]), out(lo, 256n, [addr('x')]), out(lo, 1n, [addr('x')])];
  assert.equal(sortTransferableOutputs(outs).map((o) => [o.assetId.toString(), o.out.kind === 'transfer' && o.out.amount]), [
    [lo.toString(), 1n],
    [lo.toString(), 256n],
    [hi.toString(), 1n],
  ]);
  assert.ok(isSorted(sortTransferableOutputs(outs), compareTransferableOutputs));
  assert.not.ok(isSorted(outs, compareTransferableOutputs));
  assert.equal(sortOutputs([transfer(1n, [addr('x')]), mint([addr('x')])]).map((o) => o.kind), ['mint', 'transfer']);
  const refs = [{ txId: id('b'), outputIndex: 0 }, { txId: id('b'), outputIndex: 0 }];
  assert.ok(isSorted(refs, compareUtxoRefs));
  assert.not.ok(isSorted(refs, compareUtxoRefs, true));
  const a = [addr('p'), addr('q'), addr('p')];
  const sorted = sortAddresses(a);
  assert.is(sorted.length, 2);
  assert.ok(sorted[0]!.compare(sorted[1]!) < 0);
});

// ---- malformed input ---------------------------------------------------------------------------

const baseBytes = () => fromHex(V.baseTx.signed_hex);

test('trailing bytes: the reference\'s text', () => {
  const b = new Uint8Array([...baseBytes(), 0, 0, 0]);
  throwsAvm(() => decodeTx(b), 'Malformed', 'has 3 leftover bytes after unmarshalling');
  throwsAvm(() => decodeUtxo(new Uint8Array([...fromHex(I.utxo1_hex), 1])), 'Malformed', 'has 1 leftover bytes after unmarshalling');
});

test('every truncation of a signed tx is Malformed (never another error)', () => {
  const b = baseBytes();
  for (let n = 0; n < b.length; n++) throwsAvm(() => decodeTx(b.subarray(0, n)), 'Malformed', 'packer has insufficient length for input');
  const c = fromHex(V.createAssetTx.signed_hex);
  for (let n = 0; n < c.length; n++) throwsAvm(() => decodeTx(c.subarray(0, n)), 'Malformed');
});

test('huge declared counts are refused before allocating; input over 256 KiB is refused', () => {
  // numOuts = 2^32-1 right after the chain ID.
  const b = baseBytes();
  b.set([0xff, 0xff, 0xff, 0xff], 4 + 4 + 32);
  throwsAvm(() => decodeTx(b), 'Malformed', /slice length 4294967295 is larger than the limit/);
  b.set([0x00, 0x01, 0x00, 0x00], 4 + 4 + 32); // 65536 outputs: fits the limit, not the input
  throwsAvm(() => decodeTx(b), 'Malformed', 'packer has insufficient length for input');
  const sigCount = fromHex(V.baseTx.signed_hex);
  sigCount.set([0x00, 0x00, 0x10, 0x00], sigCount.length - 65 - 4); // the last credential claims 4096 signatures
  throwsAvm(() => decodeTx(sigCount), 'Malformed', 'packer has insufficient length for input');
  throwsAvm(() => decodeTx(new Uint8Array((1 << 18) + 1)), 'Malformed', /larger than the limit of 262144/);
});

test('type IDs: a value of another type in a slot is named; nftfx/propertyfx values are UnsupportedFx', () => {
  const withTypeId = (bytes: Uint8Array, at: number, typeId: number) => {
    const b = bytes.slice();
    new DataView(b.buffer).setUint32(at, typeId);
    return b;
  };
  const b = baseBytes();
  throwsAvm(() => decodeTx(withTypeId(b, 0, 5)), 'Malformed', 'a tx cannot be a secp256k1fx.TransferInput (type ID 5)');
  throwsAvm(() => decodeTx(withTypeId(b, 0, 99)), 'Malformed', 'unknown type ID 99 for a tx');
  const outType = 4 + 4 + 32 + 4 + 32; // the first output's type ID
  throwsAvm(() => decodeTx(withTypeId(b, outType, 6)), 'Malformed', 'a tx output cannot be a secp256k1fx.MintOutput (type ID 6)');
  throwsAvm(() => decodeTx(withTypeId(b, outType, 11)), 'UnsupportedFx', /^nftfx is not supported: a tx output is a nftfx.TransferOutput \(type ID 11\)/);
  throwsAvm(() => decodeTx(withTypeId(b, outType, 16)), 'UnsupportedFx', /^propertyfx is not supported/);
  const credType = b.length - 65 - 4 - 4; // the last credential's type ID
  throwsAvm(() => decodeTx(withTypeId(b, credType, 14)), 'UnsupportedFx', /nftfx.Credential \(type ID 14\)/);
  throwsAvm(() => decodeTx(withTypeId(b, credType, 7)), 'Malformed', 'a credential cannot be a secp256k1fx.TransferOutput (type ID 7)');
  const op = encodeTx(sampleTxs().operation);
  const opType = 4 + 4 + 32 + 4 + 4 + 88 + 4 + 32 + 4 + 36; // the operation's type ID (the input holds one sig index)
  throwsAvm(() => decodeTx(withTypeId(op, opType, 17)), 'UnsupportedFx', /propertyfx.MintOperation/);
  const ca = encodeTx(sampleTxs().createAsset);
  const stateOutType = 4 + 4 + 32 + 4 + 4 + 2 + 9 + 2 + 3 + 1 + 4 + 4 + 4; // the first initial-state output's type ID
  throwsAvm(() => decodeTx(withTypeId(ca, stateOutType, 10)), 'UnsupportedFx', /nftfx.MintOutput/);
  throwsAvm(() => decodeTx(withTypeId(ca, stateOutType, 9)), 'Malformed', 'an initial state output cannot be a secp256k1fx.Credential (type ID 9)');
});

test('a name that is not UTF-8, and input that is not bytes, are Malformed', () => {
  const ca = encodeTx(sampleTxs().createAsset);
  ca[4 + 4 + 32 + 4 + 4 + 2] = 0xff; // first byte of the name
  throwsAvm(() => decodeTx(ca), 'Malformed', 'string is not valid UTF-8');
  throwsAvm(() => decodeTx(undefined as unknown as Uint8Array), 'Malformed', 'expected bytes but got undefined');
  throwsAvm(() => decodeUtxo('00' as unknown as Uint8Array), 'Malformed');
});

test('random corruption: decoding either succeeds and re-encodes to the same bytes, or throws an AvmError', () => {
  let seed = 7;
  const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n);
  const samples = [baseBytes(), fromHex(V.createAssetTx.signed_hex), ...Object.values(sampleTxs()).map(encodeTx)];
  for (let i = 0; i < 3000; i++) {
    const b = samples[i % samples.length]!.slice();
    for (let k = 0, flips = 1 + rand(3); k < flips; k++) b[rand(b.length)] = rand(256);
    let tx: Tx;
    try {
      tx = decodeTx(b);
    } catch (e) {
      assert.ok((e as { name?: string }).name === 'AvmError', String(e));
      continue;
    }
    assert.equal(encodeTx(tx), b);
  }
});

test('encoding refuses what the format cannot hold, with AvmError(Malformed)', () => {
  const s = sampleTxs();
  throwsAvm(() => encodeTx({ ...s.base, creds: [{ sigs: [new Uint8Array(64)] }, { sigs: [] }] }), 'Malformed', 'a signature must be 65 bytes (got 64)');
  const u = s.base.unsigned;
  throwsAvm(() => encodeTx({ ...s.base, unsigned: { ...u, outs: [out(ASSET_A, 1n << 64n, [addr('a')])] } }), 'Malformed', /u64 out of range/);
  throwsAvm(() => encodeTx({ ...s.base, unsigned: { ...u, outs: [{ assetId: ASSET_A, out: mint([addr('a')]) }] } }), 'Malformed', 'a tx output must be a secp256k1fx.TransferOutput');
  throwsAvm(() => encodeTx({ ...s.base, unsigned: { ...u, kind: 'nope' } as never }), 'Malformed', 'unknown tx kind nope');
  throwsAvm(() => unsignedBytes({ ...u, networkId: -1 }), 'Malformed', 'u32 out of range: -1');
});

test.run();
