import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import { Reader } from '../../src/codec/reader.js';
import { Writer } from '../../src/codec/writer.js';
import { cb58Decode, cb58Encode } from '../../src/encoding/cb58.js';
import { fromHex, toHex } from '../../src/encoding/hex.js';
import { Id, ShortId } from '../../src/ids/id.js';
import { CodecError } from '../../src/errors/errors.js';

const codecError = (code: string, message?: string | RegExp) => (e: unknown) =>
  e instanceof CodecError &&
  e.code === code &&
  (message === undefined || (typeof message === 'string' ? e.message === message : message.test(e.message)));

test('reads what Writer wrote', () => {
  const id = Id.fromString('jvYyfQTxGMJLuGWa55kdP2p2zSUYsQ5Raupu4TW34ZAUBAbtq');
  const sid = ShortId.fromString('6Y3kysjF9jnHnYkdS9yGAuoHyae2eNmeV');
  const bytes = new Writer()
    .u8(7)
    .u16(65535)
    .u32(0xdeadbeef)
    .u64((1n << 64n) - 1n)
    .bool(true)
    .bool(false)
    .bytes(Uint8Array.of(1, 2))
    .str('héllo')
    .fixedBytes(Uint8Array.of(5, 6, 7))
    .array(['a', 'bc'], (w, s) => w.str(s))
    .id(id)
    .shortId(sid)
    .finish();
  const r = new Reader(bytes);
  assert.is(r.u8(), 7);
  assert.is(r.u16(), 65535);
  assert.is(r.u32(), 0xdeadbeef);
  assert.is(r.u64(), (1n << 64n) - 1n);
  assert.is(r.bool(), true);
  assert.is(r.bool(), false);
  assert.equal(r.bytes(), Uint8Array.of(1, 2));
  assert.is(r.str(), 'héllo');
  assert.equal(r.fixedBytes(3), Uint8Array.of(5, 6, 7));
  assert.equal(r.array((x) => x.str()), ['a', 'bc']);
  assert.ok(r.id().equals(id));
  assert.ok(r.shortId().equals(sid));
  assert.is(r.remaining, 0);
  assert.is(r.offset, bytes.length);
  r.end();
});

test('reading past the end: InsufficientLength, offset unchanged', () => {
  const r = new Reader(Uint8Array.of(1, 2, 3));
  assert.throws(() => r.u32(), codecError('InsufficientLength', 'packer has insufficient length for input'));
  assert.is(r.offset, 0);
  assert.is(r.u16(), 0x0102);
  assert.throws(() => r.u16(), codecError('InsufficientLength'));
  assert.throws(() => r.u64(), codecError('InsufficientLength'));
  assert.throws(() => r.id(), codecError('InsufficientLength'));
  assert.throws(() => r.fixedBytes(2), codecError('InsufficientLength'));
  assert.is(r.u8(), 3);
  assert.throws(() => r.u8(), codecError('InsufficientLength'));
  assert.throws(() => new Reader(new Uint8Array()).bool(), codecError('InsufficientLength'));
});

test('end() rejects leftover bytes with the reference text', () => {
  const r = new Reader(Uint8Array.of(0, 0, 0, 1, 9, 9));
  r.u32();
  assert.throws(() => r.end(), codecError('Leftover', 'has 2 leftover bytes after unmarshalling'));
  const r2 = new Reader(Uint8Array.of(0));
  assert.throws(() => r2.end(), codecError('Leftover', 'has 1 leftover bytes after unmarshalling'));
  new Reader(new Uint8Array()).end();
});

test('bool accepts only 0 and 1', () => {
  assert.throws(() => new Reader(Uint8Array.of(2)).bool(), codecError('Invalid'));
  assert.throws(() => new Reader(Uint8Array.of(0xff)).bool(), codecError('Invalid'));
});

