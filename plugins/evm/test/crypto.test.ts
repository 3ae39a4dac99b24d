import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { bigIntToUnpaddedBytes } from '@ethereumjs/util';
import { chainCrypto, secpBackendName, keccakBackendName, keccak256 } from '../src/chain-entry.js';
import { referenceCrypto } from '../src/chain/crypto.js';
import { common, key, signedTx, hex, addr } from './helpers.js';

test('native secp256k1 is in use and agrees with noble on sender recovery', () => {
  assert.is(secpBackendName, 'native');
  const c = chainCrypto();
  assert.ok(c.ecrecover, 'the chain uses its own ecrecover');
  assert.is(common.customCrypto.ecrecover, c.ecrecover);
  for (let i = 1; i <= 20; i++) {
    const tx = signedTx({ key: key(i), nonce: BigInt(i), to: addr(i + 1), value: BigInt(i) });
    const msg = tx.getHashedMessageToSign();
    const r = bigIntToUnpaddedBytes(tx.r!);
    const s = bigIntToUnpaddedBytes(tx.s!);
    const fast = c.ecrecover!(msg, tx.v!, r, s);
    const slow = referenceCrypto.ecrecover(msg, tx.v!, r, s);
    assert.is(hex(fast), hex(slow));
    assert.is(hex(fast), hex(referenceCrypto.publicKey(key(i))));
    assert.is(hex(tx.getSenderAddress().bytes), hex(addr(i)));
  }
});

test('a bad recovery id throws with both', () => {
  const c = chainCrypto();
  const tx = signedTx({ nonce: 0n, to: addr(1) });
  const args = [tx.getHashedMessageToSign(), 5n, bigIntToUnpaddedBytes(tx.r!), bigIntToUnpaddedBytes(tx.s!)] as const;
  assert.throws(() => c.ecrecover!(...args));
  assert.throws(() => referenceCrypto.ecrecover(...args));
});

test('the keccak in use agrees with the reference on many lengths', () => {
  for (const n of [0, 1, 31, 32, 33, 135, 136, 137, 500, 4096, 65_537]) {
    const data = new Uint8Array(n).map((_, i) => (i * 31 + n) & 255);
    assert.is(hex(keccak256(data)), hex(referenceCrypto.keccak256(data)));
  }
  assert.is(hex(keccak256(new Uint8Array())), '0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470');
});

test('the WebAssembly keccak is in use: agrees with noble on views into a larger buffer, and each digest is its own array', () => {
  assert.is(keccakBackendName, 'wasm');
  assert.is(common.customCrypto.keccak256, keccak256);
  const big = new Uint8Array(700).map((_, i) => (i * 7) & 255);
  for (const [off, len] of [[0, 32], [5, 20], [13, 532], [699, 1], [100, 0]] as const) {
    const view = big.subarray(off, off + len);
    assert.is(hex(keccak256(view)), hex(referenceCrypto.keccak256(view)), `offset ${off} length ${len}`);
  }
  const a = keccak256(Uint8Array.of(1));
  const b = keccak256(Uint8Array.of(2));
  assert.is.not(a.buffer, b.buffer);
  assert.is(a.length, 32);
  assert.is(hex(a), hex(referenceCrypto.keccak256(Uint8Array.of(1))), 'a later digest does not overwrite an earlier one');
});

test('signing through the chain common (native) gives signatures noble verifies', () => {
  const tx = signedTx({ nonce: 3n, to: addr(1), value: 9n });
  const again = signedTx({ nonce: 3n, to: addr(1), value: 9n });
  assert.is(hex(tx.hash()), hex(again.hash()), 'deterministic (RFC 6979)');
  assert.ok(tx.verifySignature());
});

test.run();
