#!/usr/bin/env node
// Hostile JSON-RPC load on the C-Chain of a node started with the `npm start` flags (issue 32,
// points 1, 4, 7, 11 and 12): for each attack, /ext/health's latency (sampled every 50 ms, p50/p99/
// max) and the node's RSS (sampled every 100 ms) while it runs, beside an idle period, and what the
// attack's client and honest clients got. Not part of `npm run bench`: a probe of the EVM front end's
// bounds (plugins/evm/src/rpc). One JSON line per attack.
//   node bench/evm-abuse.mjs [idle|getlogs100|getlogs1000|calls|logsubs|logtx|nested|filters ...]
//   (NODE_FLAGS="--cpu-prof --cpu-prof-dir=DIR": flags for the node's process)
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Wallet } from 'ethers';
import WebSocket from 'ws';
import { CORNICE_BIN, devNodeArgs, freePort, rpc, rssMb, track, untilChainsStarted } from './lib.mjs';

const EWOQ = new Wallet('0x56289e99c94b6912bfc12adc093c9b51124f0dc54ac7a766b2bc5ccf558d8027');
const CHAIN_ID = 43110;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Init code that emits `n` LOG1s (32 bytes of data, the counter as topic) and deploys nothing. */
function emitterInitCode(n) {
  const hi = (n >> 8) & 0xff;
  const lo = n & 0xff;
  // PUSH2 n; loop: JUMPDEST DUP1 ISZERO PUSH1 end JUMPI DUP1 PUSH1 0 MSTORE DUP1 PUSH1 32 PUSH1 0 LOG1
  // PUSH1 1 SWAP1 SUB PUSH1 loop JUMP; end: JUMPDEST STOP
  return '0x' + ['61', hi, lo, '5b', '80', '15', '60', 0x1a, '57', '80', '60', 0, '52', '80', '60', 0x20, '60', 0, 'a1', '60', 1, '90', '03', '60', 3, '56', '5b', '00']
    .map((b) => (typeof b === 'number' ? b.toString(16).padStart(2, '0') : b))
    .join('');
}

async function startNode(dir, extra = []) {
  const port = await freePort();
  const args = [
    '--import',
    fileURLToPath(new URL('./event-loop-delay.mjs', import.meta.url)),
    ...(process.env.NODE_FLAGS ? process.env.NODE_FLAGS.split(' ') : []),
    CORNICE_BIN,
    `--http-port=${port}`,
    '--staking-port=0',
    ...devNodeArgs(dir),
    ...extra,
  ];
  const eldOut = join(dir, 'event-loop-delay.json');
  const proc = track(spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, CORNICE_ELD_OUT: eldOut } }));
  const lines = [];
  let buf = '';
  proc.stdout.on('data', (d) => {
    buf += d;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      lines.push(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
    }
  });
  let stderr = '';
  proc.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise((resolve) => proc.on('close', (code, signal) => resolve(signal ?? code)));
  const url = `http://127.0.0.1:${port}`;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`node exited: ${stderr}`);
    if ((await rpc(`${url}/ext/admin`, 'admin.getNodeID').catch(() => ({}))).result) break;
    await sleep(50);
  }
  await untilChainsStarted(url, proc, performance.now(), 60_000);
  const rpcUrl = `${url}/ext/bc/C/rpc`;
  for (let i = 0; i < 400 && !(await rpc(rpcUrl, 'eth_chainId', []).catch(() => ({}))).result; i++) await sleep(50);
  return { proc, url, rpcUrl, eldOut, wsUrl: `${url.replace('http', 'ws')}/ext/bc/C/ws`, lines, exited, get stderr() { return stderr; }, stop: () => (proc.exitCode === null && proc.kill('SIGTERM'), exited) };
}

/** The health prober, in a process of its own (the attacking client's own work must not delay its samples). */
const PROBER = `
const url = process.argv[1], timeoutMs = Number(process.argv[2]);
let running = true;
process.on('message', () => { running = false; });
(async () => {
  const out = [];
  // The first request opens the connection: not a sample. Then the attack may begin.
  await fetch(url).then((r) => r.text()).catch(() => undefined);
  process.send('ready');
  while (running) {
    const t0 = performance.now();
    try { await fetch(url, { signal: AbortSignal.timeout(timeoutMs) }).then((r) => r.text()); out.push(performance.now() - t0); }
    catch { out.push(timeoutMs); }
    await new Promise((r) => setTimeout(r, 50));
  }
  process.send(out, () => process.exit(0));
})();
`;

