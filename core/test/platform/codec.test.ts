import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Id, Writer, concatBytes, recoverAddress, sha256, toHex } from '@cornice/sdk';
import {
  blockIdOf,
  decodeBlock,
  decodeTx,
  decodeUtxo,
  encodeBlock,
  encodeTx,
  encodeUtxo,
  txId,
  unsignedTxBytes,
  utxoId,
} from '../../src/platform/codec.js';
import type { IssuableTx, PlatformBlockFields, PlatformTx } from '../../src/platform/model.js';
import { EWOQ_ADDRESS, ewoq, id, malformed, plain, sampleTxs, shortId, sig } from './samples.js';

const tx = <K extends PlatformTx['kind']>(kind: K) => sampleTxs().find((t) => t.kind === kind) as Extract<PlatformTx, { kind: K }>;

const u32 = (n: number) => new Writer().u32(n).finish();

test('every tx kind round-trips through its wire form, which starts with its signed type ID', () => {
  const ids: Record<string, number> = {
    addDefaultSubnetValidator: 11,
    addNonDefaultSubnetValidator: 13,
    addDefaultSubnetDelegator: 15,
    createChain: 17,
    createSubnet: 19,
    import: 21,
    export: 23,
    advanceTime: 24,
    rewardValidator: 25,
  };
  for (const t of sampleTxs()) {
    const bytes = encodeTx(t);
    assert.is(toHex(bytes.subarray(0, 4)), toHex(u32(ids[t.kind]!)), t.kind);
    assert.equal(plain(decodeTx(bytes)), plain(t), t.kind);
    assert.equal(encodeTx(decodeTx(bytes)), bytes, t.kind);
  }
});

test('unsigned bytes: the unsigned type ID and the unsigned fields; the tx ID hashes the signed fields without a type ID', () => {
  const unsignedIds: Record<string, number> = {
    addDefaultSubnetValidator: 10,
    addNonDefaultSubnetValidator: 12,
    addDefaultSubnetDelegator: 14,
    createChain: 16,
    createSubnet: 18,
    import: 20,
    export: 22,
  };
  for (const t of sampleTxs()) {
    const wire = encodeTx(t);
    assert.equal(txId(t), Id.fromBytes(sha256(wire.subarray(4))), t.kind);
    assert.is(txId(t).toString(), Id.fromBytes(sha256(wire.subarray(4))).toString(), t.kind);
    if (t.kind === 'advanceTime' || t.kind === 'rewardValidator') continue;
    const unsigned = unsignedTxBytes(t);
    assert.is(toHex(unsigned.subarray(0, 4)), toHex(u32(unsignedIds[t.kind]!)), t.kind);
    // The wire form is the unsigned fields followed by the signature fields.
    assert.is(toHex(wire.subarray(4, 4 + unsigned.length - 4)), toHex(unsigned.subarray(4)), t.kind);
  }
});

test('exact layout of an addDefaultSubnetValidatorTx (as the reference node encodes it)', () => {
  const t = tx('addDefaultSubnetValidator');
  const expected = new Writer()
    .u32(11)
    .shortId(t.nodeId)
    .u64(t.weight)
    .u64(t.start)
    .u64(t.end)
    .u32(t.networkId)
    .u64(t.nonce)
    .shortId(t.destination)
    .u32(t.shares)
    .fixedBytes(t.sig)
    .finish();
  assert.is(toHex(encodeTx(t)), toHex(expected));
});

test('exact layout of an importTx: secp TransferInput (5) and Credential (9) interfaces', () => {
  const t = tx('import');
  const w = new Writer().u32(21).u32(t.networkId).u64(t.nonce).shortId(t.account).u32(t.ins.length);
  for (const i of t.ins) w.id(i.txId).u32(i.outputIndex).id(i.assetId).u32(5).u64(i.input.amount).array(i.input.sigIndices, (w2, n) => w2.u32(n));
  w.fixedBytes(t.sig).u32(t.creds.length);
  for (const c of t.creds) w.u32(9).array(c.sigs, (w2, s) => w2.fixedBytes(s));
  assert.is(toHex(encodeTx(t)), toHex(w.finish()));
});

test('exact layout of an exportTx: secp TransferOutput (7) interface', () => {
  const t = tx('export');
  const o = t.outs[0]!;
  const expected = new Writer()
    .u32(23)
    .u32(t.networkId)
    .u64(t.nonce)
    .u32(1)
    .id(o.assetId)
    .u32(7)
    .u64(o.out.amount)
    .u64(o.out.locktime)
    .u32(o.out.threshold)
    .array(o.out.addresses, (w, a) => w.shortId(a))
    .fixedBytes(t.sig)
    .finish();
  assert.is(toHex(encodeTx(t)), toHex(expected));
});

