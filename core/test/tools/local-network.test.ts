import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { localNodeV8Flags, nodeCommand, type RunnerOptions } from '../../src/runner/local-network.js';

const options = (nodes: number, cores: number): RunnerOptions => ({ nodes, cores, dir: '/tmp/net', baseHttpPort: 9650, nodeFlags: ['--log-level=debug'], out: () => {} });

test('more nodes than cores: each node collects garbage on its own thread', () => {
  assert.equal(localNodeV8Flags(5, 2), ['--single-threaded-gc']);
  assert.equal(localNodeV8Flags(3, 2), ['--single-threaded-gc']);
});

test('no more nodes than cores: V8 keeps its GC helper threads', () => {
  assert.equal(localNodeV8Flags(2, 2), []);
  assert.equal(localNodeV8Flags(5, 8), []);
  assert.equal(localNodeV8Flags(1, 1), []);
});

test('the V8 flags come before the node script, the node flags after it', () => {
  const { argv, httpPort, stakingPort, dataDir } = nodeCommand(options(5, 2), 3);
  assert.is(argv[0], '--single-threaded-gc');
  assert.match(argv[1]!, /bin\/cornice\.js$/);
  assert.ok(argv.includes('--http-port=9654') && argv.includes('--staking-port=9655'));
  // A user's flag after the runner's default (the last one given wins).
  assert.ok(argv.indexOf('--log-level=debug') > argv.indexOf('--log-level=warn'));
  assert.equal([httpPort, stakingPort, dataDir], [9654, 9655, '/tmp/net/node3']);
  assert.match(nodeCommand(options(5, 8), 3).argv[0]!, /bin\/cornice\.js$/);
});

test.run();
