import { MemoryStore } from '@cornice/sdk';
import { MerklePatriciaTrie } from '@ethereumjs/mpt';
import { Account, Address } from '@ethereumjs/util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chainCommon, stateManagerAt, type ExecutionHooks } from '../src/chain/executor.js';
import { StateReader } from '../src/chain/reader.js';
import { StateDB } from '../src/chain/state/state-db.js';

/** Writes `db`'s held trie nodes to its store, as an accept does. */
async function persist(store: MemoryStore, db: StateDB): Promise<void> {
  const batch = store.batch();
  const snapshot = db.flushInto(batch);
  await batch.write();
  db.flushed(snapshot);
}

/** A state of `n` accounts (balances 1000, 1001, ...) on a memory store: its state manager and root. */
async function funded(n: number) {
  const common = chainCommon(43110n);
  const store = new MemoryStore();
  const db = new StateDB(store);
  const addrs = Array.from({ length: n }, (_, i) => new Address(new Uint8Array(20).fill(i + 1)));
  const sm = await stateManagerAt(common, db, undefined, 1000);
  for (const [i, a] of addrs.entries()) await sm.putAccount(a, new Account(0n, 1000n + BigInt(i)));
  await sm.checkpoint();
  await sm.commit();
  return { common, store, db, addrs, sm, root: await sm.getStateRoot() };
}

/** `funded(n)` and then a block changing account 0 to `account`: the roots before and after, persisted, and a reader at the first. */
async function twoRoots(n: number, account: Account) {
  const f = await funded(n);
  await f.sm.putAccount(f.addrs[0]!, account);
  await f.sm.checkpoint();
  await f.sm.commit();
  const root2 = await f.sm.getStateRoot();
  await persist(f.store, f.db);
  const reader = await StateReader.create(f.common, f.db, {} as ExecutionHooks /* plain reads use no fee rule */, async () => undefined);
  reader.setAcceptedRoot(f.root);
  return { ...f, root1: f.root, root2, reader };
}

test('reads through the state reader write nothing: moving it to the next root queues no trie node', async () => {
  const { db, addrs, root1, root2, reader } = await twoRoots(8, new Account(1n, 1n));
  const balances = await reader.at(root1, async ({ sm: view }) => Promise.all(addrs.map(async (a) => (await view.getAccount(a))?.balance)));
  assert.equal(balances, addrs.map((_, i) => 1000n + BigInt(i)));
  assert.is(db.pendingCount, 0, 'reading queued no write');

  reader.setAcceptedRoot(root2);
  const first = await reader.at(root2, async ({ sm: view }) => (await view.getAccount(addrs[0]!))?.balance);
  assert.is(first, 1n, 'the reader follows the new root');
  assert.is(db.pendingCount, 0, 'moving to the new root wrote nothing back');
});

/** Counts the trie reads made from now on (every MPT's get). */
function countTrieGets(): { readonly n: number; stop(): void } {
  const get = MerklePatriciaTrie.prototype.get;
  const counter = { n: 0, stop: () => void (MerklePatriciaTrie.prototype.get = get) };
  MerklePatriciaTrie.prototype.get = function (this: MerklePatriciaTrie, ...args: Parameters<typeof get>) {
    counter.n++;
    return get.apply(this, args);
  };
  return counter;
}

