/**
 * `cornice network start|stop|status|restart`: a local multi-node network of real node processes on
 * 127.0.0.1 (avash's five-node recipe for the reference node). Node i listens for HTTP on
 * 9650 + 2(i−1) and for peers on 9651 + 2(i−1), with the committed staker i certificate (nodes 1–5:
 * the local genesis validators; nodes past 5 get a generated certificate and are not validators)
 * and its own data dir `<dir>/node<i>`; node 1 is every other node's bootstrap beacon. Each node
 * logs to `<dir>/node<i>/node.log` (appended across runs and restarts).
 *
 * `start` runs in the foreground: it prints each node's URL and node ID, writes `<dir>/network.json`
 * (the runner's pid and control socket; each node's pid, ports, command line, log file and state),
 * and stops every node on Ctrl-C, SIGTERM or `cornice network stop`. A start that fails (a node
 * exits or never answers while the network comes up) stops what it started. Once the network is
 * up, a node that exits is reported (a line, and `down` in network.json and `status`) and the
 * others keep running; `cornice network restart <i>` asks the runner, over its control socket
 * (control.ts), to start it again with the same command line. When no runner answers there (it was
 * killed), `restart` starts the node itself, detached, and `stop` stops the recorded pids.
 * Tests: test/e2e/runner.test.ts (real nodes), core/test/cli/runner/local-network.test.ts (arguments).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import type { Server } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '../../config/config.js';
import { LOCAL_STAKER_NODE_IDS } from '../../genesis/local.js';
import { defaultDir, parseRunnerArgs, USAGE } from './args.js';
import { askRunner, controlPath, serveControl, type ControlReply, type ControlRequest } from './control.js';

const BIN = fileURLToPath(new URL('../../../../bin/cornice.js', import.meta.url));
const FIXTURES = fileURLToPath(new URL('../../../../fixtures/staking/local/', import.meta.url));
/** Longest wait for a node to answer after it was started. */
const START_TIMEOUT_MS = 60_000;
/** Longest wait for a node to exit after SIGTERM (its own --shutdown-timeout defaults to 10 s) before SIGKILL. */
const STOP_TIMEOUT_MS = 30_000;
/** How long `status` waits for a node's answer, and the commands for a runner to take a request. */
const PROBE_TIMEOUT_MS = 2_000;

export interface RunnerOptions {
  nodes: number;
  dir: string;
  baseHttpPort: number;
  /** Extra flags passed to every node. */
  nodeFlags: string[];
  out: (line: string) => void;
}

export interface NodeRecord {
  index: number;
  pid: number;
  url: string;
  httpPort: number;
  stakingPort: number;
  nodeId: string;
  dataDir: string;
  /** The node's process arguments after the node executable: what a restart runs again. */
  argv: string[];
  logFile: string;
  /** `down`: it exited after the network was up (`exit` says how) and was not restarted since. */
  state: 'up' | 'down';
  exit?: string;
}

/** `<dir>/network.json`. */
export interface NetworkFile {
  /** The foreground `start`, while it runs. */
  runner?: { pid: number; control: string };
  nodes: NodeRecord[];
}

