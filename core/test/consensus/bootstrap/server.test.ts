import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Id, NotFoundError, silentLogger, type Block, type ChainVM } from '@cornice/sdk';
import { ANCESTORS_BYTES_PER_BLOCK, BootstrapServer, DEFAULT_SERVER_LIMITS } from '../../../src/consensus/bootstrap/server.js';
import type { BootstrapTransport } from '../../../src/consensus/bootstrap/types.js';
import { MAX_ANCESTORS, MAX_CONTAINER_IDS, MAX_MESSAGE_BYTES } from '../../../src/consensus/limits.js';
import type { TestBlock, TestVM } from '../../../src/testing/simulation.js';
import { nodeIdOf } from '../helpers.js';
import { chainVM } from './helpers.js';

const test = suite('bootstrap: server (answering other nodes)');

const asker = nodeIdOf(7);

interface Reply {
  op: 'acceptedFrontier' | 'accepted' | 'ancestors';
  requestId: number;
  ids?: readonly Id[];
  blocks?: readonly Uint8Array[];
}

function recording(): BootstrapTransport & { replies: Reply[] } {
  const replies: Reply[] = [];
  const unexpected = () => {
    throw new Error('the server sends no requests');
  };
  return {
    replies,
    getAcceptedFrontier: unexpected,
    getAccepted: unexpected,
    getAncestors: unexpected,
    acceptedFrontier: (_to, requestId, ids) => void replies.push({ op: 'acceptedFrontier', requestId, ids }),
    accepted: (_to, requestId, ids) => void replies.push({ op: 'accepted', requestId, ids }),
    ancestors: (_to, requestId, blocks) => void replies.push({ op: 'ancestors', requestId, blocks }),
  };
}

let chain: TestVM | undefined;
async function longChain(): Promise<TestVM> {
  chain ??= await chainVM(3_000, 8);
  return chain;
}

/** A server whose clock stands still: only the time test below moves it (a loaded CI machine must not cut replies short). */
function serverOn(vm: ChainVM) {
  const transport = recording();
  return { server: new BootstrapServer({ vm, transport, log: silentLogger, now: () => 0 }), replies: transport.replies };
}

test('GetAcceptedFrontier: the last accepted block', async () => {
  const vm = await longChain();
  const { server, replies } = serverOn(vm);
  await server.onGetAcceptedFrontier(asker, 3);
  assert.equal(replies, [{ op: 'acceptedFrontier', requestId: 3, ids: [vm.lastAcceptedBlock.id] }]);
});

test('GetAccepted: only the blocks accepted here, each once; unknown and processing blocks left out', async () => {
  const vm = await longChain();
  const { server, replies } = serverOn(vm);
  const at = (h: number) => (vm.acceptedChain[h] as TestBlock).id;
  const processing = vm.makeBlock(vm.lastAcceptedBlock);
  const unknown = Id.fromBytes(new Uint8Array(32).fill(9));
  await server.onGetAccepted(asker, 4, [at(10), unknown, processing.id, at(2_999), at(10)]);
  assert.equal(replies, [{ op: 'accepted', requestId: 4, ids: [at(10), at(2_999)] }]);
});

test('GetAccepted: at most MAX_CONTAINER_IDS looked at; junk entries ignored', async () => {
  const vm = await longChain();
  const { server, replies } = serverOn(vm);
  const ids = vm.acceptedChain.slice(0, MAX_CONTAINER_IDS + 100).map((b) => b.id);
  await server.onGetAccepted(asker, 5, ids);
  assert.is(replies[0]?.ids?.length, MAX_CONTAINER_IDS);
  await server.onGetAccepted(asker, 6, [null, 'x', 7] as unknown as Id[]);
  await server.onGetAccepted(asker, 7, 'junk' as unknown as Id[]);
  assert.equal(replies.slice(1), [
    { op: 'accepted', requestId: 6, ids: [] },
    { op: 'accepted', requestId: 7, ids: [] },
  ]);
});

test('GetAncestors: the block then its parents newest first, at most MAX_ANCESTORS; down to genesis', async () => {
  const vm = await longChain();
  const { server, replies } = serverOn(vm);
  await server.onGetAncestors(asker, 8, vm.lastAcceptedBlock.id);
  const blocks = replies[0]?.blocks ?? [];
  assert.is(blocks.length, MAX_ANCESTORS);
  for (let i = 0; i < blocks.length; i++) {
    assert.equal(blocks[i], (vm.acceptedChain[3_000 - i] as TestBlock).bytes);
  }
  await server.onGetAncestors(asker, 9, (vm.acceptedChain[100] as TestBlock).id);
  assert.is(replies[1]?.blocks?.length, 101, 'heights 100 down to 0');
});

