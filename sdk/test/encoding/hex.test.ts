import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { fromHex, toHex } from '../../src/encoding/hex.js';
import { EncodingError } from '../../src/errors/errors.js';

function throwsHex(s: string, pattern: RegExp): void {
  try {
    fromHex(s);
  } catch (e) {
    assert.instance(e, EncodingError);
    assert.is((e as EncodingError).code, 'BadHex');
    assert.match((e as Error).message, pattern);
    return;
  }
  assert.unreachable(`fromHex(${JSON.stringify(s)}) should throw`);
}

test('toHex is lower-case without 0x', () => {
  assert.is(toHex(new Uint8Array()), '');
  assert.is(toHex(Uint8Array.from([0, 1, 0xab, 0xff, 0x10])), '0001abff10');
});

test('toHex of a view reads only its own bytes (offset and length into a shared buffer)', () => {
  const whole = Uint8Array.from([1, 2, 3, 4, 5, 6]);
  assert.is(toHex(whole.subarray(2, 4)), '0304');
  assert.is(toHex(new Uint8Array(whole.buffer, 5, 1)), '06');
  assert.is(toHex(whole.subarray(3, 3)), '');
});

test('fromHex accepts either case and an optional 0x', () => {
  assert.equal(fromHex(''), new Uint8Array());
  assert.equal(fromHex('0x'), new Uint8Array());
  assert.equal(fromHex('00ff'), Uint8Array.from([0, 255]));
  assert.equal(fromHex('0xAbCd'), Uint8Array.from([0xab, 0xcd]));
  assert.equal(fromHex('0XABCD'), Uint8Array.from([0xab, 0xcd]));
});

test('round trip of every byte value', () => {
  const all = Uint8Array.from({ length: 256 }, (_, i) => i);
  assert.equal(fromHex(toHex(all)), all);
});

test('errors name the problem', () => {
  throwsHex('abc', /odd number of digits \(3\)/);
  throwsHex('0x1', /odd number of digits \(1\)/);
  throwsHex('zz', /invalid hex character "z" at position 0/);
  throwsHex('0xa g0', /invalid hex character " " at position 3/);
  throwsHex('0x0x', /invalid hex character "x" at position 3/);
  throwsHex('12-4', /invalid hex character "-" at position 2/);
});

test('hex of short arrays leaves their bytes where they are (no native copy per call)', () => {
  // An array of up to 64 bytes lives in the JS heap; reading its .buffer moves its bytes to native
  // memory for good, which process.memoryUsage().arrayBuffers counts.
  const ids = Array.from({ length: 20_000 }, (_, i) => Uint8Array.from({ length: 32 }, (_, j) => (i + j) & 0xff));
  const before = process.memoryUsage().arrayBuffers;
  const keys = ids.map(toHex);
  const grew = process.memoryUsage().arrayBuffers - before;
  assert.ok(grew < 200_000, `${grew} bytes of array buffers more`);
  assert.is(keys[3], Buffer.from(ids[3]!).toString('hex'));
  assert.is(toHex(ids[9]!.subarray(30)), Buffer.from(ids[9]!.subarray(30)).toString('hex'));
  assert.is(toHex(new Uint8Array(0)), '');
});

test.run();
