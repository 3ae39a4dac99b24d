import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryStore } from '@cornice/sdk';
import { Keystore } from '../../src/keystore/keystore.js';
import { DEFAULT_KDF } from '../../src/keystore/crypto.js';
import { chain, rejects, STRONG, STRONG2, text } from './helpers.js';

const test = suite('keystore with the default scrypt cost');

test('createUser, openUserStore and export/import with N=2^15, r=8, p=1', async () => {
  assert.equal({ ...DEFAULT_KDF }, { N: 2 ** 15, r: 8, p: 1 });
  const ks = new Keystore({ store: new MemoryStore() });
  const t0 = performance.now();
  await ks.createUser('bob', STRONG);
  const ms = performance.now() - t0;
  console.log(`  createUser with the default KDF: ${ms.toFixed(0)} ms`);
  const s = await ks.openUserStore('bob', STRONG, chain(1));
  await s.put(Uint8Array.of(1), new TextEncoder().encode('hello'));
  await rejects(ks.openUserStore('bob', STRONG2, chain(1)), 'IncorrectPassword');
  const blob = await ks.exportUser('bob', STRONG);
  const other = new Keystore({ store: new MemoryStore() });
  await other.importUser('rob', STRONG, blob);
  assert.is(text(await (await other.openUserStore('rob', STRONG, chain(1))).get(Uint8Array.of(1))), 'hello');
});

test('parallel derivations run off the event loop', async () => {
  const ks = new Keystore({ store: new MemoryStore() });
  let ticks = 0;
  const timer = setInterval(() => ticks++, 5);
  await Promise.all(['a', 'b', 'c', 'd'].map((u) => ks.createUser(u, STRONG)));
  clearInterval(timer);
  assert.ok(ticks > 0, 'the event loop kept turning during scrypt');
  assert.equal(await ks.listUsers(), ['a', 'b', 'c', 'd']);
});

test.run();
