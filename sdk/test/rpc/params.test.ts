import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DEFAULT_MAX_CB58_BYTES, Id, InvalidParamsError, PrivateKey, bindService, cb58Encode, cb58MaxChars, defineService, method, p, result } from '../../src/index.js';

const throwsField = (fn: () => unknown, field: string, re?: RegExp) => {
  try {
    fn();
  } catch (e) {
    assert.instance(e, InvalidParamsError);
    assert.is((e as InvalidParamsError).field, field);
    if (re) assert.match((e as Error).message, re);
    return;
  }
  assert.unreachable(`expected an error on ${field}`);
};

test('string: type, bounds, pattern', () => {
  const s = p.string({ min: 1, max: 3, pattern: /^[a-z]+$/, patternDescription: 'lower-case letters' });
  assert.is(s.parse('abc', 'f'), 'abc');
  throwsField(() => s.parse(1, 'f'), 'f', /expected a string but got number/);
  throwsField(() => s.parse('', 'f'), 'f', /must not be empty/);
  throwsField(() => s.parse('abcd', 'f'), 'f', /at most 3/);
  throwsField(() => s.parse('AB', 'f'), 'f', /lower-case letters/);
});

test('uint64 accepts decimal strings and safe numbers, converts to bigint', () => {
  const u = p.uint64();
  assert.is(u.parse('18446744073709551615', 'a'), 18446744073709551615n);
  assert.is(u.parse(12, 'a'), 12n);
  assert.is(u.parse('0', 'a'), 0n);
  throwsField(() => u.parse('18446744073709551616', 'a'), 'a', /overflowed uint64/);
  throwsField(() => u.parse(-1, 'a'), 'a');
  throwsField(() => u.parse(1.5, 'a'), 'a');
  throwsField(() => u.parse('01', 'a'), 'a');
  throwsField(() => u.parse('1e3', 'a'), 'a');
  throwsField(() => u.parse(null, 'a'), 'a');
  throwsField(() => u.parse(2 ** 60, 'a'), 'a', /non-negative integer/);
});

test('uint32 range and value overflowed text', () => {
  const u = p.uint(32);
  assert.is(u.parse('4294967295', 'n'), 4294967295);
  throwsField(() => u.parse('4294967296', 'n'), 'n', /value overflowed uint32/);
  assert.is(p.uint(8, { max: 32 }).parse(32, 'd'), 32);
  throwsField(() => p.uint(8, { max: 32 }).parse(33, 'd'), 'd', /at most 32/);
});

test('cb58, id and shortId decode with reference texts', () => {
  const bytes = new Uint8Array(32).fill(7);
  assert.equal(p.cb58().parse(cb58Encode(bytes), 'x'), bytes);
  assert.ok(p.id().parse(Id.empty.toString(), 'x').equals(Id.empty));
  throwsField(() => p.id().parse('0OIl', 'x'), 'x', /Invalid base58 digit/);
  throwsField(() => p.id().parse(cb58Encode(new Uint8Array(20)), 'x'), 'x', /expected 32 bytes but got 20/);
  throwsField(() => p.shortId().parse(cb58Encode(new Uint8Array(32)), 'x'), 'x', /expected 20 bytes/);
  throwsField(() => p.cb58({ length: 32 }).parse(cb58Encode(new Uint8Array(31)), 'd'), 'd', /expected 32 bytes but got 31/);
  throwsField(() => p.cb58().parse('', 'd'), 'd', /zero length string/);
});

