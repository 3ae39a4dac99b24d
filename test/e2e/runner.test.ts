/**
 * `cornice network start|status|stop`: real node processes on 127.0.0.1 at base port + 2(i−1), node 1
 * the beacon; status sees them; Ctrl-C (SIGINT) on `start` stops every node.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { freePort, until } from '../src/network.js';
import { CORNICE_BIN, runCli } from '../src/process.js';

test('two nodes: start prints URLs and node IDs, status sees both connected, SIGINT stops them all', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'cornice-e2e-runner-'));
  const base = await freePort();
  const runner = spawn(process.execPath, [CORNICE_BIN, 'network', 'start', '--nodes=2', `--dir=${dir}`, `--base-port=${base}`, '--', '--log-level=info'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  runner.stdout.on('data', (d) => (out += d));
  runner.stderr.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => runner.on('close', (code) => resolve(code)));
  try {
    await until('both nodes started', async () => (out.includes('2 node(s) running') ? true : undefined), 60_000);
    assert.match(out, new RegExp(`node 1: http://127\\.0\\.0\\.1:${base}  node ID LHgqGqV1QYBuyTywXEvmswXme3iH8myRY  staking 127\\.0\\.0\\.1:${base + 1}`));
    assert.match(out, new RegExp(`node 2: http://127\\.0\\.0\\.1:${base + 2}  node ID BrUCFthHgbBG5SkGZsVRRtxPh9uYufHr7`));
    const status = await until('both connected', async () => {
      const r = await runCli(['network', 'status', `--dir=${dir}`]);
      return r.code === 0 && (r.stdout.match(/up, 1 peer\(s\)/g) ?? []).length === 2 ? r : undefined;
    });
    assert.match(status.stdout, /node 2: .* up, 1 peer\(s\)/);
    // Each node's log is kept in its data dir, at the level given after --.
    const log1 = await readFile(join(dir, 'node1', 'node.log'), 'utf8');
    assert.match(log1, /"level":"info"/);
    runner.kill('SIGINT');
    assert.is(await exited, 0);
    assert.match(out, /stopping 2 node\(s\): interrupted/);
    const after = await runCli(['network', 'status', `--dir=${dir}`]);
    assert.is(after.code, 1, 'network.json is gone');
    const stopped = await fetch(`http://127.0.0.1:${base}/ext/health`).then(
      () => false,
      () => true,
    );
    assert.ok(stopped, 'node 1 is stopped');
  } finally {
    if (runner.exitCode === null) runner.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
});

test('bad arguments: a usage message and exit code 2', async () => {
  for (const args of [['network'], ['network', 'launch'], ['network', 'start', '--nodes=0'], ['network', 'start', '--bogus']]) {
    const r = await runCli(args);
    assert.is(r.code, 2, args.join(' '));
    assert.match(r.stderr, /usage: cornice network start/);
  }
});

test.run();
