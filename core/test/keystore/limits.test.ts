import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryStore, type KeyRange } from '@cornice/sdk';
import { KdfLimiter, KEYSTORE_BUSY } from '../../src/keystore/kdf-limiter.js';
import { Keystore, KeystoreError } from '../../src/keystore/keystore.js';
import { chain, FAST_KDF, fixture, rejects, STRONG } from './helpers.js';

const test = suite('keystore limits');

/** A derivation the test finishes by hand. */
function gate() {
  let open!: () => void;
  const done = new Promise<void>((r) => (open = r));
  return { open, done };
}

test('KdfLimiter: at most maxRunning at once, waiters in order, busy beyond maxWaiting', async () => {
  const limiter = new KdfLimiter({ maxRunning: 2, maxWaiting: 2 });
  const gates = [gate(), gate(), gate(), gate()];
  const started: number[] = [];
  const runs = gates.map((g, i) =>
    limiter.run(async () => {
      started.push(i);
      await g.done;
      return i;
    }),
  );
  await Promise.resolve();
  assert.equal(started, [0, 1]);
  assert.is(limiter.running, 2);
  assert.is(limiter.waiting, 2);
  try {
    await limiter.run(async () => 99);
    assert.unreachable('a fifth caller is refused');
  } catch (e) {
    assert.instance(e, KeystoreError);
    assert.is((e as KeystoreError).code, 'Busy');
    assert.is((e as KeystoreError).message, KEYSTORE_BUSY);
  }
  gates[1]!.open();
  assert.is(await runs[1], 1);
  assert.equal(started, [0, 1, 2], 'the first waiter takes the freed slot');
  gates[0]!.open();
  await runs[0];
  assert.equal(started, [0, 1, 2, 3]);
  assert.is(limiter.waiting, 0);
  gates[2]!.open();
  gates[3]!.open();
  await Promise.all(runs);
  assert.is(limiter.running, 0);
});

test('KdfLimiter: a failing derivation frees its slot', async () => {
  const limiter = new KdfLimiter({ maxRunning: 1, maxWaiting: 0 });
  try {
    await limiter.run(async () => {
      throw new Error('boom');
    });
  } catch (e) {
    assert.is((e as Error).message, 'boom');
  }
  assert.is(limiter.running, 0);
  assert.is(await limiter.run(async () => 7), 7);
});

test('KdfLimiter: options validated', () => {
  for (const limits of [{ maxRunning: 0, maxWaiting: 1 }, { maxRunning: 1, maxWaiting: -1 }, { maxRunning: 1.5, maxWaiting: 1 }]) {
    try {
      new KdfLimiter(limits);
      assert.unreachable(JSON.stringify(limits));
    } catch (e) {
      assert.is((e as KeystoreError).code, 'InvalidOptions');
    }
  }
});

test('every keystore operation that runs the KDF goes through the one limiter', async () => {
  const limiter = new KdfLimiter({ maxRunning: 1, maxWaiting: 0 });
  const { ks } = fixture({ kdfLimiter: limiter, isStrongPassword: async () => true });
  for (const u of ['a', 'b', 'c']) await ks.createUser(u, STRONG);
  const blob = await ks.exportUser('a', STRONG);
  // Someone else holds the only slot: every operation is refused at once, nothing changes.
  const held = gate();
  const holder = limiter.run(() => held.done);
  const ops = [
    () => ks.openUserStore('a', STRONG, chain(1)),
    () => ks.exportUser('b', STRONG),
    () => ks.deleteUser('c', STRONG),
    () => ks.createUser('d', STRONG),
    () => ks.importUser('e', STRONG, blob),
  ];
  for (const r of await Promise.allSettled(ops.map((op) => op()))) {
    assert.is(r.status, 'rejected');
    assert.is((r as PromiseRejectedResult).reason.message, KEYSTORE_BUSY);
  }
  assert.equal(await ks.listUsers(), ['a', 'b', 'c']);
  held.open();
  await holder;
  for (const op of ops) await op();
  assert.equal(await ks.listUsers(), ['a', 'b', 'd', 'e']);
});

test('callers beyond the running ones wait their turn', async () => {
  const { ks } = fixture({ kdfLimiter: new KdfLimiter({ maxRunning: 1, maxWaiting: 8 }), isStrongPassword: async () => true });
  await Promise.all(['a', 'b', 'c', 'd', 'e'].map((u) => ks.createUser(u, STRONG)));
  assert.equal(await ks.listUsers(), ['a', 'b', 'c', 'd', 'e']);
});

test('a busy refusal does not count as a wrong password', async () => {
  const { ks } = fixture({ kdfLimiter: new KdfLimiter({ maxRunning: 1, maxWaiting: 0 }), throttle: { freeAttempts: 1, baseDelayMs: 60_000, maxDelayMs: 60_000 } });
  await ks.createUser('a', STRONG);
  await ks.createUser('b', STRONG);
  const rs = await Promise.allSettled([ks.exportUser('a', STRONG), ks.exportUser('b', STRONG)]);
  assert.equal(rs.map((r) => r.status), ['fulfilled', 'rejected']);
  await ks.exportUser('b', STRONG);
});

/** Counts the scans of a store. */
class CountingStore extends MemoryStore {
  scans = 0;
  override iterate(range?: KeyRange) {
    this.scans++;
    return super.iterate(range);
  }
}

test('listUsers is served from memory: one scan of the records, ever', async () => {
  const store = new CountingStore();
  const ks = new Keystore({ store, kdf: FAST_KDF, isStrongPassword: async () => true });
  await ks.createUser('bob', STRONG);
  const scans = store.scans;
  for (let i = 0; i < 100; i++) assert.equal(await ks.listUsers(), ['bob']);
  assert.is(store.scans, scans, 'no scan per listUsers call');
  // A second keystore over the same store reads the list once.
  const again = new Keystore({ store, kdf: FAST_KDF });
  const [l1, l2] = await Promise.all([again.listUsers(), again.listUsers()]);
  assert.equal([l1, l2], [['bob'], ['bob']]);
  assert.is(store.scans, scans + 1);
  // The list follows create, import and delete; callers get their own copy.
  const list = await ks.listUsers();
  list.push('mallory');
  await ks.createUser('alice', STRONG);
  await ks.importUser('carol', STRONG, await ks.exportUser('bob', STRONG));
  assert.equal(await ks.listUsers(), ['alice', 'bob', 'carol']);
  await ks.deleteUser('bob', STRONG);
  assert.equal(await ks.listUsers(), ['alice', 'carol']);
});

test('a failed first read of the list is retried on the next call', async () => {
  let fail = true;
  class FlakyStore extends MemoryStore {
    override iterate(range?: KeyRange) {
      if (fail) {
        fail = false;
        throw new Error('disk hiccup');
      }
      return super.iterate(range);
    }
  }
  const ks = new Keystore({ store: new FlakyStore(), kdf: FAST_KDF });
  try {
    await ks.listUsers();
    assert.unreachable();
  } catch (e) {
    assert.is((e as Error).message, 'disk hiccup');
  }
  assert.equal(await ks.listUsers(), []);
  await rejects(ks.exportUser('x', STRONG), 'UserNotFound');
});

test.run();
