// A hostile peer against one real node (issue 31, point 4): what 60 KB of GetAncestors from a peer
// with a fresh self-signed certificate costs the node.
//
// Starts one node as `npm start` does (local network, staker1, sybil protection off) on free ports
// with a temporary data dir, connects to its staking port with a freshly generated certificate, does
// the Version handshake, asks each of P, X and C for its accepted frontier, then writes 60 KB of
// GetAncestors (for those frontiers, round-robin) at once and reads for 25 s. Reports the bytes of
// replies received, the node's RSS (before and highest during) and CPU seconds (user + system, from
// /proc) over the attack, and the warn lines the node logged.
//
// First it gives the X-Chain some history: `--fanout` outputs made by fan-out txs of 150 outputs,
// one ~7 KB block each.
//
// `--spread` sends the requests evenly over the run instead of all at once (a patient attacker: the
// request-rate, busy-time and reply-byte budgets then bound it rather than requests in progress).
// `--legacy` sends the Version of before signed IPs (to measure a node built from older code).
//
// `--flood=tcp|tls` measures instead whether a real peer gets in during a connection flood: 600
// idle TCP connections (or 300 TLS connections that never send Version), opened again as the node
// closes them, for the run; meanwhile a new peer (a fresh certificate, TLS + Version) tries to
// connect every 500 ms from 127.0.0.1. The flood comes from 127.0.0.2 (`--flood-ips=N`: from N
// addresses 127.0.1.x; `--flood-ips=0`: from 127.0.0.1, the peer's own address). Reports the peer's
// tries, how many got through, and the time to the first.
//
// `--peerlist` measures instead what a PeerList of 10 made-up addresses (TCP listeners here that
// count the connections they get) makes the node dial during the run (default 45 s): before signed
// IPs the entries carry just an address and a node ID (`--legacy`); after, each is signed by a fresh
// certificate of its own — the most an attacker can do without a validator's key.
//
// Usage: node bench/hostile-peer.mjs [--peerlist] [--seconds=25] [--bytes=61440] [--fanout=3000] [--spread] [--legacy] [--flood=tcp|tls]
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect as tcpConnect, createServer as tcpServer } from 'node:net';
import { connect } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Id, ShortId } from '@cornice/sdk';
import { decodeMessage, encodeMessage } from '../core/dist/src/network/codec.js';
import { FrameDecoder, frame } from '../core/dist/src/network/framing.js';
import { generateStakingCert } from '../core/dist/src/staking/cert.js';
import { acceptedFeed, fanOut } from './avm.mjs';
import { CORNICE_BIN, freePort, rpc, rssMb, track, untilChainsStarted } from './lib.mjs';

// The signed-IP module exists from the change that signs listen addresses on; before it Version had no such fields.
const signedIp = await import('../core/dist/src/network/signed-ip.js').catch(() => ({}));
const arg = (name, dflt) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt);
const SECONDS = arg('seconds', 25);
const BYTES = arg('bytes', 60 * 1024);
/** X-Chain outputs made first (fan-out txs of 150, one block each): a chain worth asking for. */
const FANOUT = arg('fanout', 3000);
const SPREAD = process.argv.includes('--spread');
const LEGACY = process.argv.includes('--legacy');
const FLOOD = process.argv.find((a) => a.startsWith('--flood='))?.split('=')[1];
const FLOOD_IPS = arg('flood-ips', 1);
const PEERLIST = process.argv.includes('--peerlist');
const floodSource = (i) => (FLOOD_IPS === 0 ? '127.0.0.1' : FLOOD_IPS === 1 ? '127.0.0.2' : `127.0.1.${(i % FLOOD_IPS) + 1}`);
const fixture = (f) => fileURLToPath(new URL(`../core/fixtures/staking/local/${f}`, import.meta.url));

function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in clock ticks of 1/100 s
}

