import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import { format, inspect } from 'node:util';
import { secp256k1 as nobleSecp } from '@noble/curves/secp256k1.js';
import {
  PrivateKey,
  addressFromPublicKey,
  loadNativeBackend,
  nobleBackend,
  recoverAddress,
  recoverAddressFromHash,
  recoverPublicKey,
  secp256k1,
  type Secp256k1Backend,
} from '../../src/crypto/secp256k1.js';
import { sha256 } from '../../src/crypto/hash.js';
import { fromHex, toHex } from '../../src/encoding/hex.js';
import { CryptoError } from '../../src/errors/errors.js';

const EWOQ_CB58 = 'ewoqjP7PxY4yr3iLTpLisriqt94hdyDFNgchSxGGztUrTXtNN';
const EWOQ_HEX = '56289e99c94b6912bfc12adc093c9b51124f0dc54ac7a766b2bc5ccf558d8027';
const EWOQ_PUB = '0327448e78ffa8cdb24cf19be0204ad954b1bdb4db8c51183534c1eecf2ebd094e';
const EWOQ_ADDR = '6Y3kysjF9jnHnYkdS9yGAuoHyae2eNmeV';
const N = fromHex('fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141');
const N_BIG = BigInt('0x' + toHex(N));

// The reference AVM BaseTx vector: its unsigned bytes and the ewoq signature over them.
const UNSIGNED = fromHex(
  '000000000000303907c132d73b379f706aceec6ee50e8b7d0e658a41d02ca32673b6b1b3f422c37800000002899a7bbd03eb44c019381cec1086f77b6b7b91d18ec6ee5597f3cb25ad835ad400000007000000000000012c000000000000000000000001000000013cb7d3842e8cee6a0ebd09f1fe884f6861e1b29c899a7bbd03eb44c019381cec1086f77b6b7b91d18ec6ee5597f3cb25ad835ad40000000700000000000004b000000000000000000000000100000001fc7250a211deddc70ee5a2738de5f07817351cef00000002010101010101010101010101010101010101010101010101010101010101010100000003899a7bbd03eb44c019381cec1086f77b6b7b91d18ec6ee5597f3cb25ad835ad40000000500000000000001f40000000100000000aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa00000000899a7bbd03eb44c019381cec1086f77b6b7b91d18ec6ee5597f3cb25ad835ad40000000500000000000003e80000000100000000',
);
const UNSIGNED_SHA256 = '4f6a09678168b4c8eb77623b5fee99c8a425e256634e7107927c74830225efee';
const SIG =
  '52b3a5161b70f7cb3236ed7fcd047befcc9243d9a9812118d1ae2d3f6103942d5e79a7f11091beae669fa34dc0efc676adbc0a39ccc51e4e6a9d1a77922b34a801';

const native = loadNativeBackend();
const backends: Secp256k1Backend[] = native ? [native, nobleBackend] : [nobleBackend];

const cryptoError = (code: string) => (e: unknown) => e instanceof CryptoError && e.code === code;

function randomKey(): Uint8Array {
  for (;;) {
    const k = new Uint8Array(randomBytes(32));
    if (nobleBackend.isValidPrivateKey(k)) return k;
  }
}

/** s -> n - s and v -> 1 - v: the same signature, malleated into high S. */
function malleate(sig: Uint8Array): Uint8Array {
  const s = BigInt('0x' + toHex(sig.subarray(32, 64)));
  const out = sig.slice();
  out.set(fromHex((N_BIG - s).toString(16).padStart(64, '0')), 32);
  out[64] = sig[64]! ^ 1;
  return out;
}

test('the native backend loads where prebuilt binaries exist, and is the default', () => {
  const prebuilt = ['linux-x64', 'darwin-arm64', 'win32-x64'].includes(`${process.platform}-${process.arch}`);
  if (prebuilt) {
    assert.ok(native, 'secp256k1 native bindings should load on this platform');
    assert.is(native!.name, 'native');
    assert.is(secp256k1, native);
  }
  assert.is(nobleBackend.name, 'noble');
  assert.is(loadNativeBackend(), native, 'loaded once');
});

