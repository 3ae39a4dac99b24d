import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import { inspect } from 'node:util';
import { Id, ShortId, vmIdFromName } from '../../src/ids/id.js';
import { cb58Encode } from '../../src/encoding/cb58.js';
import { fromHex, toHex } from '../../src/encoding/hex.js';
import { CodecError, EncodingError } from '../../src/errors/errors.js';

const isEncodingError = (code: string, message?: string) => (e: unknown) =>
  e instanceof EncodingError && e.code === code && (message === undefined || e.message === message);

test('Id.empty is 32 zero bytes, written 1111...LpoYY', () => {
  assert.is(Id.empty.toString(), '11111111111111111111111111111111LpoYY');
  assert.equal(Id.empty.bytes, new Uint8Array(32));
  assert.is(ShortId.empty.bytes.length, 20);
  assert.ok(Id.fromString('11111111111111111111111111111111LpoYY').equals(Id.empty));
});

test('vmIdFromName: the whole table of the reference node\'s VM and Fx IDs', () => {
  const table: Record<string, string> = {
    avm: 'jvYyfQTxGMJLuGWa55kdP2p2zSUYsQ5Raupu4TW34ZAUBAbtq',
    platformvm: 'rWhpuQPF1kb72esV2momhMuTYGkEb1oL29pt2EBXWmSy4kxnT',
    timestamp: 'tGas3T58KzdjLHhBDMnH2TvrddhqTji5iZAMZ3RXs2NLpSnhH',
    secp256k1fx: 'spdxUxVJQbX85MGxMHbKw1sHxMnSqJ3QBzDyDYEP3h6TLuxqQ',
    nftfx: 'qd2U4HDWUvMrVUeTcCHp6xH3Qpnn1XbU5MDdnBoiifFqvgXwT',
    propertyfx: 'rXJsCSEYXg2TehWxCEEGj6JU2PWKTkd6cBdNLjoe2SpsKD9cy',
    evm: 'mgj786NP7uDwBCcq6YwThhaN8FLyybkCa4zBWTQbNgmK6k9A6',
  };
  for (const [name, cb58] of Object.entries(table)) {
    const id = vmIdFromName(name);
    assert.is(id.toString(), cb58, name);
    assert.ok(Id.fromString(cb58).equals(id), name);
    const bytes = id.bytes;
    assert.is(new TextDecoder().decode(bytes.subarray(0, name.length)), name);
    assert.ok(bytes.subarray(name.length).every((x) => x === 0));
  }
  assert.ok(vmIdFromName('').equals(Id.empty));
  assert.is(vmIdFromName('x'.repeat(32)).bytes[31], 0x78);
  assert.throws(() => vmIdFromName('x'.repeat(33)), isEncodingError('BadLength'));
});

test('fromBytes checks the length and copies', () => {
  assert.throws(() => Id.fromBytes(new Uint8Array(31)), isEncodingError('BadLength', 'input has insufficient length'));
  assert.throws(() => Id.fromBytes(new Uint8Array(33)), isEncodingError('BadLength'));
  assert.throws(() => ShortId.fromBytes(new Uint8Array(32)), isEncodingError('BadLength', 'input has insufficient length'));
  try {
    Id.fromBytes(new Uint8Array(31));
  } catch (e) {
    assert.equal((e as EncodingError).data, { expected: 32, actual: 31 });
  }
  const src = new Uint8Array(32).fill(7);
  const id = Id.fromBytes(src);
  src[0] = 0;
  assert.is(id.bytes[0], 7, 'later changes to the source do not leak in');
  const out = id.bytes;
  out[1] = 0;
  assert.is(id.bytes[1], 7, 'bytes is a copy');
  // a view into a larger buffer works too
  const big = new Uint8Array(100).fill(3);
  assert.is(ShortId.fromBytes(big.subarray(10, 30)).bytes.every((x) => x === 3), true);
});

test('fromString: cb58 errors pass through; wrong length is BadLength', () => {
  assert.throws(() => Id.fromString(''), isEncodingError('ZeroLength', 'zero length string'));
  assert.throws(() => Id.fromString('0'), isEncodingError('InvalidDigit', "Invalid base58 digit ('0')"));
  assert.throws(() => Id.fromString('11111111111111111111111111111111LpoYZ'), isEncodingError('BadChecksum'));
  const short = cb58Encode(new Uint8Array(20).fill(1));
  assert.throws(() => Id.fromString(short), isEncodingError('BadLength', 'input has insufficient length'));
  assert.is(ShortId.fromString(short).toString(), short);
  assert.is(ShortId.fromString('6Y3kysjF9jnHnYkdS9yGAuoHyae2eNmeV').key, '3cb7d3842e8cee6a0ebd09f1fe884f6861e1b29c');
  // Longer than any ID's cb58 can be: refused before decoding, however long.
  assert.is(Id.fromString(cb58Encode(new Uint8Array(32).fill(0xff))).bytes.length, 32);
  const t0 = performance.now();
  assert.throws(() => Id.fromString('z'.repeat(2_000_000)), isEncodingError('BadLength', 'input has insufficient length'));
  assert.throws(() => ShortId.fromString('z'.repeat(2_000_000)), isEncodingError('BadLength'));
  assert.ok(performance.now() - t0 < 50);
});