const dir = await mkdtemp(join(tmpdir(), 'cornice-hostile-'));
const httpPort = await freePort();
const stakingPort = await freePort();
const args = [
  '--network-id=local',
  `--staking-tls-cert-file=${fixture('staker1.crt')}`,
  `--staking-tls-key-file=${fixture('staker1.key')}`,
  '--sybil-protection-enabled=false',
  `--data-dir=${dir}`,
  `--http-port=${httpPort}`,
  `--staking-port=${stakingPort}`,
  '--staking-host=127.0.0.1',
  '--log-level=warn',
];
const proc = track(spawn(process.execPath, [CORNICE_BIN, ...args], { stdio: ['ignore', 'pipe', 'inherit'] }));
const warnLines = [];
let buffered = '';
proc.stdout.on('data', (d) => {
  buffered += d;
  let nl;
  while ((nl = buffered.indexOf('\n')) >= 0) {
    const line = buffered.slice(0, nl);
    buffered = buffered.slice(nl + 1);
    try {
      const j = JSON.parse(line);
      if (j.level === 'warn' || j.level === 40) warnLines.push(j);
    } catch {}
  }
});
const url = `http://127.0.0.1:${httpPort}`;
const t0 = performance.now();
for (;;) {
  if (performance.now() - t0 > 60_000) throw new Error('node did not answer');
  try {
    if ((await rpc(`${url}/ext/admin`, 'admin.getNodeID')).result) break;
  } catch {}
  await new Promise((r) => setTimeout(r, 20));
}
await untilChainsStarted(url, proc, t0, 60_000);
const NETWORK_VERSION = JSON.parse(readFileSync(new URL('../core/package.json', import.meta.url))).version.replace(/^/, 'cornice/');
/** A Version of `cert`'s node (signed unless --legacy). */
function versionOf(cert) {
  const now = BigInt(Math.floor(Date.now() / 1000));
  const listen = { ip: '127.0.0.1', port: 1 };
  const claim = signedIp.signIp && !LEGACY ? signedIp.signIp(cert.keyPem, { ...listen, time: now }) : undefined;
  return { op: 'Version', networkId: 12345, nonce: BigInt(Math.floor(Math.random() * 2 ** 48)), time: now, listen, ...(claim ? { ipTime: claim.time, ipSignature: claim.signature } : {}), version: NETWORK_VERSION };
}

if (PEERLIST) {
  const seconds = arg('seconds', 45);
  const hits = new Array(10).fill(0);
  const servers = [];
  for (let i = 0; i < 10; i++) {
    const srv = tcpServer((s) => (hits[i]++, s.destroy()));
    await new Promise((r) => srv.listen(0, '127.0.0.1', r));
    servers.push(srv);
  }
  const ports = servers.map((s) => s.address().port);
  const cert = await generateStakingCert();
  const socket = connect({ host: '127.0.0.1', port: stakingPort, cert: cert.certPem, key: cert.keyPem, rejectUnauthorized: false, minVersion: 'TLSv1.3' });
  socket.on('error', () => {});
  socket.resume();
  await new Promise((resolve) => socket.once('secureConnect', resolve));
  socket.write(frame(encodeMessage(versionOf(cert))));
  await new Promise((r) => setTimeout(r, 500));
  const now = BigInt(Math.floor(Date.now() / 1000));
  const peers = [];
  for (const port of ports) {
    if (LEGACY) peers.push({ ip: '127.0.0.1', port, nodeId: ShortId.fromBytes(new Uint8Array(20).map(() => Math.floor(Math.random() * 256))) });
    else {
      const fake = await generateStakingCert();
      peers.push({ cert: fake.certDer, ip: '127.0.0.1', port, time: now, signature: signedIp.signIp(fake.keyPem, { ip: '127.0.0.1', port, time: now }).signature });
    }
  }
  socket.write(frame(encodeMessage({ op: 'PeerList', peers })));
  await new Promise((r) => setTimeout(r, seconds * 1000));
  console.log(JSON.stringify({ peerList: LEGACY ? 'made-up addresses with made-up node IDs' : 'made-up addresses, each signed by a fresh certificate', seconds, dialsPerAddress: hits, warnLines: warnLines.length }, null, 2));
  socket.destroy();
  for (const srv of servers) srv.close();
  proc.kill('SIGTERM');
  await new Promise((r) => proc.on('close', r));
  await rm(dir, { recursive: true, force: true });
  process.exit(0);
}