test('cb58: the length is bounded from the decoded size, checked before decoding', () => {
  assert.is(cb58MaxChars(0), 6);
  for (let n = 0; n <= 600; n++) {
    const max = cb58MaxChars(n);
    assert.is(cb58Encode(new Uint8Array(n).fill(0xff)).length, max, `all 0xff, ${n} bytes: the bound is tight`);
    assert.ok(cb58Encode(new Uint8Array(n)).length <= max, `zeros, ${n} bytes`);
  }
  const parser = p.cb58({ maxBytes: 100 });
  assert.is(parser.max, cb58MaxChars(100));
  assert.is(parser.maxBytes, 100);
  const full = new Uint8Array(100).fill(0xff);
  assert.equal(parser.parse(cb58Encode(full), 'u'), full);
  // Too long: refused by length (not by a decode error), however long.
  throwsField(() => parser.parse('0'.repeat(parser.max! + 1), 'u'), 'u', /^u: must be at most 143 characters \(got 144\)$/);
  const t0 = performance.now();
  throwsField(() => parser.parse('z'.repeat(5_000_000), 'u'), 'u', /must be at most 143 characters/);
  assert.ok(performance.now() - t0 < 50);
  // Within the character bound but more bytes than allowed.
  throwsField(() => parser.parse(cb58Encode(new Uint8Array(101)), 'u'), 'u', /must be at most 100 bytes \(got 101\)/);
  // Defaults: DEFAULT_MAX_CB58_BYTES, or the exact length.
  assert.is(p.cb58().maxBytes, DEFAULT_MAX_CB58_BYTES);
  assert.is(p.cb58().max, cb58MaxChars(DEFAULT_MAX_CB58_BYTES));
  assert.is(p.cb58({ length: 32 }).max, cb58MaxChars(32));
});

test('object: case-insensitive names, unknown fields ignored, duplicate fields, missing required, optional', () => {
  const o = p.object({ fileName: p.string(), count: p.optional(p.uint(32)) });
  assert.equal(o.parse({ filename: 'a' }, ''), { fileName: 'a' });
  assert.equal(o.parse({ fileName: 'a', count: '3' }, ''), { fileName: 'a', count: 3 });
  assert.equal(o.parse({ fileName: 'a', count: null }, ''), { fileName: 'a' });
  assert.equal(o.parse({ fileName: 'a', other: 1, from: ['x'] }, ''), { fileName: 'a' });
  assert.equal(o.parse({ other: { deep: [1] }, filename: 'a' }, ''), { fileName: 'a' });
  throwsField(() => o.parse({ other: 1 }, ''), 'fileName', /missing required field/);
  throwsField(() => o.parse({ fileName: 'a', FILENAME: 'b' }, ''), 'FILENAME', /duplicate/);
  throwsField(() => o.parse({}, ''), 'fileName', /missing required field/);
  throwsField(() => o.parse([], ''), '', /expected an object but got array/);
  const nested = p.object({ holders: p.array(p.object({ amount: p.uint64() }), { max: 2 }) });
  throwsField(() => nested.parse({ holders: [{ amount: 1 }, { amount: 'x' }] }, ''), 'holders[1].amount');
  throwsField(() => nested.parse({ holders: [{}, {}, {}] }, ''), 'holders', /at most 2/);
});

test('bindService: params as object, one-element array, or omitted', async () => {
  const svc = defineService('t', { add: method({ params: p.object({ a: p.uint64(), b: p.uint64() }), result: result<{ sum: bigint }>() }) });
  const bound = bindService(svc, { add: async ({ a, b }) => ({ sum: a + b }) });
  const add = bound.methods.get('t.add')!;
  assert.equal(await add({ a: 1, b: '2' }), { sum: 3n });
  assert.equal(await add([{ a: 1, b: 2 }]), { sum: 3n });
  try {
    await add([{ a: 1 }, { b: 2 }]);
    assert.unreachable();
  } catch (e) {
    assert.instance(e, InvalidParamsError);
  }
  try {
    await add(undefined);
    assert.unreachable();
  } catch (e) {
    assert.is((e as InvalidParamsError).field, 'a');
  }
});

test('p.privateKey: a cb58 key parses to a PrivateKey; anything else is refused with the given problem text, never echoing the key', () => {
  const key = PrivateKey.generate();
  const parser = p.privateKey({ problem: 'problem while parsing privateKey' });
  assert.ok(parser.parse(key.toCb58(), 'privateKey').equals(key));
  for (const bad of ['', 'nope0', cb58Encode(new Uint8Array(31)), cb58Encode(new Uint8Array(32)), 7]) {
    try {
      parser.parse(bad, 'privateKey');
      assert.unreachable();
    } catch (e) {
      assert.match((e as Error).message, /^privateKey: problem while parsing privateKey \(/);
    }
  }
});

test.run();
