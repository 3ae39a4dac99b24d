/**
 * The pure consensus alone (snowman/topological.ts): no engine, no VM, no clock — blocks are plain
 * objects and polls are tallies handed in.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Id, type Block } from '@cornice/sdk';
import type { SnowParams } from '../../../src/consensus/params.js';
import { Topological, type OutsideTree, type TreeNode } from '../../../src/consensus/snowman/topological.js';

const P: SnowParams = { k: 5, alpha: 4, betaVirtuous: 3, betaRogue: 5, concurrentRepolls: 1 };

function idOf(n: number): Id {
  const b = new Uint8Array(32);
  b[0] = 0xbb;
  b[30] = n >> 8;
  b[31] = n & 0xff;
  return Id.fromBytes(b);
}

/** A block the tree only reads the ID, parent ID and bytes of. */
function block(n: number, parent: number, height: number): Block {
  return { id: idOf(n), parentId: idOf(parent), height, bytes: new Uint8Array([n]) } as unknown as Block;
}

const GENESIS = block(0, 999, 0);
const key = (n: number) => idOf(n).key;
const votes = (entries: Array<[number, number]>) => new Map(entries.map(([n, w]) => [key(n), w]));

/** A tree with the genesis as root and blocks added as [n, parent] (each parent already in it). */
function treeWith(blocks: Array<[number, number]>, outside?: OutsideTree): Topological {
  const t = new Topological(P, GENESIS, 0, 0, outside);
  for (const [n, parent] of blocks) {
    const p = t.lookup(key(parent)) as TreeNode;
    t.add(block(n, parent, p.height + 1), key(n), p, n);
  }
  return t;
}

/** Records the same poll `times` times; returns the last record. */
function poll(t: Topological, v: Map<string, number>, times = 1) {
  let r;
  for (let i = 0; i < times; i++) r = t.recordPoll(t.tally(v));
  return r!;
}

const test = suite('topological');

test('a new tree: the root is preferred, nothing processing, no poll path', () => {
  const t = treeWith([]);
  assert.is(t.root.key, key(0));
  assert.is(t.preferred.key, key(0));
  assert.is(t.size, 0);
  assert.equal(t.recordPoll(new Map()), { succeeded: false, root: undefined });
  assert.is(t.finalizedChild(), undefined);
  assert.is(t.preferredAt(0)?.key, key(0));
  assert.is(t.preferredAt(3)?.key, key(0));
});

test('votes are transitive: a vote for a block counts for each processing ancestor', () => {
  const t = treeWith([[1, 0], [2, 1], [3, 2], [4, 1]]);
  const tally = t.tally(votes([[3, 2], [4, 1], [2, 1]]));
  assert.is(tally.get(key(3)), 2);
  assert.is(tally.get(key(2)), 3);
  assert.is(tally.get(key(4)), 1);
  assert.is(tally.get(key(1)), 4);
  assert.not.ok(tally.has(key(0)), 'the root is decided: no votes');
});

test('votes for unknown blocks are reported; votes for blocks outside the tree reach their processing ancestor', () => {
  const held = new Map([[key(11), key(10)], [key(10), key(2)]]);
  const outside: OutsideTree = { heldParentOf: (k) => held.get(k), heldCount: held.size };
  const t = treeWith([[1, 0], [2, 1]], outside);
  const unknown: string[] = [];
  const tally = t.tally(votes([[11, 3], [77, 2]]), (k, w) => unknown.push(`${k}:${w}`));
  assert.is(tally.get(key(2)), 3);
  assert.is(tally.get(key(1)), 3);
  assert.equal(unknown, [`${key(77)}:2`]);
  assert.is(treeWith([[1, 0], [2, 1]]).tally(votes([[11, 3]])).size, 0, 'without the outside view a held block is unknown');
});

