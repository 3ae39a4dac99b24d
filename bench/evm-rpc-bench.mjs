#!/usr/bin/env node
// evm-rpc-bench.mjs — standalone throughput/latency benchmark for any EVM node
// that speaks standard Ethereum JSON-RPC over HTTP(S).
//
//   node evm-rpc-bench.mjs --url http://127.0.0.1:8545 --key 0x<funded key> [--quick]
//
// Only runtime dependency: ethers v6 (used for key handling, tx signing and ABI
// encoding; all RPC traffic goes through the small client below so that request
// concurrency, batching and timeouts are under our control).
//
// Phases (all on the node at --url; the chain id is read with eth_chainId):
//   seq   N value transfers from the funded key, one at a time, each waited to
//         its receipt (latency = eth_sendRawTransaction start -> receipt seen).
//   pipe  M pre-signed value transfers from S freshly funded senders
//         (consecutive nonces, interleaved), sent with up to --inflight requests
//         in flight (optionally as JSON-RPC batches), then waited until every
//         sender's mined nonce reaches its target; rate = accepted / (first send
//         -> last tx mined).
//   read  eth_call balanceOf() on a deployed ERC20, R calls with --read-inflight
//         in flight; then eth_getBalance, R calls.
//   erc20 deploy an ERC20 (latency reported), hand tokens to the S senders, then
//         E pre-signed token transfers pipelined exactly like `pipe`.
// Progress goes to stderr; the last line on stdout is one JSON object.
// Exit code: 0 ok, 1 fatal error (a JSON line with ok:false is still printed),
// 2 bad usage.

import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Wallet, Transaction, Interface, getAddress, hexlify, randomBytes, formatEther } from 'ethers';
import { TOKEN_BYTECODE } from './bench-token.mjs';
import { seededSenders } from './evm-senders.mjs';

const HARNESS_VERSION = '1.0.0';

// BenchToken.sol's bytecode (bench-token.mjs), shared with trace.mjs.
const TOKEN_ABI = [
  'constructor(uint256 supply)',
  'function balanceOf(address) view returns (uint256)',
  'function transfer(address to, uint256 value) returns (bool)',
  'function totalSupply() view returns (uint256)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
];
const tokenIface = new Interface(TOKEN_ABI);

// ---------------------------------------------------------------------------
// CLI
const USAGE = `usage: node evm-rpc-bench.mjs --url URL --key 0xPRIVKEY [options]

  --url URL            JSON-RPC endpoint (http:// or https://)            [required]
  --key 0x..           private key of a funded account (or env BENCH_KEY) [required]
  --quick              small run: seq 50, pipe 400, reads 1000, erc20 100
  --seq N              sequential transfers                    (default 300)
  --pipe M             pipelined transfers                     (default 2000)
  --senders S          funded senders for pipe/erc20           (default 10)
  --sender-seed SEED   derive the senders' keys from SEED (evm-senders.mjs) instead of random keys
  --prefunded          the senders already hold funds (genesis alloc): no funding txs, balances checked
  --inflight K         max requests in flight for pipe/erc20   (default 64)
  --batch B            send B raw txs per JSON-RPC batch request (default 0 = no batching)
  --ordered            per-sender ordered lanes: a sender's next tx is sent only after its
                       previous send returned (in flight <= min(inflight, senders))
  --reads R            eth_call and eth_getBalance calls each  (default 5000)
  --read-inflight K    max requests in flight for reads        (default 32)
  --warmup W           untimed calls before each read phase    (default 2000; --quick 500)
  --erc20 E            pipelined ERC20 transfers               (default 500)
  --phases LIST        comma list of seq,pipe,read,erc20       (default all)
  --legacy             force legacy (type 0) transactions
  --fee-mult X         maxFee = X*baseFee + tip (legacy: X*gasPrice) (default 3)
  --timeout-ms T       per-request timeout                     (default 30000)
  --mine-timeout-s T   max wait for txs to be mined per phase  (default 300)
  --poll-ms T          max receipt/nonce poll interval         (default 50)
  --stall-s T          give up a pipelined wait after T s without progress (default 60);
                       later tx phases are then skipped (the node is reported as stalled)
  --transport T        http (node:http keep-alive) | fetch     (default http)
  --pid P[,P2]         server PID(s): report their CPU seconds per phase (Linux /proc)
  --label NAME         free-form label copied into the JSON
  --out FILE           also append the JSON line to FILE
  --no-verify          skip fetching every receipt after pipelined phases
  --quiet              no progress on stderr
`;