test('key, toJSON, inspect, equals, compare', () => {
  const a = Id.fromBytes(new Uint8Array(32).fill(1));
  const b = Id.fromBytes(new Uint8Array(32).fill(1));
  const c = Id.fromBytes(new Uint8Array(32).fill(2));
  assert.is(a.key, '01'.repeat(32));
  assert.ok(Id.fromKey(a.key).equals(a));
  assert.ok(a.equals(b));
  assert.not.ok(a.equals(c));
  assert.is(a.compare(b), 0);
  assert.is(a.compare(c), -1);
  assert.is(c.compare(a), 1);
  assert.equal([c, Id.empty, a].sort((x, y) => x.compare(y)), [Id.empty, a, c]);
  const m = new Map([[a.key, 'a']]);
  assert.is(m.get(b.key), 'a');
  assert.is(JSON.stringify({ id: a }), `{"id":"${a.toString()}"}`);
  assert.is(String(a), a.toString());
  assert.is(inspect(a), `Id(${a.toString()})`);
  assert.is(inspect(ShortId.empty), `ShortId(${ShortId.empty.toString()})`);
  assert.is(a.toString(), a.toString(), 'cached');
});

test('copyTo writes the bytes at an offset', () => {
  const target = new Uint8Array(40);
  vmIdFromName('avm').copyTo(target, 4);
  assert.is(toHex(target.subarray(4, 8)), '61766d00');
});

test('prefix: sha256 of 8-byte big-endian prefixes then the ID', () => {
  const txId = Id.fromBytes(fromHex('0101010101010101010101010101010101010101010101010101010101010101'));
  const expected = createHash('sha256')
    .update(fromHex('0000000000000003'))
    .update(txId.bytes)
    .digest();
  assert.is(txId.prefix(3).key, toHex(expected));
  assert.ok(txId.prefix(3n).equals(txId.prefix(3)));
  const two = createHash('sha256')
    .update(fromHex('ffffffffffffffff0000000000000001'))
    .update(txId.bytes)
    .digest();
  assert.is(txId.prefix(0xffffffffffffffffn, 1).key, toHex(two));
  const none = createHash('sha256').update(txId.bytes).digest();
  assert.is(txId.prefix().key, toHex(none));
  assert.throws(() => txId.prefix(-1), (e: unknown) => e instanceof CodecError && e.code === 'Invalid');
  assert.throws(() => txId.prefix(1n << 64n), (e: unknown) => e instanceof CodecError && e.code === 'Invalid');
  assert.throws(() => txId.prefix(1.5), (e: unknown) => e instanceof CodecError && e.code === 'Invalid');
});

test('IDs made by another copy of the sdk (a plugin carrying its own) compare by their bytes', async () => {
  const other = (await import(new URL('../../src/ids/id.js?second-copy', import.meta.url).href)) as typeof import('../../src/ids/id.js');
  assert.is.not(other.Id, Id, 'really a second copy');
  const mine = Id.fromBytes(new Uint8Array(32).fill(3));
  const theirs = other.Id.fromBytes(new Uint8Array(32).fill(3));
  assert.ok(mine.equals(theirs as unknown as Id));
  assert.ok((theirs as unknown as Id).equals(mine));
  assert.not.ok(mine.equals(other.Id.fromBytes(new Uint8Array(32).fill(4)) as unknown as Id));
  assert.not.ok(mine.equals(other.ShortId.fromBytes(new Uint8Array(20).fill(3)) as unknown as Id), 'another kind (length) is never equal');
  assert.is(mine.compare(other.Id.fromBytes(new Uint8Array(32).fill(4)) as unknown as Id), -1);
  assert.not.ok(mine.equals({} as Id));
  assert.not.ok(mine.equals({ get bytes(): Uint8Array { throw new Error('hostile'); } } as unknown as Id));
  assert.throws(() => mine.compare({} as Id), /not an ID/);
});

test.run();
