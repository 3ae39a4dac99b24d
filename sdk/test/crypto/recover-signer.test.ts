import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PrivateKey, recoverSigner, sha256, signerRecoveries } from '../../src/index.js';

test('recoverSigner recovers once per signature object and hash; other hashes and bad signatures are not served from the cache', () => {
  const key = PrivateKey.generate();
  const hash = sha256(Uint8Array.of(1));
  const sig = key.signHash(hash);
  const before = signerRecoveries();
  assert.ok(recoverSigner(hash, sig).equals(key.address));
  assert.ok(recoverSigner(hash, sig).equals(key.address));
  assert.is(signerRecoveries() - before, 1);
  // The same signature object over another hash: recovered afresh (to some other address).
  assert.not.ok(recoverSigner(sha256(Uint8Array.of(2)), sig).equals(key.address));
  assert.is(signerRecoveries() - before, 2);
  assert.throws(() => recoverSigner(hash, new Uint8Array(65)));
});

test.run();