function parseArgs(argv) {
  const o = {
    url: null, key: process.env.BENCH_KEY || null, quick: false,
    seq: null, pipe: null, senders: 10, inflight: 64, batch: 0, reads: null, readInflight: 32, warmup: null,
    erc20: null, phases: 'seq,pipe,read,erc20', legacy: false, feeMult: 3,
    timeoutMs: 30000, mineTimeoutS: 300, stallS: 60, pollMs: 50, transport: 'http', pid: null,
    label: null, out: null, verify: true, quiet: false, ordered: false,
    senderSeed: null, prefunded: false,
  };
  const num = (k, v) => { const n = Number(v); if (!Number.isFinite(n) || n < 0) usage(`bad value for ${k}: ${v}`); return n; };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => { if (i + 1 >= argv.length) usage(`missing value for ${a}`); return argv[++i]; };
    switch (a) {
      case '--url': o.url = next(); break;
      case '--key': o.key = next(); break;
      case '--quick': o.quick = true; break;
      case '--seq': o.seq = num(a, next()); break;
      case '--pipe': o.pipe = num(a, next()); break;
      case '--senders': o.senders = Math.max(1, num(a, next())); break;
      case '--inflight': o.inflight = Math.max(1, num(a, next())); break;
      case '--batch': o.batch = num(a, next()); break;
      case '--reads': o.reads = num(a, next()); break;
      case '--warmup': o.warmup = num(a, next()); break;
      case '--read-inflight': o.readInflight = Math.max(1, num(a, next())); break;
      case '--erc20': o.erc20 = num(a, next()); break;
      case '--phases': o.phases = next(); break;
      case '--legacy': o.legacy = true; break;
      case '--ordered': o.ordered = true; break;
      case '--sender-seed': o.senderSeed = next(); break;
      case '--prefunded': o.prefunded = true; break;
      case '--fee-mult': o.feeMult = num(a, next()); break;
      case '--timeout-ms': o.timeoutMs = num(a, next()); break;
      case '--mine-timeout-s': o.mineTimeoutS = num(a, next()); break;
      case '--stall-s': o.stallS = Math.max(1, num(a, next())); break;
      case '--poll-ms': o.pollMs = Math.max(1, num(a, next())); break;
      case '--transport': o.transport = next(); break;
      case '--pid': o.pid = next().split(',').map((s) => Number(s.trim())).filter((n) => n > 0); break;
      case '--label': o.label = next(); break;
      case '--out': o.out = next(); break;
      case '--no-verify': o.verify = false; break;
      case '--quiet': o.quiet = true; break;
      case '-h': case '--help': process.stdout.write(USAGE); process.exit(0); break;
      default: usage(`unknown argument: ${a}`);
    }
  }
  if (!o.url) usage('--url is required');
  if (!/^https?:\/\//.test(o.url)) usage('--url must start with http:// or https://');
  if (!o.key) usage('--key (or env BENCH_KEY) is required');
  if (!/^(0x)?[0-9a-fA-F]{64}$/.test(o.key)) usage('--key must be a 32-byte hex private key');
  if (!o.key.startsWith('0x')) o.key = '0x' + o.key;
  if (!['http', 'fetch'].includes(o.transport)) usage('--transport must be http or fetch');
  const d = o.quick ? { seq: 50, pipe: 400, reads: 1000, erc20: 100, warmup: 500 } : { seq: 300, pipe: 2000, reads: 5000, erc20: 500, warmup: 2000 };
  for (const k of Object.keys(d)) if (o[k] == null) o[k] = d[k];
  o.phaseSet = new Set(o.phases.split(',').map((s) => s.trim()).filter(Boolean));
  for (const p of o.phaseSet) if (!['seq', 'pipe', 'read', 'erc20'].includes(p)) usage(`unknown phase: ${p}`);
  if (o.prefunded && !o.senderSeed) usage('--prefunded needs --sender-seed (the funded senders\' keys)');
  return o;
}
function usage(msg) { process.stderr.write(`error: ${msg}\n\n${USAGE}`); process.exit(2); }

const opts = parseArgs(process.argv.slice(2));
const T0 = performance.now();
const now = () => performance.now();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
function log(...a) { if (!opts.quiet) process.stderr.write(`[${((now() - T0) / 1000).toFixed(1).padStart(6)}s] ${a.join(' ')}\n`); }

// ---------------------------------------------------------------------------
// Minimal JSON-RPC client
class RpcError extends Error {
  constructor(method, err) {
    super(`${method}: RPC error ${err?.code ?? '?'}: ${err?.message ?? JSON.stringify(err)}`);
    this.rpc = err; this.method = method;
  }
}

