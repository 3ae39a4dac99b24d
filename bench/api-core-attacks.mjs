// Issue 32, core points: GET /ext/health latency (p50/p99, each probe on a new connection, 2 s
// timeout counted as a failure) and the node's RSS (peak) without and during each attack, against a
// node started with `npm start`'s flags. One JSON line per attack and phase.
//
//   node bench/api-core-attacks.mjs [attack ...]     (default: all)
//   CORNICE_BIN=/other/core/bin/cornice.js node bench/api-core-attacks.mjs   (measure another build)
//
// Attacks: idle-ws (1,024 idle WebSockets), idle-tcp (1,024 idle TCP sockets, reconnecting when
// closed), noread-http (8 clients each asking a ~9 MB reply and never reading; measured once the
// replies are built), memory-profile (5 concurrent
// admin.memoryProfile), deep-json (1 MiB bodies of nested arrays, back to back), alias (the
// hijack and 10,000 aliases), keystore (a guesser's wrong passwords, then the owner's login).
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { request, get } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';

const REPO = fileURLToPath(new URL('../', import.meta.url));
const BIN = process.env.CORNICE_BIN ?? join(REPO, 'core/bin/cornice.js');
const NPM_START = [
  '--network-id=local',
  `--staking-tls-cert-file=${REPO}core/fixtures/staking/local/staker1.crt`,
  `--staking-tls-key-file=${REPO}core/fixtures/staking/local/staker1.key`,
  '--sybil-protection-enabled=false',
];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const rssMb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;

async function startNode(extra) {
  const dir = await mkdtemp(join(tmpdir(), 'cornice-attack-'));
  const proc = spawn(process.execPath, [BIN, ...NPM_START, '--http-port=0', '--staking-port=0', '--db-type=memory', `--data-dir=${dir}`, ...extra], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let buf = '';
  const url = await new Promise((resolve, reject) => {
    proc.stdout.on('data', (d) => {
      buf += d;
      const m = /"msg":"node started".*?"http":"([^"]+)"/.exec(buf);
      if (m) resolve(m[1]);
    });
    proc.once('exit', (c) => reject(new Error(`node exited ${c}`)));
  });
  proc.stdout.resume();
  // Let the chains come up and the heap settle.
  await sleep(3000);
  return {
    proc,
    url,
    port: Number(new URL(url).port),
    stop: async () => {
      proc.kill('SIGKILL');
      await new Promise((r) => proc.once('exit', r));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function post(url, body, { agent = false, timeoutMs = 10_000 } = {}) {
  return new Promise((resolve) => {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) } }, (res) => {
      let out = '';
      res.on('data', (d) => (out += d));
      res.on('end', () => {
        try {
          resolve(JSON.parse(out));
        } catch {
          resolve({ status: res.statusCode, text: out.slice(0, 200) });
        }
      });
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error('timeout')));
    req.on('error', (e) => resolve({ error: { message: e.message } }));
    req.end(text);
  });
}

/** One GET /ext/health on a new connection: ms, or Infinity when it failed or took over 2 s. */
function probe(port) {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const req = get({ host: '127.0.0.1', port, path: '/ext/health', agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(performance.now() - t0));
    });
    req.setTimeout(2000, () => req.destroy());
    req.on('error', () => resolve(Infinity));
  });
}

/** Probes health every 50 ms and samples RSS every 100 ms for `ms`. */
async function measure(node, ms) {
  const lat = [];
  let peak = rssMb(node.proc.pid);
  const base = peak;
  const sampler = setInterval(() => {
    try {
      peak = Math.max(peak, rssMb(node.proc.pid));
    } catch {}
  }, 100);
  const end = performance.now() + ms;
  while (performance.now() < end) {
    lat.push(await probe(node.port));
    await sleep(50);
  }
  clearInterval(sampler);
  lat.sort((a, b) => a - b);
  const pct = (p) => lat[Math.min(lat.length - 1, Math.floor((p / 100) * lat.length))];
  const r = (x) => (Number.isFinite(x) ? Math.round(x * 10) / 10 : 'failed');
  return { healthP50Ms: r(pct(50)), healthP99Ms: r(pct(99)), healthFailed: lat.filter((x) => !Number.isFinite(x)).length, probes: lat.length, rssStartMb: Math.round(base), rssPeakMb: Math.round(peak) };
}

const report = (o) => console.log(JSON.stringify(o));

