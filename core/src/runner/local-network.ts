/**
 * `cornice network start|stop|status`: a local multi-node network of real node processes on
 * 127.0.0.1 (the avash five-node recipe, reference §9). Node i listens for HTTP on
 * 9650 + 2(i−1) and for peers on 9651 + 2(i−1), with the committed staker i certificate (nodes 1–5:
 * the local genesis validators; nodes past 5 get a generated certificate and are not validators)
 * and its own data dir `<dir>/node<i>`; node 1 is every other node's bootstrap beacon.
 *
 * `start` runs in the foreground: it prints each node's URL and node ID, writes `<dir>/network.json`
 * (pids, ports), and stops every node on Ctrl-C (or when one node exits, reporting it). Each node logs
 * to `<dir>/node<i>/node.log`. `stop` and `status` read network.json.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LOCAL_STAKER_NODE_IDS } from '../genesis/genesis.js';

const BIN = fileURLToPath(new URL('../../../bin/cornice.js', import.meta.url));
const FIXTURES = fileURLToPath(new URL('../../../fixtures/staking/local/', import.meta.url));
/** Longest wait for a node to answer after it was started. */
const START_TIMEOUT_MS = 60_000;
const MAX_NODES = 50;

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
}

const USAGE = `usage: cornice network start [--nodes N] [--dir D] [--base-port P] [-- <node flags>]
       cornice network stop [--dir D]
       cornice network status [--dir D]
  --nodes      nodes to run (default 5; nodes 1-5 are the local genesis validators)
  --dir        where the nodes' data dirs and network.json live (default ~/.cornice/local-network)
  --base-port  HTTP port of node 1 (default 9650); node i uses base+2(i-1) for HTTP and base+2(i-1)+1 for peers
`;

/** Runs `cornice network …`; resolves with the exit code. */
export async function networkCommand(argv: string[], out: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): Promise<number> {
  const [sub, ...rest] = argv;
  const dash = rest.indexOf('--');
  const own = dash >= 0 ? rest.slice(0, dash) : rest;
  const nodeFlags = dash >= 0 ? rest.slice(dash + 1) : [];
  const opts = parseOptions(own);
  if (typeof opts === 'string' || !sub || !['start', 'stop', 'status'].includes(sub)) {
    process.stderr.write(`${typeof opts === 'string' ? `cornice network: ${opts}\n` : ''}${USAGE}`);
    return 2;
  }
  const o: RunnerOptions = { ...opts, nodeFlags, out };
  if (sub === 'stop') return stopNetwork(o);
  if (sub === 'status') return statusNetwork(o);
  return startNetwork(o);
}

function parseOptions(args: string[]): Omit<RunnerOptions, 'nodeFlags' | 'out'> | string {
  const o = { nodes: 5, dir: join(homedir(), '.cornice', 'local-network'), baseHttpPort: 9650 };
  for (const arg of args) {
    const m = /^--(nodes|dir|base-port)=(.+)$/.exec(arg);
    if (!m) return `unknown argument ${JSON.stringify(arg)}`;
    if (m[1] === 'dir') o.dir = m[2]!;
    else {
      const n = Number(m[2]);
      if (m[1] === 'nodes' && (!Number.isInteger(n) || n < 1 || n > MAX_NODES)) return `--nodes must be an integer from 1 to ${MAX_NODES}`;
      if (m[1] === 'base-port' && (!Number.isInteger(n) || n < 1 || n + 2 * MAX_NODES > 65535)) return '--base-port must be a port with room for the nodes after it';
      if (m[1] === 'nodes') o.nodes = n;
      else o.baseHttpPort = n;
    }
  }
  return o;
}

/** How node `i` is started: its process arguments (after the node executable), ports and data dir. */
export function nodeCommand(o: RunnerOptions, i: number): { argv: string[]; httpPort: number; stakingPort: number; dataDir: string } {
  const httpPort = o.baseHttpPort + 2 * (i - 1);
  const stakingPort = httpPort + 1;
  const dataDir = join(o.dir, `node${i}`);
  const args = [`--data-dir=${dataDir}`, `--http-port=${httpPort}`, `--staking-port=${stakingPort}`, '--staking-host=127.0.0.1', '--network-id=local'];
  if (i <= LOCAL_STAKER_NODE_IDS.length) {
    args.push(`--staking-tls-cert-file=${join(FIXTURES, `staker${i}.crt`)}`, `--staking-tls-key-file=${join(FIXTURES, `staker${i}.key`)}`);
  }
  if (i > 1) args.push(`--bootstrap-ips=127.0.0.1:${o.baseHttpPort + 1}`, `--bootstrap-ids=${LOCAL_STAKER_NODE_IDS[0]}`);
  // The flags given after `--` last: the last of a repeated flag wins (`-- --log-level=debug`).
  return { argv: [BIN, ...args, '--log-level=warn', ...o.nodeFlags], httpPort, stakingPort, dataDir };
}