test('str must be valid UTF-8', () => {
  assert.throws(() => new Reader(Uint8Array.of(0, 1, 0xff)).str(), codecError('Invalid'));
  assert.throws(() => new Reader(Uint8Array.of(0, 5, 0x61)).str(), codecError('InsufficientLength'));
});

test('oversize counts are rejected before allocating anything', () => {
  // A u32 count of 4 billion with nothing behind it: must fail at once, not allocate or loop.
  const huge = Uint8Array.of(0xff, 0xff, 0xff, 0xff);
  let calls = 0;
  assert.throws(
    () => new Reader(huge).array(() => ++calls),
    codecError('TooLarge', /slice length 4294967295 is larger than the limit of 262144/),
  );
  assert.is(calls, 0);
  assert.throws(() => new Reader(huge).bytes(), codecError('TooLarge'));

  // Within the limit but more than the input holds.
  const lying = Uint8Array.of(0, 1, 0, 0, 1, 2, 3);
  assert.throws(() => new Reader(lying).bytes(), codecError('InsufficientLength'));
  assert.throws(
    () => new Reader(lying).array((r) => { calls++; return r.u8(); }),
    codecError('InsufficientLength'),
  );
  assert.is(calls, 0, 'no item read when the count cannot fit');
  // minItemSize scales the check: 2 items of >= 4 bytes do not fit in 3 bytes.
  const two = Uint8Array.of(0, 0, 0, 2, 1, 2, 3);
  assert.throws(() => new Reader(two).array((r) => r.u32(), { minItemSize: 4 }), codecError('InsufficientLength'));
  // minItemSize 0 allows items that take no bytes.
  const empties = new Reader(Uint8Array.of(0, 0, 0, 5)).array(() => 'x', { minItemSize: 0 });
  assert.equal(empties, ['x', 'x', 'x', 'x', 'x']);

  // the failing reader did not move
  const r = new Reader(lying);
  assert.throws(() => r.bytes());
  assert.is(r.offset, 0);
});

test('limits are configurable', () => {
  const w = new Writer().array([1, 2, 3], (x, n) => x.u8(n)).finish();
  assert.throws(() => new Reader(w, { maxSliceLength: 2 }).array((r) => r.u8()), codecError('TooLarge'));
  assert.equal(new Reader(w, { maxSliceLength: 3 }).array((r) => r.u8()), [1, 2, 3]);
  assert.throws(() => new Reader(new Uint8Array(11), { maxSize: 10 }), codecError('TooLarge'));
  assert.throws(() => new Reader(new Uint8Array((1 << 18) + 1)), codecError('TooLarge'));
  new Reader(new Uint8Array(1 << 18));
});

test('works on a view into a larger buffer', () => {
  const backing = Uint8Array.of(0xaa, 0, 0, 0, 2, 0xbb);
  const r = new Reader(backing.subarray(1, 5));
  assert.is(r.u32(), 2);
  r.end();
});

// --- The reference AVM BaseTx vector (network 12345, local X-chain), parsed and written back. ---

const UNSIGNED =
  '000000000000303907c132d73b379f706aceec6ee50e8b7d0e658a41d02ca32673b6b1b3f422c37800000002899a7bbd03eb44c019381cec1086f77b6b7b91d18ec6ee5597f3cb25ad835ad400000007000000000000012c000000000000000000000001000000013cb7d3842e8cee6a0ebd09f1fe884f6861e1b29c899a7bbd03eb44c019381cec1086f77b6b7b91d18ec6ee5597f3cb25ad835ad40000000700000000000004b000000000000000000000000100000001fc7250a211deddc70ee5a2738de5f07817351cef00000002010101010101010101010101010101010101010101010101010101010101010100000003899a7bbd03eb44c019381cec1086f77b6b7b91d18ec6ee5597f3cb25ad835ad40000000500000000000001f40000000100000000aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa00000000899a7bbd03eb44c019381cec1086f77b6b7b91d18ec6ee5597f3cb25ad835ad40000000500000000000003e80000000100000000';
