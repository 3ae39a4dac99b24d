/**
 * Issue 32, the core points, through real node processes started as `npm start` does (loopback
 * only): the alias hijack (3), a connection table full of idle sockets (6), admin.memoryProfile
 * (8), clients that do not read (10), deeply nested JSON (11) and the keystore's throttle, user
 * list and timing (13). Each asserts what failed before the fix: /ext/health answering on a new
 * connection within HEALTH_P99_MS during the attack where the fix absorbs it, and RSS under a bound.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, get, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { WebSocket } from 'ws';
import { npmStartFlags } from '../src/fixtures.js';
import { startNodeProcess, type NodeProcess } from '../src/process.js';

const MAX_CONNECTIONS = 64;
/** Another build's `cornice` bin (CORNICE_E2E_BIN=…/core/bin/cornice.js): how these tests were seen to fail before the fix. */
const spawnOpts = process.env.CORNICE_E2E_BIN ? { bin: process.env.CORNICE_E2E_BIN } : {};
const PASSWORD = 'Corn1ce-owner-Pass!';

let dir: string;
let node: NodeProcess;
let port: number;
test.before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cornice-e2e-abuse-'));
  node = await startNodeProcess([...npmStartFlags(), `--data-dir=${dir}/a`, '--db-type=memory', `--http-max-connections=${MAX_CONNECTIONS}`], 30_000, spawnOpts);
  port = Number(new URL(node.url).port);
});
test.after(async () => {
  await node?.stop();
  await rm(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** The process's RSS in MB (Linux), or NaN once it has exited. */
function rssMb(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
  } catch {
    return NaN;
  }
}

/** GET /ext/health on a new connection: ms, or Infinity when refused or slower than 2 s. */
function probe(p = port): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const req = get({ host: '127.0.0.1', port: p, path: '/ext/health', agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode === 200 ? performance.now() - t0 : Infinity));
    });
    req.setTimeout(2_000, () => req.destroy());
    req.on('error', () => resolve(Infinity));
  });
}

/** Probes health every 25 ms while `during` runs (at least `minMs`); returns the sorted latencies. */
async function healthDuring(during: Promise<unknown>, minMs: number, p = port): Promise<number[]> {
  let done = false;
  void during.finally(() => (done = true));
  const end = performance.now() + minMs;
  const lat: number[] = [];
  while (!done || performance.now() < end) {
    lat.push(await probe(p));
    await sleep(25);
  }
  return lat.sort((a, b) => a - b);
}

/**
 * Health's p99 bound in these tests. bench/api-core-attacks.mjs reports the figures against the
 * issue's 100 ms on a quiet machine; a test shares two cores with whatever else runs, so its bound
 * only has to tell the fixed node from the old one (refused, or frozen for 0.3-50 s).
 */
const HEALTH_P99_MS = 250;

const p99 = (sorted: number[]) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))]!;

/** A raw JSON-RPC POST on a new connection: HTTP status, parsed body, ms. */
function post(path: string, body: string, opts: { agent?: Agent | false; p?: number } = {}): Promise<{ status: number; body: any; ms: number }> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: opts.p ?? port, path: `/ext/${path}`, method: 'POST', agent: opts.agent ?? false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : undefined, ms: performance.now() - t0 }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
const rpc = (path: string, method: string, params: unknown = {}, agent: Agent | false = false) =>
  post(path, JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }), { agent }).then((r) => r.body);

