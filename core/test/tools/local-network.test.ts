import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { nodeCommand, type RunnerOptions } from '../../src/runner/local-network.js';

const options = (nodeFlags: string[]): RunnerOptions => ({ nodes: 5, dir: '/tmp/net', baseHttpPort: 9650, nodeFlags, out: () => {} });

test("node i's ports, data dir, certificate and beacon", () => {
  const { argv, httpPort, stakingPort, dataDir } = nodeCommand(options([]), 3);
  assert.match(argv[0]!, /bin\/cornice\.js$/);
  assert.ok(argv.includes('--http-port=9654') && argv.includes('--staking-port=9655') && argv.includes('--data-dir=/tmp/net/node3'));
  assert.ok(argv.some((a) => /staker3\.crt$/.test(a)) && argv.includes('--bootstrap-ips=127.0.0.1:9651'));
  assert.equal([httpPort, stakingPort, dataDir], [9654, 9655, '/tmp/net/node3']);
  assert.not.ok(nodeCommand(options([]), 1).argv.some((a) => a.startsWith('--bootstrap-ips')));
});

test('flags after -- come after the runner\'s own, so they win (the last of a repeated flag does)', () => {
  const { argv } = nodeCommand(options(['--log-level=debug']), 2);
  assert.ok(argv.indexOf('--log-level=debug') > argv.indexOf('--log-level=warn'));
  assert.is(argv.at(-1), '--log-level=debug');
});

test.run();
