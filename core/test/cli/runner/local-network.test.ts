import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { ConfigError } from '../../../src/config/config.js';
import { parseRunnerArgs, type RunnerArgs } from '../../../src/cli/runner/args.js';
import { askRunner, controlPath, serveControl } from '../../../src/cli/runner/control.js';
import { nodeCommand, type RunnerOptions } from '../../../src/cli/runner/local-network.js';

const options = (nodeFlags: string[]): RunnerOptions => ({ nodes: 5, dir: '/tmp/net', baseHttpPort: 9650, nodeFlags, out: () => {} });
const HOME = '/home/u';
const parse = (...argv: string[]) => parseRunnerArgs(argv, HOME);
const run = (...argv: string[]) => {
  const a = parse(...argv);
  assert.is(a.kind, 'run', argv.join(' '));
  return a as Extract<RunnerArgs, { kind: 'run' }>;
};
function refused(argv: string[], message: RegExp, code?: string): void {
  try {
    parse(...argv);
  } catch (e) {
    assert.match((e as Error).message, message, argv.join(' '));
    if (code) assert.is((e as ConfigError).code, code, argv.join(' '));
    return;
  }
  assert.unreachable(`${argv.join(' ')} was accepted`);
}

test("node i's ports, data dir, certificate and beacon", () => {
  const { argv, httpPort, stakingPort, dataDir } = nodeCommand(options([]), 3);
  assert.match(argv[0]!, /bin\/cornice\.js$/);
  assert.ok(argv.includes('--http-port=9654') && argv.includes('--staking-port=9655') && argv.includes('--data-dir=/tmp/net/node3'));
  assert.ok(argv.some((a) => /staker3\.crt$/.test(a)) && argv.includes('--bootstrap-ips=127.0.0.1:9651'));
  assert.equal([httpPort, stakingPort, dataDir], [9654, 9655, '/tmp/net/node3']);
  assert.not.ok(nodeCommand(options([]), 1).argv.some((a) => a.startsWith('--bootstrap-ips')));
});

test('every node is a dev node: --evm-debug-api (the EVM debug API on); -- --evm-debug-api=false comes after it and wins', () => {
  for (const i of [1, 2, 6]) assert.ok(nodeCommand(options([]), i).argv.includes('--evm-debug-api'), `node ${i}`);
  const { argv } = nodeCommand(options(['--evm-debug-api=false']), 1);
  assert.ok(argv.lastIndexOf('--evm-debug-api=false') > argv.indexOf('--evm-debug-api'));
});

test("flags after -- come after the runner's own, so they win (the last of a repeated flag does)", () => {
  const { argv } = nodeCommand(options(['--log-level=debug']), 2);
  assert.ok(argv.indexOf('--log-level=debug') > argv.indexOf('--log-level=warn'));
  assert.is(argv.at(-1), '--log-level=debug');
});

test('arguments: --flag value and --flag=value, as the node takes its flags (issue 31: --nodes 5 was refused)', () => {
  for (const argv of [
    ['start', '--nodes', '3', '--dir', '/d', '--base-port', '9700'],
    ['start', '--nodes=3', '--dir=/d', '--base-port=9700'],
    ['start', '--dir', '/d', '--nodes=3', '--base-port', '9700'],
  ]) {
    const a = run(...argv);
    assert.equal([a.sub, a.nodes, a.dir, a.baseHttpPort, a.nodeFlags], ['start', 3, '/d', 9700, []], argv.join(' '));
  }
  // Defaults; ~ expands; the last of a repeated flag wins; what follows -- goes to the nodes as it is.
  const d = run('start');
  assert.equal([d.nodes, d.dir, d.baseHttpPort], [5, '/home/u/.cornice/local-network', 9650]);
  assert.is(run('status', '--dir', '~/net').dir, '/home/u/net');
  assert.is(run('start', '--nodes', '2', '--nodes=4').nodes, 4);
  assert.equal(run('start', '--nodes', '2', '--', '--nodes', '--log-level=info').nodeFlags, ['--nodes', '--log-level=info']);
});

