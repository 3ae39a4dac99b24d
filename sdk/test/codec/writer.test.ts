import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Writer, DEFAULT_MAX_SIZE } from '../../src/codec/writer.js';
import { toHex } from '../../src/encoding/hex.js';
import { Id, ShortId, vmIdFromName } from '../../src/ids/id.js';
import { CodecError } from '../../src/errors/errors.js';

const codecError = (code: string) => (e: unknown) => e instanceof CodecError && e.code === code;

test('integers are big-endian; bool is one byte', () => {
  const out = new Writer()
    .u8(0xab)
    .u16(0x0102)
    .u32(0x03040506)
    .u64(0x0708090a0b0c0d0en)
    .u64(12345)
    .bool(true)
    .bool(false)
    .finish();
  assert.is(toHex(out), 'ab' + '0102' + '03040506' + '0708090a0b0c0d0e' + '0000000000003039' + '01' + '00');
});

test('bytes, str, fixedBytes, array, ids', () => {
  const w = new Writer();
  w.bytes(Uint8Array.of(1, 2, 3));
  w.str('avm');
  w.str('');
  w.fixedBytes(Uint8Array.of(9, 9));
  w.array([1, 2], (w2, n) => w2.u16(n));
  w.array([], (w2, n: number) => w2.u8(n));
  w.id(vmIdFromName('avm'));
  w.shortId(ShortId.fromBytes(new Uint8Array(20).fill(0xee)));
  assert.is(
    toHex(w.finish()),
    '00000003010203' +
      '0003' + '61766d' +
      '0000' +
      '0909' +
      '00000002' + '0001' + '0002' +
      '00000000' +
      '61766d' + '00'.repeat(29) +
      'ee'.repeat(20),
  );
});

test('str counts UTF-8 bytes and stops at 65535', () => {
  assert.is(toHex(new Writer().str('é').finish()), '0002c3a9');
  assert.is(new Writer().str('x'.repeat(65535)).length, 65537);
  assert.throws(() => new Writer().str('x'.repeat(65536)), codecError('TooLarge'));
});

test('integers are range-checked', () => {
  const w = new Writer();
  assert.throws(() => w.u8(256), codecError('Invalid'));
  assert.throws(() => w.u8(-1), codecError('Invalid'));
  assert.throws(() => w.u8(1.5), codecError('Invalid'));
  assert.throws(() => w.u16(0x10000), codecError('Invalid'));
  assert.throws(() => w.u32(2 ** 32), codecError('Invalid'));
  assert.throws(() => w.u32(NaN), codecError('Invalid'));
  assert.throws(() => w.u64(-1n), codecError('Invalid'));
  assert.throws(() => w.u64(1n << 64n), codecError('Invalid'));
  assert.throws(() => w.u64(2 ** 53), codecError('Invalid'), 'unsafe numbers must be bigints');
  assert.throws(() => w.u64(-1), codecError('Invalid'));
  assert.is(w.length, 0, 'nothing written by failed calls');
  w.u8(255).u16(0xffff).u32(0xffffffff).u64((1n << 64n) - 1n).u64(Number.MAX_SAFE_INTEGER);
  assert.is(toHex(w.finish()), 'ff' + 'ffff' + 'ffffffff' + 'ffffffffffffffff' + '001fffffffffffff');
});

test('grows past its initial buffer; finish returns a copy and the writer stays usable', () => {
  const w = new Writer();
  for (let i = 0; i < 1000; i++) w.u32(i);
  const a = w.finish();
  assert.is(a.length, 4000);
  assert.is(new DataView(a.buffer).getUint32(4 * 999), 999);
  w.u8(1);
  assert.is(w.finish().length, 4001);
  assert.is(a.length, 4000);
});

test('maxSize: default 2^18, TooLarge beyond it', () => {
  assert.is(DEFAULT_MAX_SIZE, 262144);
  const w = new Writer();
  w.fixedBytes(new Uint8Array(DEFAULT_MAX_SIZE));
  assert.throws(() => w.u8(0), codecError('TooLarge'));
  const small = new Writer({ maxSize: 10 });
  small.u64(1n);
  small.u16(2);
  assert.throws(() => small.u8(3), codecError('TooLarge'));
  assert.is(small.finish().length, 10);
  assert.throws(() => new Writer({ maxSize: 3 }).u32(0), codecError('TooLarge'));
});

test('slice and []byte lengths are limited by maxSliceLength', () => {
  const w = new Writer({ maxSliceLength: 3 });
  w.array([1, 2, 3], (x, n) => x.u8(n));
  assert.throws(() => w.array([1, 2, 3, 4], (x, n) => x.u8(n)), codecError('TooLarge'));
  assert.throws(() => w.bytes(new Uint8Array(4)), codecError('TooLarge'));
  assert.is(w.length, 7);
});

test('an Id written is its 32 bytes', () => {
  const id = Id.fromString('4R5p2RXDGLqaifZE4hHWH9owe34pfoBULn1DrQTWivjg8o4aH');
  assert.is(toHex(new Writer().id(id).finish()), '07c132d73b379f706aceec6ee50e8b7d0e658a41d02ca32673b6b1b3f422c378');
});

test('initialSize only reserves: the bytes are the same from any start, and maxSize still bounds them', () => {
  const payload = new Uint8Array(5000).fill(9);
  const write = (initialSize?: number) => new Writer(initialSize === undefined ? {} : { initialSize }).u32(7).bytes(payload).finish();
  const expected = write();
  for (const initialSize of [0, 1, 8, 5008, 1 << 20]) assert.equal(write(initialSize), expected, `initialSize ${initialSize}`);
  assert.throws(() => new Writer({ maxSize: 100, initialSize: 1 << 20 }).fixedBytes(new Uint8Array(101)), /larger than the limit of 100/);
});

test('writers reuse working buffers, never a result: results stay as they were through later, nested, growing and continued writers', () => {
  const results: Array<[Uint8Array, string]> = [];
  const keep = (b: Uint8Array) => results.push([b, toHex(b)]);
  for (let i = 0; i < 40; i++) {
    const outer = new Writer().u32(i).fixedBytes(new Uint8Array(100).fill(i));
    // a nested writer while the outer one is open
    const inner = new Writer({ initialSize: 8 }).u8(i).fixedBytes(new Uint8Array(300).fill(0xee));
    keep(inner.finish());
    outer.fixedBytes(new Uint8Array(5000).fill(i + 1)); // grows
    const first = outer.finish();
    keep(first);
    outer.u8(0xab); // goes on after finish
    keep(outer.finish());
    assert.is(toHex(first), results[results.length - 2]![1]);
  }
  for (const [bytes, hex] of results) assert.is(toHex(bytes), hex);
  // a fresh writer reads as empty and writes only what it is given, whatever earlier writers left
  const w = new Writer().u8(1);
  assert.is(toHex(w.finish()), '01');
});

test.run();
