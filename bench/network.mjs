// Five local nodes over TLS (the five genesis validators, default consensus settings, LevelDB):
// 1. X-Chain offline-signed transfers accepted/s: transfers issued round-robin to the five nodes in
//    JSON-RPC batches of 100; the clock stops when node 1's pubsub has reported every one accepted.
//    A warm-up round of the same load comes first (reported apart, as in avm.mjs: the first seconds of
//    batched load also pay V8's compiles of that path in every node, on the same 2 cores). Beside the
//    rate: the five nodes' CPU per transfer (all threads, from /proc) over the timed round.
// 2. issue -> accept latency: one transfer at a time issued at node 3, until node 3's pubsub
//    reports it accepted; p50/p99.
// 3. bootstrap speed, twice: (a) a sixth node (not a validator) joins the five and bootstraps every
//    chain from node 1 (few, large X-Chain blocks); (b) a node joins a one-node network whose
//    timestamp chain has `longChain` small blocks. Blocks/s from the joiner's 'bootstrap finished' line.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PrivateKey, cb58Encode } from '@cornice/sdk';
import { acceptedFeed, fanOut, issueInBatches, issueOneByOne, signedTx, transferOut } from './avm.mjs';
import { perRecovery, recoveriesPerSecond } from './machine.mjs';
import { CORNICE_BIN, freePort, report, rpc, track, untilChainsStarted } from './lib.mjs';

const fixture = (f) => fileURLToPath(new URL(`../core/fixtures/staking/local/${f}`, import.meta.url));
const NODE1_ID = 'LHgqGqV1QYBuyTywXEvmswXme3iH8myRY';

/** Starts node `i`; resolves once its HTTP API answers; collects its JSON log lines. */
export async function startNode(i, dir, beaconPort, stakingPort, extra = []) {
  const httpPort = await freePort();
  const args = [...extra, `--data-dir=${join(dir, `node${i}`)}`, `--http-port=${httpPort}`, `--staking-port=${stakingPort}`, '--staking-host=127.0.0.1', '--log-level=info'];
  if (i <= 5) args.push(`--staking-tls-cert-file=${fixture(`staker${i}.crt`)}`, `--staking-tls-key-file=${fixture(`staker${i}.key`)}`);
  if (i > 1) args.push(`--bootstrap-ips=127.0.0.1:${beaconPort}`, `--bootstrap-ids=${NODE1_ID}`);
  const proc = track(spawn(process.execPath, [...(process.env.BENCH_PROFILE_NODE === String(i) ? ['--cpu-prof', '--cpu-prof-dir=/tmp/prof'] : []), CORNICE_BIN, ...args], { stdio: ['ignore', 'pipe', 'inherit'] }));
  const logs = [];
  let buffered = '';
  proc.stdout.on('data', (d) => {
    buffered += d;
    let nl;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      try {
        logs.push(JSON.parse(line));
      } catch {}
    }
  });
  const url = `http://127.0.0.1:${httpPort}`;
  const t0 = performance.now();
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`node ${i} exited with ${proc.exitCode}`);
    if (performance.now() - t0 > 60_000) throw new Error(`node ${i} did not answer`);
    try {
      if ((await rpc(`${url}/ext/admin`, 'admin.getNodeID')).result) break;
    } catch {}
    await new Promise((r) => setTimeout(r, 20));
  }
  await untilChainsStarted(url, proc);
  const exited = new Promise((resolve) => proc.on('close', resolve));
  return { url, logs, pid: proc.pid, startedAt: t0, stop: () => (proc.kill('SIGTERM'), exited), kill: () => (proc.kill('SIGKILL'), exited) };
}

/** CPU ms a process used so far, all its threads (utime + stime from /proc, in clock ticks of 10 ms). */
function cpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

