import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryStore, type KeyValueStore } from '@cornice/sdk';
import { LevelStore } from '../../src/db/level.js';
import { PrefixedStore, rootBatchOf } from '@cornice/sdk';

const b = (...xs: number[]) => Uint8Array.from(xs);
const all = async (s: KeyValueStore, r?: Parameters<KeyValueStore['iterate']>[0]) => {
  const out: Array<[number[], number[]]> = [];
  for await (const [k, v] of s.iterate(r)) out.push([[...k], [...v]]);
  return out;
};

/** The same contract suite runs against every backend. */
function contract(name: string, open: () => Promise<{ store: KeyValueStore; done: () => Promise<void> }>) {
  const t = suite(name);
  let ctx: { store: KeyValueStore; done: () => Promise<void> };
  t.before.each(async () => {
    ctx = await open();
  });
  t.after.each(() => ctx.done());

  t('get/put/has/delete', async () => {
    const s = ctx.store;
    assert.is(await s.get(b(1)), undefined);
    await s.put(b(1), b(9, 9));
    assert.equal([...(await s.get(b(1)))!], [9, 9]);
    assert.ok(await s.has(b(1)));
    await s.delete(b(1));
    assert.not.ok(await s.has(b(1)));
  });

  t('iterates in byte order with prefix, bounds, limit and reverse', async () => {
    const s = ctx.store;
    for (const k of [[2], [1, 255], [1], [1, 0], [0, 9], [255]]) await s.put(b(...k), b(k.length));
    assert.equal((await all(s)).map(([k]) => k), [[0, 9], [1], [1, 0], [1, 255], [2], [255]]);
    assert.equal((await all(s, { prefix: b(1) })).map(([k]) => k), [[1], [1, 0], [1, 255]]);
    assert.equal((await all(s, { gte: b(1, 0), lt: b(2) })).map(([k]) => k), [[1, 0], [1, 255]]);
    assert.equal((await all(s, { prefix: b(1), reverse: true, limit: 2 })).map(([k]) => k), [[1, 255], [1, 0]]);
    assert.equal((await all(s, { prefix: b(255) })).map(([k]) => k), [[255]]);
  });

  t('long scans, limits and early stops (LevelStore reads in growing batches)', async () => {
    const s = ctx.store;
    const batch = s.batch();
    for (let i = 0; i < 3000; i++) batch.put(b(7, i >> 8, i & 255), b(i & 255));
    await batch.write();
    const keys = (await all(s, { prefix: b(7) })).map(([k]) => (k[1]! << 8) | k[2]!);
    assert.equal(keys, Array.from({ length: 3000 }, (_, i) => i));
    assert.is((await all(s, { prefix: b(7), limit: 1100 })).length, 1100);
    assert.equal((await all(s, { prefix: b(7), reverse: true, limit: 20 }))[19]![0], [7, 11, 164]);
    // A caller that stops early (break) releases the scan; the store keeps working.
    for (let round = 0; round < 3; round++) {
      let n = 0;
      for await (const _ of s.iterate({ prefix: b(7) })) if (++n === 17) break;
      assert.is(n, 17);
    }
    await s.put(b(8), b(8));
    assert.is((await all(s, { prefix: b(8) })).length, 1);
  });

  t('batches apply atomically', async () => {
    const s = ctx.store;
    await s.put(b(5), b(5));
    const batch = s.batch().put(b(6), b(6)).delete(b(5)).put(b(7), b(7));
    assert.is(batch.length, 3);
    assert.ok(await s.has(b(5)), 'nothing applied before write');
    await batch.write();
    assert.equal((await all(s)).map(([k]) => k), [[6], [7]]);
  });

  t('prefixed sub-stores are isolated, nest, and batch through the parent', async () => {
    const s = ctx.store;
    const a = new PrefixedStore(s, 'a');
    const ab = new PrefixedStore(s, 'ab');
    const nested = new PrefixedStore(a, 'x');
    await a.put(b(1), b(1));
    await ab.put(b(1), b(2));
    await nested.put(b(1), b(3));
    assert.equal([...(await a.get(b(1)))!], [1]);
    assert.equal([...(await ab.get(b(1)))!], [2]);
    assert.equal((await all(ab)).length, 1, '"ab" does not see "a" and vice versa');
    assert.equal((await all(nested)).map(([k, v]) => [k, v]), [[[1], [3]]]);
    await a.batch().put(b(2), b(2)).delete(b(1)).write();
    assert.equal((await all(a, { prefix: b(2) })).map(([k]) => k), [[2]]);
    await a.close();
    assert.ok(await s.has(new Uint8Array([1, 97, 2])), 'closing a sub-store leaves the parent open');
  });

  t('a sub-store of a sub-store keeps both prefixes and reads, writes, batches and scans the root store directly', async () => {
    const s = ctx.store;
    const a = new PrefixedStore(s, 'a');
    const ax = new PrefixedStore(a, 'x');
    // One key copy per operation: the middle store is not called.
    for (const m of ['get', 'has', 'put', 'delete', 'batch', 'iterate'] as const) {
      (a as unknown as Record<string, unknown>)[m] = () => assert.unreachable(`the middle store's ${m} was called`);
    }
    const full = (k: number) => b(1, 97, 1, 120, k);
    await ax.put(b(1), b(10));
    assert.equal([...(await s.get(full(1)))!], [10], 'root key = len "a" len "x" key');
    assert.ok(await ax.has(b(1)));
    await ax.batch().put(b(2), b(20)).put(b(3), b(30)).delete(b(1)).write();
    assert.not.ok(await s.has(full(1)));
    assert.equal((await all(ax)).map(([k, v]) => [k, v]), [[[2], [20]], [[3], [30]]]);
    assert.equal((await all(ax, { gte: b(3) })).map(([k]) => k), [[3]]);
    assert.equal((await all(ax, { lt: b(3), reverse: true })).map(([k]) => k), [[2]]);
    await ax.delete(b(2));
    assert.is(await ax.get(b(2)), undefined);
    // A batch of the root store, viewed through the nested store by hand, writes the same keys.
    const root = s.batch();
    await new PrefixedStore(new PrefixedStore(s, 'a'), 'x').within(new PrefixedStore(s, 'a').within(root)).put(b(4), b(40)).write();
    assert.equal([...(await s.get(full(4)))!], [40]);
    assert.ok(rootBatchOf(ax.batch()), 'the nested batch still exposes the root batch');
  });
  t.run();
}