class Rpc {
  constructor(url, { timeoutMs, transport, maxSockets }) {
    this.url = new URL(url);
    this.timeoutMs = timeoutMs;
    this.transport = transport;
    this.mod = this.url.protocol === 'https:' ? https : http;
    this.agent = new this.mod.Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets });
    this.id = 1;
    this.requests = 0;
  }
  describeNetErr(e) {
    const code = e?.code || e?.cause?.code;
    if (code === 'ECONNREFUSED') return new Error(`cannot connect to ${this.url.href} (ECONNREFUSED) - is the node running?`);
    if (code === 'ECONNRESET') return new Error(`connection reset by ${this.url.href} (ECONNRESET)`);
    return e instanceof Error ? e : new Error(String(e));
  }
  postHttp(body) {
    return new Promise((resolve, reject) => {
      const req = this.mod.request(this.url, {
        method: 'POST', agent: this.agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      }, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('error', (e) => reject(this.describeNetErr(e)));
        res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString('utf8') }));
      });
      req.setTimeout(this.timeoutMs, () => req.destroy(new Error(`request timed out after ${this.timeoutMs} ms`)));
      req.on('error', (e) => reject(this.describeNetErr(e)));
      req.end(body);
    });
  }
  async postFetch(body) {
    try {
      const res = await fetch(this.url, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      return { status: res.status, text: await res.text() };
    } catch (e) {
      if (e?.name === 'TimeoutError') throw new Error(`request timed out after ${this.timeoutMs} ms`);
      throw this.describeNetErr(e);
    }
  }
  async post(payload) {
    const body = JSON.stringify(payload);
    this.requests++;
    const { status, text } = this.transport === 'fetch' ? await this.postFetch(body) : await this.postHttp(body);
    let json;
    try { json = JSON.parse(text); } catch {
      throw new Error(`HTTP ${status}: non-JSON response: ${text.slice(0, 200)}`);
    }
    return json;
  }
  async call(method, params = []) {
    const json = await this.post({ jsonrpc: '2.0', id: this.id++, method, params });
    if (json.error) throw new RpcError(method, json.error);
    if (!('result' in json)) throw new Error(`${method}: malformed response: ${JSON.stringify(json).slice(0, 200)}`);
    return json.result;
  }
  // Returns [{result}|{error}] in the order of `calls`.
  async batch(calls) {
    const first = this.id;
    const payload = calls.map(([method, params]) => ({ jsonrpc: '2.0', id: this.id++, method, params }));
    const json = await this.post(payload);
    if (!Array.isArray(json)) {
      const msg = json?.error ? `RPC error ${json.error.code}: ${json.error.message}` : JSON.stringify(json).slice(0, 200);
      throw new Error(`batch request rejected: ${msg}`);
    }
    const byId = new Map(json.map((r) => [r.id, r]));
    return calls.map(([method], i) => {
      const r = byId.get(first + i);
      if (!r) return { error: { message: 'missing from batch response' } };
      return r.error ? { error: r.error, method } : { result: r.result };
    });
  }
}

// ---------------------------------------------------------------------------
// Helpers
const big = (x) => BigInt(x);
function stats(arr) {
  if (!arr.length) return null;
  const s = Float64Array.from(arr).sort();
  const pct = (p) => s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
  const mean = s.reduce((a, b) => a + b, 0) / s.length;
  const r = (x) => Math.round(x * 100) / 100;
  return { n: s.length, mean: r(mean), p50: r(pct(50)), p95: r(pct(95)), p99: r(pct(99)), max: r(s[s.length - 1]), min: r(s[0]) };
}
const rate = (n, ms) => (ms > 0 ? Math.round((n / (ms / 1000)) * 10) / 10 : null);
const secs = (ms) => Math.round(ms) / 1000;

function procCpuSeconds(pids) {
  if (!pids?.length) return null;
  let ticks = 0;
  for (const pid of pids) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // fields after ')' start at field 3 (state); utime=14, stime=15, cutime=16, cstime=17
      ticks += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    } catch { return null; }
  }
  return ticks / 100; // USER_HZ is 100 on Linux
}
function cpuMark() {
  return { wall: now(), client: process.cpuUsage(), server: procCpuSeconds(opts.pid), load: os.loadavg()[0] };
}
function cpuSince(m) {
  const c = process.cpuUsage(m.client);
  const srv = procCpuSeconds(opts.pid);
  return {
    wallS: secs(now() - m.wall),
    clientCpuS: Math.round((c.user + c.system) / 1000) / 1000,
    serverCpuS: srv != null && m.server != null ? Math.round((srv - m.server) * 100) / 100 : null,
    loadavg1Start: Math.round(m.load * 100) / 100,
  };
}

async function pool(items, inflight, worker) {
  let idx = 0;
  const n = Math.min(inflight, items.length);
  await Promise.all(Array.from({ length: n }, async () => {
    for (;;) {
      const i = idx++;
      if (i >= items.length) return;
      await worker(items[i], i);
    }
  }));
}

function shortErr(e) {
  const m = e?.rpc?.message ?? e?.message ?? String(e);
  return m.length > 160 ? m.slice(0, 160) + '...' : m;
}
// Aggregate error messages: hex strings and numbers are replaced so that
// "nonce too high: expected 6 got 9" style messages collapse into one key.
function countErr(map, e) {
  let k = shortErr(e).replace(/0x[0-9a-fA-F]+/g, '0x…').replace(/\d+/g, 'N');
  if (!(k in map) && Object.keys(map).length >= 20) k = '(other errors)';
  map[k] = (map[k] || 0) + 1;
}

// ---------------------------------------------------------------------------
// Chain context
const rpc = new Rpc(opts.url, { timeoutMs: opts.timeoutMs, transport: opts.transport, maxSockets: Math.max(opts.inflight, opts.readInflight) + 8 });
const results = {
  harness: 'evm-rpc-bench', version: HARNESS_VERSION, ok: false, label: opts.label, url: opts.url,
  startedAt: new Date().toISOString(),
  env: { node: process.version, ethers: null, cpus: os.cpus().length, platform: `${os.platform()}-${os.arch()}`, transport: opts.transport },
  params: { seq: opts.seq, pipe: opts.pipe, senders: opts.senders, senderSeed: opts.senderSeed, prefunded: opts.prefunded, inflight: opts.inflight, batch: opts.batch, ordered: opts.ordered, reads: opts.reads, readInflight: opts.readInflight, warmup: opts.warmup, erc20: opts.erc20, phases: [...opts.phaseSet], feeMult: opts.feeMult, quick: opts.quick },
};
try { results.env.ethers = (await import('ethers')).version; } catch { /* ignore */ }