test('GetAncestors: a processing block is served with its ancestors; an unknown block (or junk) gets an empty reply', async () => {
  const vm = await longChain();
  const { server, replies } = serverOn(vm);
  const processing = vm.makeBlock(vm.lastAcceptedBlock);
  await server.onGetAncestors(asker, 10, processing.id);
  assert.is(replies[0]?.blocks?.[0], processing.bytes);
  assert.is(replies[0]?.blocks?.[1], vm.lastAcceptedBlock.bytes);
  await server.onGetAncestors(asker, 11, Id.fromBytes(new Uint8Array(32).fill(3)));
  await server.onGetAncestors(asker, 12, 'junk' as unknown as Id);
  assert.equal(replies.slice(1), [
    { op: 'ancestors', requestId: 11, blocks: [] },
    { op: 'ancestors', requestId: 12, blocks: [] },
  ]);
});

/** A VM of `n` blocks of `size` bytes each (only what the server reads). */
function bigBlockVM(n: number, size: number): ChainVM {
  const idOf = (i: number) => Id.fromBytes(new Uint8Array(32).fill(i + 1));
  const blocks = new Map<string, Block>();
  for (let i = 0; i < n; i++) {
    const block = { id: idOf(i), parentId: i === 0 ? Id.empty : idOf(i - 1), height: i, timestamp: 0, bytes: new Uint8Array(size).fill(i) };
    blocks.set(block.id.key, block as unknown as Block);
  }
  return {
    getBlock: async (id: Id) => {
      const b = blocks.get(id.key);
      if (!b) throw new NotFoundError('block not found');
      return b;
    },
    lastAccepted: async () => idOf(n - 1),
    getBlockIdAtHeight: async (h: number) => idOf(h),
  } as unknown as ChainVM;
}

test('GetAncestors: stops before the reply would pass MAX_MESSAGE_BYTES; a block too big alone gets an empty reply', async () => {
  const size = 100 * 1024;
  const { server, replies } = serverOn(bigBlockVM(40, size));
  await server.onGetAncestors(asker, 13, Id.fromBytes(new Uint8Array(32).fill(40)));
  const blocks = replies[0]?.blocks ?? [];
  const fits = Math.floor(DEFAULT_SERVER_LIMITS.maxAncestorsBytes / (size + ANCESTORS_BYTES_PER_BLOCK));
  assert.is(blocks.length, fits);
  assert.is(fits, 20);
  // The frame: version, op, chain ID, request ID, count, then each block with its length.
  const frame = 2 + 1 + 32 + 4 + 4 + blocks.reduce((n, b) => n + 4 + b.length, 0);
  assert.ok(frame <= MAX_MESSAGE_BYTES, `${frame} bytes`);
  const huge = serverOn(bigBlockVM(2, MAX_MESSAGE_BYTES));
  await huge.server.onGetAncestors(asker, 14, Id.fromBytes(new Uint8Array(32).fill(2)));
  assert.equal(huge.replies, [{ op: 'ancestors', requestId: 14, blocks: [] }]);
});

test('limits can be lowered: count and bytes', async () => {
  const vm = await longChain();
  const t1 = recording();
  const s1 = new BootstrapServer({ vm, transport: t1, log: silentLogger, limits: { maxAncestors: 10 }, now: () => 0 });
  await s1.onGetAncestors(asker, 1, vm.lastAcceptedBlock.id);
  assert.is(t1.replies[0]?.blocks?.length, 10);
  const t2 = recording();
  const s2 = new BootstrapServer({ vm, transport: t2, log: silentLogger, limits: { maxAncestorsBytes: 1_000 }, now: () => 0 });
  await s2.onGetAncestors(asker, 2, vm.lastAcceptedBlock.id);
  assert.is(t2.replies[0]?.blocks?.length, Math.floor(1_000 / (65 + 4)));
});