test('beta confidence: a chain is accepted after betaVirtuous successful polls, not before', () => {
  const t = treeWith([[1, 0], [2, 1]]);
  t.updatePreference();
  assert.is(t.preferred.key, key(2));
  for (let i = 1; i < P.betaVirtuous; i++) {
    assert.equal(poll(t, votes([[2, 4]])), { succeeded: true, root: 'succeeded' });
    assert.is(t.finalizedChild(), undefined, `final after ${i}`);
  }
  poll(t, votes([[2, 5]]));
  const final = t.finalizedChild();
  assert.is(final?.key, key(1));
  assert.equal(t.accept(final!.node!), []);
  assert.is(t.root.key, key(1));
  // Votes are transitive: the child got the same polls and is final as well.
  assert.is(t.finalizedChild()?.key, key(2));
  t.accept(t.finalizedChild()!.node!);
  assert.is(t.root.key, key(2));
  assert.is(t.size, 0);
  assert.is(t.updatePreference(), undefined, 'the preferred tip was accepted: no change');
  assert.is(t.preferred.key, key(2));
});

test('below alpha a poll fails and resets the confidence', () => {
  const t = treeWith([[1, 0]]);
  poll(t, votes([[1, 4]]), P.betaVirtuous - 1);
  assert.equal(poll(t, votes([[1, 3]])), { succeeded: false, root: 'failed' });
  assert.is(t.root.sb?.confidence, 0);
  poll(t, votes([[1, 4]]), P.betaVirtuous - 1);
  assert.is(t.finalizedChild(), undefined);
  poll(t, votes([[1, 4]]));
  assert.is(t.finalizedChild()?.key, key(1));
});

test('a poll that fails below the root succeeds at the root and resets the deeper node', () => {
  // 1 <- 2 and 1 <- 3 conflict; votes split between them: 1 gets alpha, neither child does.
  const t = treeWith([[1, 0], [2, 1], [3, 1]]);
  assert.equal(poll(t, votes([[2, 2], [3, 2]])), { succeeded: false, root: 'succeeded' });
  assert.is(t.get(key(1))?.sb?.confidence, 0);
  assert.is(t.root.sb?.confidence, 1);
});

test('conflicts: the preference follows the stronger branch, and accepting rejects the other subtree', () => {
  const t = treeWith([[1, 0], [2, 0], [3, 2], [4, 3], [5, 1]]);
  t.updatePreference();
  assert.is(t.preferred.key, key(5), 'first arrival preferred while no poll says otherwise');
  poll(t, votes([[4, 4]]));
  const changed = t.updatePreference();
  assert.is(changed?.key, key(4));
  assert.is(t.preferred.key, key(4));
  assert.is(t.preferredAt(2)?.key, key(3));
  assert.is(t.preferredAt(9)?.key, key(4), 'above the branch: the tip');
  assert.is(t.preferredAt(0)?.key, key(0));
  assert.is(t.preferredDepth, 3);
  assert.ok(t.root.sb?.rogue);
  // Rogue: betaRogue polls in a row are needed.
  poll(t, votes([[4, 4]]), P.betaVirtuous);
  assert.is(t.finalizedChild(), undefined);
  poll(t, votes([[4, 4]]), P.betaRogue - P.betaVirtuous - 1);
  const final = t.finalizedChild();
  assert.is(final?.key, key(2));
  const rejected = t.accept(final!.node!);
  assert.equal(rejected.map((n) => n.key), [key(1), key(5)], 'the sibling subtree, parents first');
  assert.is(t.root.key, key(2));
  assert.not.ok(t.isProcessing(key(1)));
  assert.not.ok(t.isProcessing(key(5)));
  assert.ok(t.isProcessing(key(3)));
  assert.is(t.size, 2);
  assert.is(t.preferredAt(0), undefined, 'below the root: the caller asks its VM');
});

test('a faltering branch records an unsuccessful poll in its whole subtree', () => {
  const t = treeWith([[1, 0], [2, 0], [3, 2], [4, 3]]);
  poll(t, votes([[4, 4]]), 2);
  assert.is(t.get(key(3))?.sb?.confidence, 2);
  // Now the other branch gets alpha: 2's subtree falters.
  poll(t, votes([[1, 4]]));
  assert.is(t.get(key(2))?.sb?.confidence, 0);
  assert.is(t.get(key(3))?.sb?.confidence, 0);
  assert.is(t.root.sb?.confidence, 1);
});

test('oldestSince and lookup', () => {
  const t = treeWith([[1, 0], [2, 1]]);
  assert.is(t.oldestSince, 1);
  assert.is(t.lookup(key(0)), t.root);
  assert.is(t.lookup(key(2))?.height, 2);
  assert.is(t.lookup(key(9)), undefined);
  assert.is(t.get(key(0)), undefined, 'the root is not processing');
});

test.run();