let chainId, fee, txType;
let chainStalled = null; // set when a pipelined phase could not get its txs mined
const main = new Wallet(opts.key);

async function detect() {
  chainId = big(await rpc.call('eth_chainId'));
  results.chainId = Number(chainId);
  results.clientVersion = await rpc.call('web3_clientVersion').catch(() => 'unknown (web3_clientVersion failed)');
  const latest = await rpc.call('eth_getBlockByNumber', ['latest', false]);
  if (!latest) throw new Error('eth_getBlockByNumber(latest) returned null');
  results.startBlock = Number(big(latest.number));
  results.blockGasLimit = Number(big(latest.gasLimit));
  const gasPrice = big(await rpc.call('eth_gasPrice'));
  const has1559 = latest.baseFeePerGas != null && !opts.legacy;
  const mult = (x) => (x * BigInt(Math.round(opts.feeMult * 1000))) / 1000n;
  if (has1559) {
    const baseFee = big(latest.baseFeePerGas);
    let tip;
    try { tip = big(await rpc.call('eth_maxPriorityFeePerGas')); } catch { tip = 1_000_000_000n; }
    let maxFee = mult(baseFee) + tip;
    if (maxFee < gasPrice) maxFee = gasPrice;
    txType = 2;
    fee = { maxFeePerGas: maxFee, maxPriorityFeePerGas: tip };
    results.fees = { type: 2, baseFee: baseFee.toString(), tip: tip.toString(), maxFeePerGas: maxFee.toString(), gasPrice: gasPrice.toString() };
  } else {
    txType = 0;
    const gp = gasPrice === 0n ? 0n : mult(gasPrice);
    fee = { gasPrice: gp };
    results.fees = { type: 0, gasPrice: gp.toString(), nodeGasPrice: gasPrice.toString(), reason: opts.legacy ? '--legacy' : 'no baseFeePerGas in latest block' };
  }
  results.txType = txType;
  results.funder = main.address;
  results.funderBalanceEth = formatEther(big(await rpc.call('eth_getBalance', [main.address, 'latest'])));
  log(`connected: ${results.clientVersion} chainId=${chainId} block=${results.startBlock} gasLimit=${results.blockGasLimit} txType=${txType} funder=${main.address} balance=${results.funderBalanceEth} ETH`);
}
const maxFeePer = () => (txType === 2 ? fee.maxFeePerGas : fee.gasPrice);

function sign(signingKey, { nonce, to, value = 0n, data = '0x', gasLimit }) {
  const fields = { type: txType, chainId, nonce, to, value, data, gasLimit, ...fee };
  const tx = Transaction.from(fields);
  tx.signature = signingKey.sign(tx.unsignedHash);
  return { raw: tx.serialized, hash: tx.hash, nonce };
}

async function getNonce(addr, tag = 'pending') { return Number(big(await rpc.call('eth_getTransactionCount', [addr, tag]))); }

// A single tx (seq phase, deploy) is given min(--mine-timeout-s, --stall-s) to be mined.
const singleDeadline = () => now() + Math.min(opts.mineTimeoutS, opts.stallS) * 1000;
async function waitReceipt(hash, deadline) {
  const t0 = now();
  let delay = 0;
  for (;;) {
    const r = await rpc.call('eth_getTransactionReceipt', [hash]);
    if (r?.blockNumber) return r;
    if (now() > deadline) throw new Error(`tx ${hash} not mined within ${Math.round((deadline - t0) / 1000)}s`);
    if (delay) await sleep(delay);
    delay = delay === 0 ? 1 : Math.min(delay * 2, opts.pollMs);
  }
}

// Recipient addresses for value/token transfers: fixed per run, 64 distinct.
const recipients = Array.from({ length: 64 }, () => getAddress(hexlify(randomBytes(20))));

