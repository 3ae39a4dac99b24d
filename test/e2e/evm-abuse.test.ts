/**
 * Hostile JSON-RPC load on a real node's C-Chain, started as `npm start` starts it (issue 32, points
 * 1, 4, 7, 11 and 12 — the EVM front end's bounds, plugins/evm/API.md "Bounds"): for each attack,
 * what the attacker gets, that honest clients are still served, that /ext/health keeps answering
 * (sampled every 50 ms from a process of its own) and the node's RSS. The bounds asserted here are
 * looser than the figures the bench reports (bench/evm-abuse.mjs), since this machine is shared.
 * Cornice only: against hardhat's node (CORNICE_EVM_TEST_TARGET=hardhat) each test returns at once.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Wallet } from 'ethers';
import WebSocket from 'ws';
import { EWOQ_EVM_ADDRESS, EWOQ_EVM_KEY, setupReporting, startEvmTarget, type EvmTarget } from '../src/evm.js';

let dir: string;
let target: EvmTarget;
const ewoq = new Wallet(EWOQ_EVM_KEY);
let nonce = 0;
let chainId = 0;

test.before(
  setupReporting(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cornice-e2e-evm-abuse-'));
    target = await startEvmTarget({ dataDir: dir });
    chainId = Number((await target.call('eth_chainId')).result);
  }),
);

test.after(async () => {
  await target?.stop();
  await rm(dir, { recursive: true, force: true });
});

const cornice = () => target.kind === 'cornice';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const body = (method: string, params: unknown[], id: unknown = 1) => ({ jsonrpc: '2.0', id, method, params });

interface Posted {
  status?: number;
  text?: string;
  error?: string;
  ms: number;
}

/** POSTs `text` to the C-Chain on a connection of its own (from `localAddress`); bounded by `timeoutMs`; `abortAfterMs`: the client leaves then. */
function post(text: string, o: { timeoutMs?: number; localAddress?: string; abortAfterMs?: number } = {}): Promise<Posted> {
  return new Promise((resolve) => {
    const u = new URL(target.rpcUrl);
    const t0 = performance.now();
    const req = request(
      { host: u.hostname, port: u.port, path: u.pathname, method: 'POST', agent: false, headers: { 'content-type': 'application/json' }, ...(o.localAddress && { localAddress: o.localAddress }) },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, text: Buffer.concat(chunks).toString(), ms: performance.now() - t0 }));
        res.on('error', (e) => resolve({ error: e.message, ms: performance.now() - t0 }));
      },
    );
    req.on('error', (e) => resolve({ error: e.message, ms: performance.now() - t0 }));
    req.setTimeout(o.timeoutMs ?? 120_000, () => req.destroy(new Error('client timeout')));
    if (o.abortAfterMs !== undefined) setTimeout(() => req.destroy(new Error('client left')), o.abortAfterMs);
    req.end(text);
  });
}

const json = (p: Posted): any => JSON.parse(p.text ?? 'null');

/**
 * /ext/health's latency every 50 ms from a process of its own (this one's work must not delay the
 * samples), from when its connection is open (resolves then) until the returned function is called.
 */