const SIG =
  '52b3a5161b70f7cb3236ed7fcd047befcc9243d9a9812118d1ae2d3f6103942d5e79a7f11091beae669fa34dc0efc676adbc0a39ccc51e4e6a9d1a77922b34a801';
const SIGNED = UNSIGNED + '00000002' + ('00000009' + '00000001' + SIG).repeat(2);

interface Out { assetId: Id; typeId: number; amount: bigint; locktime: bigint; threshold: number; addrs: ShortId[] }
interface In { txId: Id; outputIndex: number; assetId: Id; typeId: number; amount: bigint; sigIdx: number[] }
interface Tx { typeId: number; networkId: number; chainId: Id; outs: Out[]; ins: In[]; creds: Array<{ typeId: number; sigs: Uint8Array[] }> }

function readTx(r: Reader): Tx {
  const tx: Tx = {
    typeId: r.u32(),
    networkId: r.u32(),
    chainId: r.id(),
    outs: r.array((o) => ({
      assetId: o.id(),
      typeId: o.u32(),
      amount: o.u64(),
      locktime: o.u64(),
      threshold: o.u32(),
      addrs: o.array((a) => a.shortId()),
    })),
    ins: r.array((i) => ({
      txId: i.id(),
      outputIndex: i.u32(),
      assetId: i.id(),
      typeId: i.u32(),
      amount: i.u64(),
      sigIdx: i.array((s) => s.u32()),
    })),
    creds: r.array((c) => ({ typeId: c.u32(), sigs: c.array((s) => s.fixedBytes(65)) })),
  };
  r.end();
  return tx;
}

function writeTx(w: Writer, tx: Tx): Uint8Array {
  w.u32(tx.typeId).u32(tx.networkId).id(tx.chainId);
  w.array(tx.outs, (o, x) => o.id(x.assetId).u32(x.typeId).u64(x.amount).u64(x.locktime).u32(x.threshold).array(x.addrs, (a, s) => a.shortId(s)));
  w.array(tx.ins, (i, x) => i.id(x.txId).u32(x.outputIndex).id(x.assetId).u32(x.typeId).u64(x.amount).array(x.sigIdx, (s, n) => s.u32(n)));
  w.array(tx.creds, (c, x) => c.u32(x.typeId).array(x.sigs, (s, b) => s.fixedBytes(b)));
  return w.finish();
}