// ---------------------------------------------------------------------------
// Generic pipelined sender: txs = [{raw, hash, sender, nonce}], in send order.
// Sends with `inflight` concurrency (or batches), then waits until each
// sender's 'latest' nonce reaches the last accepted contiguous nonce.
async function pipelined(name, txs, senderBase, { ordered = opts.ordered, batch = opts.batch } = {}) {
  const acc = new Array(txs.length).fill(false);
  const sendErrors = {};
  const sendLat = [];
  const chunk = (idxList) => {
    const b = Math.max(1, batch);
    const out = [];
    for (let i = 0; i < idxList.length; i += b) out.push(idxList.slice(i, i + b));
    return out;
  };
  // Default: one global queue in send order, up to --inflight requests at once,
  // so a sender's nonces may reach the node out of order (a real node must cope).
  // --ordered: one lane per sender, each lane sends its nonces strictly in order
  // (next request only after the previous one returned); lanes run in parallel,
  // so at most min(--inflight, senders) requests are in flight.
  let units, lanes = null;
  if (ordered) {
    const bySenderIdx = new Map();
    txs.forEach((t, i) => { if (!bySenderIdx.has(t.sender)) bySenderIdx.set(t.sender, []); bySenderIdx.get(t.sender).push(i); });
    lanes = [...bySenderIdx.values()].map((l) => chunk(l.sort((a, b) => txs[a].nonce - txs[b].nonce)));
    units = lanes.flat();
  } else units = chunk(txs.map((_, i) => i));

  const mark = cpuMark();
  const tStart = now();
  let fatal = null;
  const sendUnit = async (idxs) => {
    if (fatal) return;
    const t = now();
    try {
      if (batch <= 1) {
        const i = idxs[0];
        const h = await rpc.call('eth_sendRawTransaction', [txs[i].raw]);
        if (typeof h === 'string' && h.toLowerCase() !== txs[i].hash.toLowerCase()) countErr(sendErrors, new Error(`node returned hash ${h} != local ${txs[i].hash}`));
        acc[i] = true;
      } else {
        const res = await rpc.batch(idxs.map((i) => ['eth_sendRawTransaction', [txs[i].raw]]));
        res.forEach((r, k) => { if (r.error) countErr(sendErrors, { rpc: r.error }); else acc[idxs[k]] = true; });
      }
    } catch (e) {
      countErr(sendErrors, e);
      if (/ECONNREFUSED/.test(e.message)) fatal = e;
    }
    sendLat.push(now() - t);
  };
  if (lanes) await pool(lanes, opts.inflight, async (lane) => { for (const u of lane) await sendUnit(u); });
  else await pool(units, opts.inflight, sendUnit);
  if (fatal) throw fatal;
  const tSent = now();
  const accepted = acc.filter(Boolean).length;
  log(`${name}: ${accepted}/${txs.length} accepted in ${secs(tSent - tStart)}s (${rate(accepted, tSent - tStart)} tx/s submit)${Object.keys(sendErrors).length ? ' errors: ' + JSON.stringify(sendErrors) : ''}`);

  // Target nonce per sender: first rejected nonce (later ones can never be mined).
  const target = new Map();
  const bySender = new Map();
  txs.forEach((t, i) => { if (!bySender.has(t.sender)) bySender.set(t.sender, []); bySender.get(t.sender).push(i); });
  for (const [s, idxs] of bySender) {
    idxs.sort((a, b) => txs[a].nonce - txs[b].nonce);
    let tgt = senderBase.get(s);
    for (const i of idxs) { if (!acc[i] || txs[i].nonce !== tgt) break; tgt++; }
    target.set(s, tgt);
  }
  const expectedMined = [...target].reduce((a, [s, t]) => a + (t - senderBase.get(s)), 0);
  const deadline = now() + opts.mineTimeoutS * 1000;
  const pending = new Set([...target.keys()].filter((s) => target.get(s) > senderBase.get(s)));
  const mined = new Map([...target.keys()].map((s) => [s, senderBase.get(s)]));
  let delay = 0;
  let timedOut = false, stalled = false;
  let lastSum = -1, lastProgress = now();
  while (pending.size) {
    await Promise.all([...pending].map(async (s) => {
      const n = await getNonce(s, 'latest');
      mined.set(s, n);
      if (n >= target.get(s)) pending.delete(s);
    }));
    if (!pending.size) break;
    const sum = [...mined.values()].reduce((a, b) => a + b, 0);
    if (sum !== lastSum) { lastSum = sum; lastProgress = now(); }
    if (now() > deadline) { timedOut = true; break; }
    if (now() - lastProgress > opts.stallS * 1000) { timedOut = stalled = true; break; }
    if (delay) await sleep(delay);
    delay = delay === 0 ? 1 : Math.min(delay * 2, opts.pollMs);
  }
  const tMined = now();
  const minedCount = [...mined].reduce((a, [s, n]) => a + Math.min(n, target.get(s)) - senderBase.get(s), 0);
  const cpu = cpuSince(mark);
  log(`${name}: ${minedCount}/${expectedMined} mined ${secs(tMined - tStart)}s after first send => ${rate(minedCount, tMined - tStart)} tx/s${stalled ? ` (STALLED: no progress for ${opts.stallS}s)` : timedOut ? ' (TIMED OUT)' : ''}`);
  if (timedOut) chainStalled = `${name}: only ${minedCount}/${expectedMined} txs mined (${stalled ? `no progress for ${opts.stallS}s` : `timeout ${opts.mineTimeoutS}s`})`;

  const out = {
    sent: txs.length, accepted, rejected: txs.length - accepted, mined: minedCount, timedOut, stalled,
    submitSeconds: secs(tSent - tStart), submitTxPerSec: rate(accepted, tSent - tStart),
    totalSeconds: secs(tMined - tStart), txPerSec: rate(minedCount, tMined - tStart),
    drainSeconds: secs(tMined - tSent),
    requestLatencyMs: stats(sendLat), requests: units.length,
    sendErrors, cpu,
  };
  if (opts.verify && minedCount) {
    const blocks = new Map();
    let ok = 0, failed = 0, missing = 0;
    const toCheck = txs.filter((t, i) => acc[i] && t.nonce < target.get(t.sender));
    await pool(toCheck, Math.min(opts.inflight, 32), async (t) => {
      try {
        const r = await rpc.call('eth_getTransactionReceipt', [t.hash]);
        if (!r) { missing++; return; }
        if (r.status === '0x1') ok++; else failed++;
        blocks.set(r.blockNumber, (blocks.get(r.blockNumber) || 0) + 1);
      } catch { missing++; }
    });
    const perBlock = [...blocks.values()];
    out.verify = { ok, failed, missing, blocks: blocks.size, maxTxPerBlock: perBlock.length ? Math.max(...perBlock) : 0 };
    if (failed || missing) log(`${name}: WARNING verify: ${failed} failed receipts, ${missing} missing`);
  }
  return out;
}