if (FLOOD) {
  const flooder = await generateStakingCert();
  const size = FLOOD === 'tls' ? 300 : 600;
  const open = new Set();
  let opened = 0;
  let stop = false;
  const one = () => {
    if (stop) return;
    opened++;
    const localAddress = floodSource(opened);
    const s = FLOOD === 'tls'
      ? connect({ host: '127.0.0.1', port: stakingPort, localAddress, cert: flooder.certPem, key: flooder.keyPem, rejectUnauthorized: false, minVersion: 'TLSv1.3' })
      : tcpConnect({ port: stakingPort, host: '127.0.0.1', localAddress });
    s.on('error', () => {});
    s.resume();
    open.add(s);
    s.once('close', () => {
      open.delete(s);
      setTimeout(one, 10); // the flood keeps its size
    });
  };
  for (let i = 0; i < size; i++) one();
  await new Promise((r) => setTimeout(r, 1_000));
  const cpuBefore = cpuSeconds(proc.pid);
  const t0 = performance.now();
  let tries = 0;
  let through = 0;
  let firstMs;
  const attempt = async () => {
    tries++;
    const cert = await generateStakingCert();
    const ok = await new Promise((resolve) => {
      const s = connect({ host: '127.0.0.1', port: stakingPort, cert: cert.certPem, key: cert.keyPem, rejectUnauthorized: false, minVersion: 'TLSv1.3' });
      const decoder = new FrameDecoder();
      const done = (v) => (s.destroy(), resolve(v));
      const timer = setTimeout(() => done(false), 5_000);
      s.on('error', () => (clearTimeout(timer), done(false)));
      s.on('close', () => (clearTimeout(timer), done(false)));
      s.once('secureConnect', () => s.write(frame(encodeMessage(versionOf(cert)))));
      s.on('data', (chunk) => {
        try {
          // The node's Version, then its PeerList once it took ours: through the handshake.
          for (const p of decoder.push(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length))) if (decodeMessage(p).op === 'PeerList') (clearTimeout(timer), done(true));
        } catch {}
      });
    });
    if (ok) {
      through++;
      firstMs ??= Math.round(performance.now() - t0);
    }
  };
  while (performance.now() - t0 < SECONDS * 1000) {
    await attempt();
    await new Promise((r) => setTimeout(r, 500));
  }
  stop = true;
  for (const s of open) s.destroy();
  console.log(JSON.stringify({ flood: FLOOD, floodFrom: FLOOD_IPS === 0 ? '127.0.0.1 (the peer\'s own)' : FLOOD_IPS === 1 ? '127.0.0.2' : `${FLOOD_IPS} addresses`, floodConnections: size, floodConnectionsOpened: opened, seconds: SECONDS, peerTries: tries, peerThrough: through, firstThroughMs: firstMs ?? null, nodeCpuSeconds: Math.round((cpuSeconds(proc.pid) - cpuBefore) * 100) / 100, warnLines: warnLines.length }, null, 2));
  proc.kill('SIGTERM');
  await new Promise((r) => proc.on('close', r));
  await rm(dir, { recursive: true, force: true });
  process.exit(0);
}

const chains = [];
for (const alias of ['P', 'X', 'C']) {
  const r = await rpc(`${url}/ext/admin`, 'admin.getBlockchainID', { alias });
  if (r.result?.blockchainID) chains.push({ alias, id: Id.fromString(r.result.blockchainID) });
}
if (FANOUT > 0) {
  const feed = await acceptedFeed(`${url.replace('http', 'ws')}/ext/bc/X/pubsub`);
  await fanOut(`${url}/ext/bc/X`, feed, FANOUT);
  feed.close();
}
await new Promise((r) => setTimeout(r, 2_000)); // let startup work settle