test('ewoq key: bytes, public key, address', () => {
  const k = PrivateKey.fromString(EWOQ_CB58);
  assert.is(toHex(k.toBytes()), EWOQ_HEX);
  assert.is(k.toCb58(), EWOQ_CB58);
  assert.is(toHex(k.publicKey), EWOQ_PUB);
  assert.is(k.address.toString(), EWOQ_ADDR);
  assert.is(addressFromPublicKey(fromHex(EWOQ_PUB)).toString(), EWOQ_ADDR);
  for (const b of backends) assert.is(toHex(b.publicKey(fromHex(EWOQ_HEX))), EWOQ_PUB, b.name);
  const to = PrivateKey.fromBytes(fromHex('11'.repeat(32)));
  assert.is(to.address.key, 'fc7250a211deddc70ee5a2738de5f07817351cef');
  assert.is(to.address.toString(), 'Q1pE5vPGEEMqRcVRMbtBK842Y6PxkBi5K');
});

test('signing the reference BaseTx reproduces its signature (RFC 6979, low S), on every backend', () => {
  assert.is(toHex(sha256(UNSIGNED)), UNSIGNED_SHA256);
  const k = PrivateKey.fromString(EWOQ_CB58);
  assert.is(toHex(k.sign(UNSIGNED)), SIG);
  assert.is(toHex(k.signHash(sha256(UNSIGNED))), SIG);
  for (const b of backends) {
    assert.is(toHex(b.sign(sha256(UNSIGNED), k.toBytes())), SIG, b.name);
    assert.is(toHex(b.recover(sha256(UNSIGNED), fromHex(SIG))), EWOQ_PUB, b.name);
  }
  assert.is(recoverAddress(UNSIGNED, fromHex(SIG)).toString(), EWOQ_ADDR);
  assert.is(recoverAddressFromHash(sha256(UNSIGNED), fromHex(SIG)).toString(), EWOQ_ADDR);
  assert.is(toHex(recoverPublicKey(sha256(UNSIGNED), fromHex(SIG))), EWOQ_PUB);
});

test('native and noble agree: same signatures, each recovers the other’s', () => {
  if (!native) return;
  for (let i = 0; i < 300; i++) {
    const priv = randomKey();
    const hash = new Uint8Array(randomBytes(32));
    const pubN = native.publicKey(priv);
    const pubJ = nobleBackend.publicKey(priv);
    assert.equal(pubN, pubJ);
    const sigN = native.sign(hash, priv);
    const sigJ = nobleBackend.sign(hash, priv);
    assert.equal(sigN, sigJ, `signature ${i}`);
    assert.ok(sigN[64] === 0 || sigN[64] === 1);
    assert.equal(nobleBackend.recover(hash, sigN), pubN);
    assert.equal(native.recover(hash, sigJ), pubN);
    // the wrong v recovers some other key (or none), never the signer
    const flipped = sigN.slice();
    flipped[64] = sigN[64]! ^ 1;
    let otherN: Uint8Array | undefined;
    let otherJ: Uint8Array | undefined;
    try { otherN = native.recover(hash, flipped); } catch (e) { assert.ok(cryptoError('InvalidSignature')(e)); }
    try { otherJ = nobleBackend.recover(hash, flipped); } catch (e) { assert.ok(cryptoError('InvalidSignature')(e)); }
    assert.equal(otherN, otherJ);
    if (otherN) assert.not.equal(otherN, pubN);
  }
});

test('both backends give the same answers on arbitrary r values (off-curve x included)', () => {
  if (!native) return;
  const hash = new Uint8Array(32).fill(5);
  let failures = 0;
  for (let r = 1; r <= 40; r++) {
    const sig = new Uint8Array(65);
    sig[31] = r;
    sig[63] = 1;
    const outcome = (b: Secp256k1Backend) => {
      try {
        return toHex(b.recover(hash, sig));
      } catch (e) {
        assert.ok(cryptoError('InvalidSignature')(e), String(e));
        return 'invalid';
      }
    };
    const a = outcome(native);
    assert.is(a, outcome(nobleBackend), `r = ${r}`);
    if (a === 'invalid') failures++;
  }
  assert.ok(failures > 0, 'some small x values are not on the curve');
});