// ---------------------------------------------------------------------------
// Phases
async function phaseSeq() {
  const N = opts.seq;
  const base = await getNonce(main.address);
  const txs = [];
  const tSign = now();
  for (let i = 0; i < N; i++) txs.push(sign(main.signingKey, { nonce: base + i, to: recipients[i % recipients.length], value: 1000n, gasLimit: 21000n }));
  const signMs = now() - tSign;
  const lat = [], sendRtt = [];
  let failed = 0;
  const blocks = new Set();
  const mark = cpuMark();
  const t0 = now();
  for (let i = 0; i < N; i++) {
    const ts = now();
    const h = await rpc.call('eth_sendRawTransaction', [txs[i].raw]);
    const ta = now();
    if (typeof h === 'string' && h.toLowerCase() !== txs[i].hash.toLowerCase()) throw new Error(`node returned tx hash ${h}, expected ${txs[i].hash}`);
    const r = await waitReceipt(txs[i].hash, singleDeadline());
    const tr = now();
    if (r.status !== '0x1') failed++;
    blocks.add(r.blockNumber);
    sendRtt.push(ta - ts);
    lat.push(tr - ts);
  }
  const total = now() - t0;
  const res = {
    n: N, seconds: secs(total), txPerSec: rate(N, total), latencyMs: stats(lat), sendRttMs: stats(sendRtt),
    failed, blocks: blocks.size, signMsPerTx: Math.round((signMs / Math.max(1, N)) * 1000) / 1000, cpu: cpuSince(mark),
  };
  log(`seq: ${N} tx in ${res.seconds}s => ${res.txPerSec} tx/s, latency p50 ${res.latencyMs?.p50} ms p95 ${res.latencyMs?.p95} ms`);
  return res;
}

let senders = null; // [{wallet, address}]
async function fundSenders(txPerSender) {
  senders = opts.senderSeed ? seededSenders(opts.senderSeed, opts.senders) : Array.from({ length: opts.senders }, () => new Wallet(hexlify(randomBytes(32))));
  const perSender = (txPerSender.transfers * (21000n * maxFeePer() + 1000n) + txPerSender.erc20 * 150000n * maxFeePer()) * 2n + 10n ** 15n;
  if (opts.prefunded) {
    const balances = await Promise.all(senders.map(async (w) => big(await rpc.call('eth_getBalance', [w.address, 'latest']))));
    const poor = senders.filter((_, i) => balances[i] < perSender);
    if (poor.length) throw new Error(`--prefunded: ${poor.length} senders hold less than ${formatEther(perSender)} ETH (first ${poor[0].address})`);
    log(`${senders.length} prefunded senders`);
    return { perSenderEth: formatEther(perSender), seconds: 0, prefunded: true };
  }
  const need = perSender * BigInt(senders.length);
  const bal = big(await rpc.call('eth_getBalance', [main.address, 'latest']));
  if (bal < need + 10n ** 15n) throw new Error(`funder ${main.address} has ${formatEther(bal)} ETH, needs about ${formatEther(need)} ETH to fund ${senders.length} senders (lower --pipe/--erc20/--fee-mult)`);
  const base = await getNonce(main.address);
  const txs = senders.map((w, i) => ({ ...sign(main.signingKey, { nonce: base + i, to: w.address, value: perSender, gasLimit: 21000n }), sender: main.address }));
  // Setup txs all come from one account: always sent one by one in nonce order
  // (Hardhat's automine rejects nonce gaps, and Hardhat 2 runs the items of a
  // JSON-RPC batch concurrently), and not part of any reported number.
  const r = await pipelined('fund', txs, new Map([[main.address, base]]), { ordered: true, batch: 0 });
  if (r.mined !== senders.length) throw new Error(`funding senders failed: ${JSON.stringify(r.sendErrors)}`);
  log(`funded ${senders.length} senders with ${formatEther(perSender)} ETH each`);
  return { perSenderEth: formatEther(perSender), seconds: r.totalSeconds };
}

