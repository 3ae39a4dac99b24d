// Shared helpers for benchmarks: free ports, starting a built `cornice` process, RSS, medians, health sampling.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { Worker } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';

export const CORNICE_BIN = fileURLToPath(new URL('../core/bin/cornice.js', import.meta.url));

/**
 * The processes a bench started (nodes, peers, baselines): killed when the bench process exits,
 * however it ends — an error, Ctrl-C, or a reader that stopped reading (`npm run bench | head`
 * makes the next write fail with EPIPE) — so that none is left running to skew what runs next.
 */
const children = new Set();
export function track(proc) {
  children.add(proc);
  proc.once('exit', () => children.delete(proc));
  return proc;
}
process.once('exit', () => {
  for (const p of children) p.kill('SIGKILL');
});
process.stdout.on('error', (e) => {
  if (e.code === 'EPIPE') process.exit(0);
  throw e;
});
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => process.exit(130));

export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

export async function rpc(url, method, params = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return res.json();
}

/** Spawns a node and resolves once `admin.getNodeID` answers; reports ms from spawn to that answer. */
/** The flags `npm start` gives a node (node 1 of the local network, one node deciding alone), with `dataDir`. */
export function devNodeArgs(dataDir) {
  const fixture = (f) => fileURLToPath(new URL(`../core/fixtures/staking/local/${f}`, import.meta.url));
  return [
    `--data-dir=${dataDir}`,
    '--network-id=local',
    `--staking-tls-cert-file=${fixture('staker1.crt')}`,
    `--staking-tls-key-file=${fixture('staker1.key')}`,
    '--sybil-protection-enabled=false',
    '--evm-debug-api',
  ];
}

export async function startNode(args, { timeoutMs = 30_000 } = {}) {
  const port = await freePort();
  const t0 = performance.now();
  const proc = track(spawn(process.execPath, [...(process.env.BENCH_NODE_FLAGS ? process.env.BENCH_NODE_FLAGS.split(' ') : []), CORNICE_BIN, `--http-port=${port}`, '--log-level=warn', ...(args.some((a) => a.startsWith('--staking-port')) ? [] : ['--staking-port=0']), ...args], { stdio: ['ignore', 'ignore', 'inherit'] }));
  const url = `http://127.0.0.1:${port}`;

  for (;;) {
    if (proc.exitCode !== null) throw new Error(`node exited with ${proc.exitCode}`);
    if (performance.now() - t0 > timeoutMs) {
      proc.kill('SIGKILL');
      throw new Error('node did not answer in time');
    }
    try {
      const r = await rpc(`${url}/ext/admin`, 'admin.getNodeID');
      if (r.result) break;
    } catch {
      await new Promise((r) => setTimeout(r, 2));
    }
  }
  const startMs = performance.now() - t0;
  await untilChainsStarted(url, proc, t0, timeoutMs);
  const exited = new Promise((resolve) => proc.on('close', resolve));
  return { proc, url, port, startMs, stop: () => (proc.kill('SIGTERM'), exited) };
}

/**
 * The API answers while the chains start: waits for the `chains` health check to pass (every genesis
 * chain created) before a benchmark uses them.
 */
export async function untilChainsStarted(url, proc, t0 = performance.now(), timeoutMs = 30_000) {
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`node exited with ${proc.exitCode}`);
    if (performance.now() - t0 > timeoutMs) throw new Error('the node\'s chains did not start in time');
    const checks = (await rpc(`${url}/ext/health`, 'health.getLiveness').catch(() => undefined))?.result?.checks;
    if (checks && (checks.chains === undefined || !checks.chains.error)) return;
    await new Promise((r) => setTimeout(r, 5));
  }
}

export function rssMb(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(status.match(/VmRSS:\s+(\d+) kB/)[1]);
  return kb / 1024;
}

export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export function report(figure) {
  process.stdout.write(`${JSON.stringify(figure)}\n`);
}

/**
 * Starts health-sampler.mjs in a worker thread (GET /ext/health every `intervalMs`, and `pid`'s RSS);
 * the returned stop() ends it and resolves with the latencies (ms) and the largest RSS (MB).
 */
export function sampleHealth({ url, pid, intervalMs }) {
  const worker = new Worker(new URL('./health-sampler.mjs', import.meta.url), { workerData: { url, pid, intervalMs } });
  const result = new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  return async () => {
    worker.postMessage('stop');
    const out = await result;
    await worker.terminate();
    return out;
  };
}