test('reference BaseTx vector: parse, check fields, write back byte for byte', () => {
  const tx = readTx(new Reader(fromHex(SIGNED)));
  assert.is(tx.networkId, 12345);
  assert.is(tx.chainId.toString(), '4R5p2RXDGLqaifZE4hHWH9owe34pfoBULn1DrQTWivjg8o4aH');
  assert.is(tx.outs.length, 2);
  assert.is(tx.outs[0]!.amount, 300n);
  assert.is(tx.outs[0]!.addrs[0]!.toString(), '6Y3kysjF9jnHnYkdS9yGAuoHyae2eNmeV');
  assert.is(tx.outs[1]!.addrs[0]!.toString(), 'Q1pE5vPGEEMqRcVRMbtBK842Y6PxkBi5K');
  assert.is(tx.outs[0]!.assetId.toString(), '23btwLQm4zcJYHm1wndKCvhk2mW3onGc9Ci5ETeQZvQPS1qKdr');
  assert.is(tx.ins[1]!.amount, 1000n);
  assert.is(toHex(tx.creds[1]!.sigs[0]!), SIG);
  const again = writeTx(new Writer(), tx);
  assert.is(toHex(again), SIGNED);
  // tx ID = sha256(signed bytes); the signed bytes are sent as cb58
  const txId = Id.fromBytes(createHash('sha256').update(again).digest());
  assert.is(txId.toString(), 'ariTnNUvXLRFu6hBex5iadqRmVzvAsxKBnw4xbRuZ8wLtY9HC');
  const SIGNED_CB58 =
    '1111112d49WZb9T7HUShFQCFerdUW3BZVWEGAYvcysM825jvQ92HiZ8g3wmA5WZDhQoa6TztvfXhJvTyRhVBf1sVszqunWPQYf8Wbz49hMHTN6f3igep89y5hXpYdN6HAD2XRdgr5kicStpXZTkvRi2KAwdMxjkgLrnoK4yME5umscKuMRL9Avmrcfb7hwc3GLtoAwuc5qzzd7p1WLyJ8KY53SeNiVy7WHXLzZWNtPLQ6F16GLraye8yiYixgCxVn6LyvxRuWTTVk61er4wv18Bba61AYSatN6ojTiJcSGqacC3Jsrutqygj8YnYqRSuUScMpQZNX62rN8k5TDBCJX33bi5jRFBFFn7MRoYap15q2UTtSnj4eAewKn1jCLsEwDiA96jkKA2K1FGyaNXPuYkkv6BBDGVksr7RwSVSUUPUXEfE4vGkfqb18GqK6b6EPjocNc9NFpiZisaadEL2zuBxPTgV3u1C84pmFQxEiWRjHwKtiardVTvAaGzuioKAb1F7vsaXCqnCaoyJmKhZePkiRfccQHQHJby7xC6b2rm4jUq6JdjknXBBsJ22K54GSxEFwgvRs84f5yDRMxGGBMgftxjymcnEs4NfbbkbHQR9VokRGBq71RVxaKdwhVXAzAV9yjPLoKsQHFU23Sqf7Zu4iLjUDkC7igAxEqYwJ59hYXPGobQkVPQgMiCvuPA7DFnGxd5Gg9zX9RMVsc8L2yH1kMSSo';
  assert.is(cb58Encode(again), SIGNED_CB58);
  assert.is(toHex(cb58Decode(SIGNED_CB58)), SIGNED);
});

test('the vector with a byte cut off or one extra fails cleanly', () => {
  const full = fromHex(SIGNED);
  assert.throws(() => readTx(new Reader(full.subarray(0, full.length - 1))), codecError('InsufficientLength'));
  const extra = new Uint8Array(full.length + 3);
  extra.set(full);
  assert.throws(() => readTx(new Reader(extra)), codecError('Leftover', 'has 3 leftover bytes after unmarshalling'));
});

test('an ID read again is the same object; other bytes, another ID', () => {
  const a = Uint8Array.from({ length: 32 }, (_, i) => i + 1);
  const b = a.slice();
  b[5] = 99; // same first and last byte as a: the same slot
  const short = Uint8Array.from({ length: 20 }, (_, i) => 200 - i);
  const bytes = new Writer().fixedBytes(a).fixedBytes(a).fixedBytes(b).fixedBytes(a).fixedBytes(short).fixedBytes(short).finish();
  const r = new Reader(bytes);
  const [first, again, other, afterOther] = [r.id(), r.id(), r.id(), r.id()];
  const [s1, s2] = [r.shortId(), r.shortId()];
  r.end();
  assert.is(again, first);
  assert.is.not(other, first);
  // b took a's slot: a is read into a new object again, equal to the first.
  assert.ok(afterOther.equals(first));
  assert.equal([first.bytes, other.bytes, again.bytes, afterOther.bytes], [a, b, a, a]);
  assert.is(s2, s1);
  assert.equal(s1.bytes, short);
  // Shared, so it must not change: its bytes are handed out as copies.
  first.bytes.fill(0);
  assert.equal(again.bytes, a);
  // Later bytes in the buffer a value was read from do not reach it.
  bytes.fill(7);
  assert.equal(new Reader(bytes.slice(0, 32)).id().bytes, new Uint8Array(32).fill(7));
  assert.equal(first.bytes, a);
});

test.run();
