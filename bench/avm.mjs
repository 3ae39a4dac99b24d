// X-Chain on one node (`npm start` settings, LevelDB):
// 1. offline-signed transfers accepted/s: a fan-out tx splits the ewoq key's genesis UTXO into
//    outputs; transfers, each spending one of them, are signed here with the plugin's codec and
//    issued in JSON-RPC batches of 100 over 4 connections; the clock stops when the chain's pubsub
//    WebSocket has reported every one accepted. A warm-up round of the same load (reported apart)
//    comes before the N timed ones.
// 2. issue -> accept latency: one transfer at a time, from issueTx to its ID on the pubsub
//    `accepted` channel; p50/p90/p99.
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WebSocket } from 'ws';
import { Id, PrivateKey, cb58Decode, cb58Encode } from '@cornice/sdk';
import { decodeUtxo, encodeTx, producedUtxos, txIdOf, unsignedBytes } from '@cornice/avm';
import { report, startNode } from './lib.mjs';
import { perRecovery, recoveriesPerSecond } from './machine.mjs';

const fixture = (f) => fileURLToPath(new URL(`../core/fixtures/staking/local/${f}`, import.meta.url));
const EWOQ = PrivateKey.fromString('ewoqjP7PxY4yr3iLTpLisriqt94hdyDFNgchSxGGztUrTXtNN');
const X_CHAIN = Id.fromString('4R5p2RXDGLqaifZE4hHWH9owe34pfoBULn1DrQTWivjg8o4aH');
const agent = new Agent({ keepAlive: true, maxSockets: 4 });

export function post(url, body) {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve(JSON.parse(text)));
    });
    req.on('error', reject);
    req.end(body);
  });
}

export async function call(url, method, params) {
  const r = await post(url, JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }));
  if (r.error) throw new Error(`${method}: ${JSON.stringify(r.error)}`);
  return r.result;
}

export const transferOut = (assetId, address, amount) => ({ assetId, out: { kind: 'transfer', amount, locktime: 0n, threshold: 1, addresses: [address] } });

/** A signed BaseTx spending `utxos` (all the key's) into `outs`; its cb58 bytes and ID. */
export function signedTx(utxos, outs) {
  const unsigned = {
    kind: 'base',
    networkId: 12345,
    chainId: X_CHAIN,
    outs: outs.sort((a, b) => (a.out.amount === b.out.amount ? a.out.addresses[0].compare(b.out.addresses[0]) : a.out.amount < b.out.amount ? -1 : 1)),
    ins: utxos
      .map((u) => ({ txId: u.txId, outputIndex: u.outputIndex, assetId: u.assetId, input: { amount: u.out.amount, sigIndices: [0] } }))
      .sort((a, b) => a.txId.compare(b.txId) || a.outputIndex - b.outputIndex),
  };
  const sig = EWOQ.sign(unsignedBytes(unsigned));
  const bytes = encodeTx({ unsigned, creds: unsigned.ins.map(() => ({ sigs: [sig] })) });
  return { tx: cb58Encode(bytes), id: txIdOf(bytes), unsigned };
}

/** Follows the pubsub `accepted` channel; `wait(id)` resolves when that tx is reported. */
export async function acceptedFeed(wsUrl) {
  const ws = new WebSocket(wsUrl);
  await new Promise((resolve, reject) => (ws.once('open', resolve), ws.once('error', reject)));
  const seen = new Set();
  const waiting = new Map();
  ws.on('message', (d) => {
    const { value } = JSON.parse(d.toString());
    const w = waiting.get(value);
    if (w) {
      waiting.delete(value);
      w();
    } else seen.add(value);
  });
  ws.send(JSON.stringify({ channel: 'accepted', unsubscribe: false }));
  await new Promise((r) => setTimeout(r, 50));
  return {
    wait: (id) => (seen.delete(id) ? Promise.resolve() : new Promise((r) => waiting.set(id, r))),
    close: () => ws.close(),
  };
}

/**
 * Issues the signed txs one at a time, each once the previous is reported accepted on `feed`; the
 * issue -> accept latency percentile function (ms, two decimals).
 */
export async function issueOneByOne(url, feed, signed) {
  const latencies = [];
  for (const { tx, id } of signed) {
    const t0 = performance.now();
    const accepted = feed.wait(id.toString());
    await call(url, 'avm.issueTx', { tx });
    await accepted;
    latencies.push(performance.now() - t0);
  }
  latencies.sort((a, b) => a - b);
  return (p) => Math.round(latencies[Math.floor((latencies.length - 1) * p)] * 100) / 100;
}

/**
 * Issues the signed txs in JSON-RPC batches of 100, one worker per URL (a URL may repeat); how many
 * calls were answered with an error.
 */