test('a signature by the ewoq key over SHA-256(unsigned bytes) recovers to its address', () => {
  const key = ewoq();
  for (const t of sampleTxs()) {
    if (t.kind === 'advanceTime' || t.kind === 'rewardValidator') continue;
    const msg = unsignedTxBytes(t as IssuableTx);
    const s = key.sign(msg);
    assert.is(recoverAddress(msg, s).toString(), EWOQ_ADDRESS, t.kind);
    // Signing does not change what is signed.
    const signed = { ...t, ...('sig' in t ? { sig: s } : { payerSig: s }) } as IssuableTx;
    assert.equal(unsignedTxBytes(signed), msg, t.kind);
    assert.is.not(txId(signed).toString(), txId(t).toString(), t.kind);
  }
});

test('the genesis block is Commit{ParentID: empty}: 00000002 + 32 zero bytes, ID 2KN3yAy…', () => {
  const bytes = encodeBlock({ kind: 'commit', parentId: Id.empty });
  assert.is(toHex(bytes), `00000002${'00'.repeat(32)}`);
  assert.is(blockIdOf(bytes).toString(), '2KN3yAyLrYrKQ19YhbxtW1kBjHxndk2BZQs2q7UY1u8zUe83fu');
});

test('every block kind round-trips, with its type ID first', () => {
  const parentId = id('parent');
  const all = sampleTxs();
  const blocks: PlatformBlockFields[] = [
    { kind: 'proposal', parentId, tx: tx('addDefaultSubnetValidator') },
    { kind: 'proposal', parentId, tx: tx('addDefaultSubnetDelegator') },
    { kind: 'proposal', parentId, tx: tx('addNonDefaultSubnetValidator') },
    { kind: 'proposal', parentId, tx: tx('advanceTime') },
    { kind: 'proposal', parentId, tx: tx('rewardValidator') },
    { kind: 'abort', parentId },
    { kind: 'commit', parentId },
    { kind: 'standard', parentId, txs: [tx('createChain'), tx('createSubnet'), tx('createChain')] },
    { kind: 'standard', parentId, txs: [] },
    { kind: 'atomic', parentId, tx: tx('import') },
    { kind: 'atomic', parentId, tx: tx('export') },
  ];
  const typeIds = { proposal: 0, abort: 1, commit: 2, standard: 3, atomic: 4 };
  assert.is(all.length, 9);
  for (const b of blocks) {
    const bytes = encodeBlock(b);
    assert.is(toHex(bytes.subarray(0, 4)), toHex(u32(typeIds[b.kind])), b.kind);
    assert.is(toHex(bytes.subarray(4, 36)), toHex(parentId.bytes), b.kind);
    assert.equal(plain(decodeBlock(bytes)), plain(b), b.kind);
    assert.is(blockIdOf(bytes).toString(), Id.fromBytes(sha256(bytes)).toString());
  }
  // A block holds its tx in wire form (signed type ID + fields).
  const atomic = encodeBlock({ kind: 'atomic', parentId, tx: tx('export') });
  assert.is(toHex(atomic.subarray(36)), toHex(encodeTx(tx('export'))));
});

test('a tx that cannot appear where it is is Malformed, on decode and on encode', () => {
  const parentId = id('parent');
  const inBlock = (typeId: number, body: Uint8Array) => concatBytes(u32(typeId), parentId.bytes, body);
  assert.match(malformed(() => decodeBlock(inBlock(3, concatBytes(u32(1), encodeTx(tx('advanceTime')), new Uint8Array(100))))), 'type ID 24 (advanceTimeTx) cannot appear in a standard block');
  assert.match(malformed(() => decodeBlock(inBlock(4, encodeTx(tx('createSubnet'))))), 'type ID 19 (CreateSubnetTx) cannot appear in an atomic block');
  assert.match(malformed(() => decodeBlock(inBlock(0, encodeTx(tx('export'))))), 'type ID 23 (ExportTx) cannot appear in a proposal block');
  assert.match(malformed(() => decodeBlock(inBlock(0, concatBytes(u32(2), parentId.bytes)))), 'type ID 2 (Commit) cannot appear in a proposal block');
  const bad = { kind: 'standard', parentId, txs: [tx('advanceTime')] } as unknown as PlatformBlockFields;
  assert.match(malformed(() => encodeBlock(bad)), 'advanceTimeTx cannot appear in a standard block');
});

test('unknown or misplaced type IDs are Malformed and named', () => {
  assert.match(malformed(() => decodeTx(concatBytes(u32(99), new Uint8Array(40)))), 'unknown type ID 99');
  assert.match(malformed(() => decodeTx(concatBytes(u32(10), new Uint8Array(200)))), 'type ID 10 (UnsignedAddDefaultSubnetValidatorTx) cannot appear in a signed tx');
  assert.match(malformed(() => decodeTx(encodeBlock({ kind: 'commit', parentId: Id.empty }))), 'type ID 2 (Commit) cannot appear in a signed tx');
  assert.match(malformed(() => decodeBlock(concatBytes(u32(11), new Uint8Array(40)))), 'type ID 11 (addDefaultSubnetValidatorTx) is not a block');
  assert.match(malformed(() => decodeBlock(concatBytes(u32(0xffffffff), new Uint8Array(40)))), 'unknown block type ID 4294967295');
  // A secp value of another type where an input / output / credential must be.
  const imp = encodeTx(tx('import'));
  const inputTypeAt = 4 + 4 + 8 + 20 + 4 + 32 + 4 + 32;
  const wrongInput = imp.slice();
  wrongInput.set(u32(6), inputTypeAt);
  assert.match(malformed(() => decodeTx(wrongInput)), 'an input has type ID 6; expected 5');
  const exp = encodeTx(tx('export'));
  const wrongOutput = exp.slice();
  wrongOutput.set(u32(5), 4 + 4 + 8 + 4 + 32);
  assert.match(malformed(() => decodeTx(wrongOutput)), 'an output has type ID 5; expected 7');
});

