import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Id, MemoryStore, NotFoundError, type KeyValueStore, type WriteBatch } from '@cornice/sdk';
import { TimestampError, TimestampVM, blockIdOf, encodeBlock, vmFactory } from '../src/index.js';
import { ManualClock, fakeContext, payload, rejection, setup } from './helpers.js';

const GENESIS_ID = 'zpeWnFqmbnoSw1DSNzJE22SfMBBXa6tqwHdniD6cYSsSEwDro';

const isCode = (e: unknown, code: string) => e instanceof TimestampError && e.code === code;

/** Block bytes on `parentId`. */
const raw = (parentId: Id, n: number, timestamp: number) => encodeBlock({ parentId, data: payload(n), timestamp });

test('initialize writes the genesis block: height 0, last accepted, status accepted', async () => {
  const { vm } = await setup();
  const last = await vm.lastAccepted();
  assert.is(last.toString(), GENESIS_ID);
  assert.is(vm.genesisId.toString(), GENESIS_ID);
  assert.is((await vm.getBlockIdAtHeight(0)).toString(), GENESIS_ID);
  const g = await vm.getBlock(last);
  assert.is(g.height, 0);
  assert.is(g.timestamp, 0);
  assert.is(g.status, 'accepted');
  assert.ok(g.parentId.equals(Id.empty));
});

test('initialize refuses genesis data over 32 bytes', async () => {
  const e = await rejection(new TimestampVM().initialize(fakeContext(), { genesis: new Uint8Array(33) }));
  assert.ok(isCode(e, 'InvalidGenesis'));
  assert.is((e as Error).message, 'genesis data should be bytes (max length 32)');
});

test('vmFactory.create gives a fresh TimestampVM', async () => {
  const a = await vmFactory.create();
  const b = await vmFactory.create();
  assert.ok(a instanceof TimestampVM);
  assert.ok(a !== b);
});

test('calls before initialize are refused', async () => {
  assert.ok(isCode(await rejection(new TimestampVM().lastAccepted()), 'NotInitialized'));
});

test('parseBlock: height from the parent, getBlock finds it, same object for same bytes', async () => {
  const { vm } = await setup();
  const g = await vm.lastAccepted();
  const bytes = raw(g, 1, 100);
  const b = await vm.parseBlock(bytes);
  assert.is(b.height, 1);
  assert.is(b.status, 'processing');
  assert.ok(b.id.equals(blockIdOf(bytes)));
  assert.equal(b.bytes, bytes);
  assert.ok((await vm.getBlock(b.id)) === b);
  assert.ok((await vm.parseBlock(bytes)) === b);
  // Parsing the genesis bytes gives the accepted genesis block.
  const genesis = await vm.parseBlock((await vm.getBlock(g)).bytes);
  assert.is(genesis.status, 'accepted');
});

test('parseBlock: a block later than the last accepted one is not looked up in the store; an older accepted one is found there', async () => {
  let gets = 0;
  class CountingStore extends MemoryStore {
    override async get(key: Uint8Array) {
      gets += 1;
      return super.get(key);
    }
  }
  const db = new CountingStore();
  const { vm } = await setup({ db, vm: { acceptedCacheSize: 1 } });
  const g = await vm.lastAccepted();
  // Newest first, as bootstrapping fetches: the parent is unknown, so only its lookup reads the store.
  const parentBytes = raw(g, 1, 100);
  gets = 0;
  await vm.parseBlock(raw(blockIdOf(parentBytes), 2, 100));
  assert.is(gets, 1);
  // Accept two blocks (the cache keeps one), then parse the first again: found accepted in the store.
  const first = await vm.parseBlock(parentBytes);
  await first.verify();
  await first.accept();
  const second = await vm.parseBlock(raw(first.id, 3, 200));
  await second.verify();
  await second.accept();
  const again = await vm.parseBlock(first.bytes);
  assert.is(again.status, 'accepted');
  assert.is(again.height, 1);
});

test('parseBlock rejects malformed bytes', async () => {
  const { vm } = await setup();
  assert.ok(isCode(await rejection(vm.parseBlock(new Uint8Array(71))), 'MalformedBlock'));
});

test('a child parsed before its parent learns its height once the parent is known', async () => {
  const { vm } = await setup();
  const g = await vm.lastAccepted();
  const parentBytes = raw(g, 1, 100);
  const child = await vm.parseBlock(raw(blockIdOf(parentBytes), 2, 100));
  assert.throws(() => child.height, (e: unknown) => isCode(e, 'UnknownParent'));
  assert.ok(isCode(await rejection(child.verify()), 'UnknownParent'));
  await vm.parseBlock(parentBytes);
  assert.is(child.height, 2);
});

test('getBlock / getBlockIdAtHeight of unknown things: NotFoundError', async () => {
  const { vm } = await setup();
  const unknown = Id.fromBytes(new Uint8Array(32).fill(3));
  const e = await rejection(vm.getBlock(unknown));
  assert.instance(e, NotFoundError);
  assert.match((e as Error).message, unknown.toString());
  assert.instance(await rejection(vm.getBlockIdAtHeight(1)), NotFoundError);
  assert.instance(await rejection(vm.getBlockIdAtHeight(-1)), NotFoundError);
  assert.instance(await rejection(vm.setPreference(unknown)), NotFoundError);
});