// The attacker: a fresh certificate, the handshake, then the requests.
const cert = await generateStakingCert();
const socket = connect({ host: '127.0.0.1', port: stakingPort, cert: cert.certPem, key: cert.keyPem, rejectUnauthorized: false, minVersion: 'TLSv1.3' });
socket.on('error', (e) => console.error(`attacker socket: ${e.message}`));
await new Promise((resolve) => socket.once('secureConnect', resolve));
const decoder = new FrameDecoder();
let replyBytes = 0;
const replies = {};
const frontiers = new Map();
let closedAt;
socket.on('close', () => (closedAt ??= performance.now()));
socket.on('data', (chunk) => {
  replyBytes += chunk.length;
  for (const p of decoder.push(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length))) {
    const m = decodeMessage(p);
    replies[m.op] = (replies[m.op] ?? 0) + 1;
    if (m.op === 'AcceptedFrontier') frontiers.set(m.chainId.key, m.containerIds[0]);
  }
});
const send = (m) => socket.write(frame(encodeMessage(m)));
send(versionOf(cert));
chains.forEach((c, i) => send({ op: 'GetAcceptedFrontier', chainId: c.id, requestId: i + 1 }));
const tf = performance.now();
while (frontiers.size < chains.length && performance.now() - tf < 10_000 && closedAt === undefined) await new Promise((r) => setTimeout(r, 10));
const targets = chains.filter((c) => frontiers.has(c.id.key)).map((c) => ({ chainId: c.id, block: frontiers.get(c.id.key) }));
if (targets.length === 0) throw new Error(`no frontier answered (replies: ${JSON.stringify(replies)})`);

const rssBefore = rssMb(proc.pid);
const cpuBefore = cpuSeconds(proc.pid);
const bytesBefore = replyBytes;
let sent = 0;
let requests = 0;
const request = () => {
  const t = targets[requests % targets.length];
  const bytes = frame(encodeMessage({ op: 'GetAncestors', chainId: t.chainId, requestId: 1000 + requests, containerId: t.block }));
  socket.write(bytes);
  sent += bytes.length;
  requests += 1;
};
const total = Math.ceil(BYTES / 75); // a GetAncestors frame is 75 bytes
if (!SPREAD) while (requests < total) request();
let rssPeak = rssBefore;
const ta = performance.now();
while (performance.now() - ta < SECONDS * 1000) {
  await new Promise((r) => setTimeout(r, SPREAD ? 50 : 250));
  if (SPREAD) while (requests < total && requests < (total * (performance.now() - ta)) / (SECONDS * 1000)) request();
  rssPeak = Math.max(rssPeak, rssMb(proc.pid));
}
const cpu = cpuSeconds(proc.pid) - cpuBefore;
const result = {
  mode: SPREAD ? 'spread over the run' : 'all at once',
  requests,
  chains: targets.length,
  requestBytes: sent,
  ancestorsReplies: replies.Ancestors ?? 0,
  replyBytes: replyBytes - bytesBefore,
  seconds: SECONDS,
  rssBeforeMb: Math.round(rssBefore),
  rssPeakMb: Math.round(rssPeak),
  rssAfterMb: Math.round(rssMb(proc.pid)),
  nodeCpuSeconds: Math.round(cpu * 100) / 100,
  attackerDropped: closedAt !== undefined,
  warnLines: warnLines.length,
  warnSample: warnLines.slice(0, 5).map((l) => `${l.msg} ${JSON.stringify(Object.fromEntries(Object.entries(l).filter(([k]) => !['level', 'time', 'msg', 'module', 'pid', 'hostname'].includes(k))))}`),
};
console.log(JSON.stringify(result, null, 2));
socket.destroy();
proc.kill('SIGTERM');
await new Promise((r) => proc.on('close', r));
await rm(dir, { recursive: true, force: true });
process.exit(0);
