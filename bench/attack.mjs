// A node started as `npm start` does, attacked from one local client by the mixed load of issue 32:
//   - JSON-RPC batches of 100 eth_getLogs over the whole chain (9,000 logs in it), one after another;
//   - batches of 100 looping eth_calls whose client gives up after 1 s;
//   - 1,024 idle WebSockets on /ext/bc/C/ws;
//   - 20 WebSockets × 256 `logs` subscriptions, while txs emitting 1,000 logs each are sent.
// Figures: GET /ext/health latency p50/p99 (sampled every 100 ms from a worker thread, a request
// that gets no answer in 5 s counts 5,000 ms) and the node's RSS (max), during the attack and over the same time without it
// (before it, on the same node), plus whether a plain transfer still went through during the attack.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { Wallet } from 'ethers';
import { devNodeArgs, report, sampleHealth, startNode } from './lib.mjs';

const EWOQ = new Wallet('0x56289e99c94b6912bfc12adc093c9b51124f0dc54ac7a766b2bc5ccf558d8027');
const TOPIC = '0x' + '00'.repeat(31) + '01';

/** Runtime code emitting `n` LOG1(topic 1) with no data, unrolled; the init code that deploys it. */
function logEmitter(n) {
  const runtime = '600160006000a1'.repeat(n); // PUSH1 1, PUSH1 0, PUSH1 0, LOG1
  const len = runtime.length / 2;
  const hex2 = len.toString(16).padStart(4, '0');
  const init = `61${hex2}600d60003961${hex2}6000f3`; // PUSH2 len, PUSH1 13, PUSH1 0, CODECOPY, PUSH2 len, PUSH1 0, RETURN
  return `0x${init}${runtime}`;
}
/** Init code that loops until its gas runs out (an eth_call with no `to` runs it). */
const LOOP = '0x5b600056'; // JUMPDEST, PUSH1 0, JUMP

function percentile(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor(s.length * p))] ?? 0);
}

/** Samples health latency every 100 ms and RSS (health-sampler.mjs, in a worker thread) until `stop()`; the figures. */
function sampler(url, pid) {
  const stop = sampleHealth({ url, pid });
  return async () => {
    const { lat, rss } = await stop();
    return { p50: percentile(lat, 0.5), p99: percentile(lat, 0.99), samples: lat.length, rssMaxMb: Math.round(rss) };
  };
}