test('verify: timestamp not before the parent, less than now + 1 h', async () => {
  const clock = new ManualClock();
  const { vm } = await setup({ clock });
  const g = await vm.lastAccepted();
  const now = clock.seconds;

  const ok = await vm.parseBlock(raw(g, 1, now));
  await ok.verify();
  assert.ok(ok.verified);

  // Equal to the parent's timestamp is fine.
  await (await vm.parseBlock(raw(ok.id, 2, now))).verify();

  const early = await vm.parseBlock(raw(ok.id, 3, now - 1));
  const e1 = await rejection(early.verify());
  assert.ok(isCode(e1, 'TimestampBeforeParent'));
  assert.is((e1 as Error).message, "block's timestamp is earlier than its parent's timestamp");

  await (await vm.parseBlock(raw(ok.id, 4, now + 3599))).verify();
  const ahead = await vm.parseBlock(raw(ok.id, 5, now + 3600));
  const e2 = await rejection(ahead.verify());
  assert.ok(isCode(e2, 'TimestampTooFarAhead'));
  assert.is((e2 as Error).message, "block's timestamp is more than 1 hour ahead of local time");

  // The injected clock decides: a second later the same block is fine.
  clock.advance(1);
  await ahead.verify();
});

test('verify: the parent must be known', async () => {
  const { vm } = await setup();
  const b = await vm.parseBlock(raw(Id.fromBytes(new Uint8Array(32).fill(9)), 1, 0));
  const e = await rejection(b.verify());
  assert.ok(isCode(e, 'UnknownParent'));
});

test('accept persists; a second VM over the same store resumes', async () => {
  const db = new MemoryStore();
  const clock = new ManualClock();
  const { vm } = await setup({ db, clock });
  const g = await vm.lastAccepted();
  const b1 = await vm.parseBlock(raw(g, 1, clock.seconds));
  await b1.verify();
  await b1.accept();
  const b2 = await vm.parseBlock(raw(b1.id, 2, clock.seconds + 5));
  await b2.verify();
  await b2.accept();
  assert.is(b2.status, 'accepted');
  assert.ok((await vm.lastAccepted()).equals(b2.id));
  assert.ok((await vm.getBlockIdAtHeight(2)).equals(b2.id));
  await vm.shutdown();

  // A VM over the same store writes nothing at start (genesis only once) and resumes.
  let writes = 0;
  const counting: KeyValueStore = {
    get: (k) => db.get(k),
    has: (k) => db.has(k),
    put: (k, v) => (writes++, db.put(k, v)),
    delete: (k) => (writes++, db.delete(k)),
    iterate: (r) => db.iterate(r),
    close: () => db.close(),
    batch: (): WriteBatch => {
      const inner = db.batch();
      const b: WriteBatch = {
        put: (k, v) => (inner.put(k, v), b),
        delete: (k) => (inner.delete(k), b),
        get length() {
          return inner.length;
        },
        write: () => (writes++, inner.write()),
      };
      return b;
    },
  };
  const vm2 = new TimestampVM();
  await vm2.initialize(fakeContext({ db: counting, clock }), { genesis: new Uint8Array(0) });
  assert.is(writes, 0);
  assert.ok((await vm2.lastAccepted()).equals(b2.id));
  assert.ok((await vm2.getBlockIdAtHeight(0)).equals(g));
  assert.ok((await vm2.getBlockIdAtHeight(1)).equals(b1.id));
  assert.ok((await vm2.getBlockIdAtHeight(2)).equals(b2.id));
  assert.instance(await rejection(vm2.getBlockIdAtHeight(3)), NotFoundError);
  const again = await vm2.getBlock(b1.id);
  assert.is(again.height, 1);
  assert.is(again.status, 'accepted');
  assert.equal(again.data, payload(1));
  assert.is(again.timestamp, clock.seconds);

  // And it keeps going: the next block builds on what it resumed from.
  vm2.proposeBlock(payload(3));
  const b3 = await vm2.buildBlock();
  assert.ok(b3.parentId.equals(b2.id));
  assert.is(b3.height, 3);
  await b3.verify();
  await b3.accept();
  assert.is(writes, 1); // one batch per accept
});

test('a different genesis over an existing store is refused', async () => {
  const db = new MemoryStore();
  await setup({ db });
  const e = await rejection(new TimestampVM().initialize(fakeContext({ db }), { genesis: Uint8Array.of(1) }));
  assert.ok(isCode(e, 'GenesisMismatch'));
});

test('accept checks the chain: only a child of the last accepted block', async () => {
  const { vm, clock } = await setup();
  const g = await vm.lastAccepted();
  const a = await vm.parseBlock(raw(g, 1, clock.seconds));
  const child = await vm.parseBlock(raw(a.id, 2, clock.seconds));
  await a.verify();
  await child.verify();
  assert.ok(isCode(await rejection(child.accept()), 'NotNextBlock'));
  await a.accept();
  await a.accept(); // idempotent
  await child.accept();
  assert.ok((await vm.lastAccepted()).equals(child.id));
});