export async function until(what, read, maxMs = 120_000) {
  const t0 = performance.now();
  for (;;) {
    const v = await read();
    if (v !== undefined) return v;
    if (performance.now() - t0 > maxMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A one-node network whose timestamp chain has `blocks` blocks; a second node joins; its bootstrap figure. */
export async function benchLongBootstrap(blocks) {
  const dir = await mkdtemp(join(tmpdir(), 'cornice-bench-boot-'));
  const beaconPort = await freePort();
  const solo = ['--sybil-protection-enabled=false'];
  const nodes = [];
  try {
    const first = await startNode(1, dir, beaconPort, beaconPort, solo);
    nodes.push(first);
    const ts = `${first.url}/ext/bc/timestamp`;
    // Proposals in flight, a few at a time, each a fresh 32-byte payload; then wait for the height.
    const payload = (k) => cb58Encode(Uint8Array.from({ length: 32 }, (_, i) => (i < 4 ? (k >>> (8 * i)) & 0xff : 7)));
    for (let k = 0; k < blocks; ) {
      const burst = Math.min(64, blocks - k);
      await Promise.all(Array.from({ length: burst }, (_, j) => rpc(ts, 'timestamp.proposeBlock', { data: payload(k + j) })));
      k += burst;
      await until('the burst accepted', async () => {
        const tip = (await rpc(ts, 'timestamp.getBlock', {})).result;
        return tip?.data === payload(k - 1) ? true : undefined;
      });
    }
    const joiner = await startNode(6, dir, beaconPort, await freePort(), solo);
    nodes.push(joiner);
    const done = await until('the joiner bootstrapped its timestamp chain', async () =>
      joiner.logs.find((l) => l.msg === 'bootstrap finished' && l.chain === 'timestamp'),
    );
    report({
      bench: `bootstrap of a new node: a timestamp chain of ${blocks} blocks`,
      value: Math.round((done.accepted / done.ms) * 1000),
      unit: 'blocks/s',
      target: '>= 2000',
      blocks: done.accepted,
      ms: done.ms,
    });
  } finally {
    await Promise.all(nodes.map((n) => n.stop()));
    await rm(dir, { recursive: true, force: true });
  }
}

export async function benchNetwork({ transfers = 5000, warmup = 2000, latencySamples = 100, longChain = 5000 } = {}) {
  const machine = recoveriesPerSecond(); // before the nodes start: a quiet machine
  const dir = await mkdtemp(join(tmpdir(), 'cornice-bench-net-'));
  const beaconPort = await freePort();
  const nodes = [];
  let feed1;
  let feed3;
  try {
    nodes.push(await startNode(1, dir, beaconPort, beaconPort));
    nodes.push(...(await Promise.all([2, 3, 4, 5].map(async (i) => startNode(i, dir, beaconPort, await freePort())))));
    const X = nodes.map((n) => `${n.url}/ext/bc/X`);
    await until('all connected', async () => {
      const counts = await Promise.all(nodes.map(async (n) => (await rpc(`${n.url}/ext/admin`, 'admin.peers')).result?.peers.length));
      return counts.every((c) => c === 4) ? true : undefined;
    });
    feed1 = await acceptedFeed(`${nodes[0].url.replace('http', 'ws')}/ext/bc/X/pubsub`);
    feed3 = await acceptedFeed(`${nodes[2].url.replace('http', 'ws')}/ext/bc/X/pubsub`);
    const pieces = await fanOut(X[0], feed1, transfers + latencySamples + warmup);
    const to = PrivateKey.generate().address;
    const signed = pieces.map((u) => signedTx([u], [transferOut(u.assetId, to, 1_000n)]));

    // 2. latency, at node 3.
    const pct = await issueOneByOne(X[2], feed3, signed.splice(transfers, latencySamples));
    feed3.close(); // only the latency phase follows node 3: node 1's feed times the throughput

    // 1. throughput, round-robin over the five nodes: a warm-up round, then the timed one.
    const round = async (txs) => {
      const cpu0 = nodes.map((n) => cpuMs(n.pid));
      const t0 = performance.now();
      const all = Promise.all(txs.map(({ id }) => feed1.wait(id.toString())));
      const errors = await issueInBatches(X, txs);
      await all;
      const ms = performance.now() - t0;
      const cpu = nodes.map((n, i) => cpuMs(n.pid) - cpu0[i]);
      return { perSecond: Math.round((txs.length / ms) * 1000), errors, nodeCpuMsPerTx: Math.round((cpu.reduce((a, b) => a + b, 0) / txs.length) * 1000) / 1000 };
    };
    const warm = warmup > 0 ? await round(signed.splice(transfers, warmup)) : undefined;
    const timed = await round(signed);
    report({
      bench: 'X-Chain transfers accepted/s on 5 local nodes (issued round-robin, JSON-RPC batches of 100)',
      value: timed.perSecond,
      unit: 'tx/s',
      target: '>= 1500',
      errors: timed.errors + (warm?.errors ?? 0),
      transfers: signed.length,
      warmupPerSecond: warm?.perSecond,
      nodeCpuMsPerTx: timed.nodeCpuMsPerTx,
      machine,
      perRecovery: perRecovery(timed.perSecond),
      targetPerRecovery: '>= 0.075 (1500 tx/s where one core recovers 20000 signatures/s; every node recovers every signature)',
    });
    report({ bench: 'X-Chain issue -> accept latency on 5 local nodes (issued at node 3)', value: pct(0.5), unit: 'ms', target: 'p50 <= 300', p90: pct(0.9), p99: pct(0.99), samples: latencySamples });

    // 3. a sixth node bootstraps from node 1.
    const sixth = await startNode(6, dir, beaconPort, await freePort());
    nodes.push(sixth);
    const finished = await until('the sixth node bootstrapped every chain', async () => {
      const done = sixth.logs.filter((l) => l.msg === 'bootstrap finished');
      return ['P', 'X', 'C', 'timestamp'].every((c) => done.some((l) => l.chain === c)) ? done : undefined;
    });
    const biggest = finished.sort((a, b) => b.accepted - a.accepted)[0];
    report({
      bench: 'bootstrap of a sixth node joining the five (its largest chain: the X-Chain blocks of the runs above)',
      value: Math.round((biggest.accepted / biggest.ms) * 1000),
      unit: 'blocks/s',
      note: 'the blocks/s target is measured on the long timestamp chain below',
      chain: biggest.chain,
      blocks: biggest.accepted,
      ms: biggest.ms,
      chains: finished.map((l) => ({ chain: l.chain, blocks: l.accepted, ms: l.ms })),
    });
  } finally {
    feed1?.close();
    feed3?.close();
    await Promise.all(nodes.map((n) => n.stop()));
    await rm(dir, { recursive: true, force: true });
  }
  await benchLongBootstrap(longChain);
}
