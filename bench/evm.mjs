// The C-Chain's JSON-RPC under load, side by side with hardhat's node and anvil started here in the
// same run: the same harness (evm-rpc-bench.mjs, in a separate client process) drives each node in
// turn, one node running at a time. Figures: pipelined signed transfers accepted/s (64 senders, one
// ordered lane each, 64 in flight), sequential send->receipt latency p50, eth_call/s and
// eth_getBalance/s (32 in flight). One JSON line per figure, the peers' values beside ours.
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, report, rpc, startNode } from './lib.mjs';

const require = createRequire(import.meta.url);
const here = (f) => fileURLToPath(new URL(f, import.meta.url));
const fixture = (f) => here(`../core/fixtures/staking/local/${f}`);
const HARNESS = here('./evm-rpc-bench.mjs');
const EWOQ_EVM_KEY = '0x56289e99c94b6912bfc12adc093c9b51124f0dc54ac7a766b2bc5ccf558d8027';
/** Account #0 of the default dev mnemonic: funded by both hardhat's node and anvil. */
const DEV_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls eth_chainId until it answers; throws after `maxMs`. */
async function untilServing(url, proc, what, maxMs = 30_000) {
  const t0 = performance.now();
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`${what} exited with ${proc.exitCode}`);
    try {
      if ((await rpc(url, 'eth_chainId', [])).result) return;
    } catch {
      /* not listening yet */
    }
    if (performance.now() - t0 > maxMs) throw new Error(`${what} did not answer eth_chainId at ${url} within ${maxMs} ms`);
    await sleep(50);
  }
}

/** A peer node process once it answers, funded key DEV_KEY; stops it if it never does. */
async function peer(name, version, proc, url) {
  const exited = new Promise((resolve) => proc.on('close', resolve));
  const stop = () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
    return exited;
  };
  try {
    await untilServing(url, proc, name);
  } catch (e) {
    await stop();
    throw e;
  }
  return { name, version, url, key: DEV_KEY, pid: proc.pid, stop };
}

async function startCornice() {
  const dir = await mkdtemp(join(tmpdir(), 'cornice-bench-evm-'));
  const node = await startNode([
    `--data-dir=${dir}`,
    '--network-id=local',
    `--staking-tls-cert-file=${fixture('staker1.crt')}`,
    `--staking-tls-key-file=${fixture('staker1.key')}`,
    '--sybil-protection-enabled=false',
  ]);
  const url = `${node.url}/ext/bc/C/rpc`;
  const stop = async () => {
    await node.stop();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await untilServing(url, node.proc, 'the cornice C-Chain');
  } catch (e) {
    await stop();
    throw e;
  }
  return { name: 'cornice', url, key: EWOQ_EVM_KEY, pid: node.proc.pid, stop };
}

async function startHardhat() {
  const port = await freePort();
  const bin = join(dirname(require.resolve('hardhat/package.json')), 'internal/cli/bootstrap.js');
  const proc = spawn(process.execPath, [bin, '--config', here('./evm-hardhat.config.cjs'), 'node', '--hostname', '127.0.0.1', '--port', String(port)], {
    cwd: here('.'),
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, HARDHAT_DISABLE_TELEMETRY_PROMPT: 'true' },
  });
  return peer('hardhat', require('hardhat/package.json').version, proc, `http://127.0.0.1:${port}`);
}

/** The platform package's binary itself (not the npm wrapper script), so that --pid measures anvil. */
function anvilBinary() {
  const arch = { x64: 'amd64', arm64: 'arm64' }[process.arch] ?? process.arch;
  try {
    return join(dirname(require.resolve(`@foundry-rs/anvil-${process.platform}-${arch}/package.json`)), 'bin', 'anvil');
  } catch {
    return null;
  }
}

async function startAnvil() {
  const port = await freePort();
  const bin = anvilBinary();
  const args = ['--host', '127.0.0.1', '--port', String(port), '--silent'];
  const proc = bin
    ? spawn(bin, args, { stdio: ['ignore', 'ignore', 'inherit'] })
    : spawn(process.execPath, [require.resolve('@foundry-rs/anvil/bin.mjs'), ...args], { stdio: ['ignore', 'ignore', 'inherit'] });
  return peer('anvil', require('@foundry-rs/anvil/package.json').version, proc, `http://127.0.0.1:${port}`);
}