async function startNetwork(o: RunnerOptions): Promise<number> {
  await mkdir(o.dir, { recursive: true, mode: 0o700 });
  const children: ChildProcess[] = [];
  const records: NodeRecord[] = [];
  let stopping = false;
  const stopAll = async (why: string) => {
    if (stopping) return;
    stopping = true;
    o.out(`stopping ${children.length} node(s): ${why}`);
    await Promise.all(children.map((c) => (c.exitCode === null && c.signalCode === null ? new Promise((r) => (c.once('close', r), c.kill('SIGTERM'))) : undefined)));
    await rm(join(o.dir, 'network.json'), { force: true });
  };
  let done: (code: number) => void = () => {};
  const finished = new Promise<number>((r) => (done = r));
  const onSignal = () => void stopAll('interrupted').then(() => done(0));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    for (let i = 1; i <= o.nodes; i++) {
      const n = nodeCommand(o, i);
      // The node's log (its stdout) goes to node.log in its data dir, appended across runs.
      await mkdir(n.dataDir, { recursive: true, mode: 0o700 });
      const log = openSync(join(n.dataDir, 'node.log'), 'a', 0o600);
      const child = spawn(process.execPath, n.argv, { stdio: ['ignore', log, 'inherit'] });
      closeSync(log);
      children.push(child);
      child.once('close', (code, signal) => {
        if (stopping) return;
        o.out(`node ${i} exited (${signal ?? `code ${code}`})`);
        void stopAll(`node ${i} exited`).then(() => done(1));
      });
      const url = `http://127.0.0.1:${n.httpPort}`;
      const nodeId = await waitForNode(url, child);
      records.push({ index: i, pid: child.pid!, url, httpPort: n.httpPort, stakingPort: n.stakingPort, nodeId, dataDir: n.dataDir });
      o.out(`node ${i}: ${url}  node ID ${nodeId}  staking 127.0.0.1:${n.stakingPort}${i <= LOCAL_STAKER_NODE_IDS.length ? '' : '  (not a validator)'}`);
    }
    await writeFile(join(o.dir, 'network.json'), JSON.stringify({ nodes: records }, null, 2));
    o.out(`${o.nodes} node(s) running; Ctrl-C stops them all`);
  } catch (e) {
    await stopAll((e as Error).message);
    process.stderr.write(`cornice network: ${(e as Error).message}\n`);
    return 1;
  }
  const code = await finished;
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  return code;
}

async function waitForNode(url: string, child: ChildProcess): Promise<string> {
  const t0 = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`a node exited with code ${child.exitCode} while starting (${url})`);
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
    signal: AbortSignal.timeout(2_000),
  });
  return ((await res.json()) as { result?: Record<string, unknown> }).result;
}

async function readRecords(o: RunnerOptions): Promise<NodeRecord[] | undefined> {
  try {
    return (JSON.parse(await readFile(join(o.dir, 'network.json'), 'utf8')) as { nodes: NodeRecord[] }).nodes;
  } catch {
    o.out(`no local network is running from ${o.dir} (no network.json)`);
    return undefined;
  }
}

async function stopNetwork(o: RunnerOptions): Promise<number> {
  const nodes = await readRecords(o);
  if (!nodes) return 1;
  for (const n of nodes) {
    try {
      process.kill(n.pid, 'SIGTERM');
      o.out(`node ${n.index} (pid ${n.pid}) stopped`);
    } catch {
      o.out(`node ${n.index} (pid ${n.pid}) was not running`);
    }
  }
  await rm(join(o.dir, 'network.json'), { force: true });
  return 0;
}

async function statusNetwork(o: RunnerOptions): Promise<number> {
  const nodes = await readRecords(o);
  if (!nodes) return 1;
  let down = 0;
  for (const n of nodes) {
    try {
      const peers = await rpc(n.url, 'admin', 'admin.peers');
      o.out(`node ${n.index}: ${n.url}  node ID ${n.nodeId}  up, ${(peers?.peers as unknown[] | undefined)?.length ?? 0} peer(s)`);
    } catch {
      down += 1;
      o.out(`node ${n.index}: ${n.url}  node ID ${n.nodeId}  not answering`);
    }
  }
  return down === 0 ? 0 : 1;
}
