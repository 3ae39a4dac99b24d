// putMany (trie-batch.ts) against @ethereumjs' own puts one by one: the same root, the same values,
// over random and adversarial key sets (keys sharing prefixes of every length, so that extensions
// split at every point, and small values, so that nodes are embedded); nothing done for what it
// does not handle; checkpoints still revert its writes; the next update reuses the nodes the last one wrote.
import { createMPT, type MerklePatriciaTrie } from '@ethereumjs/mpt';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { putMany } from '../src/chain/state/trie-batch.js';

/** A deterministic generator (xorshift32). */
function rng(seed: number) {
  let x = seed >>> 0 || 1;
  return (n: number) => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x % n;
  };
}

const hex = (b: Uint8Array | null) => (b ? Buffer.from(b).toString('hex') : 'null');

/** `n` keys of `len` bytes, each sharing a prefix of 0..2*len-1 nibbles with an earlier one. */
function keys(rand: (n: number) => number, n: number, len: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = 0; i < n; i++) {
    const k = Uint8Array.from({ length: len }, () => rand(256));
    if (out.length > 0 && rand(3) > 0) {
      const base = out[rand(out.length)]!;
      const shared = rand(2 * len);
      for (let j = 0; j < shared >> 1; j++) k[j] = base[j]!;
      if (shared & 1) k[shared >> 1] = (base[shared >> 1]! & 0xf0) | (k[shared >> 1]! & 0x0f);
      // a different nibble right after the shared part (else the keys might be equal)
      const at = shared;
      const byte = at >> 1;
      if (at & 1) k[byte] = (k[byte]! & 0xf0) | ((base[byte]! & 0x0f) ^ (1 + rand(15)));
      else k[byte] = (((base[byte]! >> 4) ^ (1 + rand(15))) << 4) | (k[byte]! & 0x0f);
    }
    out.push(k);
  }
  return out;
}

const value = (rand: (n: number) => number) => Uint8Array.from({ length: [1, 2, 5, 40, 80][rand(5)]! }, () => 1 + rand(255));

async function pair(opts: { useKeyHashing?: boolean } = {}): Promise<[MerklePatriciaTrie, MerklePatriciaTrie]> {
  return [await createMPT(opts), await createMPT(opts)];
}

async function sameAsOneByOne(seed: number, opts: { useKeyHashing?: boolean }, len: number, rounds: number, perRound: number) {
  const rand = rng(seed);
  const [stock, batched] = await pair(opts);
  const pool = keys(rand, rounds * perRound, len);
  const known = new Map<string, Uint8Array>();
  for (let r = 0; r < rounds; r++) {
    // new keys and rewrites of known ones
    const picked = pool.slice(r * perRound, (r + 1) * perRound);
    for (const k of [...known.keys()].slice(0, rand(perRound))) picked.push(Uint8Array.from(Buffer.from(k, 'hex')));
    const entries = picked.map((k) => [k, value(rand)] as const);
    for (const [k, v] of entries) await stock.put(k, v);
    assert.ok(await putMany(batched, entries), 'done here');
    for (const [k, v] of entries) known.set(hex(k), v);
    assert.is(hex(batched.root()), hex(stock.root()), `seed ${seed} round ${r}: the same root`);
  }
  for (const [k, v] of known) assert.is(hex(await batched.get(Uint8Array.from(Buffer.from(k, 'hex')))), hex(v));
  assert.ok(await batched.checkRoot(batched.root()));
}

test('hashed keys (the account trie): the same root as one put at a time, round after round', async () => {
  for (let seed = 1; seed <= 6; seed++) await sameAsOneByOne(seed, { useKeyHashing: true }, 20, 5, 40);
});

test('raw keys sharing prefixes of every length, small values (embedded nodes): the same roots', async () => {
  for (let seed = 11; seed <= 30; seed++) await sameAsOneByOne(seed, {}, 32, 4, 25);
  // short keys: deep sharing, most nodes embedded
  for (let seed = 31; seed <= 50; seed++) await sameAsOneByOne(seed, {}, 2, 3, 6);
});

