// `npm run bench`: runs the benchmarks and prints one JSON line per figure:
// {"bench": name, "value": number, "unit": ..., "target": ..., ...details}.
// Set BENCH_QUICK=1 for a short run.
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { benchEngine } from './engine.mjs';
import { benchPlatform } from './platform.mjs';
import { benchAvm } from './avm.mjs';
import { benchEvm } from './evm.mjs';
import { benchTrace } from './trace.mjs';
import { benchNetwork } from './network.mjs';
import { benchNetworkFaults } from './network-faults.mjs';
import { benchAttack } from './attack.mjs';
import { median, report, rssMb, startNode, track } from './lib.mjs';
import { benchStuckNode } from './stuck.mjs';
import { benchSubnetEvmHooks } from './subnet-evm-hooks.mjs';
import { benchTimestamp } from './timestamp.mjs';
import { benchIsolation } from './isolation.mjs';

const quick = process.env.BENCH_QUICK === '1';
const dataDir = await mkdtemp(join(tmpdir(), 'cornice-bench-'));
const args = [`--data-dir=${dataDir}`];
try {
  // 1. start-up: spawn -> first answered request (LevelDB, staking cert already generated).
  const first = await startNode(args);
  await first.stop();
  const starts = [];
  for (let i = 0; i < (quick ? 3 : 7); i++) {
    const n = await startNode(args);
    starts.push(n.startMs);
    await n.stop();
  }
  report({ bench: 'node start to first answered request', value: Math.round(median(starts)), unit: 'ms', target: '<= 1500', runs: starts.map(Math.round), firstStartWithCertGenerationMs: Math.round(first.startMs) });

  // 2. idle RSS, after start-up and a few calls, then a quiet period.
  const node = await startNode(args);
  await new Promise((r) => setTimeout(r, quick ? 1000 : 3000));
  report({ bench: 'idle RSS', value: Math.round(rssMb(node.proc.pid)), unit: 'MB', target: '<= 150' });

  // 3. admin.getNodeID round trips, 64 in flight, from a separate client process; the same load on a
  //    bare node:http server in the same run is the baseline.
  const client = fileURLToPath(new URL('./rpc-client.mjs', import.meta.url));
  const load = async (port, path, method) => {
    const { stdout } = await promisify(execFile)(process.execPath, [client, String(port), path, method, '64', quick ? '2' : '5']);
    return JSON.parse(stdout.trim().split('\n').pop());
  };
  const r = await load(node.port, '/ext/admin', 'admin.getNodeID');
  const rssAfterMb = Math.round(rssMb(node.proc.pid));
  await node.stop();
  const bare = track(spawn(process.execPath, [fileURLToPath(new URL('./bare-http.mjs', import.meta.url))], { stdio: ['ignore', 'pipe', 'inherit'] }));
  const barePort = await new Promise((resolve) => bare.stdout.once('data', (d) => resolve(Number(String(d).trim()))));
  const base = await load(barePort, '/', 'baseline');
  bare.kill('SIGTERM');
  report({
    bench: 'admin.getNodeID round trips (64 in flight, separate client process)',
    value: r.perSecond,
    unit: 'req/s',
    target: '>= 10000',
    baselineBareNodeHttp: base.perSecond,
    ratioToBaseline: Number((r.perSecond / base.perSecond).toFixed(2)),
    errors: r.errors,
    p50ms: r.p50ms,
    p99ms: r.p99ms,
    rssAfterMb,
  });

  // 4. timestamp proposeBlock -> accepted latency; 5. engine throughput in simulation.
  await benchTimestamp({ proposals: quick ? 50 : 300 });
  await benchIsolation({ proposals: quick ? 50 : 200, callsMs: quick ? 1_000 : 3_000 });
  await benchEngine({ blocks: quick ? 50 : 200 });

  // 6. platform txs accepted/s and the subnet + blockchain flow.
  await benchPlatform({ txs: quick ? 60 : 300, baselineBareNodeHttp: base.perSecond });

  // 7. X-Chain offline-signed transfers accepted/s and issue -> accept latency.
  await benchAvm({ transfers: quick ? 500 : 5000, warmup: quick ? 200 : 2000, latencySamples: quick ? 50 : 200, baselineBareNodeHttp: base.perSecond });

  // 8. Five local nodes: X-Chain throughput and latency; bootstrap of a sixth node.
  await benchNetwork({ transfers: quick ? 500 : 3000, warmup: quick ? 300 : 2000, latencySamples: quick ? 30 : 100, longChain: quick ? 1000 : 5000 });

  // 8b. Five local nodes under faults: C-Chain round-robin; X and C with a validator frozen beside
  //     the figures without; thaw to counted again; a killed validator's catch-up.
  await benchNetworkFaults({ xTransfers: quick ? 500 : 2000, cPerSender: quick ? 10 : 50, latencySamples: quick ? 15 : 40 });

  // 9. CPU of a node stuck waiting for validators (issue: < 0.5 s over 30 s).
  await benchStuckNode({ seconds: quick ? 10 : 30 });

  // 10. C-Chain JSON-RPC: transfers, latency, eth_call, eth_getBalance; hardhat's node and anvil
  //     started here and driven with the same load, one node at a time.
  await benchEvm({ quick });

  // 10a. debug_traceTransaction (callTracer, struct logger) beside two anvils started here, all up at once.
  await benchTrace({ quick });

  // 10b. One node under the mixed API attack: health latency and RSS beside the same without it.
  await benchAttack({ seconds: quick ? 10 : 20 });

  // 11. What the subnet-EVM's precompile and fee hooks cost inside the VM (in process, no HTTP).
  await benchSubnetEvmHooks({ blocks: quick ? 4 : 12 });
} finally {
  await rm(dataDir, { recursive: true, force: true });
}
