/**
 * `cornice network start|status|restart|stop`: real node processes on 127.0.0.1 at base port + 2(i−1),
 * node 1 the beacon; status sees them; a node that dies is reported and the others keep running;
 * restart brings it back through the running runner, or on its own when the runner is gone; stop
 * and Ctrl-C (SIGINT) on `start` stop every node, restarted ones included. The runner is spawned as
 * `node <bin>` (killing `npx cornice` would leave it running), and so are its nodes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { postRpc } from '@cornice/core/testing';
import { freePortBlock, LOCAL_NODE_IDS, until } from '../src/network.js';
import { CORNICE_BIN, runCli } from '../src/process.js';

interface Runner {
  proc: ChildProcess;
  /** Everything it printed so far (stdout and stderr). */
  out(): string;
  exited: Promise<number | null>;
}

function startRunner(args: string[]): Runner {
  const proc = spawn(process.execPath, [CORNICE_BIN, 'network', 'start', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  // 'exit', not 'close': the nodes share the runner's stderr, so its pipes stay open while they run.
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  return { proc, out: () => out, exited };
}

/** Waits until the runner printed `text`; fails at once, with what it printed, if it exits first. */
async function printed(runner: Runner, text: string, maxMs: number): Promise<void> {
  let gone = false;
  void runner.exited.then(() => (gone = true));
  await until(
    JSON.stringify(text),
    async () => {
      if (runner.out().includes(text)) return true;
      if (gone) throw new Error(`the runner exited (code ${runner.proc.exitCode}) before printing ${JSON.stringify(text)}; it printed:\n${runner.out()}`);
      return undefined;
    },
    maxMs,
  ).catch((e: Error) => {
    throw gone ? e : new Error(`${e.message}; the runner printed:\n${runner.out()}`);
  });
}

interface Recorded {
  runner?: { pid: number };
  nodes: Array<{ index: number; pid: number; url: string; state: string }>;
}
const networkFile = async (dir: string) => JSON.parse(await readFile(join(dir, 'network.json'), 'utf8')) as Recorded;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Every request to a node has a deadline: a test must fail, not hang, on a node that stopped answering. */
const REQUEST_TIMEOUT_MS = 5_000;

const nodeIdAt = async (url: string) => {
  const r = await Promise.race([postRpc(`${url}/ext/admin`, 'admin.getNodeID'), new Promise<undefined>((r) => setTimeout(() => r(undefined), REQUEST_TIMEOUT_MS).unref())]).catch(() => undefined);
  return (r?.result as { nodeID?: string } | undefined)?.nodeID;
};

const healthStatus = (url: string) =>
  fetch(`${url}/ext/health`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }).then(
    (r) => r.status,
    () => undefined,
  );

/** Ends whatever a failed test left running: the runner, then every recorded node. */
async function cleanUp(runner: Runner | undefined, dir: string): Promise<void> {
  if (runner && runner.proc.exitCode === null && runner.proc.signalCode === null) runner.proc.kill('SIGKILL');
  const file = await networkFile(dir).catch(() => undefined);
  for (const n of file?.nodes ?? []) if (alive(n.pid)) process.kill(n.pid, 'SIGKILL');
  await rm(dir, { recursive: true, force: true });
}

test('two nodes: start prints URLs and node IDs, status sees both connected, restart of a running node, stop stops them all', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'cornice-e2e-runner-'));
  const base = await freePortBlock(4);
  let runner: Runner | undefined = startRunner(['--nodes=2', `--dir=${dir}`, `--base-port=${base}`, '--', '--log-level=info']);
  try {
    await printed(runner, '2 node(s) running', 60_000);
    assert.match(runner.out(), new RegExp(`node 1: http://127\\.0\\.0\\.1:${base}  node ID LHgqGqV1QYBuyTywXEvmswXme3iH8myRY  staking 127\\.0\\.0\\.1:${base + 1}`));
    assert.match(runner.out(), new RegExp(`node 2: http://127\\.0\\.0\\.1:${base + 2}  node ID BrUCFthHgbBG5SkGZsVRRtxPh9uYufHr7`));
    const status = await until('both connected', async () => {
      const r = await runCli(['network', 'status', `--dir=${dir}`]);
      return r.code === 0 && (r.stdout.match(/up, 1 peer\(s\)/g) ?? []).length === 2 ? r : undefined;
    });
    assert.match(status.stdout, /runner: pid \d+/);
    assert.match(status.stdout, /node 2: .* up, 1 peer\(s\)/);
    // Each node's log is kept in its data dir, at the level given after --.
    const log1 = await readFile(join(dir, 'node1', 'node.log'), 'utf8');
    assert.match(log1, /"level":"info"/);

    // restart of a node that runs: stopped, then started with the same command line.
    const before = (await networkFile(dir)).nodes[1]!.pid;
    const restarted = await runCli(['network', 'restart', '2', '--dir', dir], 120_000);
    assert.is(restarted.code, 0, restarted.stderr);
    assert.match(restarted.stdout, new RegExp(`node 2: stopping it \\(pid ${before}\\) to restart it`));
    assert.match(restarted.stdout, /node 2 restarted: .* node ID BrUCFthHgbBG5SkGZsVRRtxPh9uYufHr7/);
    const after = (await networkFile(dir)).nodes[1]!.pid;
    assert.ok(after !== before && !alive(before) && alive(after), `pid ${before} -> ${after}`);
    assert.match(runner.out(), /node 2 restarted/);
    assert.not.match(runner.out(), /node 2 exited/, 'a node the runner stops to restart it is not reported as dead');

    // stop, from another terminal: asks the runner, which stops every node (the restarted one too).
    const stopped = await runCli(['network', 'stop', '--dir', dir]);
    assert.is(stopped.code, 0, stopped.stderr);
    assert.match(stopped.stdout, new RegExp(`node 2 \\(pid ${after}\\) stopped`));
    assert.is(await runner.exited, 0);
    assert.match(runner.out(), /stopping 2 node\(s\): stopped by cornice network stop/);
    assert.ok(!alive(after), 'the restarted node is stopped');
    assert.is((await runCli(['network', 'status', `--dir=${dir}`])).code, 1, 'network.json is gone');

    // Ctrl-C (SIGINT) on start stops the nodes too.
    runner = startRunner(['--nodes', '1', '--dir', dir, '--base-port', String(base)]);
    await printed(runner, '1 node(s) running', 60_000);
    runner.proc.kill('SIGINT');
    assert.is(await runner.exited, 0);
    assert.match(runner.out(), /stopping 1 node\(s\): interrupted/);
    assert.is(await healthStatus(`http://127.0.0.1:${base}`), undefined, 'node 1 is stopped');
  } finally {
    await cleanUp(runner, dir);
  }
});

