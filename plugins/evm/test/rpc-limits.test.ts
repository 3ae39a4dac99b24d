/**
 * The front end's bounds on one request (issue 32, points 1, 4 and 11), through a real loopback HTTP
 * server over the fake backend: a batch shares one deadline and one reply budget and stops when its
 * client leaves, replies are sized before they are built and large ones streamed, the event loop
 * turns during a batch, eth_calls of one connection neither hold another's nor outlive their
 * client, and deeply nested JSON is refused unparsed. (Log replies' sizing: rpc-log-reply.test.ts.)
 */
import { request, type IncomingMessage } from 'node:http';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FakeConnection, makeTx, serve, type Served } from './rpc-fake-backend.js';

let s: Served;
test.after.each(async () => {
  await s?.close();
});

const call = (method: string, params: unknown[] = [], id: unknown = 1) => ({ jsonrpc: '2.0', id, method, params });
const settle = () => new Promise((r) => setImmediate(r));

/** POSTs `body` on a connection of its own (from `localAddress`); `onSocket` sees the socket. */
function post(url: string, body: string, opts: { localAddress?: string; onResponse?: (res: IncomingMessage) => void } = {}): Promise<{ status: number; headers: IncomingMessage['headers']; text: string }> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = request(
      { host: u.hostname, port: u.port, path: u.pathname, method: 'POST', agent: false, headers: { 'content-type': 'application/json' }, ...(opts.localAddress && { localAddress: opts.localAddress }) },
      (res) => {
        opts.onResponse?.(res);
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text: Buffer.concat(chunks).toString() }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** A chain of 10 blocks of 10 txs with 10 logs each: an eth_getLogs over it answers ~450 KB. */
async function withLogs(limits: Record<string, number> = {}): Promise<void> {
  s = await serve({ limits });
  for (let i = 0; i < 10; i++) s.backend.mine(Array.from({ length: 10 }, () => makeTx()), 10);
}

const logsCalls = () => s.backend.calls.filter((c) => c.method === 'logs').length;

test('a batch shares one reply budget: past it the rest get -32003 and are not run', async () => {
  await withLogs({ maxResponseChars: 1_000_000 });
  const batch = Array.from({ length: 50 }, (_, i) => call('eth_getLogs', [{ fromBlock: '0x0' }], i));
  const r = await s.post(JSON.stringify(batch));
  assert.is(r.json.length, 50);
  const answered = r.json.filter((x: any) => Array.isArray(x.result));
  assert.is(answered.length, 2, 'two replies of ~450 KB fit in 1 MB');
  assert.is(answered[0].result.length, 1000);
  for (const x of r.json.slice(2)) assert.equal(x.error, { code: -32003, message: 'response too large' });
  assert.equal(r.json.map((x: any) => x.id), [...Array(50).keys()], 'every reply keeps its id, in order');
  assert.is(logsCalls(), 3, 'the third was refused before it was built; the other 47 never ran');
  assert.ok(r.text.length < 1_000_000 + 50 * 100);
});

test('replies being built over all requests share one pool: past it -32005, unrun; the pool is free again after', async () => {
  await withLogs({ maxReplyCharsInFlight: 1_000_000 });
  // Client A's second scan waits until B is done: A holds its first reply (~450 KB) in the pool meanwhile.
  const logs = s.backend.logs.bind(s.backend);
  let scans = 0;
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  s.backend.logs = async (filter, signal) => {
    if (++scans === 2) await gate;
    return logs(filter, signal);
  };
  const batch = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => call('eth_getLogs', [{ fromBlock: '0x0' }], i)));
  const a = post(s.url, batch(2));
  while (scans < 2) await settle();
  const b = JSON.parse((await post(s.url, batch(3), { localAddress: '127.0.0.2' })).text);
  release();
  const aReplies = JSON.parse((await a).text);
  const busy = { code: -32005, message: 'too many large replies being built (at most 1000000 characters in all): try again later' };
  assert.is(b[0].result.length, 1000, "B's first fits beside A's first");
  assert.equal(b[1].error, busy, "B's second does not: refused before it is built");
  assert.equal(b[2].error, busy, 'the rest of the batch is not run');
  assert.is(scans, 4, "B's third never ran");
  assert.equal(aReplies.map((x: any) => x.result.length), [1000, 1000], 'B done, A had room again for its second');
  assert.is((await s.call('eth_getLogs', [{ fromBlock: '0x0' }])).result.length, 1000, 'the pool was given back');
});

test('a large batch reply is streamed, item by item', async () => {
  await withLogs();
  const batch = Array.from({ length: 8 }, (_, i) => call('eth_getLogs', [{ fromBlock: '0x0' }], i));
  const r = await post(s.url, JSON.stringify(batch));
  assert.is(r.headers['transfer-encoding'], 'chunked');
  assert.is(r.headers['content-length'], undefined);
  const json = JSON.parse(r.text);
  assert.is(json.length, 8);
  assert.ok(json.every((x: any) => x.result.length === 1000));
  // A small batch is written at once, with its length.
  const small = await post(s.url, JSON.stringify([call('eth_chainId'), call('net_version', [], 2)]));
  assert.ok(small.headers['content-length']);
});