test('truncated input and trailing bytes are Malformed with the codec texts', () => {
  for (const t of sampleTxs()) {
    const bytes = encodeTx(t);
    for (const cut of [0, 3, 4, bytes.length - 1]) {
      assert.match(malformed(() => decodeTx(bytes.subarray(0, cut))), 'packer has insufficient length for input', `${t.kind} cut at ${cut}`);
    }
    assert.is(malformed(() => decodeTx(concatBytes(bytes, new Uint8Array(3)))), 'has 3 leftover bytes after unmarshalling', t.kind);
  }
  const block = encodeBlock({ kind: 'commit', parentId: Id.empty });
  assert.is(malformed(() => decodeBlock(concatBytes(block, new Uint8Array(1)))), 'has 1 leftover bytes after unmarshalling');
  assert.match(malformed(() => decodeBlock(block.subarray(0, 35))), 'insufficient length');
});

test('huge declared counts are refused before anything is allocated', () => {
  // createChain's FxIDs count: 2^32-1 (over the slice limit) and 2^18 (more than the input holds).
  const head = new Writer().u32(17).u32(12345).id(Id.empty).u64(0n).str('c').id(Id.empty);
  for (const count of [0xffffffff, 1 << 18, 1000]) {
    const bytes = concatBytes(head.finish(), u32(count), new Uint8Array(64));
    const msg = malformed(() => decodeTx(bytes));
    assert.ok(/larger than the limit|insufficient length/.test(msg), msg);
  }
  // genesisData []byte, control sigs, ins, creds: the same checks.
  assert.match(malformed(() => decodeTx(concatBytes(head.finish(), u32(0), u32(0x7fffffff)))), 'larger than the limit');
  const imp = new Writer().u32(21).u32(1).u64(1n).shortId(shortId('a')).u32(3).finish();
  assert.match(malformed(() => decodeTx(concatBytes(imp, new Uint8Array(200)))), 'insufficient length');
  // A standard block claiming more txs than its bytes can hold.
  assert.match(malformed(() => decodeBlock(concatBytes(u32(3), Id.empty.bytes, u32(100), new Uint8Array(500)))), 'insufficient length');
  // The whole value is bounded (256 KiB).
  assert.match(malformed(() => decodeTx(new Uint8Array((1 << 18) + 1))), 'larger than the limit');
});

test('a time beyond 2^53 is Malformed; encoding a value out of range is Malformed', () => {
  const bytes = new Writer().u32(24).u64((1n << 64n) - 1n).finish();
  assert.match(malformed(() => decodeTx(bytes)), 'time 18446744073709551615 is out of range');
  assert.match(malformed(() => encodeTx({ ...tx('addDefaultSubnetValidator'), sig: new Uint8Array(64) })), 'a signature must be 65 bytes (got 64)');
  assert.match(malformed(() => encodeTx({ ...tx('createSubnet'), threshold: 70_000 })), 'u16 out of range');
  assert.match(malformed(() => encodeTx({ ...tx('export'), nonce: -1n })), 'u64 out of range');
  assert.match(malformed(() => encodeTx({ kind: 'nope' } as unknown as PlatformTx)), 'unknown tx kind nope');
  // A chain name that is not UTF-8.
  const name = new Writer().u32(17).u32(1).id(Id.empty).u64(0n).u16(1).u8(0xff).finish();
  assert.match(malformed(() => decodeTx(concatBytes(name, new Uint8Array(200)))), 'not valid UTF-8');
});

// The UTXO layout and ID are the shared component's (sdk/test/components): here, what this chain takes of it.
test('a UTXO round-trips; its ID is the shared one; one of a MintOutput is Malformed here', () => {
  const u = { txId: id('tx'), outputIndex: 3, ...tx('export').outs[0]! };
  const bytes = encodeUtxo(u);
  assert.equal(plain(decodeUtxo(bytes)), plain(u));
  assert.ok(utxoId(u.txId, 3).equals(u.txId.prefix(3)));
  assert.is(malformed(() => decodeUtxo(concatBytes(bytes, u32(0)))), 'has 4 leftover bytes after unmarshalling');
  const mint = bytes.slice();
  mint.set(u32(6), 32 + 4 + 32);
  assert.match(malformed(() => decodeUtxo(mint)), 'an output has type ID 6; expected 7');
});

test('signature slots: an unsigned tx carries 65 zero bytes and still encodes', () => {
  const t = { ...tx('createSubnet'), sig: new Uint8Array(65) };
  assert.equal(plain(decodeTx(encodeTx(t))), plain(t));
  assert.equal(sig(1).length, 65);
});

test.run();
