// timestamp.proposeBlock -> accepted latency on one node (`npm start` settings): the acceptance
// moment is when the block's bytes arrive on the chain's IPC stream (published on accept), so no
// polling granularity is added. Frames are matched to proposals by their payload. Sequential
// proposals; prints p50/p90/p99.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cb58Encode, readIpcFrames, sha256, toHex } from '@cornice/sdk';
import { report, rpc, startNode } from './lib.mjs';

const fixture = (f) => fileURLToPath(new URL(`../core/fixtures/staking/local/${f}`, import.meta.url));

export async function benchTimestamp({ proposals = 300 } = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'cornice-bench-ts-'));
  const node = await startNode([
    `--data-dir=${dir}`,
    `--staking-tls-cert-file=${fixture('staker1.crt')}`,
    `--staking-tls-key-file=${fixture('staker1.key')}`,
    '--sybil-protection-enabled=false',
    '--api-ipcs-enabled',
    `--ipcs-path=${dir}`,
  ]);
  const ac = new AbortController();
  try {
    const { result } = await rpc(`${node.url}/ext/ipcs`, 'ipcs.publishBlockchain', { blockchainID: 'timestamp' });
    const waiting = new Map(); // payload hex -> resolve
    const reading = (async () => {
      for await (const f of readIpcFrames(result.url, { signal: ac.signal })) {
        const key = toHex(f.subarray(32, 64));
        waiting.get(key)?.();
        waiting.delete(key);
      }
    })().catch(() => {});
    let n = 0;
    const proposeAndWait = async (timeoutMs) => {
      const data = sha256(new TextEncoder().encode(`bench ${n++} ${Math.random()}`));
      const accepted = new Promise((resolve) => waiting.set(toHex(data), resolve));
      const t0 = performance.now();
      const reply = await rpc(`${node.url}/ext/timestamp`, 'timestamp.proposeBlock', { data: cb58Encode(data) });
      if (!reply.result) throw new Error(JSON.stringify(reply.error));
      const ok = await Promise.race([accepted.then(() => true), new Promise((r) => setTimeout(() => r(false), timeoutMs))]);
      return ok ? performance.now() - t0 : undefined;
    };
    // Warm-up: until the publisher has registered our reader, and 20 more.
    while ((await proposeAndWait(200)) === undefined);
    for (let i = 0; i < 20; i++) await proposeAndWait(5000);
    const latencies = [];
    for (let i = 0; i < proposals; i++) {
      const ms = await proposeAndWait(5000);
      if (ms === undefined) throw new Error('a proposal was not accepted within 5 s');
      latencies.push(ms);
    }
    ac.abort();
    await reading;
    latencies.sort((a, b) => a - b);
    const pct = (p) => Math.round(latencies[Math.floor((latencies.length - 1) * p)] * 100) / 100;
    report({ bench: 'timestamp proposeBlock -> accepted latency (one node, k=20, beta=20)', value: pct(0.5), unit: 'ms', target: 'p50 <= 10', p90: pct(0.9), p99: pct(0.99), samples: latencies.length });
  } finally {
    ac.abort();
    await node.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await benchTimestamp();
