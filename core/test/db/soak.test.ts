/**
 * Soak tests on a real LevelDB: the scans the node makes (keystore users, a chain's prefixed store,
 * a user's encrypted store) run tens of thousands of times, 16 at once, and the process's RSS must
 * stay bounded. classic-level's native iterators hold memory that V8 does not see (db/level.ts).
 * Measured before the fixes: listUsers ~2 KB a call (+627 MiB over 300k, never given back), the
 * store scans +101 MiB over this test's 30k. After: listUsers +0.3-1 MiB; the store scans +2-38 MiB
 * over 30-40k (V8 frees a closed iterator's native part when it collects the JS object), flat
 * beyond that (+40 MiB over 300k).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Id, type KeyValueStore } from '@cornice/sdk';
import { LevelStore } from '../../src/db/level.js';
import { PrefixedStore } from '@cornice/sdk';
import { Keystore } from '../../src/keystore/keystore.js';

const CONCURRENCY = 16;
const WARMUP = 8_000;
const RUNS = 30_000;

const rssMiB = () => process.memoryUsage().rss / 2 ** 20;

/** Runs `scan` `total` times, CONCURRENCY at once. */
async function hammer(total: number, scan: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < total) await scan(next++);
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}

/** RSS growth (MiB) over RUNS scans after WARMUP. */
async function growth(what: string, scan: (i: number) => Promise<void>): Promise<number> {
  await hammer(WARMUP, scan);
  const before = rssMiB();
  await hammer(RUNS, scan);
  const grown = rssMiB() - before;
  console.log(`  ${what}: RSS ${before.toFixed(0)} MiB after ${WARMUP}, +${grown.toFixed(1)} MiB over ${RUNS} more`);
  return grown;
}

async function count(store: KeyValueStore, prefix?: Uint8Array): Promise<number> {
  let n = 0;
  for await (const _ of store.iterate(prefix ? { prefix } : {})) n++;
  return n;
}

const test = suite('LevelDB soak');
let dir: string;
let db: LevelStore;
let ks: Keystore;
const PASSWORD = 'Tr0ub4dor&3-horse';
const enc = new TextEncoder();

test.before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cornice-soak-'));
  db = await LevelStore.open(dir);
  ks = new Keystore({ store: new PrefixedStore(db, 'keystore'), kdf: { N: 16, r: 1, p: 1 }, isStrongPassword: async () => true });
  for (let i = 0; i < 5; i++) await ks.createUser(`user${i}`, PASSWORD);
});
test.after(async () => {
  await db.close();
  await rm(dir, { recursive: true, force: true });
});

test('keystore.listUsers: RSS flat over 30k concurrent calls', async () => {
  const grown = await growth('listUsers', async () => assert.is((await ks.listUsers()).length, 5));
  assert.ok(grown < 10, `RSS grew ${grown.toFixed(1)} MiB`);
});

test('chain and user-store scans: RSS bounded over 30k concurrent scans', async () => {
  const userStore = await ks.openUserStore('user0', PASSWORD, Id.fromBytes(new Uint8Array(32).fill(1)));
  const chain = new PrefixedStore(new PrefixedStore(db, 'chains'), 'some-chain');
  for (let i = 0; i < 5; i++) {
    await chain.put(enc.encode(`block${i}`), new Uint8Array(80).fill(i));
    await userStore.put(enc.encode(`addr${i}`), new Uint8Array(32).fill(i));
  }
  const prefix = enc.encode('block');
  const grown = await growth('chain + user-store scans', async (i) =>
    assert.is(i % 2 ? await count(chain, prefix) : await count(userStore), 5),
  );
  assert.ok(grown < 50, `RSS grew ${grown.toFixed(1)} MiB`);
});

test.run();
