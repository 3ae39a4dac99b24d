// The worker's cache of its chain store (--vm-isolation): what it keeps, and when it must forget.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryStore, utf8Encode } from '@cornice/sdk';
import { StoreCache } from '../../src/vms/isolation/store-cache.js';

const K = utf8Encode('k');
const bytes = (...xs: number[]) => Uint8Array.from(xs);

/** A store behind the cache with counted fetches, and a write whose completion the test controls. */
function backed(cache = new StoreCache()) {
  const store = new MemoryStore();
  const s = {
    cache,
    store,
    fetches: 0,
    get: (key: Uint8Array) => cache.get(key, () => (s.fetches++, store.get(key))),
    has: (key: Uint8Array) => cache.has(key, () => (s.fetches++, store.has(key))),
    /** The write of `ops`, applied to the store when `finish` is called (or failed). */
    write(ops: Array<[Uint8Array, Uint8Array | undefined]>) {
      let finish!: (ok: boolean) => void;
      const done = cache.write(ops, () => new Promise<void>((resolve, reject) => {
        finish = async (ok) => {
          if (!ok) return reject(new Error('write failed'));
          const b = store.batch();
          for (const [k, v] of ops) v === undefined ? b.delete(k) : b.put(k, v);
          await b.write();
          resolve();
        };
      }));
      return { done, finish: (ok = true) => finish(ok) };
    },
  };
  return s;
}

test('a read is fetched once, then answered from the cache (a copy each time); absence is kept too', async () => {
  const s = backed();
  await s.store.put(K, bytes(1, 2));
  const first = (await s.get(K))!;
  first[0] = 9;
  assert.equal(await s.get(K), bytes(1, 2), 'the caller cannot change the cached value');
  const again = (await s.get(K))!;
  again[1] = 9;
  assert.equal(await s.get(K), bytes(1, 2));
  assert.is(s.fetches, 1);
  assert.is(await s.get(utf8Encode('none')), undefined);
  assert.is(await s.has(utf8Encode('none')), false);
  assert.is(await s.has(K), true);
  assert.is(s.fetches, 2);
  assert.is(await s.has(utf8Encode('other')), false);
  assert.is(await s.get(utf8Encode('other')), undefined);
  assert.is(s.fetches, 3, 'has() kept the absence');
});

test('a write that succeeds alone is kept (the values as given, last op of a key wins, deletes as absent)', async () => {
  const s = backed();
  await s.store.put(utf8Encode('gone'), bytes(7));
  assert.equal(await s.get(utf8Encode('gone')), bytes(7));
  const value = bytes(3);
  const w = s.write([
    [K, bytes(1)],
    [K, value],
    [utf8Encode('gone'), undefined],
  ]);
  value[0] = 4; // after write(): the cache keeps what was written
  w.finish();
  await w.done;
  const fetches = s.fetches;
  assert.equal(await s.get(K), bytes(3));
  assert.is(await s.get(utf8Encode('gone')), undefined);
  assert.is(await s.has(utf8Encode('gone')), false);
  assert.is(s.fetches, fetches, 'answered from the cache');
});

test('a write forgets its keys while in flight; a failed write leaves them forgotten', async () => {
  const s = backed();
  await s.store.put(K, bytes(1));
  await s.get(K);
  const w = s.write([[K, bytes(2)]]);
  // In flight: the read goes to the store, and is not kept.
  assert.equal(await s.get(K), bytes(1));
  w.finish(false);
  await w.done.then(
    () => assert.unreachable('the failure is passed on'),
    (e: Error) => assert.is(e.message, 'write failed'),
  );
  const fetches = s.fetches;
  assert.equal(await s.get(K), bytes(1), 'the stored value, not the failed write');
  assert.is(s.fetches, fetches + 1);
});

test('a read overlapped by a write is not kept; nor are overlapping writes', async () => {
  const s = backed();
  await s.store.put(K, bytes(1));
  // A read whose answer arrives after a write started (the old value) is not kept.
  let answer!: (v: Uint8Array | undefined) => void;
  const read = s.cache.get(K, () => new Promise((r) => (answer = r)));
  const w = s.write([[K, bytes(2)]]);
  answer(bytes(1));
  assert.equal(await read, bytes(1));
  w.finish();
  await w.done;
  assert.equal(await s.get(K), bytes(2));
  // Two writes in flight: neither is kept (their order on the host side is not ours to assume).
  const a = s.write([[K, bytes(3)]]);
  const b = s.write([[K, bytes(4)]]);
  a.finish();
  b.finish();
  await Promise.all([a.done, b.done]);
  const fetches = s.fetches;
  assert.equal(await s.get(K), bytes(4));
  assert.is(s.fetches, fetches + 1, 'fetched: neither write was kept');
});

test('bounded: entries and bytes, least recently used out; a large value is not kept', async () => {
  const s = backed(new StoreCache({ entries: 3, bytes: 1000, valueBytes: 100 }));
  for (let i = 0; i < 4; i++) await s.store.put(bytes(i), bytes(i));
  for (let i = 0; i < 3; i++) await s.get(bytes(i));
  await s.get(bytes(0)); // most recently used
  await s.get(bytes(3)); // evicts key 1
  assert.is(s.cache.size, 3);
  const fetches = s.fetches;
  await s.get(bytes(0));
  await s.get(bytes(3));
  assert.is(s.fetches, fetches);
  await s.get(bytes(1));
  assert.is(s.fetches, fetches + 1);

  await s.store.put(K, new Uint8Array(101));
  await s.get(K);
  await s.get(K);
  assert.is(s.fetches, fetches + 3, 'a value over valueBytes is fetched each time');
  const w = s.write([[K, new Uint8Array(101)]]);
  w.finish();
  await w.done;
  await s.get(K);
  assert.is(s.fetches, fetches + 4, 'nor kept from a write');

  const small = backed(new StoreCache({ entries: 100, bytes: 250, valueBytes: 100 }));
  for (let i = 0; i < 4; i++) await small.store.put(bytes(i), new Uint8Array(99));
  for (let i = 0; i < 4; i++) await small.get(bytes(i));
  assert.is(small.cache.size, 2, 'at most 250 bytes of keys and values');
});

test.run();