test('five nodes: kill -9 of one is reported and the others keep answering; restart brings it back to healthy; without the runner, restart and stop still work', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'cornice-e2e-runner5-'));
  const base = await freePortBlock(10);
  const runner = startRunner(['--nodes', '5', '--dir', dir, '--base-port', String(base)]);
  try {
    await printed(runner, '5 node(s) running', 180_000);
    const victim = (await networkFile(dir)).nodes[2]!;
    process.kill(victim.pid, 'SIGKILL');
    await printed(runner, 'node 3 exited (SIGKILL)', 30_000);
    assert.match(runner.out(), /node 3 exited \(SIGKILL\); the other nodes keep running\. Start it again: cornice network restart 3 --dir=/);
    // The others keep running and answering; the runner too.
    for (const i of [1, 2, 4, 5]) assert.is(await nodeIdAt(`http://127.0.0.1:${base + 2 * (i - 1)}`), LOCAL_NODE_IDS[i - 1], `node ${i}`);
    assert.is(runner.proc.exitCode, null, 'the runner runs on');
    const status = await runCli(['network', 'status', '--dir', dir]);
    assert.is(status.code, 1);
    assert.match(status.stdout, /node 3: .* down \(exited: SIGKILL\); start it again: cornice network restart 3/);
    assert.is((status.stdout.match(/ up, \d peer\(s\)/g) ?? []).length, 4, status.stdout);

    // restart, from another terminal, through the runner: same ports, data dir, certificate.
    const restarted = await runCli(['network', 'restart', '3', '--dir', dir], 120_000);
    assert.is(restarted.code, 0, restarted.stderr);
    assert.match(restarted.stdout, new RegExp(`node 3 restarted: http://127\\.0\\.0\\.1:${base + 4}  node ID ${LOCAL_NODE_IDS[2]}`));
    assert.match(runner.out(), /node 3 restarted/);
    const url3 = `http://127.0.0.1:${base + 4}`;
    assert.is(await nodeIdAt(url3), LOCAL_NODE_IDS[2]);
    // It rejoins: connected to the others, every chain bootstrapped and healthy.
    await until('node 3 healthy', async () => ((await healthStatus(url3)) === 200 ? true : undefined), 120_000);
    const back = (await networkFile(dir)).nodes[2]!;
    assert.equal([back.state, back.pid !== victim.pid, alive(back.pid)], ['up', true, true]);

    // The runner is gone (killed): the nodes run on; restart starts a node on its own, detached.
    runner.proc.kill('SIGKILL');
    await runner.exited;
    const alone = await runCli(['network', 'status', '--dir', dir]);
    assert.is(alone.code, 0, alone.stdout);
    assert.match(alone.stdout, /runner: not running/);
    const node4 = (await networkFile(dir)).nodes[3]!.pid;
    const fallback = await runCli(['network', 'restart', '4', '--dir', dir], 120_000);
    assert.is(fallback.code, 0, fallback.stderr);
    assert.match(fallback.stdout, /no runner answers for .*: node 4 runs on its own/);
    assert.match(fallback.stdout, new RegExp(`node 4 restarted: .* node ID ${LOCAL_NODE_IDS[3]}`));
    const file = await networkFile(dir);
    assert.is(file.runner, undefined);
    assert.ok(file.nodes[3]!.pid !== node4 && alive(file.nodes[3]!.pid), 'node 4 runs with a new pid after restart exited');
    assert.is(await nodeIdAt(`http://127.0.0.1:${base + 6}`), LOCAL_NODE_IDS[3]);

    // stop stops every node, those restarted by the runner and by restart included.
    const stopped = await runCli(['network', 'stop', '--dir', dir], 60_000);
    assert.is(stopped.code, 0, stopped.stderr);
    assert.is((stopped.stdout.match(/node \d \(pid \d+\) stopped/g) ?? []).length, 5, stopped.stdout);
    for (const n of file.nodes) assert.not.ok(alive(n.pid), `node ${n.index} (pid ${n.pid}) is stopped`);
  } finally {
    await cleanUp(runner, dir);
  }
});

test('usage: --help and -h print it and exit 0; bad arguments print it with the reason and exit 2', async () => {
  for (const args of [['network', '--help'], ['network', 'start', '-h'], ['network', 'restart', '--help']]) {
    const r = await runCli(args);
    assert.is(r.code, 0, args.join(' '));
    assert.match(r.stdout, /usage: cornice network start \[--nodes N\]/);
    assert.match(r.stdout, /cornice network restart <i> \[--dir D\]/);
  }
  for (const [args, why] of [
    [['network'], /missing command/],
    [['network', 'launch'], /unknown command "launch"/],
    [['network', 'start', '--nodes=0'], /invalid value "0" for --nodes: expected an integer from 1 to 50/],
    [['network', 'start', '--nodes'], /missing value for --nodes/],
    [['network', 'start', '--bogus'], /unknown flag --bogus/],
    [['network', 'restart'], /restart takes one node number/],
  ] as const) {
    const r = await runCli([...args]);
    assert.is(r.code, 2, args.join(' '));
    assert.match(r.stderr, why);
    assert.match(r.stderr, /usage: cornice network start/);
  }
});

test.run();
