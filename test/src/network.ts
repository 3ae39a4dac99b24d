/**
 * A local network of real node processes for end-to-end tests: node i runs with the committed
 * staker i certificate (nodes 1–5 are the local genesis validators; later nodes get a generated
 * certificate), free ports on 127.0.0.1, its own data dir, and node 1 as bootstrap beacon — the
 * `cornice network start` layout on ports the OS picks.
 */
import { createServer } from 'node:net';
import { join } from 'node:path';
import { REPO } from './fixtures.js';
import { startNodeProcess, type NodeProcess } from './process.js';

export const LOCAL_NODE_IDS = [
  'LHgqGqV1QYBuyTywXEvmswXme3iH8myRY',
  'BrUCFthHgbBG5SkGZsVRRtxPh9uYufHr7',
  '2dnEFA4XxJtX8ZATcR3SEfK1cvxGToES7',
  '8U9X27eYX3UALxc8jsm4cak1pjmEeqmVH',
  'BvuGMSg8RNbysMSaoioyPzu2agLW8Y5qR',
];

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/**
 * The first of `count` consecutive free ports on 127.0.0.1, below the ephemeral range (Linux's
 * 32768–60999): a base port from freePort() lies inside it, where the outgoing connections of
 * every process on the machine take their local ports, so one of the ports after it was sometimes
 * taken by the time a node listened there ("staking port … is in use").
 */
export async function freePortBlock(count: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * (12_000 - count));
    let free = true;
    for (let p = base; p < base + count && free; p++) free = await canListen(p);
    if (free) return base;
  }
  throw new Error(`no ${count} consecutive free ports between 20000 and 32000`);
}

export interface NetNode {
  index: number;
  stakingPort: number;
  dataDir: string;
  proc: NodeProcess;
  /** Starts the node again with the same data dir and ports (after a stop or kill). */
  restart(): Promise<NodeProcess>;
}

export interface LocalNetwork {
  nodes: NetNode[];
  /** Adds node `index` (a fresh data dir) that bootstraps from node 1. */
  add(index: number): Promise<NetNode>;
  stop(): Promise<void>;
}

export async function startLocalNetwork(dir: string, count: number, extraFlags: string[] = []): Promise<LocalNetwork> {
  const beaconPort = await freePort();
  const nodes: NetNode[] = [];
  const add = async (index: number, stakingPort?: number): Promise<NetNode> => {
    const port = stakingPort ?? (await freePort());
    const dataDir = join(dir, `node${index}`);
    const args = [`--data-dir=${dataDir}`, `--staking-port=${port}`, '--staking-host=127.0.0.1', '--network-id=local', '--log-level=info', ...extraFlags];
    if (index <= LOCAL_NODE_IDS.length) {
      const staker = (ext: string) => `${REPO}core/fixtures/staking/local/staker${index}.${ext}`;
      args.push(`--staking-tls-cert-file=${staker('crt')}`, `--staking-tls-key-file=${staker('key')}`);
    }
    if (index > 1) args.push(`--bootstrap-ips=127.0.0.1:${beaconPort}`, `--bootstrap-ids=${LOCAL_NODE_IDS[0]}`);
    const node: NetNode = {
      index,
      stakingPort: port,
      dataDir,
      proc: await startNodeProcess(args, 60_000),
      async restart() {
        node.proc = await startNodeProcess(args, 60_000);
        return node.proc;
      },
    };
    nodes.push(node);
    return node;
  };
  await add(1, beaconPort);
  await Promise.all(Array.from({ length: count - 1 }, (_, i) => add(i + 2)));
  nodes.sort((a, b) => a.index - b.index);
  return {
    nodes,
    add: (index) => add(index),
    stop: async () => {
      await Promise.all(nodes.map((n) => n.proc.stop()));
    },
  };
}

/** Polls `read` every 50 ms until it gives a value; throws after `maxMs`. */
export async function until<T>(what: string, read: () => Promise<T | undefined>, maxMs = 30_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const v = await read();
    if (v !== undefined) return v;
    if (Date.now() - started > maxMs) throw new Error(`timed out after ${maxMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