export async function issueInBatches(urls, signed) {
  const batches = [];
  for (let i = 0; i < signed.length; i += 100) batches.push(signed.slice(i, i + 100));
  let next = 0;
  let errors = 0;
  await Promise.all(
    urls.map(async (url) => {
      while (next < batches.length) {
        const batch = batches[next++];
        const replies = await post(url, JSON.stringify(batch.map(({ tx }, i) => ({ jsonrpc: '2.0', id: i, method: 'avm.issueTx', params: { tx } }))));
        errors += replies.filter((r) => r.error).length;
      }
    }),
  );
  return errors;
}

/**
 * Splits the ewoq key's biggest UTXO into `count` outputs of 1,000 nAVA (txs of 150 outputs, each
 * awaited on the pubsub feed); the UTXOs made.
 */
export async function fanOut(xUrl, feed, count) {
  const own = (await call(xUrl, 'avm.getUTXOs', { addresses: [`X-${EWOQ.address}`] })).utxos.map((u) => decodeUtxo(cb58Decode(u)));
  let genesis = own.filter((u) => u.out.kind === 'transfer').sort((a, b) => (a.out.amount < b.out.amount ? 1 : -1))[0];
  const pieces = [];
  for (let left = count; left > 0; ) {
    const n = Math.min(150, left); // a tx stays under the API's size bound
    const outs = Array.from({ length: n }, () => transferOut(genesis.assetId, EWOQ.address, 1_000n));
    outs.push(transferOut(genesis.assetId, EWOQ.address, genesis.out.amount - 1_000n * BigInt(n)));
    const { tx, id, unsigned } = signedTx([genesis], outs);
    const accepted = feed.wait(id.toString());
    await call(xUrl, 'avm.issueTx', { tx });
    await accepted;
    const made = producedUtxos(id, unsigned);
    genesis = made.find((u) => u.out.amount > 1_000n);
    pieces.push(...made.filter((u) => u.out.amount === 1_000n));
    left -= n;
  }
  return pieces;
}

/**
 * Issues the signed txs in batches (issueInBatches over 4 connections) and waits until the pubsub
 * feed has reported each accepted: txs accepted per second, issued per second, errors.
 */
export async function acceptedPerSecond(url, feed, signed) {
  const t0 = performance.now();
  const all = Promise.all(signed.map(({ id }) => feed.wait(id.toString())));
  const errors = await issueInBatches(Array(4).fill(url), signed);
  const issuedMs = performance.now() - t0;
  await all;
  const ms = performance.now() - t0;
  return { perSecond: Math.round((signed.length / ms) * 1000), issuedPerSecond: Math.round((signed.length / issuedMs) * 1000), errors };
}

export async function benchAvm({ transfers = 5000, warmup = 2000, latencySamples = 200, baselineBareNodeHttp } = {}) {
  const machine = recoveriesPerSecond(); // before the node starts: a quiet machine
  const dir = await mkdtemp(join(tmpdir(), 'cornice-bench-x-'));
  const node = await startNode([
    `--data-dir=${dir}`,
    `--staking-tls-cert-file=${fixture('staker1.crt')}`,
    `--staking-tls-key-file=${fixture('staker1.key')}`,
    '--sybil-protection-enabled=false',
  ]);
  const X = `${node.url}/ext/bc/X`;
  const feed = await acceptedFeed(`${node.url.replace('http', 'ws')}/ext/bc/X/pubsub`);
  try {
    const pieces = await fanOut(X, feed, warmup + transfers + latencySamples);
    const to = PrivateKey.generate().address;
    const signed = pieces.map((u) => signedTx([u], [transferOut(u.assetId, to, 1_000n)]));

    // 2 first (sequential), on the last `latencySamples` pieces.
    const pct = await issueOneByOne(X, feed, signed.splice(warmup + transfers, latencySamples));

    // 1: throughput. First `warmup` transfers under the same load, untimed in the figure: the batched
    // path's code is compiled while they run (V8 compiles hot functions in the background, on the
    // same 2 cores), then `transfers` timed ones.
    const first = await acceptedPerSecond(X, feed, signed.splice(transfers, warmup));
    const timed = await acceptedPerSecond(X, feed, signed);
    report({
      bench: 'X-Chain offline-signed transfers accepted/s (one node, JSON-RPC batches of 100)',
      value: timed.perSecond,
      unit: 'tx/s',
      target: '>= 5000',
      issueOnlyPerSecond: timed.issuedPerSecond,
      errors: timed.errors + first.errors,
      transfers: signed.length,
      warmupTransfers: warmup,
      warmupPerSecond: first.perSecond,
      baselineBareNodeHttp,
      machine,
      perRecovery: perRecovery(timed.perSecond),
      targetPerRecovery: '>= 0.25 (5000 tx/s where one core recovers 20000 signatures/s)',
    });
    report({ bench: 'X-Chain transfer issue -> accept latency (one node)', value: pct(0.5), unit: 'ms', target: 'p50 <= 20', p90: pct(0.9), p99: pct(0.99), samples: latencySamples });
  } finally {
    feed.close();
    agent.destroy();
    await node.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
