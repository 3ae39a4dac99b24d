// The worker's view of the engine's tree (--vm-isolation): it says the engine will verify a built
// block exactly when snowman's #addOne would, from the verifies, accepts and rejects it saw.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EngineView } from '../../src/vms/isolation/engine-view.js';

test('before any accept it cannot tell, so it says no', () => {
  const v = new EngineView();
  v.verified('a', 1);
  assert.is(v.willVerify('b', 'a', 2), false);
});

test('a child of the last accepted block or of a verified one, one height up: yes', () => {
  const v = new EngineView();
  v.accepted('root', 10);
  assert.is(v.willVerify('a', 'root', 11), true);
  v.verified('a', 11);
  assert.is(v.willVerify('b', 'a', 12), true);
});

test('the engine skips it (known, decided, unknown parent, wrong height): no', () => {
  const v = new EngineView();
  v.accepted('root', 10);
  v.verified('a', 11);
  assert.is(v.willVerify('a', 'root', 11), false, 'already processing');
  assert.is(v.willVerify('root', 'x', 10), false, 'the root itself');
  assert.is(v.willVerify('b', 'unknown', 12), false, 'parent unknown (held)');
  assert.is(v.willVerify('b', 'a', 13), false, 'height does not follow the parent');
  assert.is(v.willVerify('b', 'root', 10), false, 'at a decided height');
  assert.is(v.willVerify('b', 'root', Number.NaN), false, 'height unknown');
  v.failed('f');
  assert.is(v.willVerify('f', 'root', 11), false, 'failed verify before');
  assert.is(v.willVerify('c', 'f', 12), false, 'child of a block that failed verify');
  v.rejected('a');
  assert.is(v.willVerify('c', 'a', 12), false, 'child of a rejected block');
  assert.is(v.willVerify('a', 'root', 11), false, 'a rejected block');
});

test('an accept moves the root: the old root and its height are decided', () => {
  const v = new EngineView();
  v.accepted('r0', 0);
  v.verified('a', 1);
  v.verified('b', 2);
  v.accepted('a', 1);
  assert.is(v.willVerify('c', 'b', 3), true);
  assert.is(v.willVerify('d', 'a', 2), true, 'a sibling of b on the new root');
  assert.is(v.willVerify('e', 'r0', 1), false, 'on the old root');
  assert.is(v.willVerify('a', 'r0', 1), false, 'the accepted block again');
});

test('verified blocks past its bound are forgotten as decided, never taken for new ones', () => {
  const v = new EngineView();
  v.accepted('root', 0);
  for (let i = 0; i < 16_385; i++) v.verified(`v${i}`, 1);
  assert.is(v.willVerify('v0', 'root', 1), false);
  assert.is(v.willVerify('x', 'v0', 2), false, 'its children: the parent is no longer known');
  assert.is(v.willVerify('x', 'v16384', 2), true);
});

test.run();
