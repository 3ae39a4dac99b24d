import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryStore, type KeyRange, type KeyValueStore } from '@cornice/sdk';
import { bytes, chain, dump, fixture, rejects, STRONG, text } from './helpers.js';

const b = (...xs: number[]) => Uint8Array.from(xs);
const keys = async (s: KeyValueStore, r?: KeyRange) => {
  const out: string[] = [];
  for await (const [k, v] of s.iterate(r)) out.push(`${[...k].join('.')}=${text(v)}`);
  return out;
};

async function setup() {
  const f = fixture();
  await f.ks.createUser('bob', STRONG);
  const s = await f.ks.openUserStore('bob', STRONG, chain(1));
  return { ...f, s };
}

const test = suite('keystore user store');

test('get/has/put/delete', async () => {
  const { s } = await setup();
  assert.is(await s.get(b(1)), undefined);
  assert.is(await s.has(b(1)), false);
  await s.put(b(1), bytes('one'));
  assert.is(await s.has(b(1)), true);
  assert.is(text(await s.get(b(1))), 'one');
  await s.put(b(1), bytes('uno'));
  assert.is(text(await s.get(b(1))), 'uno');
  await s.delete(b(1));
  assert.is(await s.get(b(1)), undefined);
  assert.is(await s.has(b(1)), false);
  await s.delete(b(1)); // deleting an absent key is fine
});

test('batch: atomic write, length, encrypts', async () => {
  const { s, store } = await setup();
  await s.put(b(9), bytes('nine'));
  const batch = s.batch().put(b(1), bytes('a')).put(b(2), bytes('b')).delete(b(9));
  assert.is(batch.length, 3);
  assert.is(await s.get(b(1)), undefined); // nothing before write()
  await batch.write();
  assert.equal(await keys(s), ['1=a', '2=b']);
  for (const [, v] of await dump(store)) assert.not.ok(text(v)?.endsWith('a') && v.length === 1);
});

test('iterate: prefix, gte, lt, limit, reverse relative to the chain area', async () => {
  const { ks, s } = await setup();
  for (const k of [[1], [1, 1], [1, 2], [2], [2, 0], [3], [255]]) await s.put(b(...k), bytes(k.join('')));
  // Another chain and another user do not show up.
  await (await ks.openUserStore('bob', STRONG, chain(2))).put(b(1, 5), bytes('other chain'));
  await ks.createUser('carol', STRONG);
  await (await ks.openUserStore('carol', STRONG, chain(1))).put(b(1, 6), bytes('other user'));

  assert.equal(await keys(s), ['1=1', '1.1=11', '1.2=12', '2=2', '2.0=20', '3=3', '255=255']);
  assert.equal(await keys(s, { prefix: b(1) }), ['1=1', '1.1=11', '1.2=12']);
  assert.equal(await keys(s, { gte: b(1, 2), lt: b(3) }), ['1.2=12', '2=2', '2.0=20']);
  assert.equal(await keys(s, { limit: 2 }), ['1=1', '1.1=11']);
  assert.equal(await keys(s, { reverse: true, limit: 3 }), ['255=255', '3=3', '2.0=20']);
  assert.equal(await keys(s, { prefix: b(2), reverse: true }), ['2.0=20', '2=2']);
  assert.equal(await keys(s, { prefix: b(1), gte: b(1, 1), lt: b(1, 2) }), ['1.1=11']);
  assert.equal(await keys(s, { prefix: b(7) }), []);
  assert.equal(await keys(s, { limit: 0 }), []);
});

test('close does not close the parent; later calls fail', async () => {
  const { ks, s, store } = await setup();
  await s.put(b(1), bytes('x'));
  await s.close();
  await s.close(); // twice is fine
  for (const call of [() => s.get(b(1)), () => s.put(b(1), b(2)), () => s.has(b(1)), () => s.delete(b(1))]) {
    try {
      await call();
      assert.unreachable();
    } catch (e) {
      assert.is((e as { code?: string }).code, 'Closed');
    }
  }
  // The keystore and its store still work.
  assert.ok((await dump(store)).length > 0);
  const again = await ks.openUserStore('bob', STRONG, chain(1));
  assert.is(text(await again.get(b(1))), 'x');
});