const ATTACKS = {
  'idle-ws': { flags: [], async run(node) {
    const socks = [];
    for (let i = 0; i < 1024; i++) {
      const ws = new WebSocket(`ws://127.0.0.1:${node.port}/ext/bc/X/pubsub`);
      ws.on('error', () => undefined);
      socks.push(ws);
      if (i % 64 === 63) await sleep(20);
    }
    await sleep(1000);
    return { during: () => undefined, stop: () => socks.forEach((w) => w.terminate()), detail: () => ({ open: socks.filter((w) => w.readyState === 1).length }) };
  } },
  'idle-tcp': { flags: [], async run(node) {
    let stopped = false;
    const open = new Set();
    const one = () => {
      if (stopped) return;
      const s = connect(node.port, '127.0.0.1');
      open.add(s);
      s.on('error', () => undefined);
      s.on('close', () => {
        open.delete(s);
        setTimeout(one, 10); // reconnect
      });
    };
    for (let i = 0; i < 1024; i++) one();
    await sleep(1000);
    return { stop: () => { stopped = true; for (const s of open) s.destroy(); }, detail: () => ({ open: open.size }) };
  } },
  'noread-http': { flags: ['--http-max-batch-size=10000', '--http-max-body-bytes=2097152'], settleMs: 25_000, async run(node) {
    // 8 clients each ask ~9 MB (10,000 validator lists; more than the kernel buffers for a socket)
    // and never read. Building the replies takes ~2 s of CPU each (the batch's cost): the phase
    // measured is after that, while the replies wait for their readers.
    const batch = JSON.stringify(Array.from({ length: 10_000 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'platform.getCurrentValidators' })));
    const req = `POST /ext/P HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(batch)}\r\n\r\n${batch}`;
    const clients = [];
    for (let i = 0; i < 8; i++) {
      const s = connect(node.port, '127.0.0.1');
      const c = { s, got: 0, ended: false };
      s.on('error', () => (c.ended = true));
      s.on('close', () => (c.ended = true));
      s.on('data', (d) => (c.got += d.length));
      s.pause(); // never reads
      s.write(req);
      clients.push(c);
    }
    return {
      stop: async () => {
        for (const c of clients) c.s.resume();
        await sleep(2000);
        for (const c of clients) c.s.destroy();
      },
      after: () => ({ clients: 8, replyBytesEach: 9e6, cutOffByServer: clients.filter((c) => c.ended && c.got < 8.5e6).length, bytesReadAfterResuming: clients.map((c) => c.got) }),
    };
  } },
  'memory-profile': { flags: [], async run(node) {
    const calls = Array.from({ length: 5 }, (_, i) => post(`${node.url}/ext/admin`, { jsonrpc: '2.0', id: i, method: 'admin.memoryProfile', params: { fileName: `m${i}.prof` } }, { timeoutMs: 120_000 }));
    const answers = [];
    calls.forEach((c) => c.then((a) => answers.push(a.result ? 'ok' : a.error?.message?.slice(0, 60))));
    return { stop: async () => void (await Promise.all(calls)), after: () => ({ answers }) };
  } },
  'deep-json': { flags: [], async run(node) {
    const d = 500_000;
    const body = `{"jsonrpc":"2.0","id":1,"method":"admin.alias","params":${'['.repeat(d)}${']'.repeat(d)}}`;
    let stopped = false;
    const answers = new Map();
    const loop = async () => {
      while (!stopped) {
        const a = await post(`${node.url}/ext/admin`, body);
        const k = a.error ? `${a.error.code} ${a.error.message.slice(0, 50)}` : String(a.status);
        answers.set(k, (answers.get(k) ?? 0) + 1);
      }
    };
    const loops = [loop(), loop()];
    return { stop: async () => { stopped = true; await Promise.all(loops); }, detail: () => ({ answers: Object.fromEntries(answers) }) };
  } },
  alias: { flags: [], async run(node) {
    const admin = (method, params) => post(`${node.url}/ext/admin`, { jsonrpc: '2.0', id: 1, method, params });
    const hijack = await admin('admin.alias', { endpoint: 'admin', alias: 'bc' });
    const c = await post(`${node.url}/ext/bc/C/rpc`, { jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] });
    let added = 0;
    let refusal;
    for (let i = 0; i < 10_000; i++) {
      const r = await admin('admin.alias', { endpoint: 'admin', alias: `a${i}` });
      if (r.result) added++;
      else {
        refusal = r.error?.message;
        break;
      }
    }
    return { stop: () => undefined, detail: () => ({ hijack: hijack.result ? 'accepted' : hijack.error?.message, cChainAfter: c.result ?? c.error?.message, added, refusal }) };
  } },
  keystore: { flags: [], async run(node) {
    const { Agent } = await import('node:http');
    const guesser = new Agent({ keepAlive: true, maxSockets: 1 });
    const ks = (agent, method, params) => post(`${node.url}/ext/keystore`, { jsonrpc: '2.0', id: 1, method, params }, { agent });
    const pw = 'Corn1ce-owner-Pass!';
    await ks(false, 'keystore.createUser', { username: 'owner', password: pw });
    for (let i = 0; i < 8; i++) await ks(guesser, 'keystore.exportUser', { username: 'owner', password: `Guess-${i}-Pass!` });
    const owner = await ks(false, 'keystore.exportUser', { username: 'owner', password: pw });
    const list = await ks(false, 'keystore.listUsers', {});
    const time = async (username) => {
      const t0 = performance.now();
      for (let i = 0; i < 4; i++) await ks(false, 'keystore.exportUser', { username, password: `Other-${i}-Pass!x` });
      return Math.round((performance.now() - t0) / 4);
    };
    await ks(false, 'keystore.createUser', { username: 'timed', password: pw });
    const existingMs = await time('timed');
    const missingMs = await time('nobody');
    guesser.destroy();
    return { stop: () => undefined, detail: () => ({ ownerAfterGuesses: owner.result ? 'logged in' : owner.error?.message, listUsers: list.result ?? list.error?.message, wrongPasswordMs: existingMs, missingUserMs: missingMs }) };
  } },
};

const chosen = process.argv.slice(2).length ? process.argv.slice(2) : Object.keys(ATTACKS);
for (const name of chosen) {
  const attack = ATTACKS[name];
  const node = await startNode(attack.flags);
  try {
    report({ attack: name, phase: 'without', bin: BIN, ...(await measure(node, 3000)) });
    // RSS peak over the whole attack (its set-up included), beside the measured window's.
    let attackPeak = 0;
    const sampler = setInterval(() => {
      try {
        attackPeak = Math.max(attackPeak, rssMb(node.proc.pid));
      } catch {}
    }, 100);
    const a = await attack.run(node);
    if (attack.settleMs) await sleep(attack.settleMs);
    const m = await measure(node, 8000);
    const detail = a.detail?.() ?? {};
    await a.stop?.();
    clearInterval(sampler);
    report({ attack: name, phase: 'during', ...m, rssAttackPeakMb: Math.round(attackPeak), ...detail, ...(a.after?.() ?? {}) });
  } finally {
    await node.stop();
  }
}