/** Runs the harness in its own process against one node; resolves with its JSON result line. */
function runHarness(node, phases, { quick }) {
  const args = [
    HARNESS,
    '--url', node.url,
    '--key', node.key,
    '--phases', phases,
    '--ordered', '--senders', '64', '--inflight', '64',
    '--read-inflight', '32',
    '--stall-s', quick ? '15' : '30',
    '--mine-timeout-s', quick ? '60' : '180',
    '--pid', String(node.pid),
    '--label', node.name,
    '--quiet',
    ...(quick ? ['--quick'] : []),
  ];
  return new Promise((resolve) => {
    execFile(process.execPath, args, { maxBuffer: 16 * 1024 * 1024, timeout: (quick ? 5 : 20) * 60_000 }, (err, stdout) => {
      const last = stdout.trim().split('\n').pop();
      try {
        resolve(JSON.parse(last));
      } catch {
        resolve({ ok: false, error: err ? err.message : `no result line: ${last?.slice(0, 200)}` });
      }
    });
  });
}

/**
 * One node: sequential latency and reads first, then the pipelined transfers in a second harness
 * run, so that a node that stalls under pipelining (anvil's automine does) still gets read figures.
 */
async function measure(start, opts) {
  let node;
  try {
    node = await start();
  } catch (e) {
    return { ok: false, error: e.message };
  }
  try {
    const reads = await runHarness(node, 'seq,read', opts);
    const pipe = await runHarness(node, 'pipe', opts);
    const errors = [reads, pipe].filter((r) => !r.ok).map((r) => r.error ?? 'failed');
    return { ok: errors.length === 0, error: errors.join('; ') || undefined, seq: reads.seq, read: reads.read, pipe: pipe.pipe, params: pipe.params, version: node.version };
  } finally {
    await node.stop();
  }
}

/** The four figures of one node's run (null where a phase did not run or failed). */
function figures(r) {
  return {
    pipe: r.pipe?.txPerSec ?? null,
    pipeStalled: r.pipe ? Boolean(r.pipe.timedOut || r.pipe.stalled) : null,
    pipeRejected: r.pipe?.rejected ?? null,
    seqP50: r.seq?.latencyMs?.p50 ?? null,
    seqP95: r.seq?.latencyMs?.p95 ?? null,
    ethCall: r.read?.ethCall?.callsPerSec ?? null,
    getBalance: r.read?.getBalance?.callsPerSec ?? null,
    error: r.ok ? undefined : (r.error ?? 'failed'),
  };
}

export async function benchEvm({ quick = false } = {}) {
  // Other work on the machine skews every figure here, ours and the peers' alike: say how busy it was.
  const load = loadavg()[0];
  const runs = {
    cornice: await measure(startCornice, { quick }),
    hardhat: await measure(startHardhat, { quick }),
    anvil: await measure(startAnvil, { quick }),
  };
  const f = Object.fromEntries(Object.entries(runs).map(([k, r]) => [k, figures(r)]));
  const peers = (pick) => ({
    hardhat: pick(f.hardhat),
    anvil: pick(f.anvil),
  });
  const common = {
    loadavg1AtStart: Number(load.toFixed(2)),
    peers: { hardhat: runs.hardhat.version ?? null, anvil: runs.anvil.version ?? null },
    ...(f.cornice.error ? { error: f.cornice.error } : {}),
  };
  const n = (r) => r.params ?? {};
  report({
    bench: 'EVM pipelined signed transfers accepted/s (64 senders in ordered lanes, 64 in flight)',
    value: f.cornice.pipe,
    unit: 'tx/s',
    target: '>= 1600, none stalled',
    stalled: f.cornice.pipeStalled,
    rejected: f.cornice.pipeRejected,
    transfers: n(runs.cornice).pipe ?? null,
    ...peers((x) => x.pipe),
    hardhatStalled: f.hardhat.pipeStalled,
    anvilStalled: f.anvil.pipeStalled,
    ...common,
  });
  report({
    bench: 'EVM sequential send->receipt latency p50',
    value: f.cornice.seqP50,
    unit: 'ms',
    target: '<= 2',
    p95: f.cornice.seqP95,
    ...peers((x) => x.seqP50),
    ...common,
  });
  report({ bench: 'EVM eth_call/s (32 in flight)', value: f.cornice.ethCall, unit: 'calls/s', target: '>= 5000', ...peers((x) => x.ethCall), ...common });
  report({ bench: 'EVM eth_getBalance/s (32 in flight)', value: f.cornice.getBalance, unit: 'calls/s', target: '>= 20000', ...peers((x) => x.getBalance), ...common });
  const errors = Object.entries(f).filter(([, x]) => x.error).map(([k, x]) => `${k}: ${x.error}`);
  if (errors.length) process.stderr.write(`evm bench: ${errors.join('; ')}\n`);
}

// `node bench/evm.mjs` runs this bench alone.
if (process.argv[1] === fileURLToPath(import.meta.url)) await benchEvm({ quick: process.env.BENCH_QUICK === '1' });