/** Samples health latency (every 50 ms, each bounded by `timeoutMs`, from another process) and RSS (every 100 ms) until stopped. */
function sampler(node, timeoutMs = 10_000) {
  const rss = [];
  // The node's own event-loop delay from now (bench/event-loop-delay.mjs).
  node.proc.kill('SIGUSR2');
  const prober = spawn(process.execPath, ['-e', PROBER, `${node.url}/ext/health`, String(timeoutMs)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const messages = [];
  const waiters = [];
  prober.on('message', (m) => (waiters.length ? waiters.shift()(m) : messages.push(m)));
  const next = () => (messages.length ? Promise.resolve(messages.shift()) : new Promise((resolve) => waiters.push(resolve)));
  const r = setInterval(() => {
    try {
      rss.push(rssMb(node.proc.pid));
    } catch {}
  }, 100);
  const stop = async () => {
    clearInterval(r);
    prober.send('stop');
    const health = await next();
    let eld = {};
    try {
      node.proc.kill('SIGUSR2');
      await sleep(100);
      eld = JSON.parse(await readFile(node.eldOut, 'utf8'));
    } catch {}
    const sorted = [...health].sort((a, b) => a - b);
    const q = (p) => (sorted.length ? Math.round(sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]) : null);
    return {
      healthSamples: health.length,
      healthP50Ms: q(0.5),
      healthP99Ms: q(0.99),
      healthMaxMs: q(1),
      loopDelayP99Ms: eld.p99Ms === undefined ? null : Math.round(eld.p99Ms),
      loopDelayMaxMs: eld.maxMs === undefined ? null : Math.round(eld.maxMs),
      rssMaxMb: rss.length ? Math.round(Math.max(...rss)) : null,
    };
  };
  // Resolves with `stop` once the prober is ready to sample.
  return next().then(() => stop);
}

/** POSTs `body`; the reply's status and text (or the error), with a client-side timeout. */
function post(url, body, { timeoutMs = 120_000, localAddress, abortAfterMs } = {}) {
  return new Promise((resolve) => {
    const u = new URL(url);
    const t0 = performance.now();
    const req = request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }, ...(localAddress && { localAddress }) }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString(), ms: performance.now() - t0 }));
      res.on('error', (e) => resolve({ error: e.message, ms: performance.now() - t0 }));
    });
    req.on('error', (e) => resolve({ error: e.message, ms: performance.now() - t0 }));
    req.setTimeout(timeoutMs, () => req.destroy(new Error('client timeout')));
    if (abortAfterMs !== undefined) setTimeout(() => req.destroy(new Error('client went away')), abortAfterMs);
    req.end(body);
  });
}

const call = (method, params, id = 1) => ({ jsonrpc: '2.0', id, method, params });

let nonce = 0;
async function send(node, tx) {
  const raw = await EWOQ.signTransaction({ type: 2, chainId: CHAIN_ID, nonce: nonce++, maxFeePerGas: 300_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n, gasLimit: 21_000, value: 0, ...tx });
  const r = await rpc(node.rpcUrl, 'eth_sendRawTransaction', [raw]);
  if (!r.result) throw new Error(`send: ${JSON.stringify(r.error)}`);
  return r.result;
}

async function receipt(node, hash, maxMs = 120_000) {
  const t0 = performance.now();
  while (performance.now() - t0 < maxMs) {
    const r = await rpc(node.rpcUrl, 'eth_getTransactionReceipt', [hash]).catch(() => ({}));
    if (r.result) return r.result;
    await sleep(20);
  }
  throw new Error(`no receipt for ${hash} in ${maxMs} ms`);
}

/** 9 txs of 1,000 logs each (9,000 logs). */
async function nineThousandLogs(node) {
  const hashes = [];
  for (let i = 0; i < 9; i++) hashes.push(await send(node, { data: emitterInitCode(1000), gasLimit: 3_000_000, to: null }));
  for (const h of hashes) await receipt(node, h);
}

const idleFigures = async (node, ms = 3000) => {
  const stop = await sampler(node);
  await sleep(ms);
  return stop();
};

