import { MemoryStore } from '@cornice/sdk';
import { Account, Address } from '@ethereumjs/util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chainCommon, stateManagerAt, type ExecutionHooks } from '../src/chain/executor.js';
import { StateReader } from '../src/chain/reader.js';
import { StateDB } from '../src/chain/state-db.js';

/** Writes `db`'s held trie nodes to its store, as an accept does. */
async function persist(store: MemoryStore, db: StateDB): Promise<void> {
  const batch = store.batch();
  const snapshot = db.flushInto(batch);
  await batch.write();
  db.flushed(snapshot);
}

test('reads through the state reader write nothing: moving it to the next root queues no trie node', async () => {
  const common = chainCommon(43110n);
  const store = new MemoryStore();
  const db = new StateDB(store);
  const addrs = Array.from({ length: 8 }, (_, i) => new Address(new Uint8Array(20).fill(i + 1)));
  const sm = await stateManagerAt(common, db, undefined, 1000);
  for (const [i, a] of addrs.entries()) await sm.putAccount(a, new Account(0n, 1000n + BigInt(i)));
  await sm.checkpoint();
  await sm.commit();
  const root1 = await sm.getStateRoot();
  await sm.putAccount(addrs[0]!, new Account(1n, 1n));
  await sm.checkpoint();
  await sm.commit();
  const root2 = await sm.getStateRoot();
  await persist(store, db);

  const reader = await StateReader.create(common, db, {} as ExecutionHooks /* plain reads use no fee rule */, async () => undefined);
  reader.setAcceptedRoot(root1);
  const balances = await reader.at(root1, async ({ sm: view }) => Promise.all(addrs.map(async (a) => (await view.getAccount(a))?.balance)));
  assert.equal(balances, addrs.map((_, i) => 1000n + BigInt(i)));
  assert.is(db.pendingCount, 0, 'reading queued no write');

  reader.setAcceptedRoot(root2);
  const first = await reader.at(root2, async ({ sm: view }) => (await view.getAccount(addrs[0]!))?.balance);
  assert.is(first, 1n, 'the reader follows the new root');
  assert.is(db.pendingCount, 0, 'moving to the new root wrote nothing back');
});

test.run();