test('admin.alias cannot hijack /ext/bc routes; aliases are bounded and removable (point 3)', async () => {
  const hijack = await rpc('admin', 'admin.alias', { endpoint: 'admin', alias: 'bc' });
  assert.is(hijack.error?.code, -32000);
  assert.match(hijack.error.message, /reserved for the node's chains and VMs/);
  const keystoreAtC = await rpc('admin', 'admin.alias', { endpoint: 'keystore', alias: 'bc/C/rpc' });
  assert.match(keystoreAtC.error.message, /reserved/);
  assert.match((await rpc('admin', 'admin.alias', { endpoint: 'keystore', alias: 'X' })).error.message, /\/ext\/X is already in use/);
  assert.match((await rpc('admin', 'admin.alias', { endpoint: 'keystore', alias: 'admin/x' })).error.message, /lies under \/ext\/admin/);
  // The chains still answer at their URLs.
  assert.is((await rpc('bc/C/rpc', 'eth_chainId', [])).result, '0xa866');
  assert.ok((await rpc('bc/X', 'avm.getAssetDescription', { assetID: 'AVA' })).result);
  assert.ok((await rpc('P', 'platform.getBlockchains')).result);
  // Bounded (default 64), and an alias added can be taken back.
  let added = 0;
  let refusal: { code: number; message: string } | undefined;
  for (let i = 0; i < 100 && !refusal; i++) {
    const r = await rpc('admin', 'admin.alias', { endpoint: 'bc/X', alias: `x${i}` });
    if (r.result) added++;
    else refusal = r.error;
  }
  assert.is(added, 64);
  assert.match(refusal!.message, /^at most 64 aliases may be added with admin\.alias \(--api-admin-max-aliases\); remove one with admin\.removeAlias first$/);
  assert.ok((await rpc('x0', 'avm.getAssetDescription', { assetID: 'AVA' })).result, 'an alias serves its endpoint');
  assert.equal((await rpc('admin', 'admin.removeAlias', { alias: 'x0' })).result, { success: true });
  assert.is((await post('x0', '{}')).status, 404);
  assert.match((await rpc('admin', 'admin.removeAlias', { alias: 'X' })).error.message, /not an alias added with admin\.alias/);
  assert.equal((await rpc('admin', 'admin.alias', { endpoint: 'bc/X', alias: 'again' })).result, { success: true });
  for (let i = 1; i < 64; i++) await rpc('admin', 'admin.removeAlias', { alias: `x${i}` });
  await rpc('admin', 'admin.removeAlias', { alias: 'again' });
});

test('a full connection table evicts idle sockets: idle WebSockets and reconnecting idle TCP sockets keep no one out (point 6)', async () => {
  const rss0 = rssMb(node.proc.pid!);
  const sockets: WebSocket[] = [];
  for (let i = 0; i < MAX_CONNECTIONS; i++) {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ext/bc/X/pubsub`);
    ws.on('error', () => undefined);
    sockets.push(ws);
  }
  // And as many idle TCP sockets, each reconnecting at once when closed.
  let stopped = false;
  const tcp = new Set<Socket>();
  const idleTcp = () => {
    if (stopped) return;
    const s = connect(port, '127.0.0.1');
    tcp.add(s);
    s.on('error', () => undefined);
    s.on('close', () => {
      tcp.delete(s);
      setTimeout(idleTcp, 5);
    });
  };
  for (let i = 0; i < MAX_CONNECTIONS; i++) idleTcp();
  await sleep(1_000);
  const lat = await healthDuring(sleep(4_000), 4_000);
  stopped = true;
  for (const s of tcp) s.destroy();
  for (const ws of sockets) ws.terminate();
  assert.is(lat.filter((x) => x === Infinity).length, 0, `every health probe on a new connection answered (${lat.length} probes)`);
  assert.ok(p99(lat) < HEALTH_P99_MS, `health p99 ${p99(lat).toFixed(1)} ms`);
  assert.ok(rssMb(node.proc.pid!) - rss0 < 100, 'RSS grows by less than 100 MB');
});

test('admin.memoryProfile does not freeze the node: a sampling profile, one at a time (point 8)', async () => {
  await sleep(500);
  const rss0 = rssMb(node.proc.pid!);
  let peak = rss0;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(node.proc.pid!))), 50);
  // Five at once, as in the report: one runs, the others are refused.
  const calls = Array.from({ length: 5 }, (_, i) => rpc('admin', 'admin.memoryProfile', { fileName: `m${i}.heapprofile` }));
  const lat = await healthDuring(Promise.all(calls), 1_000);
  clearInterval(sampler);
  assert.ok(p99(lat) < HEALTH_P99_MS, `health p99 ${p99(lat).toFixed(1)} ms during the profiles (heap snapshots froze it for seconds)`);
  assert.ok(peak - rss0 < 60, `RSS grew by ${(peak - rss0).toFixed(0)} MB (snapshots added ~250 MB on this small heap)`);
  const answers = await Promise.all(calls);
  assert.is(answers.filter((a) => a.result?.success === true).length, 1);
  for (const o of answers.filter((a) => a.error)) assert.match(o.error.message, /^a memory profile is already being taken \(one at a time\)/);
  const snapshot = await rpc('admin', 'admin.memoryProfile', { fileName: 'mem.heapsnapshot', kind: 'snapshot' });
  assert.match(snapshot.error.message, /--profile-heap-snapshot-enabled/);
});

test('deeply nested JSON gets -32700 at once on every core endpoint, never -32603 (point 11)', async () => {
  const deep = `${'['.repeat(300_000)}${']'.repeat(300_000)}`;
  for (const path of ['admin', 'keystore', 'health', 'P', 'bc/X', 'timestamp', 'vm/platform']) {
    const lat = await healthDuring(post(path, `{"jsonrpc":"2.0","id":1,"method":"x.y","params":${deep}}`), 0);
    const r = await post(path, `{"jsonrpc":"2.0","id":1,"method":"x.y","params":{"a":${deep}}}`);
    assert.is(r.status, 200, path);
    assert.is(r.body.error.code, -32700, path);
    assert.match(r.body.error.message, /nested deeper than 64 levels/, path);
    assert.ok(r.ms < 200, `${path}: answered in ${r.ms.toFixed(0)} ms`);
    assert.ok(p99(lat) < HEALTH_P99_MS, `${path}: health p99 ${p99(lat).toFixed(1)} ms meanwhile`);
  }
  // Within the bound, the method's own checks answer; beyond the body limit, 413 and -32600.
  assert.is((await post('admin', `{"jsonrpc":"2.0","id":1,"method":"admin.alias","params":${'['.repeat(10)}${']'.repeat(10)}}`)).body.error.code, -32602);
  const big = await post('admin', `{"jsonrpc":"2.0","id":1,"method":"admin.alias","params":"${'a'.repeat(1_100_000)}"}`);
  assert.is(big.status, 413);
  assert.is(big.body.error.code, -32600);
  assert.not.ok(node.logs.some((l) => l.msg === 'unexpected error in method'), 'no -32603 was logged');
});

test('keystore: a guesser cannot lock the owner out; listUsers is off; missing users cost what existing ones cost (point 13)', async () => {
  await rpc('keystore', 'keystore.createUser', { username: 'owner', password: PASSWORD });
  const guesser = new Agent({ keepAlive: true, maxSockets: 1 });
  let last: { message: string } | undefined;
  try {
    for (let i = 0; i < 8; i++) last = (await rpc('keystore', 'keystore.exportUser', { username: 'owner', password: `Guess-${i}-Pass!` }, guesser)).error;
  } finally {
    guesser.destroy();
  }
  const owner = await rpc('keystore', 'keystore.exportUser', { username: 'owner', password: PASSWORD });
  assert.type(owner.result?.user, 'string', `the owner, on another connection, gets in (got ${JSON.stringify(owner.error)})`);
  assert.match(last!.message, /too many incorrect passwords for user "owner" from this client/, 'the guesser is throttled');
  const list = await rpc('keystore', 'keystore.listUsers');
  assert.match(list.error.message, /^keystore\.listUsers is disabled/);
  assert.not.match(JSON.stringify(list), /owner/);
  // A wrong password for an existing user and any password for a missing one take alike (one KDF each).
  const time = async (username: string) => {
    const ms: number[] = [];
    for (let i = 0; i < 3; i++) ms.push((await post('keystore', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'keystore.deleteUser', params: { username, password: `Wrong-${i}-Pass!` } }))).ms);
    return ms.sort((a, b) => a - b)[1]!;
  };
  await rpc('keystore', 'keystore.createUser', { username: 'timed', password: PASSWORD });
  const existing = await time('timed');
  const missing = await time('nobody-here');
  assert.ok(missing > existing * 0.5, `missing user ${missing.toFixed(0)} ms vs wrong password ${existing.toFixed(0)} ms (was ~1 ms vs ~180 ms)`);
});

test('clients that do not read are cut off after --http-write-timeout (10 s), and the node holds no reply for them (point 10)', async () => {
  const b = await startNodeProcess([
    ...npmStartFlags(),
    `--data-dir=${dir}/b`,
    '--db-type=memory',
    '--http-max-batch-size=10000',
    '--http-max-body-bytes=2097152',
  ], 30_000, spawnOpts);
  try {
    const bPort = Number(new URL(b.url).port);
    // Each reply is ~9 MB (10,000 validator lists): more than the kernel buffers for a client (~4 MB).
    const batch = JSON.stringify(Array.from({ length: 10_000 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'platform.getCurrentValidators' })));
    const raw = `POST /ext/P HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(batch)}\r\n\r\n${batch}`;
    const rss0 = rssMb(b.proc.pid!);
    let peak = rss0;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(b.proc.pid!))), 50);
    const clients: Array<{ s: Socket; got: number; ended: boolean }> = [];
    for (let i = 0; i < 3; i++) {
      const s = connect(bPort, '127.0.0.1');
      const c = { s, got: 0, ended: false };
      s.on('error', () => (c.ended = true));
      s.on('close', () => (c.ended = true));
      s.on('data', (d: Buffer) => (c.got += d.length));
      s.pause(); // never reads
      s.write(raw);
      clients.push(c);
    }
    // The replies are built (~2 s of CPU each on a quiet machine: the batch's cost, not this
    // point's), then wait for their readers; past the write timeout (10 s) the node drops them.
    await sleep(20_000);
    const lat = await healthDuring(sleep(2_000), 2_000, bPort);
    clearInterval(sampler);
    // Reading now shows what the node kept: before the fix the whole reply, after it a cut-off one.
    for (const c of clients) c.s.resume();
    await sleep(2_000);
    for (const c of clients) {
      assert.ok(c.ended, 'the node closed the connection');
      assert.ok(c.got < 8_500_000, `the client got ${c.got} bytes of a ~9 MB reply`);
      c.s.destroy();
    }
    assert.ok(b.logs.some((l) => l.msg === 'http connection closed: its client stopped reading'));
    assert.ok(p99(lat) < HEALTH_P99_MS, `health p99 ${p99(lat).toFixed(1)} ms once the replies are built`);
    assert.ok(peak - rss0 < 400, `RSS grew by ${(peak - rss0).toFixed(0)} MB`);
  } finally {
    await b.stop();
  }
});

test.run();