const SCENARIOS = {
  async idle(node) {
    return idleFigures(node, 5000);
  },

  async getlogs100(node) {
    return getLogsBatch(node, 100);
  },

  async getlogs1000(node) {
    return getLogsBatch(node, 1000);
  },

  async calls(node) {
    // 100 eth_calls looping to the gas cap (code `JUMPDEST PUSH1 0 JUMP` put at 0xc0 by a state override).
    const loopAt = '0x' + 'c0'.padStart(40, '0');
    const batch = Array.from({ length: 100 }, (_, i) => call('eth_call', [{ to: loopAt }, 'latest', { [loopAt]: { code: '0x5b600056' } }], i));
    const idle = await idleFigures(node);
    const stop = await sampler(node);
    const attack = post(node.rpcUrl, JSON.stringify(batch), { abortAfterMs: 1000 });
    await sleep(200);
    // Honest clients, from another address, while the batch runs and after its client left: each
    // kind every 250 ms for 8 s.
    const probes = { eth_call: [], eth_getBalance: [], eth_sendRawTransaction: [] };
    const failures = [];
    const t0 = performance.now();
    while (performance.now() - t0 < 8000) {
      const raw = await EWOQ.signTransaction({ type: 2, chainId: CHAIN_ID, nonce: nonce++, maxFeePerGas: 300_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n, gasLimit: 21_000, to: EWOQ.address, value: 1 });
      const bodies = {
        eth_call: call('eth_call', [{ to: EWOQ.address, data: '0x' }, 'latest']),
        eth_getBalance: call('eth_getBalance', [EWOQ.address, 'latest']),
        eth_sendRawTransaction: call('eth_sendRawTransaction', [raw]),
      };
      await Promise.all(
        Object.entries(bodies).map(async ([m, b]) => {
          const r = await post(node.rpcUrl, JSON.stringify(b), { timeoutMs: 5000, localAddress: '127.0.0.2' });
          probes[m].push(Math.round(r.ms));
          const j = r.text && JSON.parse(r.text);
          if (!j?.result) failures.push(`${m}: ${r.error ?? JSON.stringify(j?.error)}`);
        }),
      );
      await sleep(250);
    }
    const attacker = await attack;
    const figures = await stop();
    // What the node does once the client left: its CPU over a second (before: the batch's calls ran on).
    const cpu = () => {
      const f = readFileSync(`/proc/${node.proc.pid}/stat`, 'utf8').split(') ')[1].split(' ');
      return (Number(f[11]) + Number(f[12])) * 10;
    };
    const c0 = cpu();
    await sleep(1000);
    figures.cpuMsInASecondAfter = cpu() - c0;
    const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    return { idle, ...figures, attacker: attacker.error ?? `HTTP ${attacker.status}`, honestMedianMs: Object.fromEntries(Object.entries(probes).map(([m, xs]) => [m, med(xs)])), honestMaxMs: Object.fromEntries(Object.entries(probes).map(([m, xs]) => [m, Math.max(...xs)])), honestFailures: failures.length, firstFailures: failures.slice(0, 3) };
  },

  async logsubs(node) {
    const sockets = await Promise.all(
      Array.from({ length: 20 }, () => new Promise((resolve, reject) => {
        const ws = new WebSocket(node.wsUrl);
        ws.on('open', () => resolve(ws));
        ws.on('error', reject);
      })),
    );
    let notes = 0;
    const closes = [];
    for (const ws of sockets) {
      ws.on('message', () => notes++);
      ws.on('close', (code, reason) => closes.push(`${code} ${reason}`));
      for (let i = 0; i < 256; i++) ws.send(JSON.stringify(call('eth_subscribe', ['logs', {}], i)));
    }
    await sleep(1000);
    const idle = await idleFigures(node);
    const stop = await sampler(node);
    const t0 = performance.now();
    const hash = await send(node, { data: emitterInitCode(1000), gasLimit: 3_000_000, to: null });
    await receipt(node, hash, 180_000);
    const confirmMs = Math.round(performance.now() - t0);
    await sleep(2000);
    const figures = await stop();
    for (const ws of sockets) ws.terminate();
    const reasons = [...new Set(closes)];
    return { idle, ...figures, confirmMs, notificationsReceived: notes, socketsClosedByNode: closes.length, closeReasons: reasons };
  },

  /** The tx of 1,000 logs of `logsubs` without subscribers: what the chain's own work costs. */
  async logtx(node) {
    const idle = await idleFigures(node);
    const stop = await sampler(node);
    const t0 = performance.now();
    await receipt(node, await send(node, { data: emitterInitCode(1000), gasLimit: 3_000_000, to: null }), 60_000);
    const confirmMs = Math.round(performance.now() - t0);
    await sleep(2000);
    return { idle, ...(await stop()), confirmMs };
  },

  async nested(node) {
    const idle = await idleFigures(node);
    const stop = await sampler(node);
    const deep = '['.repeat(2.5e6) + ']'.repeat(2.5e6);
    const t0 = performance.now();
    const answers = [];
    for (let i = 0; i < 3; i++) {
      const r = await post(node.rpcUrl, deep);
      answers.push(r.text?.slice(0, 160) ?? r.error);
    }
    const deepMs = Math.round((performance.now() - t0) / 3);
    const logsBefore = node.lines.filter((l) => l.includes('"level":"error"') || l.includes('"level":50')).length;
    const nestedParam = `{"jsonrpc":"2.0","id":1,"method":"eth_feeHistory","params":["0x1","latest",[${'['.repeat(100_000)}${']'.repeat(100_000)}]]}`;
    const fee = [];
    for (let i = 0; i < 20; i++) fee.push((await post(node.rpcUrl, nestedParam)).text?.slice(0, 200));
    await sleep(200);
    const figures = await stop();
    const errorLines = node.lines.filter((l) => l.includes('"level":"error"') || l.includes('"level":50')).length - logsBefore;
    return { idle, ...figures, deepBodyMs: deepMs, deepAnswer: answers[0], feeHistoryAnswer: fee[0], feeHistoryErrorLogLines: errorLines };
  },

  async filters(node) {
    const idle = await idleFigures(node, 1000);
    const stop = await sampler(node);
    let installed = 0;
    let refusal;
    for (let i = 0; i < 1100; i++) {
      const r = JSON.parse((await post(node.rpcUrl, JSON.stringify(call('eth_newBlockFilter', [])))).text);
      if (r.result) installed++;
      else {
        refusal = r.error;
        break;
      }
    }
    const other = JSON.parse((await post(node.rpcUrl, JSON.stringify(call('eth_newBlockFilter', [])), { localAddress: '127.0.0.2' })).text);
    const figures = await stop();
    return { idle, ...figures, installedByOneClient: installed, refusal, anotherClient: other.result ? 'installed' : other.error };
  },
};