test('across accepted blocks the reader keeps the accounts it read, updated with what each block wrote; the same answers as a fresh read at each root', async () => {
  const { common, store, db, addrs, sm, root: start } = await funded(12);
  let root = start;
  sm.takeFlushed();
  await persist(store, db);
  const reader = await StateReader.create(common, db, {} as ExecutionHooks, async () => undefined);
  reader.setAcceptedRoot(root);
  const readAll = (at: Uint8Array) => reader.at(at, async ({ sm: view }) => Promise.all(addrs.map(async (a) => { const acct = await view.getAccount(a); return acct ? `${acct.nonce}/${acct.balance}/${Buffer.from(acct.storageRoot).toString('hex').slice(0, 8)}` : 'none'; })));
  const fresh = async (at: Uint8Array) => {
    const other = await stateManagerAt(common, db, at, 0);
    return Promise.all(addrs.map(async (a) => { const acct = await other.getAccount(a); return acct ? `${acct.nonce}/${acct.balance}/${Buffer.from(acct.storageRoot).toString('hex').slice(0, 8)}` : 'none'; }));
  };
  assert.equal(await readAll(root), await fresh(root));

  // Blocks: each changes a few accounts (a deletion, a storage write that changes a storage root,
  // a new account); the reader is told each block's accounts, or for one block nothing.
  const blocks: Array<(b: number) => Promise<void>> = [
    async (b) => sm.putAccount(addrs[0]!, new Account(BigInt(b), 1n)),
    async () => sm.deleteAccount(addrs[1]!),
    async () => sm.putStorage(addrs[2]!, new Uint8Array(32).fill(1), Uint8Array.of(9)),
    async () => sm.putAccount(addrs[11]!, new Account(7n, 7n)),
  ];
  for (let b = 0; b < blocks.length; b++) {
    const from = root;
    await sm.checkpoint();
    await blocks[b]!(b);
    await sm.commit();
    root = await sm.getStateRoot();
    const accounts = sm.takeFlushed()!;
    await persist(store, db);
    reader.setAcceptedRoot(root, b === 3 ? undefined : { from, accounts });
    assert.equal(await readAll(root), await fresh(root), `block ${b}`);
  }

  // Two blocks accepted before the next read: the reader goes through both; an unchanged account
  // it read before costs no trie read.
  for (let b = 0; b < 2; b++) {
    const from = root;
    await sm.checkpoint();
    await sm.putAccount(addrs[3]!, new Account(BigInt(10 + b), 5n));
    await sm.commit();
    root = await sm.getStateRoot();
    const accounts = sm.takeFlushed()!;
    await persist(store, db);
    reader.setAcceptedRoot(root, { from, accounts });
  }
  const gets = countTrieGets();
  const checkRoot = MerklePatriciaTrie.prototype.checkRoot;
  let rootChecks = 0;
  MerklePatriciaTrie.prototype.checkRoot = function (this: MerklePatriciaTrie, ...args: Parameters<typeof checkRoot>) {
    rootChecks++;
    return checkRoot.apply(this, args);
  };
  try {
    const [changed, unchanged] = await reader.at(root, async ({ sm: view }) => [await view.getAccount(addrs[3]!), await view.getAccount(addrs[4]!)]);
    assert.is(changed?.nonce, 11n);
    assert.is(unchanged?.balance, 1004n);
    assert.is(gets.n, 0, 'both answered from what the reader kept');
    assert.is(rootChecks, 0, 'moving along accepted blocks does not read their root node back');
  } finally {
    gets.stop();
    MerklePatriciaTrie.prototype.checkRoot = checkRoot;
  }
  assert.equal(await readAll(root), await fresh(root));
});

test('readState: the live view at the accepted root; at another root one state manager, no VM, kept for the next read there', async () => {
  const { addrs, root1, root2, reader } = await twoRoots(3, new Account(1n, 5n));
  const live = await reader.at(root1, async ({ sm: view }) => view);
  assert.ok((await reader.readState(root1, async (view) => view)) === live, 'the accepted root reads through the live view');
  const first = await reader.readState(root2, async (view) => view);
  assert.ok(first !== live);
  assert.is((await first.getAccount(addrs[0]!))?.balance, 5n);
  assert.ok((await reader.readState(root2, async (view) => view)) === first, 'kept for the next read at that root');
  assert.is(await reader.readState(root1, async (view) => (await view.getAccount(addrs[0]!))?.balance), 1000n);
});