test('reject: forgotten, not persisted, cannot be accepted', async () => {
  const { vm, db, clock } = await setup();
  const g = await vm.lastAccepted();
  const a = await vm.parseBlock(raw(g, 1, clock.seconds));
  const b = await vm.parseBlock(raw(g, 2, clock.seconds));
  await a.verify();
  await b.verify();
  await a.accept();
  await b.reject();
  assert.is(b.status, 'rejected');
  assert.instance(await rejection(vm.getBlock(b.id)), NotFoundError);
  assert.ok(isCode(await rejection(b.accept()), 'AlreadyDecided'));
  assert.ok(isCode(await rejection(b.verify()), 'AlreadyDecided'));
  assert.ok(isCode(await rejection(a.reject()), 'AlreadyDecided'));
  await b.reject(); // idempotent

  const vm2 = new TimestampVM();
  await vm2.initialize(fakeContext({ db }), { genesis: new Uint8Array(0) });
  assert.instance(await rejection(vm2.getBlock(b.id)), NotFoundError);
  assert.ok((await vm2.lastAccepted()).equals(a.id));
});

test('buildBlock builds on the preference with timestamp max(now, parent)', async () => {
  const clock = new ManualClock();
  const { vm } = await setup({ clock });
  const g = await vm.lastAccepted();
  const future = await vm.parseBlock(raw(g, 1, clock.seconds + 100));
  const other = await vm.parseBlock(raw(g, 2, clock.seconds - 100));
  await future.verify();
  await other.verify();

  vm.proposeBlock(payload(10));
  vm.proposeBlock(payload(11));
  vm.proposeBlock(payload(12));

  // Default preference: the last accepted block (genesis, timestamp 0).
  const onGenesis = await vm.buildBlock();
  assert.ok(onGenesis.parentId.equals(g));
  assert.is(onGenesis.timestamp, clock.seconds);
  assert.is(onGenesis.height, 1);
  assert.equal(onGenesis.data, payload(10)); // first in, first built

  await vm.setPreference(future.id);
  const onFuture = await vm.buildBlock();
  assert.ok(onFuture.parentId.equals(future.id));
  assert.is(onFuture.timestamp, clock.seconds + 100); // the parent's, later than now
  assert.is(onFuture.height, 2);
  assert.equal(onFuture.data, payload(11));
  await onFuture.verify();

  await vm.setPreference(other.id);
  const onOther = await vm.buildBlock();
  assert.ok(onOther.parentId.equals(other.id));
  assert.is(onOther.timestamp, clock.seconds);
  assert.equal(onOther.data, payload(12));
  assert.ok((await vm.getBlock(onOther.id)) === onOther);
  assert.is(vm.pendingCount, 0);

  const e = await rejection(vm.buildBlock());
  assert.ok(isCode(e, 'MempoolEmpty'));
});

test('buildBlock keeps the payload when the preferred block is gone', async () => {
  const { vm, clock } = await setup();
  const g = await vm.lastAccepted();
  const a = await vm.parseBlock(raw(g, 1, clock.seconds));
  await a.verify();
  await vm.setPreference(a.id);
  await a.reject();
  vm.proposeBlock(payload(1));
  assert.instance(await rejection(vm.buildBlock()), NotFoundError);
  assert.is(vm.pendingCount, 1);
  await vm.setPreference(g);
  assert.ok((await vm.buildBlock()).parentId.equals(g));
});

test('unverified undecided blocks are bounded; verified ones stay', async () => {
  const { vm, clock } = await setup({ vm: { maxProcessing: 4 } });
  const g = await vm.lastAccepted();
  const kept = await vm.parseBlock(raw(g, 0, clock.seconds));
  await kept.verify();
  const parsed = [];
  for (let i = 1; i <= 6; i++) parsed.push(await vm.parseBlock(raw(g, i, clock.seconds)));
  assert.ok((await vm.getBlock(kept.id)) === kept);
  assert.instance(await rejection(vm.getBlock(parsed[0]!.id)), NotFoundError);
  assert.ok((await vm.getBlock(parsed[5]!.id)) === parsed[5]);
});

test('createHandlers: one service at path ""', async () => {
  const { vm } = await setup();
  const handlers = await vm.createHandlers();
  assert.is(handlers.length, 1);
  assert.is(handlers[0]!.path, '');
  assert.is(handlers[0]!.services!.length, 1);
  assert.equal([...handlers[0]!.services![0]!.methods.keys()].sort(), ['timestamp.getBlock', 'timestamp.proposeBlock']);
});

test('after shutdown calls are refused', async () => {
  const { vm } = await setup();
  await vm.shutdown();
  await vm.shutdown();
  assert.ok(isCode(await rejection(vm.lastAccepted()), 'ShutDown'));
});

test.run();