test('high S is rejected as a mutated signature (though mathematically valid)', () => {
  const k = PrivateKey.generate();
  const hash = sha256(Uint8Array.of(1, 2, 3));
  const sig = k.signHash(hash);
  const high = malleate(sig);
  // noble without its low-S policy accepts it and recovers the signer: it is a real signature...
  const rec = new Uint8Array(65);
  rec[0] = high[64]!;
  rec.set(high.subarray(0, 64), 1);
  assert.equal(nobleSecp.recoverPublicKey(rec, hash, { prehash: false }), k.publicKey);
  // ...which we refuse.
  for (const b of backends) {
    assert.throws(() => b.recover(hash, high), cryptoError('MutatedSignature'), b.name);
  }
  assert.throws(() => recoverAddressFromHash(hash, high), (e: unknown) =>
    e instanceof CryptoError && e.message === 'signature was mutated from its original format');
  // s = n/2 exactly is low; n/2 + 1 is high
  const half = fromHex('7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0');
  const edge = sig.slice();
  edge.set(half, 32);
  for (const b of backends) {
    try { b.recover(hash, edge); } catch (e) { assert.ok(cryptoError('InvalidSignature')(e), b.name); }
    const over = edge.slice();
    over[63] = 0xa1;
    assert.throws(() => b.recover(hash, over), cryptoError('MutatedSignature'), b.name);
  }
});

test('malformed signatures: bad v, length, r or s out of range, bad hash', () => {
  const k = PrivateKey.generate();
  const hash = sha256(Uint8Array.of(9));
  const sig = k.signHash(hash);
  for (const b of backends) {
    for (const v of [2, 3, 4, 27, 28, 255]) {
      const bad = sig.slice();
      bad[64] = v;
      assert.throws(() => b.recover(hash, bad), cryptoError('InvalidSignature'), `${b.name} v=${v}`);
    }
    assert.throws(() => b.recover(hash, sig.subarray(0, 64)), cryptoError('InvalidSignature'));
    assert.throws(() => b.recover(hash, Uint8Array.from([...sig, 0])), cryptoError('InvalidSignature'));
    const zeroR = sig.slice();
    zeroR.fill(0, 0, 32);
    assert.throws(() => b.recover(hash, zeroR), cryptoError('InvalidSignature'));
    const bigR = sig.slice();
    bigR.set(N, 0);
    assert.throws(() => b.recover(hash, bigR), cryptoError('InvalidSignature'));
    const zeroS = sig.slice();
    zeroS.fill(0, 32, 64);
    assert.throws(() => b.recover(hash, zeroS), cryptoError('InvalidSignature'));
    const bigS = sig.slice();
    bigS.set(N, 32);
    assert.throws(() => b.recover(hash, bigS), cryptoError('InvalidSignature'));
    assert.throws(() => b.recover(hash.subarray(0, 31), sig), cryptoError('InvalidSignature'));
    assert.throws(() => b.sign(hash.subarray(0, 31), k.toBytes()), cryptoError('InvalidSignature'));
  }
});

test('recovery reads a signature inside a larger buffer correctly', () => {
  const k = PrivateKey.fromString(EWOQ_CB58);
  const backing = new Uint8Array(200).fill(0xcc);
  backing.set(fromHex(SIG), 77);
  const view = backing.subarray(77, 77 + 65);
  for (const b of backends) assert.equal(b.recover(sha256(UNSIGNED), view), k.publicKey, b.name);
});