test('trace views: kept from one trace to the next, left as found; a trace that throws or leaves a checkpoint open gets its view replaced', async () => {
  const { addrs, root1, root2, reader } = await twoRoots(3, new Account(1n, 5n));
  reader.setAcceptedRoot(root2);
  const balance = async (view: { sm: { getAccount(a: Address): Promise<Account | undefined> } }) => (await view.sm.getAccount(addrs[0]!))?.balance;
  // A trace's writes, inside a checkpoint it reverts.
  const first = await reader.trace(root1, async (view) => {
    await view.vm.evm.journal.checkpoint();
    await view.sm.putAccount(addrs[0]!, new Account(0n, 77n));
    assert.is(await balance(view), 77n);
    await view.vm.evm.journal.revert();
    return view.vm;
  });
  assert.ok((await reader.trace(root2, async (view) => (assert.is(await balance(view), 5n), view.vm))) === first, 'the same VM at another root');
  assert.ok((await reader.trace(root1, async (view) => (assert.is(await balance(view), 1000n), view.vm))) === first, 'nothing the first trace wrote is left');
  // A throw: the view is dropped.
  try {
    await reader.trace(root1, async () => {
      throw new Error('halted mid-frame');
    });
    assert.unreachable();
  } catch (e) {
    assert.is((e as Error).message, 'halted mid-frame');
  }
  const second = await reader.trace(root1, async (view) => view.vm);
  assert.ok(second !== first, 'a new VM after a throw');
  // A checkpoint left open: dropped too, its write seen by no later trace.
  await reader.trace(root1, async (view) => {
    await view.sm.checkpoint();
    await view.sm.putAccount(addrs[0]!, new Account(0n, 66n));
  });
  const third = await reader.trace(root1, async (view) => (assert.is(await balance(view), 1000n), view.vm));
  assert.ok(third !== second, 'a new VM after a checkpoint left open');
  // Traces at once: two VMs at most, the rest wait for one.
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const held = [0, 1, 2].map(() => reader.trace(root1, async (view) => (await gate, view.vm)));
  release();
  const vms = await Promise.all(held);
  assert.is(new Set(vms).size, 2);
});

test('a trace view follows the parents of the blocks traced through the accepted blocks\' steps, a block behind the accepted root', async () => {
  const { common, store, db, addrs, sm, root: start } = await funded(4);
  sm.takeFlushed();
  await persist(store, db);
  const reader = await StateReader.create(common, db, {} as ExecutionHooks, async () => undefined);
  reader.setAcceptedRoot(start);
  const roots = [start];
  const accept = async (b: number) => {
    await sm.checkpoint();
    await sm.putAccount(addrs[0]!, new Account(BigInt(b), 100n + BigInt(b)));
    await sm.commit();
    const root = await sm.getStateRoot();
    const accounts = sm.takeFlushed()!;
    await persist(store, db);
    reader.setAcceptedRoot(root, { from: roots[roots.length - 1]!, accounts });
    roots.push(root);
  };
  const traceAt = (root: Uint8Array) => reader.trace(root, async (view) => [(await view.sm.getAccount(addrs[0]!))?.balance, (await view.sm.getAccount(addrs[1]!))?.balance]);
  assert.equal(await traceAt(roots[0]!), [1000n, 1001n]);
  await accept(1);
  await accept(2);
  const checkRoot = MerklePatriciaTrie.prototype.checkRoot;
  let rootChecks = 0;
  MerklePatriciaTrie.prototype.checkRoot = function (this: MerklePatriciaTrie, ...args: Parameters<typeof checkRoot>) {
    rootChecks++;
    return checkRoot.apply(this, args);
  };
  const gets = countTrieGets();
  try {
    // The latest block's parent (a step), then the next block's (the step kept from that move).
    assert.equal(await traceAt(roots[1]!), [101n, 1001n]);
    assert.equal(await traceAt(roots[2]!), [102n, 1001n]);
    assert.is(rootChecks, 0, 'no move afresh');
    assert.is(gets.n, 0, 'the accounts read before are kept, updated with what each block wrote');
  } finally {
    gets.stop();
    MerklePatriciaTrie.prototype.checkRoot = checkRoot;
  }
});

test.run();
