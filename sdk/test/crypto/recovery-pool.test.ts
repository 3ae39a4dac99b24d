import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { recoveredSigners } from '../../src/crypto/signer-cache.js';
import {
  PrivateKey,
  configureRecoveryPool,
  prerecoverSigners,
  recoverAddressFromHash,
  recoverSigner,
  recoveryPoolEnabled,
  sha256,
  signerRecoveries,
} from '../../src/index.js';

const keys = Array.from({ length: 5 }, () => PrivateKey.generate());

function signed(n: number) {
  return Array.from({ length: n }, (_, i) => {
    const key = keys[i % keys.length]!;
    const hash = sha256(Uint8Array.of(i, i >> 8, 7));
    return { key, hash, sig: key.signHash(hash) };
  });
}

test.after(() => configureRecoveryPool({}));

test('signers recovered on a worker are found by recoverSigner without recovering again', async () => {
  await configureRecoveryPool({ workers: 1 });
  assert.ok(recoveryPoolEnabled());
  const pairs = signed(40);
  const before = signerRecoveries();
  await prerecoverSigners(pairs);
  for (const p of pairs) assert.ok(recoverSigner(p.hash, p.sig).equals(p.key.address));
  assert.is(signerRecoveries(), before, 'no inline recovery');
});

test('pairs asked for in one turn by many callers all come back, with two workers too', async () => {
  await configureRecoveryPool({ workers: 2 });
  const pairs = signed(31);
  await Promise.all(pairs.map((p) => prerecoverSigners([p])));
  const before = signerRecoveries();
  for (const p of pairs) assert.ok(recoverSigner(p.hash, p.sig).equals(p.key.address));
  assert.is(signerRecoveries(), before);
});

test('a turn of 100 callers goes as several jobs: callers are released in order as jobs come back, the first before the last job', async () => {
  for (const workers of [1, 2]) {
    await configureRecoveryPool({ workers });
    const pairs = signed(100 + workers);
    const order: number[] = [];
    let lastBackWhenFirstReleased: boolean | undefined;
    await Promise.all(
      pairs.map((p, i) =>
        prerecoverSigners([p]).then(() => {
          if (i === 0) lastBackWhenFirstReleased = recoveredSigners.has(pairs[pairs.length - 1]!.sig);
          order.push(i);
        }),
      ),
    );
    assert.equal(order, pairs.map((_, i) => i), `in order (${workers} workers)`);
    assert.is(lastBackWhenFirstReleased, false, 'the first caller went on before the last job was back');
    const before = signerRecoveries();
    for (const p of pairs) assert.ok(recoverSigner(p.hash, p.sig).equals(p.key.address));
    assert.is(signerRecoveries(), before, 'all recovered on the workers');
  }
});

test('an invalid signature is left for recoverSigner, which reports it; the valid ones around it are recovered', async () => {
  await configureRecoveryPool({ workers: 1 });
  const [a, b] = signed(2);
  const bad = { hash: a!.hash, sig: new Uint8Array(65).fill(0xff) };
  const wrongLength = { hash: a!.hash, sig: new Uint8Array(64) };
  await prerecoverSigners([a!, bad, wrongLength, b!]);
  const before = signerRecoveries();
  assert.ok(recoverSigner(a!.hash, a!.sig).equals(a!.key.address));
  assert.ok(recoverSigner(b!.hash, b!.sig).equals(b!.key.address));
  assert.is(signerRecoveries(), before);
  assert.throws(() => recoverSigner(bad.hash, bad.sig), /invalid signature/);
});

test('the same signature over another hash is recovered afresh, not taken from the worker', async () => {
  await configureRecoveryPool({ workers: 1 });
  const [p] = signed(1);
  await prerecoverSigners([p!]);
  const other = sha256(Uint8Array.of(1, 2, 3));
  assert.ok(recoverSigner(other, p!.sig).equals(recoverAddressFromHash(other, p!.sig)));
});

test('with the pool off (one CPU, or workers: 0) callers go on at once and recover inline', async () => {
  await configureRecoveryPool({ workers: 0 });
  assert.not.ok(recoveryPoolEnabled());
  const [p] = signed(1);
  await prerecoverSigners([p!]);
  const before = signerRecoveries();
  assert.ok(recoverSigner(p!.hash, p!.sig).equals(p!.key.address));
  assert.is(signerRecoveries(), before + 1);
});

test('a job that outlives its bound releases its callers (they recover inline)', async () => {
  await configureRecoveryPool({ workers: 1, jobTimeoutMs: 0 });
  const pairs = signed(3000); // ~0.1 s or more of work: far past a 0 ms bound
  await prerecoverSigners(pairs);
  const before = signerRecoveries();
  recoverSigner(pairs[2999]!.hash, pairs[2999]!.sig);
  assert.is(signerRecoveries(), before + 1, 'the last pair was not back yet');
});

test('callers waiting on a pool that is replaced (its workers stopped) are released', async () => {
  await configureRecoveryPool({ workers: 1 });
  const waiting = prerecoverSigners(signed(3000));
  await new Promise((r) => setImmediate(r)); // sent
  await configureRecoveryPool({ workers: 1 });
  await waiting;
});

test.run();