test('private key range: 1..n-1', () => {
  const nMinus1 = N.slice();
  nMinus1[31] = 0x40;
  const one = new Uint8Array(32);
  one[31] = 1;
  const nPlus1 = N.slice();
  nPlus1[31] = 0x42;
  for (const b of backends) {
    assert.ok(b.isValidPrivateKey(one));
    assert.ok(b.isValidPrivateKey(nMinus1));
    assert.not.ok(b.isValidPrivateKey(new Uint8Array(32)));
    assert.not.ok(b.isValidPrivateKey(N));
    assert.not.ok(b.isValidPrivateKey(nPlus1));
    assert.not.ok(b.isValidPrivateKey(new Uint8Array(31).fill(1)));
    assert.throws(() => b.publicKey(N), cryptoError('InvalidPrivateKey'));
    assert.throws(() => b.sign(new Uint8Array(32), new Uint8Array(32)), cryptoError('InvalidPrivateKey'));
  }
  assert.is(
    toHex(PrivateKey.fromBytes(one).publicKey),
    '0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798',
  );
  PrivateKey.fromBytes(nMinus1);
  for (const bad of [new Uint8Array(32), N, nPlus1, new Uint8Array(33).fill(1), new Uint8Array(31).fill(1)]) {
    assert.throws(() => PrivateKey.fromBytes(bad), (e: unknown) =>
      e instanceof CryptoError && e.code === 'InvalidPrivateKey' && e.message === 'invalid private key');
  }
});

test('generate, sign, recover round trip; keys copy their input', () => {
  const seen = new Set<string>();
  for (let i = 0; i < 20; i++) {
    const k = PrivateKey.generate();
    const msg = new Uint8Array(randomBytes(i * 10));
    assert.ok(recoverAddress(msg, k.sign(msg)).equals(k.address));
    assert.ok(PrivateKey.fromString(k.toCb58()).equals(k));
    seen.add(k.address.key);
  }
  assert.is(seen.size, 20);
  const src = fromHex(EWOQ_HEX);
  const k = PrivateKey.fromBytes(src);
  src.fill(0);
  assert.is(k.address.toString(), EWOQ_ADDR);
  const out = k.toBytes();
  out.fill(1);
  const pub = k.publicKey;
  pub.fill(0);
  assert.is(toHex(k.toBytes()), EWOQ_HEX);
  assert.is(toHex(k.publicKey), EWOQ_PUB);
});

test('a PrivateKey never shows its bytes', () => {
  const k = PrivateKey.fromString(EWOQ_CB58);
  const secrets = [EWOQ_HEX, EWOQ_CB58, Array.from(fromHex(EWOQ_HEX)).join(','), Array.from(fromHex(EWOQ_HEX)).join(', ')];
  const renderings = [
    String(k),
    `${k}`,
    k.toString(),
    JSON.stringify(k),
    JSON.stringify({ k, list: [k] }),
    inspect(k),
    inspect({ k }, { showHidden: true, depth: 10 }),
    inspect(k, { customInspect: true, showHidden: true }),
    format('%o %O %s %j', k, k, k, k),
    JSON.stringify(Object.entries(k)),
    Object.keys(k).join(','),
  ];
  for (const text of renderings) {
    for (const s of secrets) assert.not.ok(text.includes(s), `leaked in: ${text}`);
  }
  assert.is(String(k), `[PrivateKey ${EWOQ_ADDR}]`);
  assert.is(JSON.stringify(k), `"[PrivateKey ${EWOQ_ADDR}]"`);
  assert.is(inspect(k), `[PrivateKey ${EWOQ_ADDR}]`);
});

test('addressFromPublicKey wants a 33-byte compressed key', () => {
  assert.throws(() => addressFromPublicKey(new Uint8Array(32)), cryptoError('InvalidPublicKey'));
  assert.throws(() => addressFromPublicKey(new Uint8Array(65).fill(4)), cryptoError('InvalidPublicKey'));
  const bad = fromHex(EWOQ_PUB);
  bad[0] = 4;
  assert.throws(() => addressFromPublicKey(bad), cryptoError('InvalidPublicKey'));
});

test.run();
