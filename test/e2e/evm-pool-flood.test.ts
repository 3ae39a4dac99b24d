/**
 * Issue 32, point 5, on a real node started like `npm start`: 64 funded keys each send nonces 1–256
 * (every one behind a nonce gap, so none can ever run) over JSON-RPC batches. The pool keeps 1,024 of
 * them (tx-pool-global-queue; 64 per key, tx-pool-account-queue) and refuses the rest with geth's
 * texts; a normal transfer sent after the flood is admitted and mined at once, /ext/health keeps
 * answering meanwhile. Before the fix all 16,384 were pooled and every later tx, at any price, got
 * "txpool is full" for good. The figures (flood time, health latency, RSS, transfer latency) are
 * printed for the record.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Wallet } from 'ethers';
import { EWOQ_EVM_KEY, evmTargetKind, setupReporting, startEvmTarget, type EvmTarget } from '../src/evm.js';

const cornice = evmTargetKind() === 'cornice';
let dir: string;
let target: EvmTarget;

test.before(
  setupReporting(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cornice-e2e-evm-pool-flood-'));
    if (cornice) target = await startEvmTarget({ dataDir: dir, dbType: 'memory' });
  }),
);

test.after(async () => {
  await target?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function batch(calls: Array<[string, unknown[]]>): Promise<Array<{ result?: any; error?: { code: number; message: string } }>> {
  const res = await fetch(target.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(calls.map(([method, params], id) => ({ jsonrpc: '2.0', id, method, params }))),
  });
  const replies = (await res.json()) as Array<{ id: number; result?: any; error?: { code: number; message: string } }>;
  return replies.sort((a, b) => a.id - b.id);
}

async function receipt(hash: string, ms = 20_000): Promise<any> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const r = (await target.call('eth_getTransactionReceipt', [hash])).result;
    if (r) return r;
    await new Promise((res) => setTimeout(res, 10));
  }
  throw new Error(`no receipt for ${hash}`);
}

async function rssMiB(): Promise<number> {
  const status = await readFile(`/proc/${target.node!.proc.pid}/status`, 'utf8');
  return Math.round(Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024);
}

/** Polls /ext/health every 50 ms until stopped; the latencies seen. */
function pollHealth(): { stop(): Promise<number[]> } {
  const seen: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const t = performance.now();
      await fetch(target.healthUrl!).then((r) => r.text());
      seen.push(performance.now() - t);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return seen.sort((a, b) => a - b);
    },
  };
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;

test('the 64×256 gapped flood: 1,024 pooled, the rest refused with geth\'s texts; a normal transfer is then admitted and mined at once; health keeps answering', async () => {
  if (!cornice) return;
  const chainId = BigInt((await target.call('eth_chainId')).result);
  const ewoq = new Wallet(EWOQ_EVM_KEY);
  const fees = { maxFeePerGas: 50_000_000_000n, maxPriorityFeePerGas: 0n, gasLimit: 21_000n, chainId, type: 2 } as const;
  const keys = Array.from({ length: 64 }, (_, i) => new Wallet('0x' + 'ab'.repeat(31) + (i + 1).toString(16).padStart(2, '0')));
  const funding = await Promise.all(keys.map((k, i) => ewoq.signTransaction({ ...fees, nonce: i, to: k.address, value: 10n ** 18n })));
  const funded = await batch(funding.map((raw) => ['eth_sendRawTransaction', [raw]]));
  assert.ok(funded.every((r) => typeof r.result === 'string'), JSON.stringify(funded.find((r) => r.error)));
  await receipt(funded.at(-1)!.result);

  const flood: string[][] = [];
  for (const k of keys) flood.push(await Promise.all(Array.from({ length: 256 }, (_, n) => k.signTransaction({ ...fees, nonce: n + 1, to: ewoq.address, value: 1n }))));
  const rssBefore = await rssMiB();
  const health = pollHealth();
  const t0 = performance.now();
  const refusals = new Map<string, number>();
  let admitted = 0;
  for (const txs of flood) {
    for (const r of await batch(txs.map((raw) => ['eth_sendRawTransaction', [raw]]))) {
      if (r.result) admitted++;
      else {
        const m = r.error!.message.replace(/0x[0-9a-f]{40}/, '0x…').replace(/has \d+/, 'has N');
        refusals.set(m, (refusals.get(m) ?? 0) + 1);
      }
    }
  }
  const floodMs = performance.now() - t0;
  const rssAfter = await rssMiB();

  // A normal transfer, at the price a wallet would pay.
  const t1 = performance.now();
  const transfer = await ewoq.signTransaction({ ...fees, nonce: 64, to: Wallet.createRandom().address, value: 12345n });
  const sent = await target.call('eth_sendRawTransaction', [transfer]);
  assert.type(sent.result, 'string', JSON.stringify(sent.error));
  const r = await receipt(sent.result as string);
  const transferMs = performance.now() - t1;
  const latencies = await health.stop();

  console.log(
    `    64x256 gapped flood: ${admitted} pooled, refused ${JSON.stringify(Object.fromEntries(refusals))} in ${(floodMs / 1000).toFixed(1)} s; ` +
      `RSS ${rssBefore} -> ${rssAfter} MiB; health p50 ${pct(latencies, 50).toFixed(1)} ms, p99 ${pct(latencies, 99).toFixed(1)} ms, max ${latencies.at(-1)!.toFixed(1)} ms (${latencies.length} polls); ` +
      `then a transfer: sent -> receipt ${transferMs.toFixed(0)} ms`,
  );
  assert.is(admitted, 1024);
  assert.equal([...refusals.keys()].sort(), ['account limit exceeded: address 0x… has N future (gapped) txs pooled, the most an account may (tx-pool-account-queue)', 'txpool is full']);
  assert.is(r.status, '0x1');
  assert.ok(transferMs < 5_000, `the transfer was mined in ${transferMs} ms`);
  assert.ok(rssAfter - rssBefore < 200, `RSS grew ${rssAfter - rssBefore} MiB`);
  // The gapped txs count for nothing: the pending nonce of a flooding key is still 0.
  assert.is((await target.call('eth_getTransactionCount', [keys[0]!.address, 'pending'])).result, '0x0');
});

test.run();