async function healthProbe(): Promise<() => Promise<{ maxMs: number; p50Ms: number; n: number }>> {
  const code = `
    let running = true; process.on('message', () => (running = false));
    (async () => { const out = [];
      await fetch(process.argv[1]).then((r) => r.text()).catch(() => undefined);
      process.send('ready');
      while (running) { const t0 = performance.now();
        try { await fetch(process.argv[1], { signal: AbortSignal.timeout(10000) }).then((r) => r.text()); out.push(performance.now() - t0); } catch { out.push(10000); }
        await new Promise((r) => setTimeout(r, 50)); }
      process.send(out, () => process.exit(0)); })();`;
  const child = spawn(process.execPath, ['-e', code, target.healthUrl!], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  await new Promise((resolve) => child.once('message', resolve));
  const samples = new Promise<number[]>((resolve) => child.once('message', (m) => resolve(m as number[])));
  return async () => {
    child.send('stop');
    const xs = (await samples).sort((a, b) => a - b);
    return { maxMs: Math.round(xs.at(-1) ?? 0), p50Ms: Math.round(xs[Math.floor(xs.length / 2)] ?? 0), n: xs.length };
  };
}

const rssMb = (): number => Number(readFileSync(`/proc/${target.node!.proc.pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)![1]) / 1024;
/** The node's CPU time so far, ms (user + system, /proc/<pid>/stat; 100 ticks a second). */
const cpuMs = (): number => {
  const fields = readFileSync(`/proc/${target.node!.proc.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
};

async function sign(tx: Record<string, unknown>): Promise<string> {
  return ewoq.signTransaction({ type: 2, chainId, nonce: nonce++, maxFeePerGas: 300_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n, gasLimit: 21_000, value: 0, ...tx });
}

async function send(tx: Record<string, unknown>): Promise<string> {
  const r = await target.call('eth_sendRawTransaction', [await sign(tx)]);
  assert.ok(r.result, `send: ${JSON.stringify(r.error)}`);
  return r.result as string;
}

async function receipt(hash: string, maxMs: number): Promise<number> {
  const t0 = performance.now();
  while (performance.now() - t0 < maxMs) {
    if ((await target.call('eth_getTransactionReceipt', [hash])).result) return performance.now() - t0;
    await sleep(20);
  }
  throw new Error(`no receipt for ${hash} within ${maxMs} ms`);
}

/** Init code emitting `n` LOG1s (32 bytes of data, the counter as topic) that deploys nothing. */
function emitter(n: number): string {
  const bytes = [0x61, n >> 8, n & 0xff, 0x5b, 0x80, 0x15, 0x60, 0x1a, 0x57, 0x80, 0x60, 0, 0x52, 0x80, 0x60, 0x20, 0x60, 0, 0xa1, 0x60, 1, 0x90, 0x03, 0x60, 3, 0x56, 0x5b, 0x00];
  return '0x' + Buffer.from(bytes).toString('hex');
}

test('filters: one client holds at most 100, refused with an error naming the limit; another address still installs', async () => {
  if (!cornice()) return;
  const ids: string[] = [];
  let refusal: { code: number; message: string } | undefined;
  for (let i = 0; i < 101 && !refusal; i++) {
    const r = json(await post(JSON.stringify(body('eth_newBlockFilter', []))));
    if (r.result) ids.push(r.result);
    else refusal = r.error;
  }
  assert.is(ids.length, 100);
  assert.equal(refusal, { code: -32000, message: 'too many filters installed by this client (at most 100): uninstall unused ones' });
  const other = json(await post(JSON.stringify(body('eth_newBlockFilter', [])), { localAddress: '127.0.0.2' }));
  assert.match(other.result, /^0x[0-9a-f]+$/, JSON.stringify(other));
  for (const id of ids) await post(JSON.stringify(body('eth_uninstallFilter', [id])));
});

test('deeply nested JSON: a 5 MB body is refused unparsed (-32600), nested params are -32600/-32602, never -32603, no log line', async () => {
  if (!cornice()) return;
  const errorsBefore = target.node!.logs.filter((l) => l.level === 'error').length;
  const stop = await healthProbe();
  const deep = '['.repeat(2_500_000) + ']'.repeat(2_500_000);
  for (let i = 0; i < 3; i++) {
    const r = await post(deep);
    assert.equal(json(r).error, { code: -32600, message: 'invalid request: JSON nested deeper than 32 levels' });
    assert.ok(r.ms < 2_000, `answered in ${Math.round(r.ms)} ms`);
  }
  const deepParams = `{"jsonrpc":"2.0","id":1,"method":"eth_feeHistory","params":["0x1","latest",[${'['.repeat(100_000)}${']'.repeat(100_000)}]]}`;
  for (let i = 0; i < 5; i++) assert.is(json(await post(deepParams)).error.code, -32600);
  assert.equal(json(await post(JSON.stringify(body('eth_feeHistory', ['0x1', 'latest', [[[[50]]]]])))).error, {
    code: -32602,
    message: 'invalid argument 2: cannot unmarshal array into reward percentile',
  });
  const health = await stop();
  assert.ok(health.maxMs < 1_000, `health answered within ${health.maxMs} ms at worst (before: ~2 s per body)`);
  await sleep(100);
  assert.is(target.node!.logs.filter((l) => l.level === 'error').length, errorsBefore, 'no error log line');
});

test('100 looping eth_calls in a batch whose client leaves after 1 s: honest calls, balances and sends are answered meanwhile and after; the abandoned calls stop', async () => {
  if (!cornice()) return;
  const loopAt = '0x' + 'c0'.padStart(40, '0');
  const batch = Array.from({ length: 100 }, (_, i) => body('eth_call', [{ to: loopAt }, 'latest', { [loopAt]: { code: '0x5b600056' } }], i));
  const attack = post(JSON.stringify(batch), { abortAfterMs: 1_000 });
  await sleep(200);
  const worst: Record<string, number> = {};
  const probe = async () => {
    const bodies: Record<string, unknown> = {
      eth_call: body('eth_call', [{ to: EWOQ_EVM_ADDRESS, data: '0x' }, 'latest']),
      eth_getBalance: body('eth_getBalance', [EWOQ_EVM_ADDRESS, 'latest']),
      eth_sendRawTransaction: body('eth_sendRawTransaction', [await sign({ to: EWOQ_EVM_ADDRESS, value: 1 })]),
    };
    await Promise.all(
      Object.entries(bodies).map(async ([m, b]) => {
        const r = await post(JSON.stringify(b), { timeoutMs: 5_000, localAddress: '127.0.0.2' });
        assert.ok(json(r)?.result, `${m}: ${r.error ?? r.text}`);
        worst[m] = Math.max(worst[m] ?? 0, Math.round(r.ms));
      }),
    );
  };
  // While the batch runs (its first calls loop), and after its client left.
  for (let i = 0; i < 3; i++) await probe();
  assert.match((await attack).error ?? '', /client left/);
  await sleep(300);
  const cpu0 = cpuMs();
  await sleep(1_000);
  const busy = cpuMs() - cpu0;
  for (let i = 0; i < 3; i++) await probe();
  for (const [m, ms] of Object.entries(worst)) assert.ok(ms < 1_500, `${m} took ${ms} ms at worst (before: timed out for minutes)`);
  assert.ok(busy < 500, `the node used ${busy} ms of CPU in the second after the client left: its calls were stopped`);
});

test('a batch of 1,000 eth_getLogs over 9,000 logs: one reply within the 25 MB budget, the rest -32003 unrun; the node lives, health answers, RSS bounded', async () => {
  if (!cornice()) return;
  const hashes: string[] = [];
  for (let i = 0; i < 9; i++) hashes.push(await send({ to: null, data: emitter(1_000), gasLimit: 3_000_000 }));
  for (const h of hashes) await receipt(h, 30_000);
  const rss0 = rssMb();
  const stop = await healthProbe();
  let rssMax = rss0;
  const rssTimer = setInterval(() => (rssMax = Math.max(rssMax, rssMb())), 100);
  const r = await post(JSON.stringify(Array.from({ length: 1_000 }, (_, i) => body('eth_getLogs', [{ fromBlock: '0x0', toBlock: 'latest' }], i))), { timeoutMs: 120_000 });
  clearInterval(rssTimer);
  const health = await stop();
  assert.is(r.error, undefined, `the batch got an answer: ${r.error}`);
  assert.ok(r.text!.length <= 25_000_000 + 1_000 * 100, `${r.text!.length} characters`);
  const replies = json(r) as any[];
  assert.is(replies.length, 1_000);
  const answered = replies.filter((x) => Array.isArray(x.result));
  assert.ok(answered.length >= 1 && answered.every((x) => x.result.length === 9_000), `${answered.length} full answers`);
  for (const x of replies.slice(answered.length)) assert.equal(x.error, { code: -32003, message: 'response too large' });
  assert.ok(rssMax - rss0 < 400, `RSS grew ${Math.round(rssMax - rss0)} MB (${Math.round(rss0)} -> ${Math.round(rssMax)}); before: 4.1 GB and a V8 OOM`);
  assert.ok(health.maxMs < 1_000, `health answered within ${health.maxMs} ms at worst (p50 ${health.p50Ms})`);
  assert.is((await target.call('eth_blockNumber')).error, undefined, 'the node still serves');
});

test('20 WebSockets x 256 logs subscriptions, then a tx of 1,000 logs: confirmed in seconds, health answers, the sockets that fall behind are closed with a reason', async () => {
  if (!cornice()) return;
  const sockets = await Promise.all(
    Array.from(
      { length: 20 },
      () =>
        new Promise<WebSocket>((resolve, reject) => {
          const ws = new WebSocket(target.wsUrl);
          ws.on('open', () => resolve(ws));
          ws.on('error', reject);
        }),
    ),
  );
  const closes: string[] = [];
  let subscribed = 0;
  for (const ws of sockets) {
    ws.on('close', (code, reason) => closes.push(`${code} ${reason.toString()}`));
    ws.on('message', (m) => {
      if (/"result":"0x[0-9a-f]+"/.test(m.toString()) && !m.toString().includes('eth_subscription')) subscribed++;
    });
    for (let i = 0; i < 256; i++) ws.send(JSON.stringify(body('eth_subscribe', ['logs', {}], i)));
  }
  while (subscribed < 20 * 256) await sleep(20);
  const stop = await healthProbe();
  const confirmMs = await receipt(await send({ to: null, data: emitter(1_000), gasLimit: 3_000_000 }), 60_000);
  while (closes.length < 20) await sleep(50);
  const health = await stop();
  for (const ws of sockets) ws.terminate();
  assert.ok(confirmMs < 10_000, `confirmed in ${Math.round(confirmMs)} ms (before: 22-36 s)`);
  // A socket is closed with the reason when its queue overflows, or terminated without a close
  // frame (1006 at the client) when the bytes already sent but unread pass the buffer bound first:
  // which comes first depends on how fast this client reads on a loaded machine.
  const reasons = new Set(closes);
  assert.ok([...reasons].every((r) => r === '1008 subscription queue overflow' || r === '1006 '), [...reasons].join(', '));
  assert.ok(health.maxMs < 1_000, `health answered within ${health.maxMs} ms at worst`);
});

test.run();