test('one key, into an empty trie and again; a rewrite of the only key; an empty batch', async () => {
  const [stock, batched] = await pair();
  const k = new Uint8Array(32).fill(7);
  await stock.put(k, Uint8Array.of(1));
  assert.ok(await putMany(batched, [[k, Uint8Array.of(1)]]));
  assert.is(hex(batched.root()), hex(stock.root()));
  await stock.put(k, Uint8Array.of(2));
  assert.ok(await putMany(batched, [[k, Uint8Array.of(2)]]));
  assert.is(hex(batched.root()), hex(stock.root()));
  assert.ok(await putMany(batched, []));
  assert.is(hex(batched.root()), hex(stock.root()));
});

test('the same key twice in one batch: the last value wins, as one put after the other', async () => {
  const [stock, batched] = await pair();
  const k = new Uint8Array(32).fill(9);
  await stock.put(k, Uint8Array.of(1));
  await stock.put(k, Uint8Array.of(2));
  assert.ok(await putMany(batched, [[k, Uint8Array.of(1)], [k, Uint8Array.of(2)]]));
  assert.is(hex(batched.root()), hex(stock.root()));
});

test('what it does not do, it leaves undone (false, the trie untouched): an empty value, mixed key lengths', async () => {
  const trie = await createMPT();
  await trie.put(new Uint8Array(32).fill(1), Uint8Array.of(1));
  const root = hex(trie.root());
  assert.is(await putMany(trie, [[new Uint8Array(32).fill(2), new Uint8Array(0)]]), false);
  assert.is(await putMany(trie, [[new Uint8Array(32).fill(2), Uint8Array.of(1)], [new Uint8Array(31).fill(3), Uint8Array.of(1)]]), false);
  // the trie holds a 32-byte key; a 31-byte one would end inside its path
  assert.is(await putMany(trie, [[new Uint8Array(31).fill(1), Uint8Array.of(1)]]), false);
  assert.is(await putMany(trie, [[new Uint8Array(33).fill(1), Uint8Array.of(1)]]), false);
  assert.is(hex(trie.root()), root);
  const pruning = await createMPT({ useNodePruning: true });
  assert.is(await putMany(pruning, [[new Uint8Array(32).fill(2), Uint8Array.of(1)]]), false);
});

test('inside a checkpoint its writes revert with it', async () => {
  const trie = await createMPT({ useKeyHashing: true });
  const a = new Uint8Array(20).fill(1);
  const b = new Uint8Array(20).fill(2);
  await trie.put(a, Uint8Array.of(5));
  const before = hex(trie.root());
  trie.checkpoint();
  assert.ok(await putMany(trie, [[b, Uint8Array.of(6)], [a, Uint8Array.of(7)]]));
  assert.is(hex(await trie.get(b)), '06');
  await trie.revert();
  assert.is(hex(trie.root()), before);
  assert.is(hex(await trie.get(a)), '05');
  assert.is(await trie.get(b), null);
});

test('an update reads back none of the nodes the one before it wrote; after a revert or stock puts, still the same roots', async () => {
  const rand = rng(77);
  const [stock, batched] = await pair({ useKeyHashing: true });
  const ks = keys(rand, 62, 20);
  const entries = (from: number, to: number) => ks.slice(from, to).map((k) => [k, value(rand)] as const);
  const both = async (es: ReadonlyArray<readonly [Uint8Array, Uint8Array]>) => {
    for (const [k, v] of es) await stock.put(k, v);
    assert.ok(await putMany(batched, es));
    assert.is(hex(batched.root()), hex(stock.root()));
  };
  await both(entries(0, 50));
  let reads = 0;
  const lookup = batched.lookupNode.bind(batched);
  batched.lookupNode = async (node) => {
    if (node instanceof Uint8Array) reads += 1;
    return lookup(node);
  };
  // Every node on the new keys' paths was written by the first update, which made the whole trie.
  await both(entries(50, 52));
  assert.is(reads, 0, 'no node read back from the database');
  // A reverted update: what it wrote is kept, and stays true under its hashes.
  stock.checkpoint();
  batched.checkpoint();
  await both(entries(52, 56));
  await stock.revert();
  await batched.revert();
  assert.is(hex(batched.root()), hex(stock.root()));
  await both([...entries(56, 60), [ks[0]!, value(rand)]]);
  // Stock puts move the root past what the last update wrote.
  for (const [k, v] of entries(60, 61)) {
    await stock.put(k, v);
    await batched.put(k, v);
  }
  await both([...entries(61, 62), [ks[1]!, value(rand)]]);
  assert.ok(reads > 0, 'nodes the last update did not write are read');
});

test.run();