export async function benchAttack({ seconds = 20, parts = ['getlogs', 'calls', 'idle', 'subs'] } = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'cornice-bench-attack-'));
  const node = await startNode(devNodeArgs(dir));
  const rpcUrl = `${node.url}/ext/bc/C/rpc`;
  const wsUrl = rpcUrl.replace('http', 'ws').replace(/rpc$/, 'ws');
  const post = async (body, signal) => (await fetch(rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal })).json();
  const call = async (method, params = []) => {
    const r = await post({ jsonrpc: '2.0', id: 1, method, params });
    if (r.error) throw new Error(`${method}: ${r.error.message}`);
    return r.result;
  };
  const sockets = [];
  try {
    const chainId = Number(await call('eth_chainId'));
    const gasPrice = BigInt(await call('eth_gasPrice')) * 2n;
    let nonce = Number(await call('eth_getTransactionCount', [EWOQ.address, 'pending']));
    const send = async (tx) => call('eth_sendRawTransaction', [await EWOQ.signTransaction({ nonce: nonce++, gasPrice, chainId, type: 0, value: 0n, ...tx })]);
    const receipt = async (hash, maxMs = 60_000) => {
      const t0 = performance.now();
      for (;;) {
        const r = await call('eth_getTransactionReceipt', [hash]).catch(() => undefined);
        if (r) return r;
        if (performance.now() - t0 > maxMs) return undefined;
        await new Promise((res) => setTimeout(res, 50));
      }
    };
    // A chain with 9,000 logs: a contract emitting 1,000 per call, called 9 times.
    const deployed = await receipt(await send({ data: logEmitter(1_000), gasLimit: 8_000_000n }));
    const emitter = deployed.contractAddress;
    for (let i = 0; i < 9; i++) await receipt(await send({ to: emitter, gasLimit: 2_000_000n }));
    const latest = await call('eth_blockNumber');

    // Without the attack: the same sampling over the same time.
    const quiet = sampler(node.url, node.proc.pid);
    await new Promise((r) => setTimeout(r, seconds * 1_000));
    const without = await quiet();

    // The attack.
    const loud = sampler(node.url, node.proc.pid);
    let on = true;
    const getLogs = (async () => {
      while (on && parts.includes('getlogs')) {
        const batch = Array.from({ length: 100 }, (_, id) => ({ jsonrpc: '2.0', id, method: 'eth_getLogs', params: [{ fromBlock: '0x0', toBlock: latest, topics: [TOPIC] }] }));
        await post(batch, AbortSignal.timeout(30_000)).catch(() => undefined);
      }
    })();
    const calls = (async () => {
      while (on && parts.includes('calls')) {
        const batch = Array.from({ length: 100 }, (_, id) => ({ jsonrpc: '2.0', id, method: 'eth_call', params: [{ data: LOOP, gas: '0x2faf080' }, 'latest'] }));
        await post(batch, AbortSignal.timeout(1_000)).catch(() => undefined);
      }
    })();
    const idle = [];
    for (let i = 0; i < (parts.includes('idle') ? 1_024 : 0); i++) {
      const ws = new WebSocket(wsUrl);
      ws.on('error', () => undefined);
      idle.push(ws);
      sockets.push(ws);
    }
    for (let s = 0; s < (parts.includes('subs') ? 20 : 0); s++) {
      const ws = new WebSocket(wsUrl);
      ws.on('error', () => undefined);
      sockets.push(ws);
      ws.on('open', () => {
        for (let k = 0; k < 256; k++) ws.send(JSON.stringify({ jsonrpc: '2.0', id: k, method: 'eth_subscribe', params: ['logs', { topics: [TOPIC] }] }));
      });
    }
    // Txs emitting 1,000 logs each while subscribed, and a plain transfer: does it go through?
    await new Promise((r) => setTimeout(r, 2_000));
    const t0 = performance.now();
    let transferMs;
    try {
      for (let i = 0; i < 3; i++) await send({ to: emitter, gasLimit: 2_000_000n });
      const r = await receipt(await send({ to: '0x' + '55'.repeat(20), value: 1n, gasLimit: 21_000n }), (seconds - 2) * 1_000);
      if (r) transferMs = Math.round(performance.now() - t0);
    } catch {
      // refused or timed out: reported as no transfer
    }
    await new Promise((r) => setTimeout(r, Math.max(0, seconds * 1_000 - (performance.now() - t0) - 2_000)));
    on = false;
    for (const ws of sockets) ws.terminate();
    const during = await loud();
    await Promise.race([Promise.all([getLogs, calls]), new Promise((r) => setTimeout(r, 35_000))]);
    report({
      bench: 'health latency during a mixed API attack on one node (getLogs batches, eth_call batches, 1,024 idle WebSockets, 5,120 log subscriptions)',
      value: during.p99,
      unit: 'ms p99',
      target: '<= 100',
      p50: during.p50,
      withoutAttack: { p50: without.p50, p99: without.p99 },
      rssMaxMb: during.rssMaxMb,
      rssWithoutAttackMb: without.rssMaxMb,
      transferDuringAttackMs: transferMs ?? null,
      samples: during.samples,
      ...(parts.length < 4 ? { parts } : {}),
    });
  } finally {
    for (const ws of sockets) ws.terminate();
    await node.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchAttack({ seconds: Number(process.env.SECONDS ?? 20), ...(process.env.PARTS ? { parts: process.env.PARTS.split(',') } : {}) });