test('a failing VM or transport never makes a handler throw', async () => {
  const broken = {
    lastAccepted: async () => {
      throw new Error('disk gone');
    },
    getBlock: async () => {
      throw new Error('disk gone');
    },
    getBlockIdAtHeight: async () => {
      throw new Error('disk gone');
    },
  } as unknown as ChainVM;
  const { server, replies } = serverOn(broken);
  await server.onGetAcceptedFrontier(asker, 1);
  await server.onGetAccepted(asker, 2, [Id.empty]);
  await server.onGetAncestors(asker, 3, Id.empty);
  assert.equal(replies, [
    { op: 'accepted', requestId: 2, ids: [] },
    { op: 'ancestors', requestId: 3, blocks: [] },
  ]);
  const throwing = { ...recording(), ancestors: () => { throw new Error('link down'); } };
  const s = new BootstrapServer({ vm: await longChain(), transport: throwing, log: silentLogger });
  await s.onGetAncestors(asker, 4, Id.empty);
});

/** `vm` whose reads settle a macrotask later, counting how many are in flight at once. */
function slowReads(vm: TestVM, lie?: { height: number; id: Id }) {
  let inFlight = 0;
  const stats = { maxInFlight: 0 };
  const later = <T>(f: () => Promise<T>): Promise<T> => {
    inFlight += 1;
    stats.maxInFlight = Math.max(stats.maxInFlight, inFlight);
    return new Promise<void>((r) => setImmediate(r)).then(f).finally(() => void (inFlight -= 1));
  };
  const wrapped = Object.create(vm) as TestVM;
  wrapped.getBlock = (id: Id) => later(() => vm.getBlock(id));
  wrapped.getBlockIdAtHeight = (h: number) => later(() => (lie && h === lie.height ? Promise.resolve(lie.id) : vm.getBlockIdAtHeight(h)));
  return { vm: wrapped, stats };
}

test('GetAncestors: accepted ancestors are read by height, many at once, and linked as the parents say', async () => {
  const vm = await longChain();
  const { vm: slow, stats } = slowReads(vm);
  const { server, replies } = serverOn(slow);
  const top = vm.acceptedChain[2_500] as TestBlock;
  await server.onGetAncestors(asker, 9, top.id);
  const expected = vm.acceptedChain.slice(2_500 - MAX_ANCESTORS + 1, 2_501).reverse().map((b) => b.bytes);
  assert.equal(replies[0]?.blocks, expected);
  assert.ok(stats.maxInFlight >= 32, `reads in flight at most ${stats.maxInFlight}`);
});

test('GetAncestors: a height index that disagrees with the parent links ends the reply there', async () => {
  const vm = await longChain();
  const stranger = (vm.acceptedChain[10] as TestBlock).id;
  const { vm: lying } = slowReads(vm, { height: 95, id: stranger });
  const { server, replies } = serverOn(lying);
  await server.onGetAncestors(asker, 10, (vm.acceptedChain[100] as TestBlock).id);
  assert.equal(replies[0]?.blocks, vm.acceptedChain.slice(96, 101).reverse().map((b) => b.bytes));
});

test('GetAncestors: gathering stops after maxAncestorsMs (on the server\'s clock); the block asked for is always sent', async () => {
  let t = 0;
  const vm = bigBlockVM(3_000, 10);
  const slow = { ...vm, getBlock: async (id: Id) => ((t += 1), vm.getBlock(id)) } as ChainVM; // each read costs 1 ms
  const transport = recording();
  // Reads go 64 at a time below an accepted block: a reply stops within one window past its time.
  for (const [ms, min, max] of [
    [100, 64, 164],
    [1_000, 936, 1_064],
  ] as const) {
    t = 0;
    const server = new BootstrapServer({ vm: slow, transport, log: silentLogger, limits: { maxAncestorsMs: ms }, now: () => t });
    await server.onGetAncestors(asker, 15, Id.fromBytes(new Uint8Array(32).fill(200)));
    const n = transport.replies.at(-1)?.blocks?.length ?? 0;
    assert.ok(n >= min && n <= max, `${n} blocks in ${ms} ms`);
  }
  t = 0;
  const stuck = new BootstrapServer({ vm: { ...vm, getBlock: async (id: Id) => ((t += 10_000), vm.getBlock(id)) } as ChainVM, transport, log: silentLogger, limits: { maxAncestorsMs: 100 }, now: () => t });
  await stuck.onGetAncestors(asker, 16, Id.fromBytes(new Uint8Array(32).fill(200)));
  assert.is(transport.replies.at(-1)?.blocks?.length, 1, 'the first block only');
  assert.is(DEFAULT_SERVER_LIMITS.maxAncestorsMs, 250);
});

test.run();