test('a tampered ciphertext gives a Corrupt error, never garbage', async () => {
  const { s, store } = await setup();
  await s.put(bytes('key'), bytes('value-value-value'));
  const entries = await dump(store);
  const [k, v] = entries.find(([k]) => k[0] === 0x02)!;
  for (const at of [v.length - 1, v.length - 20, 5]) {
    const t = v.slice();
    t[at]! ^= 0x01;
    await store.put(k, t);
    await rejects(s.get(bytes('key')), 'Corrupt');
  }
  // Malformed: truncated, unknown version, empty.
  await store.put(k, v.subarray(0, 10));
  await rejects(s.get(bytes('key')), 'Corrupt', 'keystore value is malformed');
  const v9 = v.slice();
  v9[0] = 9;
  await store.put(k, v9);
  await rejects(s.get(bytes('key')), 'Corrupt');
  await store.put(k, new Uint8Array(0));
  await rejects(s.get(bytes('key')), 'Corrupt');
  // Iteration reports it too.
  await store.put(k, v.map((x, i) => (i === v.length - 1 ? x ^ 1 : x)));
  await rejects(
    (async () => {
      for await (const _ of s.iterate()) void _;
    })(),
    'Corrupt',
    'keystore value failed authentication',
  );
  // Restored, it reads again.
  await store.put(k, v);
  assert.is(text(await s.get(bytes('key'))), 'value-value-value');
});

test('a value moved to another key or chain fails authentication', async () => {
  const { ks, s, store } = await setup();
  await s.put(bytes('a'), bytes('alpha'));
  await s.put(bytes('b'), bytes('beta'));
  const raw = new Map((await dump(store)).map(([k, v]) => [Buffer.from(k).toString('hex'), [k, v] as const]));
  const find = (suffix: string) => [...raw.values()].find(([k]) => k[0] === 0x02 && text(k.subarray(k.length - 1)) === suffix)!;
  const [ka] = find('a');
  const [, vb] = find('b');
  await store.put(ka, vb); // b's ciphertext under a's key
  await rejects(s.get(bytes('a')), 'Corrupt', 'keystore value failed authentication');
  // Same key on another chain.
  const [kb] = find('b');
  const other = await ks.openUserStore('bob', STRONG, chain(2));
  const k2 = kb.slice();
  k2.set(chain(2).bytes, 33);
  await store.put(k2, vb);
  await rejects(other.get(bytes('b')), 'Corrupt');
});

test('values of one user are not readable with another user key', async () => {
  const { ks, s, store } = await setup();
  await ks.createUser('eve', STRONG); // same password, different salt -> different key
  await s.put(bytes('k'), bytes('bob-secret'));
  const eve = await ks.openUserStore('eve', STRONG, chain(1));
  const [k, v] = (await dump(store)).find(([k]) => k[0] === 0x02)!;
  const eveKeys: Uint8Array[] = [];
  await eve.put(bytes('k'), bytes('eve'));
  for (const [key] of await dump(store)) if (key[0] === 0x02 && !Buffer.from(key).equals(Buffer.from(k))) eveKeys.push(key);
  assert.is(eveKeys.length, 1);
  await store.put(eveKeys[0]!, v);
  await rejects(eve.get(bytes('k')), 'Corrupt');
});

test('large values and many keys round-trip', async () => {
  const { s } = await setup();
  const big = new Uint8Array(1 << 20).map((_, i) => i & 0xff);
  await s.put(b(0), big);
  assert.equal(await s.get(b(0)), big);
  const batch = s.batch();
  for (let i = 1; i <= 300; i++) batch.put(b(i >> 8, i & 0xff), b(i & 0xff));
  await batch.write();
  let n = 0;
  for await (const _ of s.iterate()) n++;
  assert.is(n, 301);
});

test('a user store does not close a MemoryStore parent', async () => {
  const parent = new MemoryStore();
  const { Keystore } = await import('../../src/keystore/keystore.js');
  const ks = new Keystore({ store: parent, kdf: { N: 16, r: 1, p: 1 } });
  await ks.createUser('bob', STRONG);
  const s = await ks.openUserStore('bob', STRONG, chain(1));
  await s.close();
  await parent.put(b(9), b(1));
  assert.equal(await ks.listUsers(), ['bob']);
});

test.run();