async function phasePipe() {
  const M = opts.pipe, S = senders.length;
  const base = new Map();
  await Promise.all(senders.map(async (w) => base.set(w.address, await getNonce(w.address))));
  const txs = [];
  const tSign = now();
  const per = Math.ceil(M / S);
  for (let k = 0; k < per; k++) for (let s = 0; s < S && txs.length < M; s++) {
    const w = senders[s];
    txs.push({ ...sign(w.signingKey, { nonce: base.get(w.address) + k, to: recipients[(k * S + s) % recipients.length], value: 1000n, gasLimit: 21000n }), sender: w.address });
  }
  const signMs = now() - tSign;
  log(`pipe: pre-signed ${txs.length} txs in ${secs(signMs)}s; sending with ${opts.inflight} in flight${opts.batch > 1 ? `, batches of ${opts.batch}` : ''}${opts.ordered ? ', ordered per-sender lanes' : ''}`);
  const r = await pipelined('pipe', txs, base);
  r.signSeconds = secs(signMs);
  return r;
}

let token = null;
async function deployToken() {
  const supply = 10n ** 30n;
  const data = TOKEN_BYTECODE + tokenIface.encodeDeploy([supply]).slice(2);
  let gasLimit = 1_500_000n;
  try {
    const est = big(await rpc.call('eth_estimateGas', [{ from: main.address, data }]));
    gasLimit = (est * 13n) / 10n;
  } catch (e) { log(`deploy: eth_estimateGas failed (${shortErr(e)}), using ${gasLimit}`); }
  const nonce = await getNonce(main.address);
  const tx = sign(main.signingKey, { nonce, to: null, data, gasLimit });
  const t0 = now();
  await rpc.call('eth_sendRawTransaction', [tx.raw]);
  const r = await waitReceipt(tx.hash, singleDeadline());
  const ms = now() - t0;
  if (r.status !== '0x1' || !r.contractAddress) throw new Error(`token deploy failed: status=${r.status} contractAddress=${r.contractAddress}`);
  token = getAddress(r.contractAddress);
  const code = await rpc.call('eth_getCode', [token, 'latest']);
  if (!code || code === '0x') throw new Error(`no code at deployed token ${token}`);
  const bal = tokenIface.decodeFunctionResult('balanceOf', await rpc.call('eth_call', [{ to: token, data: tokenIface.encodeFunctionData('balanceOf', [main.address]) }, 'latest']))[0];
  if (bal !== supply) throw new Error(`token balanceOf(deployer) = ${bal}, expected ${supply}`);
  log(`deploy: token at ${token} in ${Math.round(ms)} ms, gasUsed ${big(r.gasUsed)}`);
  return { address: token, latencyMs: Math.round(ms * 100) / 100, gasUsed: Number(big(r.gasUsed)), codeBytes: (code.length - 2) / 2 };
}

async function readLoad(name, R, makeCall, check) {
  // Untimed warm-up (JIT, sockets) so that short phases are not dominated by start-up.
  const W = Math.min(opts.warmup, R);
  if (W) await pool(Array.from({ length: W }, (_, i) => i), opts.readInflight, async (i) => { const [m, p] = makeCall(i); await rpc.call(m, p).catch(() => {}); });
  const lat = [];
  const errors = {};
  let ok = 0;
  const mark = cpuMark();
  const t0 = now();
  let fatal = null;
  await pool(Array.from({ length: R }, (_, i) => i), opts.readInflight, async (i) => {
    if (fatal) return;
    const [method, params] = makeCall(i);
    const t = now();
    try {
      const res = await rpc.call(method, params);
      if (check(res)) ok++; else countErr(errors, new Error(`unexpected result ${String(res).slice(0, 80)}`));
    } catch (e) {
      countErr(errors, e);
      if (/ECONNREFUSED/.test(e.message)) fatal = e;
    }
    lat.push(now() - t);
  });
  if (fatal) throw fatal;
  const total = now() - t0;
  const r = { calls: R, ok, seconds: secs(total), callsPerSec: rate(ok, total), latencyMs: stats(lat), errors, cpu: cpuSince(mark) };
  log(`${name}: ${ok}/${R} ok in ${r.seconds}s => ${r.callsPerSec} calls/s, p50 ${r.latencyMs?.p50} ms p95 ${r.latencyMs?.p95} ms`);
  return r;
}

async function phaseRead() {
  const holders = [main.address, ...(senders || []).map((w) => w.address), ...recipients];
  const calldata = holders.map((a) => tokenIface.encodeFunctionData('balanceOf', [a]));
  const is32 = (r) => typeof r === 'string' && r.length === 66;
  const isQty = (r) => typeof r === 'string' && /^0x[0-9a-fA-F]+$/.test(r);
  const ethCall = await readLoad('read eth_call', opts.reads, (i) => ['eth_call', [{ to: token, data: calldata[i % calldata.length] }, 'latest']], is32);
  const getBalance = await readLoad('read eth_getBalance', opts.reads, (i) => ['eth_getBalance', [holders[i % holders.length], 'latest']], isQty);
  return { ethCall, getBalance };
}

