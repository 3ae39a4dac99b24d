import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { sha256 } from '../../src/crypto/hash.js';
import { Id } from '../../src/ids/id.js';
import { BlockBase, BlockMap, type BlockHost, type BlockStatus } from '../../src/vm/bookkeeping.js';
import type { Block } from '../../src/vm/block.js';

class TestBlock extends BlockBase<TestBlock> implements Block {
  readonly id: Id;
  readonly parentId = Id.empty;
  readonly height = 1;
  readonly timestamp = 0;
  constructor(host: BlockHost<TestBlock>, readonly bytes: Uint8Array, status?: BlockStatus) {
    super(host, status);
    this.id = Id.fromBytes(sha256(bytes));
  }
}

const calls: string[] = [];
const host: BlockHost<TestBlock> = {
  verify: async (b) => void calls.push(`verify ${b.bytes[0]}`),
  accept: async (b) => void calls.push(`accept ${b.bytes[0]}`),
  reject: async (b) => void calls.push(`reject ${b.bytes[0]}`),
};
const block = (n: number, status?: BlockStatus) => new TestBlock(host, Uint8Array.of(n), status);

test('BlockBase: processing and unverified, or accepted and verified; verify/accept/reject go to the host with the block', async () => {
  const b = block(1);
  assert.is(b.status, 'processing');
  assert.is(b.verified, false);
  const a = block(2, 'accepted');
  assert.is(a.verified, true);
  calls.length = 0;
  await b.verify();
  await b.accept();
  await a.reject();
  assert.equal(calls, ['verify 1', 'accept 1', 'reject 2']);
});

test('BlockMap.intern: one object per ID; look-ups by Id or key', () => {
  const m = new BlockMap<TestBlock>();
  const first = block(1);
  assert.is(m.intern(first), first);
  assert.is(m.intern(block(1)), first, 'a second parse of the same bytes gets the first object');
  assert.is(m.get(first.id), first);
  assert.is(m.get(first.id.key), first);
  assert.ok(m.has(first.id));
  assert.is(m.size, 1);
  assert.ok(m.delete(first.id.key));
  assert.is(m.get(first.id), undefined);
});

test('BlockMap.addVerified: the first verified object of an ID stays; an unverified one is replaced', () => {
  const m = new BlockMap<TestBlock>();
  const unverified = block(1);
  m.add(unverified);
  const verified = block(1);
  verified.verified = true;
  assert.is(m.addVerified(verified), verified);
  const twin = block(1);
  twin.verified = true;
  assert.is(m.addVerified(twin), verified, 'a twin verified later does not replace it');
  assert.is(m.get(verified.id), verified);
});

test('BlockMap bound: past max, the oldest never-verified blocks go; verified, kept and the new one stay', () => {
  const kept = block(0);
  const m = new BlockMap<TestBlock>({ max: 3, keep: (b) => b === kept });
  m.add(kept);
  const v = block(1);
  v.verified = true;
  m.add(v);
  const old = block(2);
  m.add(old);
  const fresh = block(3);
  m.add(fresh);
  assert.equal([...m].map((b) => b.bytes[0]), [0, 1, 3]);
  assert.equal([...m.values()].length, 3);
  m.clear();
  assert.is(m.size, 0);
});

test.run();