contract('MemoryStore', async () => ({ store: new MemoryStore(), done: async () => {} }));
contract('LevelStore', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'cornice-level-'));
  const store = await LevelStore.open(dir);
  return { store, done: async () => (await store.close(), await rm(dir, { recursive: true, force: true })) };
});

const level = suite('LevelStore persistence');
level('data survives reopening; a second opener gets a clear error', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'cornice-level-'));
  try {
    const s1 = await LevelStore.open(dir);
    await s1.put(b(1), b(2));
    try {
      await LevelStore.open(dir);
      assert.unreachable('a locked database must not open twice');
    } catch (e) {
      assert.match((e as Error).message, /cannot open database at .*: /);
    }
    await s1.close();
    const s2 = await LevelStore.open(dir);
    assert.equal([...(await s2.get(b(1)))!], [2]);
    await s2.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
level.run();

const memory = suite('MemoryStore memory');
memory('20,000 entries keyed by 33 bytes take ~320 bytes each, not ~1,100', async () => {
  // A key built as a rope of one piece per hex digit pair held ~1.1 KB per entry for its lifetime.
  const { setFlagsFromString } = await import('node:v8');
  const { runInNewContext } = await import('node:vm');
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const store = new MemoryStore();
  const value = new Uint8Array(0);
  gc();
  const before = process.memoryUsage().heapUsed;
  const batch = store.batch();
  for (let i = 0; i < 20_000; i++) {
    const key = new Uint8Array(33);
    new DataView(key.buffer).setUint32(1, i * 2654435761);
    key[0] = 0x75;
    batch.put(key, value);
  }
  await batch.write();
  gc();
  const perEntry = (process.memoryUsage().heapUsed - before) / 20_000;
  assert.ok(perEntry < 600, `${Math.round(perEntry)} bytes an entry`);
  assert.is((await all(store)).length, 20_000);
});
memory.run();
