import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { hash160, nodeSha256, reusedHasher, ripemd160, sha256, sha256BackendName } from '../../src/crypto/hash.js';
import { fromHex, toHex } from '../../src/encoding/hex.js';

const abc = new TextEncoder().encode('abc');

test('sha256 vectors', () => {
  assert.is(toHex(sha256(new Uint8Array())), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  assert.is(toHex(sha256(abc)), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  const big = new Uint8Array(1_000_000).fill(0x61);
  assert.is(toHex(sha256(big)), 'cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0');
});

test('ripemd160 vectors', () => {
  assert.is(toHex(ripemd160(new Uint8Array())), '9c1185a5c5e9fc54612808977ee8f548b2258d31');
  assert.is(toHex(ripemd160(abc)), '8eb208f7e05d987a9b044a8e98c6b087f15a0bfc');
});

test('hash160 = ripemd160(sha256(x)): the ewoq address', () => {
  const pub = fromHex('0327448e78ffa8cdb24cf19be0204ad954b1bdb4db8c51183534c1eecf2ebd094e');
  assert.is(toHex(hash160(pub)), '3cb7d3842e8cee6a0ebd09f1fe884f6861e1b29c');
  assert.equal(hash160(abc), ripemd160(sha256(abc)));
});

test('results are plain, standalone Uint8Arrays (not Buffers)', () => {
  for (const h of [sha256(abc), ripemd160(abc), hash160(abc)]) {
    assert.is(Object.getPrototypeOf(h), Uint8Array.prototype);
    assert.is(h.byteOffset, 0);
    assert.is(h.buffer.byteLength, h.length);
  }
});

test('a view into a larger buffer hashes only the view', () => {
  const backing = new Uint8Array([0xff, 0x61, 0x62, 0x63, 0xff]);
  assert.equal(sha256(backing.subarray(1, 4)), sha256(abc));
  assert.equal(ripemd160(backing.subarray(1, 4)), ripemd160(abc));
});

test('short inputs go to the WebAssembly SHA-256, which agrees with node:crypto at every length; each result is its own array', () => {
  assert.is(sha256BackendName, 'wasm', 'hash-wasm loads here');
  let x = 7;
  const next = () => ((x = (x * 1103515245 + 12345) >>> 0) >>> 16) & 0xff;
  const results: Array<[Uint8Array, string]> = [];
  for (let len = 0; len <= 600; len += len < 300 ? 1 : 37) {
    const data = Uint8Array.from({ length: len }, next);
    const want = createHash('sha256').update(data).digest('hex');
    const got = sha256(data);
    assert.is(toHex(got), want, `length ${len}`);
    assert.is(toHex(nodeSha256(data)), want);
    assert.is(Object.getPrototypeOf(got), Uint8Array.prototype);
    results.push([got, want]);
  }
  for (const [got, want] of results) assert.is(toHex(got), want, 'later hashes changed no earlier result');
});

test('reusedHasher: undefined (so callers fall back) when the hasher cannot be made or hashes wrong; else a checked function', async () => {
  const { createSHA256 } = createRequire(import.meta.url)('hash-wasm/dist/sha256.umd.min.js');
  const empty = createHash('sha256').digest('hex');
  assert.is(await reusedHasher(() => Promise.reject(new Error('WebAssembly unavailable')), empty), undefined);
  assert.is(await reusedHasher(() => { throw new Error('no bundle'); }, empty), undefined);
  assert.is(await reusedHasher(() => createSHA256(), '00'.repeat(32)), undefined, 'a hasher whose digest of nothing is wrong is refused');
  const hash = await reusedHasher(() => createSHA256(), empty);
  assert.ok(hash);
  assert.is(toHex(hash!(Uint8Array.of(1, 2, 3))), createHash('sha256').update(Uint8Array.of(1, 2, 3)).digest('hex'));
});

test.run();