test('a batch shares one deadline: past it the rest get -32002 and are not run', async () => {
  s = await serve({ limits: { callTimeoutMs: 150 } });
  let ran = 0;
  // The first answers at once, the second never: the deadline cuts it.
  s.backend.gasPrice = async () => {
    if (++ran > 1) await new Promise(() => {});
    return 1n;
  };
  const r = await s.post(JSON.stringify(Array.from({ length: 6 }, (_, i) => call('eth_gasPrice', [], i))));
  assert.equal(r.json[0], { jsonrpc: '2.0', id: 0, result: '0x1' });
  for (const x of r.json.slice(1)) assert.equal(x.error, { code: -32002, message: 'request timed out' });
  assert.is(ran, 2, 'the second was cut at the deadline; the other four never ran');
});

test('a batch whose client went away stops: nothing more of it runs', async () => {
  s = await serve();
  let started = 0;
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  s.backend.balance = async () => {
    started++;
    await gate;
    return 1n;
  };
  const batch = Array.from({ length: 20 }, (_, i) => call('eth_getBalance', ['0x' + 'a1'.repeat(20), 'latest'], i));
  const u = new URL(s.url);
  const req = request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', agent: false, headers: { 'content-type': 'application/json' } });
  req.on('error', () => undefined);
  req.end(JSON.stringify(batch));
  while (started === 0) await settle();
  req.destroy();
  await new Promise((r) => setTimeout(r, 50));
  release();
  for (let i = 0; i < 10; i++) await settle();
  assert.is(started, 1, 'the items after the first were never run');
  assert.is((await s.call('eth_chainId')).result, '0xa866');
});

test('the event loop turns during a batch (a turn every few ms of its work)', async () => {
  await withLogs();
  let turns = 0;
  let counting = true;
  const tick = (): void => {
    turns++;
    if (counting) setImmediate(tick);
  };
  // ~55 replies of ~450 KB fit the 25 MB budget: >= 100 ms of formatting here.
  const reply = s.post(JSON.stringify(Array.from({ length: 60 }, (_, i) => call('eth_getLogs', [{ fromBlock: '0x0' }], i))));
  setImmediate(tick);
  const r = await reply;
  counting = false;
  assert.is(r.json.length, 60);
  // Run in one go, the loop would turn a couple of times.
  assert.ok(turns >= 20, `the event loop turned ${turns} times during the batch`);
});

test("eth_calls: one connection's batch runs one call at a time and does not hold another's; a client gone, its calls stop", async () => {
  s = await serve();
  const signals: AbortSignal[] = [];
  s.backend.call = (req, _ref, _o, signal) => {
    // The attacker's calls loop until stopped; the honest one answers at once.
    if (req.to?.[0] === 0xb0) return Promise.resolve({ returnData: Uint8Array.of(1), gasUsed: 1n });
    signals.push(signal!);
    return new Promise((_resolve, reject) => signal!.addEventListener('abort', () => reject(signal!.reason)));
  };
  const attack = Array.from({ length: 100 }, (_, i) => call('eth_call', [{ to: '0x' + 'c0'.repeat(20) }, 'latest'], i));
  const u = new URL(s.url);
  const req = request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', agent: false, headers: { 'content-type': 'application/json' } });
  req.on('error', () => undefined);
  req.end(JSON.stringify(attack));
  while (signals.length === 0) await settle();
  for (let i = 0; i < 3; i++) {
    const honest = JSON.parse((await post(s.url, JSON.stringify(call('eth_call', [{ to: '0x' + 'b0'.repeat(20) }, 'latest'])))).text);
    assert.is(honest.result, '0x01', 'another connection is answered while the batch runs');
  }
  assert.is(signals.length, 1, "the batch's calls run one at a time");
  assert.is(s.rpc.lanes.call.running, 1);
  req.destroy();
  await new Promise((r) => setTimeout(r, 50));
  assert.ok(signals[0]!.aborted, 'the running call was told to stop');
  assert.is(signals.length, 1, 'none of the other 99 ran');
  assert.is(s.rpc.lanes.call.running, 0);
  assert.is(s.rpc.lanes.call.queued, 0);
});

test('deeply nested JSON is refused unparsed (-32600), nested params are -32602; no log line', async () => {
  s = await serve();
  const deep = '['.repeat(500_000) + ']'.repeat(500_000);
  const r = await s.post(deep);
  assert.equal(r.json.error, { code: -32600, message: 'invalid request: JSON nested deeper than 32 levels' });
  const deepParams = `{"jsonrpc":"2.0","id":1,"method":"eth_feeHistory","params":["0x1","latest",[${'['.repeat(100_000)}${']'.repeat(100_000)}]]}`;
  assert.equal((await s.post(deepParams)).json.error, { code: -32600, message: 'invalid request: JSON nested deeper than 32 levels' });
  const nested = await s.call('eth_feeHistory', ['0x1', 'latest', [[[[50]]]]]);
  assert.equal(nested.error, { code: -32602, message: 'invalid argument 2: cannot unmarshal array into reward percentile' });
  // Brackets inside strings do not count.
  assert.is((await s.call('web3_clientVersion', [])).result, 'cornice-evm/test');
  const inString = await s.post(JSON.stringify(call('eth_getBalance', ['['.repeat(100), 'latest'])));
  assert.is(inString.json.error.code, -32602);
  // Over WebSocket too.
  const c = new FakeConnection();
  s.rpc.websocket(c);
  c.receive('{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":' + '['.repeat(40) + ']'.repeat(40) + '}');
  await settle();
  assert.equal(c.messages[0].error, { code: -32600, message: 'invalid request: JSON nested deeper than 32 levels' });
  assert.equal(
    s.log.lines.filter((l) => l.level === 'error' || l.level === 'warn'),
    [],
  );
});

test.run();
