import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  bytesEqual,
  compareBytes,
  concatBytes,
  constantTimeEqual,
  utf8Decode,
  utf8Encode,
  pooledBytes,
} from '../../src/encoding/bytes.js';

const b = (...xs: number[]) => Uint8Array.from(xs);

test('concatBytes joins parts in order, and handles none', () => {
  assert.equal(concatBytes(b(1, 2), b(), b(3), b(4, 5)), b(1, 2, 3, 4, 5));
  assert.equal(concatBytes(), b());
  const one = b(9);
  const out = concatBytes(one);
  assert.equal(out, one);
  assert.is.not(out, one);
});

test('bytesEqual', () => {
  assert.ok(bytesEqual(b(), b()));
  assert.ok(bytesEqual(b(1, 2, 3), b(1, 2, 3)));
  assert.not.ok(bytesEqual(b(1, 2, 3), b(1, 2, 4)));
  assert.not.ok(bytesEqual(b(1, 2), b(1, 2, 3)));
});

test('constantTimeEqual: same answers as bytesEqual; length mismatch is false', () => {
  assert.ok(constantTimeEqual(b(), b()));
  assert.ok(constantTimeEqual(b(7, 8), b(7, 8)));
  assert.not.ok(constantTimeEqual(b(7, 8), b(7, 9)));
  assert.not.ok(constantTimeEqual(b(0, 8), b(7, 8)));
  assert.not.ok(constantTimeEqual(b(7), b(7, 8)));
});

test('compareBytes: unsigned lexicographic, shorter prefix first', () => {
  assert.is(compareBytes(b(), b()), 0);
  assert.is(compareBytes(b(1), b(1)), 0);
  assert.is(compareBytes(b(1), b(2)), -1);
  assert.is(compareBytes(b(2), b(1)), 1);
  assert.is(compareBytes(b(0x7f), b(0x80)), -1, 'unsigned, not signed');
  assert.is(compareBytes(b(0xff, 0), b(0x01, 0xff)), 1);
  assert.is(compareBytes(b(1, 2), b(1, 2, 0)), -1);
  assert.is(compareBytes(b(1, 2, 0), b(1, 2)), 1);
  assert.is(compareBytes(b(), b(0)), -1);
  const sorted = [b(2), b(1, 0), b(), b(1), b(0xff)].sort(compareBytes);
  assert.equal(sorted, [b(), b(1), b(1, 0), b(2), b(0xff)]);
});

test('utf8 round trip', () => {
  for (const s of ['', 'avm', 'héllo', '日本語', '😀 emoji']) {
    assert.is(utf8Decode(utf8Encode(s)), s);
  }
  assert.equal(utf8Encode('é'), b(0xc3, 0xa9));
  assert.is(utf8Decode(b(0xff)), '\ufffd', 'invalid bytes decode leniently');
});

test('pooledBytes: a plain Uint8Array of the length asked, whose slice is a copy; two never share bytes', () => {
  const a = pooledBytes(100);
  const b = pooledBytes(100);
  assert.is(Object.getPrototypeOf(a), Uint8Array.prototype, 'not a Buffer (whose slice is a view)');
  assert.is(a.length, 100);
  a.fill(1);
  b.fill(2);
  assert.ok(a.every((x) => x === 1), 'b did not write over a');
  const copy = a.slice(0, 10);
  copy[0] = 9;
  assert.is(a[0], 1);
  assert.is(pooledBytes(0).length, 0);
});

test.run();