async function getLogsBatch(node, n) {
  const t0 = performance.now();
  await nineThousandLogs(node);
  const setupMs = Math.round(performance.now() - t0);
  const idle = await idleFigures(node);
  const stop = await sampler(node);
  const batch = Array.from({ length: n }, (_, i) => call('eth_getLogs', [{ fromBlock: '0x0', toBlock: 'latest' }], i));
  const r = await post(node.rpcUrl, JSON.stringify(batch), { timeoutMs: 300_000 });
  const figures = await stop();
  let answered = 0;
  const errors = {};
  if (r.text) {
    try {
      for (const x of JSON.parse(r.text)) {
        if (x.result) answered++;
        else errors[`${x.error.code} ${x.error.message}`] = (errors[`${x.error.code} ${x.error.message}`] ?? 0) + 1;
      }
    } catch {
      errors[r.text.slice(0, 100)] = 1;
    }
  }
  return { setupMs, idle, ...figures, batchMs: Math.round(r.ms), replyMb: r.text ? +(r.text.length / 1e6).toFixed(1) : null, clientError: r.error, answered, errors, nodeAlive: node.proc.exitCode === null && node.proc.signalCode === null };
}

const wanted = process.argv.slice(2).length ? process.argv.slice(2) : Object.keys(SCENARIOS);
for (const name of wanted) {
  const dir = await mkdtemp(join(tmpdir(), 'cornice-abuse-'));
  nonce = 0;
  const node = await startNode(dir);
  try {
    const figures = await SCENARIOS[name](node);
    console.log(JSON.stringify({ attack: name, ...figures }));
    if (process.env.SHOW_GC) for (const l of node.lines) if (/Mark-Compact|Scavenge/.test(l) && Number(l.match(/, ([\d.]+) \/ [\d.]+ ms/)?.[1]) > Number(process.env.SHOW_GC)) console.log(l);
  } catch (e) {
    console.log(JSON.stringify({ attack: name, failed: e.message, nodeExit: node.proc.exitCode ?? node.proc.signalCode, stderr: node.stderr.slice(-300) }));
  } finally {
    await node.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