test('restart <i>: the node number anywhere among the flags', () => {
  assert.equal([run('restart', '3').node, run('restart', '--dir', '/d', '3').node, run('restart', '3', '--dir=/d').dir], [3, 3, '/d']);
  refused(['restart'], /restart takes one node number, e\.g\. cornice network restart 3; got none/);
  refused(['restart', '2', '3'], /got "2" "3"/);
  refused(['restart', 'x'], /invalid node number "x": expected an integer from 1 to 50/, 'InvalidValue');
  refused(['restart', '0'], /invalid node number "0"/);
  refused(['status', '3'], /unexpected argument "3"/, 'UnexpectedArgument');
});

test('--help and -h anywhere before -- ask for the usage text, whatever else is there', () => {
  for (const argv of [['--help'], ['-h'], ['start', '--help'], ['start', '--bogus', '-h'], ['restart', '--help=true'], ['nonsense', '-h']]) {
    assert.is(parse(...argv).kind, 'help', argv.join(' '));
  }
  assert.is(run('start', '--', '--help').nodeFlags[0], '--help', 'after --, a node flag');
});

test('bad arguments: a message naming the argument and what was expected', () => {
  refused([], /missing command: start, stop, status, restart \(see cornice network --help\)/);
  refused(['launch'], /unknown command "launch": expected start, stop, status, restart/);
  refused(['start', '--bogus'], /unknown flag --bogus \(see cornice network --help\)/, 'UnknownFlag');
  refused(['start', '-n', '3'], /unknown flag -n/, 'UnknownFlag');
  refused(['start', '--nodes'], /missing value for --nodes/, 'MissingValue');
  refused(['start', '--nodes', '--dir=/d'], /missing value for --nodes/, 'MissingValue');
  refused(['start', '--nodes', '0'], /invalid value "0" for --nodes: expected an integer from 1 to 50/, 'InvalidValue');
  refused(['start', '--nodes=five'], /invalid value "five" for --nodes/, 'InvalidValue');
  refused(['start', '--base-port', '65500'], /invalid value "65500" for --base-port: expected an integer from 1 to 65435/);
  refused(['start', 'extra'], /unexpected argument "extra"/, 'UnexpectedArgument');
  refused(['stop', '--nodes', '3'], /--nodes is not a flag of cornice network stop \(only of start\)/, 'UnknownFlag');
  refused(['restart', '3', '--base-port=9700'], /--base-port is not a flag of cornice network restart/);
  refused(['restart', '3', '--', '--log-level=info'], /flags after -- go to the nodes of cornice network start only/);
});

test('control socket: one JSON request and reply; nothing listening is "no runner"; junk is refused', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'cornice-control-'));
  const path = controlPath(dir);
  try {
    assert.is(path, join(dir, 'runner.sock'));
    assert.match(controlPath(`/tmp/${'x'.repeat(120)}`), /cornice-network-[0-9a-f]{16}\.sock$/, 'too long for a socket path: in the temp dir');
    assert.is(await askRunner(path, { cmd: 'ping' }, 2_000), undefined, 'no socket: no runner');
    let after = false;
    const server = await serveControl(path, async (req) => {
      if (req.cmd === 'restart') throw new Error(`no node ${req.node}`);
      return { reply: { ok: true, lines: [`got ${req.cmd}`] }, after: () => (after = true) };
    });
    try {
      assert.equal(await askRunner(path, { cmd: 'stop' }, 2_000), { ok: true, lines: ['got stop'] });
      assert.ok(after, 'after() runs once the reply is sent');
      assert.equal(await askRunner(path, { cmd: 'restart', node: 9 }, 2_000), { ok: false, error: 'no node 9' });
      const junk = await new Promise<string>((resolve) => {
        let got = '';
        const s = createConnection(path, () => s.write('{"cmd":"format c:"}\n'));
        s.on('data', (d) => (got += d));
        s.on('close', () => resolve(got));
      });
      assert.equal(JSON.parse(junk), { ok: false, error: 'not a runner request' });
    } finally {
      await new Promise((r) => server.close(r));
    }
    // A file left where the socket goes (by a killed runner): a new runner replaces it.
    await writeFile(path, '');
    const again = await serveControl(path, async () => ({ reply: { ok: true, lines: [] } }));
    await new Promise((r) => again.close(r));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test.run();