/** Runs `cornice network …`; resolves with the exit code. */
export async function networkCommand(argv: string[], out: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): Promise<number> {
  let args: ReturnType<typeof parseRunnerArgs>;
  try {
    args = parseRunnerArgs(argv);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    process.stderr.write(`cornice network: ${e.message}\n${USAGE}`);
    return 2;
  }
  if (args.kind === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  const o: RunnerOptions = { nodes: args.nodes, dir: args.dir, baseHttpPort: args.baseHttpPort, nodeFlags: args.nodeFlags, out };
  try {
    if (args.sub === 'stop') return await stopNetwork(o);
    if (args.sub === 'status') return await statusNetwork(o);
    if (args.sub === 'restart') return await restartCommand(o, args.node!);
    return await startNetwork(o);
  } catch (e) {
    process.stderr.write(`cornice network ${args.sub}: ${(e as Error).message}\n`);
    return 1;
  }
}

/** How node `i` is started: its process arguments (after the node executable), ports and data dir. */
export function nodeCommand(o: RunnerOptions, i: number): { argv: string[]; httpPort: number; stakingPort: number; dataDir: string } {
  const httpPort = o.baseHttpPort + 2 * (i - 1);
  const stakingPort = httpPort + 1;
  const dataDir = join(o.dir, `node${i}`);
  const args = [`--data-dir=${dataDir}`, `--http-port=${httpPort}`, `--staking-port=${stakingPort}`, '--staking-host=127.0.0.1', '--network-id=local', '--evm-debug-api'];
  if (i <= LOCAL_STAKER_NODE_IDS.length) {
    args.push(`--staking-tls-cert-file=${join(FIXTURES, `staker${i}.crt`)}`, `--staking-tls-key-file=${join(FIXTURES, `staker${i}.key`)}`);
  }
  if (i > 1) args.push(`--bootstrap-ips=127.0.0.1:${o.baseHttpPort + 1}`, `--bootstrap-ids=${LOCAL_STAKER_NODE_IDS[0]}`);
  // The flags given after `--` last: the last of a repeated flag wins (`-- --log-level=debug`).
  return { argv: [BIN, ...args, '--log-level=warn', ...o.nodeFlags], httpPort, stakingPort, dataDir };
}

/** `--dir=…` to repeat in a hint, unless it is the default. */
function dirHint(o: RunnerOptions): string {
  return o.dir === defaultDir() ? '' : ` --dir=${o.dir}`;
}

/**
 * Spawns a node with its stdout (its log) appended to `logFile`, and its stderr there too or, with
 * `stderrToTerminal`, to ours. Each node gets its own process group: Ctrl-C in the runner's terminal
 * reaches the runner alone, which then sends each node one SIGTERM (a node given SIGINT by the
 * terminal and SIGTERM by the runner took the second signal as "exit now", skipping its clean stop).
 */
function spawnNode(argv: string[], logFile: string, stderrToTerminal: boolean): ChildProcess {
  const log = openSync(logFile, 'a', 0o600);
  try {
    return spawn(process.execPath, argv, { stdio: ['ignore', log, stderrToTerminal ? 'inherit' : log], detached: true });
  } finally {
    closeSync(log);
  }
}

/** One node as the foreground runner keeps it. */
interface Slot {
  record: NodeRecord;
  /** Its process while it runs (or starts). */
  child: ChildProcess | undefined;
  /** A restart is in progress. */
  restarting: boolean;
}

async function startNetwork(o: RunnerOptions): Promise<number> {
  await mkdir(o.dir, { recursive: true, mode: 0o700 });
  const running = await alreadyRunning(o);
  if (running) throw new Error(running);
  const slots: Slot[] = [];
  let up = false;
  let stopping: Promise<void> | undefined;
  let control: Server | undefined;
  let done: (code: number) => void = () => {};
  const finished = new Promise<number>((r) => (done = r));
  /** Writes network.json, one write at a time; none once stopping (stopAll removes the file after the last). */
  let saving: Promise<void> = Promise.resolve();
  const save = (): Promise<void> => {
    if (stopping) return saving;
    const file: NetworkFile = { ...(control ? { runner: { pid: process.pid, control: controlPath(o.dir) } } : {}), nodes: slots.map((s) => s.record) };
    return (saving = saving.catch(() => {}).then(() => writeNetworkFile(o.dir, file)));
  };

  const stopAll = (why: string): Promise<void> =>
    (stopping ??= (async () => {
      const live = slots.filter((s) => s.child);
      o.out(`stopping ${live.length} node(s): ${why}`);
      control?.close();
      await Promise.all(live.map((s) => stopChild(s.child!)));
      await saving.catch(() => {});
      await rm(join(o.dir, 'network.json'), { force: true });
    })());

  /** Starts node `slot`'s process and waits until it answers; reports its exits once the network is up. */
  const launch = async (slot: Slot): Promise<string> => {
    const r = slot.record;
    const child = spawnNode(r.argv, r.logFile, true);
    slot.child = child;
    child.once('close', (code, signal) => {
      if (slot.child !== child) return; // replaced by a restart, which reports
      slot.child = undefined;
      if (stopping || !up || slot.restarting) return;
      r.state = 'down';
      r.exit = signal ?? `code ${code}`;
      o.out(`node ${r.index} exited (${r.exit}); the other nodes keep running. Start it again: cornice network restart ${r.index}${dirHint(o)}`);
      void save().catch(() => {});
    });
    const nodeId = await waitForNode(r.url, child, () => stopping !== undefined);
    r.pid = child.pid!;
    r.nodeId = nodeId;
    r.state = 'up';
    delete r.exit;
    return nodeId;
  };

  const restart = async (i: number): Promise<string[]> => {
    if (stopping) throw new Error('the network is stopping');
    const slot = slots[i - 1];
    if (!slot) throw new Error(`no node ${i}: this network has nodes 1 to ${slots.length}`);
    if (slot.restarting) throw new Error(`node ${i} is already restarting`);
    slot.restarting = true;
    const lines: string[] = [];
    const say = (line: string) => (o.out(line), lines.push(line));
    try {
      const old = slot.child;
      if (old) {
        slot.child = undefined;
        say(`node ${i}: stopping it (pid ${old.pid}) to restart it`);
        await stopChild(old);
      }
      const r = slot.record;
      try {
        await launch(slot);
      } catch (e) {
        if (stopping) throw e; // stopAll stops it
        slot.child?.kill('SIGKILL');
        r.state = 'down';
        r.exit = 'did not come back';
        await save();
        throw new Error(`node ${i} did not come back: ${(e as Error).message} (its log: ${r.logFile})`);
      }
      await save();
      say(`node ${i} restarted: ${r.url}  node ID ${r.nodeId}  pid ${r.pid}`);
      return lines;
    } finally {
      slot.restarting = false;
    }
  };

  const handle = async (req: ControlRequest): Promise<{ reply: ControlReply; after?: () => void }> => {
    if (req.cmd === 'ping') return { reply: { ok: true, lines: [`runner pid ${process.pid}`] } };
    if (req.cmd === 'restart') return { reply: { ok: true, lines: await restart(req.node) } };
    const stopped = slots.filter((s) => s.child).map((s) => `node ${s.record.index} (pid ${s.child!.pid}) stopped`);
    await stopAll('stopped by cornice network stop');
    return { reply: { ok: true, lines: stopped }, after: () => done(0) };
  };

  const onSignal = () => void stopAll('interrupted').then(() => done(0));
  // SIGHUP: the terminal closed; the nodes, in their own process groups, would outlive it.
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  for (const signal of signals) process.once(signal, onSignal);
  try {
    for (let i = 1; i <= o.nodes; i++) {
      const n = nodeCommand(o, i);
      // The node's log (its stdout) goes to node.log in its data dir, appended across runs.
      await mkdir(n.dataDir, { recursive: true, mode: 0o700 });
      const url = `http://127.0.0.1:${n.httpPort}`;
      const record: NodeRecord = { index: i, pid: 0, url, httpPort: n.httpPort, stakingPort: n.stakingPort, nodeId: '', dataDir: n.dataDir, argv: n.argv, logFile: join(n.dataDir, 'node.log'), state: 'up' };
      const slot: Slot = { record, child: undefined, restarting: false };
      slots.push(slot);
      const nodeId = await launch(slot);
      o.out(`node ${i}: ${url}  node ID ${nodeId}  staking 127.0.0.1:${n.stakingPort}${i <= LOCAL_STAKER_NODE_IDS.length ? '' : '  (not a validator)'}`);
    }
    control = await serveControl(controlPath(o.dir), handle);
    await save();
    up = true;
    o.out(`${o.nodes} node(s) running; Ctrl-C stops them all. A node that exits is reported and the others keep running; cornice network restart <i> starts it again`);
  } catch (e) {
    // Stopping already: Ctrl-C while the nodes came up, which is no failure.
    const interrupted = stopping !== undefined;
    await stopAll((e as Error).message);
    if (interrupted) return 0;
    throw e;
  } finally {
    if (!up) for (const signal of signals) process.off(signal, onSignal);
  }
  const code = await finished;
  for (const signal of signals) process.off(signal, onSignal);
  return code;
}

/** Why `start` must not run in `o.dir` (a runner or nodes of an earlier start still run there), or undefined. */
async function alreadyRunning(o: RunnerOptions): Promise<string | undefined> {
  const file = await readNetworkFile(o.dir);
  if (!file) return undefined;
  if (file.runner && (await askRunner(file.runner.control, { cmd: 'ping' }, PROBE_TIMEOUT_MS).catch(() => undefined))) {
    return `a network is already running from ${o.dir} (runner pid ${file.runner.pid}); stop it first: cornice network stop${dirHint(o)}`;
  }
  const alive = [];
  for (const n of file.nodes) if (await isNodeProcess(n)) alive.push(`node ${n.index} (pid ${n.pid})`);
  if (alive.length > 0) return `${alive.join(', ')} of an earlier network still run from ${o.dir}; stop them first: cornice network stop${dirHint(o)}`;
  return undefined;
}

/** SIGTERM, then SIGKILL after STOP_TIMEOUT_MS; resolves once the process is gone. */
function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    child.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** The node's ID once its API answers and its chains run; throws when it exits, `abort()` says so, or START_TIMEOUT_MS passes. */
async function waitForNode(url: string, child: ChildProcess, abort: () => boolean = () => false): Promise<string> {
  const t0 = Date.now();
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`a node exited (${child.signalCode ?? `code ${child.exitCode}`}) while starting (${url})`);
    }
    if (abort()) throw new Error('the network is stopping');
    if (Date.now() - t0 > START_TIMEOUT_MS) throw new Error(`${url} did not answer within ${START_TIMEOUT_MS / 1000} s`);
    try {
      const r = await rpc(url, 'admin', 'admin.getNodeID');
      if (r?.nodeID) {
        // The API answers while the chains start: wait until they run (the `chains` health check).
        const checks = (await rpc(url, 'health', 'health.getLiveness'))?.checks as Record<string, { error?: string }> | undefined;
        if (checks && !checks.chains?.error) return String(r.nodeID);
      }
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function rpc(url: string, path: string, method: string): Promise<Record<string, unknown> | undefined> {
  const res = await fetch(`${url}/ext/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: {} }),
    signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
  });
  return ((await res.json()) as { result?: Record<string, unknown> }).result;
}

async function readNetworkFile(dir: string): Promise<NetworkFile | undefined> {
  try {
    return JSON.parse(await readFile(join(dir, 'network.json'), 'utf8')) as NetworkFile;
  } catch {
    return undefined;
  }
}

/** Replaces network.json whole (a reader never sees half of it). */
async function writeNetworkFile(dir: string, file: NetworkFile): Promise<void> {
  const tmp = join(dir, `network.json.${process.pid}.tmp`);
  await writeFile(tmp, JSON.stringify(file, null, 2), { mode: 0o600 });
  await rename(tmp, join(dir, 'network.json'));
}

async function readRecords(o: RunnerOptions): Promise<NetworkFile | undefined> {
  const file = await readNetworkFile(o.dir);
  if (!file) o.out(`no local network is running from ${o.dir} (no network.json)`);
  return file;
}

/** Whether process `pid` runs. */
function pidAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether the node's recorded pid is still that node: alive, and (where /proc shows command lines)
 * running with its data dir, so that a pid reused since by another process is never signalled.
 */
async function isNodeProcess(n: NodeRecord): Promise<boolean> {
  if (!pidAlive(n.pid)) return false;
  try {
    const cmdline = (await readFile(`/proc/${n.pid}/cmdline`, 'utf8')).split('\0');
    return cmdline.includes(`--data-dir=${n.dataDir}`);
  } catch {
    return true; // no /proc (macOS, Windows): the pid is all we have
  }
}

/** Waits until `pid` is gone, polling; SIGKILL after STOP_TIMEOUT_MS. */
async function waitForExit(pid: number): Promise<void> {
  const t0 = Date.now();
  let killed = false;
  while (pidAlive(pid)) {
    if (!killed && Date.now() - t0 > STOP_TIMEOUT_MS) {
      killed = true;
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Asks the network's runner, if one answers; undefined when none does. */
async function ask(file: NetworkFile, req: ControlRequest, timeoutMs: number): Promise<ControlReply | undefined> {
  if (!file.runner) return undefined;
  return askRunner(file.runner.control, req, timeoutMs);
}

async function stopNetwork(o: RunnerOptions): Promise<number> {
  const file = await readRecords(o);
  if (!file) return 1;
  const reply = await ask(file, { cmd: 'stop' }, STOP_TIMEOUT_MS + 10_000);
  if (reply) {
    if (!reply.ok) throw new Error(reply.error);
    for (const line of reply.lines) o.out(line);
    o.out(`the runner (pid ${file.runner!.pid}) stopped`);
    return 0;
  }
  // No runner: the nodes run on their own (the runner was killed, or nodes were restarted without it).
  const stopping: Array<Promise<void>> = [];
  for (const n of file.nodes) {
    if (await isNodeProcess(n)) {
      process.kill(n.pid, 'SIGTERM');
      stopping.push(waitForExit(n.pid));
      o.out(`node ${n.index} (pid ${n.pid}) stopped`);
    } else {
      o.out(`node ${n.index} (pid ${n.pid}) was not running`);
    }
  }
  await Promise.all(stopping);
  await rm(join(o.dir, 'network.json'), { force: true });
  // The socket file a killed runner left.
  if (file.runner && process.platform !== 'win32') await rm(file.runner.control, { force: true });
  return 0;
}

async function statusNetwork(o: RunnerOptions): Promise<number> {
  const file = await readRecords(o);
  if (!file) return 1;
  const runner = await ask(file, { cmd: 'ping' }, PROBE_TIMEOUT_MS).catch(() => undefined);
  o.out(runner ? `runner: pid ${file.runner!.pid}` : 'runner: not running (the nodes run on their own; stop them with cornice network stop)');
  let down = 0;
  for (const n of file.nodes) {
    const head = `node ${n.index}: ${n.url}  node ID ${n.nodeId}`;
    if (n.state === 'down' || !(await isNodeProcess(n))) {
      down += 1;
      o.out(`${head}  down (${n.exit ? `exited: ${n.exit}` : `process ${n.pid} is gone`}); start it again: cornice network restart ${n.index}${dirHint(o)}`);
      continue;
    }
    try {
      const peers = await rpc(n.url, 'admin', 'admin.peers');
      o.out(`${head}  up, ${(peers?.peers as unknown[] | undefined)?.length ?? 0} peer(s)`);
    } catch {
      down += 1;
      o.out(`${head}  not answering (pid ${n.pid} runs)`);
    }
  }
  return down === 0 ? 0 : 1;
}

async function restartCommand(o: RunnerOptions, i: number): Promise<number> {
  const file = await readRecords(o);
  if (!file) return 1;
  const record = file.nodes.find((n) => n.index === i);
  if (!record) throw new Error(`no node ${i}: the network at ${o.dir} has nodes 1 to ${file.nodes.length}`);
  const reply = await ask(file, { cmd: 'restart', node: i }, START_TIMEOUT_MS + STOP_TIMEOUT_MS + 10_000);
  if (reply) {
    if (!reply.ok) throw new Error(reply.error);
    for (const line of reply.lines) o.out(line);
    return 0;
  }
  // No runner answers: start the node here, detached, so that it outlives this command.
  if (!Array.isArray(record.argv) || !record.logFile) throw new Error(`network.json has no command line for node ${i} (written by an older cornice); stop the network and start it again`);
  o.out(`no runner answers for ${o.dir}${file.runner ? ` (pid ${file.runner.pid} is gone)` : ''}: node ${i} runs on its own; cornice network stop stops it`);
  if (await isNodeProcess(record)) {
    o.out(`node ${i}: stopping it (pid ${record.pid}) to restart it`);
    process.kill(record.pid, 'SIGTERM');
    await waitForExit(record.pid);
  }
  const child = spawnNode(record.argv, record.logFile, false);
  let nodeId: string;
  try {
    nodeId = await waitForNode(record.url, child);
  } catch (e) {
    child.kill('SIGKILL');
    throw new Error(`node ${i} did not come back: ${(e as Error).message} (its log: ${record.logFile})`);
  }
  child.unref();
  // Without `runner`: none runs for this network any more.
  const { nodes } = (await readNetworkFile(o.dir)) ?? file;
  await writeNetworkFile(o.dir, { nodes: nodes.map((n) => (n.index === i ? { ...n, pid: child.pid!, nodeId, state: 'up' as const, exit: undefined } : n)) });
  o.out(`node ${i} restarted: ${record.url}  node ID ${nodeId}  pid ${child.pid}`);
  return 0;
}