async function phaseErc20() {
  const S = senders.length, E = opts.erc20;
  const per = Math.ceil(E / S);
  // Give every sender tokens (setup, not timed in the result).
  const mainBase = await getNonce(main.address);
  let gas = 100000n;
  try {
    const est = big(await rpc.call('eth_estimateGas', [{ from: main.address, to: token, data: tokenIface.encodeFunctionData('transfer', [getAddress(hexlify(randomBytes(20))), 1n]) }]));
    gas = (est * 15n) / 10n;
  } catch (e) { log(`erc20: eth_estimateGas failed (${shortErr(e)}), using ${gas}`); }
  const seed = senders.map((w, i) => ({
    ...sign(main.signingKey, { nonce: mainBase + i, to: token, data: tokenIface.encodeFunctionData('transfer', [w.address, 10n ** 24n]), gasLimit: gas }),
    sender: main.address,
  }));
  const sr = await pipelined('erc20 seed', seed, new Map([[main.address, mainBase]]), { ordered: true, batch: 0 });
  if (sr.mined !== S || (sr.verify && sr.verify.ok !== S)) throw new Error(`seeding token balances failed: ${JSON.stringify(sr)}`);
  const base = new Map();
  await Promise.all(senders.map(async (w) => base.set(w.address, await getNonce(w.address))));
  const txs = [];
  for (let k = 0; k < per; k++) for (let s = 0; s < S && txs.length < E; s++) {
    const w = senders[s];
    const data = tokenIface.encodeFunctionData('transfer', [recipients[(k * S + s) % recipients.length], 1n + BigInt(k)]);
    txs.push({ ...sign(w.signingKey, { nonce: base.get(w.address) + k, to: token, data, gasLimit: gas }), sender: w.address });
  }
  log(`erc20: pre-signed ${txs.length} token transfers (gasLimit ${gas})`);
  const r = await pipelined('erc20', txs, base);
  r.gasLimit = Number(gas);
  return r;
}

// ---------------------------------------------------------------------------
let watchdog;
async function mainFn() {
  const P = opts.phaseSet;
  results.phasesRun = [];
  await detect();
  const markAll = cpuMark();
  if (P.has('seq')) { results.seq = await phaseSeq(); results.phasesRun.push('seq'); }
  if (P.has('pipe') || P.has('erc20')) {
    const transfers = BigInt(P.has('pipe') ? Math.ceil(opts.pipe / opts.senders) : 0);
    const erc20 = BigInt(P.has('erc20') ? Math.ceil(opts.erc20 / opts.senders) : 0);
    results.funding = await fundSenders({ transfers, erc20 });
  }
  if (P.has('pipe')) { results.pipe = await phasePipe(); results.phasesRun.push('pipe'); }
  const skip = (what) => { results.skipped = results.skipped || {}; results.skipped[what] = `skipped: ${chainStalled}`; log(`${what}: SKIPPED because ${chainStalled}`); };
  if (P.has('read') || P.has('erc20')) {
    if (chainStalled) skip('deploy');
    else results.deploy = await deployToken();
  }
  if (P.has('read')) {
    if (chainStalled) skip('read');
    else { results.read = await phaseRead(); results.phasesRun.push('read'); }
  }
  if (P.has('erc20')) {
    if (chainStalled) skip('erc20');
    else { results.erc20 = await phaseErc20(); results.phasesRun.push('erc20'); }
  }
  if (chainStalled) results.stalled = chainStalled;
  results.total = cpuSince(markAll);
  results.rpcRequests = rpc.requests;
  results.ok = true;
}

function summary() {
  const s = {
    seqTxPerSec: results.seq?.txPerSec ?? null,
    seqP50Ms: results.seq?.latencyMs?.p50 ?? null,
    seqP95Ms: results.seq?.latencyMs?.p95 ?? null,
    pipeTxPerSec: results.pipe?.txPerSec ?? null,
    ethCallPerSec: results.read?.ethCall?.callsPerSec ?? null,
    getBalancePerSec: results.read?.getBalance?.callsPerSec ?? null,
    deployMs: results.deploy?.latencyMs ?? null,
    erc20TxPerSec: results.erc20?.txPerSec ?? null,
  };
  return s;
}

function finish(code) {
  clearTimeout(watchdog);
  results.finishedAt = new Date().toISOString();
  results.summary = summary();
  const line = JSON.stringify(results);
  if (opts.out) { try { fs.appendFileSync(opts.out, line + '\n'); } catch (e) { process.stderr.write(`cannot write --out: ${e.message}\n`); } }
  process.stdout.write(line + '\n');
  rpc.agent.destroy();
  process.exitCode = code;
}

// Global watchdog: the whole run may not exceed mine-timeout * 4 + 10 min.
watchdog = setTimeout(() => {
  results.error = 'global watchdog expired';
  log('FATAL: global watchdog expired');
  finish(1);
  process.exit(1);
}, (opts.mineTimeoutS * 4 + 600) * 1000);
watchdog.unref();

try {
  await mainFn();
  log(`done: ${JSON.stringify(results.summary = summary())}`);
  finish(0);
} catch (e) {
  results.error = shortErr(e);
  log(`FATAL: ${e?.stack || e}`);
  finish(1);
}
