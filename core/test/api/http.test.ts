import { once } from 'node:events';
import { connect } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RpcCallError, createClient, httpTransport } from '@cornice/sdk';
import { adminApi } from '../../src/api/admin/api.js';
import { post, rpc, startTestNode, type TestNode } from '../helpers/node.js';

let node: TestNode;
test.before(async () => {
  node = await startTestNode(['--http-max-body-bytes=4096', '--http-max-batch-size=3', '--api-keystore-list-users-enabled']);
});
test.after(() => node.close());

const admin = () => `${node.url}/ext/admin`;

test('listens on 127.0.0.1 by default', () => {
  assert.is(node.address.address, '127.0.0.1');
});

test('a valid call answers 200 with result and echoed id', async () => {
  const r = await post(admin(), JSON.stringify({ jsonrpc: '2.0', id: 'abc', method: 'admin.getNodeID' }));
  assert.is(r.status, 200);
  const body = JSON.parse(r.text);
  assert.is(body.id, 'abc');
  assert.is(body.jsonrpc, '2.0');
  assert.is(body.result.nodeID, node.nodeId);
});

test('malformed JSON -> -32700 with id null, HTTP 200', async () => {
  const r = await post(admin(), '{"jsonrpc": "2.0", ');
  assert.is(r.status, 200);
  const body = JSON.parse(r.text);
  assert.is(body.error.code, -32700);
  assert.is(body.id, null);
});

test('bad envelopes -> -32600 naming the problem', async () => {
  const cases: Array<[unknown, RegExp]> = [
    [{ jsonrpc: '1.0', id: 1, method: 'admin.getNodeID' }, /jsonrpc must be 2.0/],
    [{ jsonrpc: '2.0', id: 1 }, /method/],
    [{ jsonrpc: '2.0', id: 1, method: 7 }, /method/],
    [{ jsonrpc: '2.0', id: {}, method: 'admin.getNodeID' }, /id must be/],
    [{ jsonrpc: '2.0', id: 1, method: 'admin.getNodeID', params: 'x' }, /params/],
    [{ jsonrpc: '2.0', id: 1, method: 'admin.getNodeID', extra: true }, /unknown member "extra"/],
    [42, /JSON object/],
    [null, /JSON object/],
  ];
  for (const [body, re] of cases) {
    const r = await rpc(admin(), body);
    assert.is(r.error?.code, -32600, JSON.stringify(body));
    assert.match(r.error!.message, re);
  }
});

test('unknown method -> -32601 naming it; upper-case first letter explained', async () => {
  let r = await node.call('admin', 'admin.nope');
  assert.is(r.error?.code, -32601);
  assert.match(r.error!.message, /admin\.nope/);
  r = await node.call('admin', 'admin.GetNodeID');
  assert.is(r.error?.code, -32601);
  assert.match(r.error!.message, /non-uppercase/);
  r = await node.call('admin', 'keystore.listUsers');
  assert.is(r.error?.code, -32601, 'methods are per endpoint');
});

test('params as object, one-element array, omitted or null all work', async () => {
  for (const params of [{}, [{}], undefined, null, []]) {
    const r = await node.call('admin', 'admin.getNetworkID', params);
    assert.equal(r.result, { networkID: '12345' }, JSON.stringify(params));
  }
  const r = await node.call('admin', 'admin.getNetworkID', [{}, {}]);
  assert.is(r.error?.code, -32602);
});

test('batch: answers in order, limit enforced, empty batch refused', async () => {
  const r = await post(
    admin(),
    JSON.stringify([
      { jsonrpc: '2.0', id: 1, method: 'admin.getNodeID' },
      { jsonrpc: '2.0', id: 2, method: 'admin.nope' },
      { jsonrpc: '2.0', method: 'admin.getNodeID' },
    ]),
  );
  const body = JSON.parse(r.text);
  assert.is(body.length, 2, 'the notification gets no reply');
  assert.is(body[0].id, 1);
  assert.ok(body[0].result.nodeID);
  assert.is(body[1].error.code, -32601);
  const over = JSON.parse((await post(admin(), JSON.stringify(Array(4).fill({ jsonrpc: '2.0', id: 1, method: 'admin.getNodeID' })))).text);
  assert.is(over.error.code, -32600);
  assert.match(over.error.message, /limit of 3/);
  const empty = JSON.parse((await post(admin(), '[]')).text);
  assert.is(empty.error.code, -32600);
});

test('a notification gets HTTP 200 with an empty body', async () => {
  const r = await post(admin(), JSON.stringify({ jsonrpc: '2.0', method: 'admin.getNodeID' }));
  assert.is(r.status, 200);
  assert.is(r.text, '');
});

test('POST only: GET -> 405 with Allow: POST', async () => {
  const res = await fetch(admin());
  assert.is(res.status, 405);
  assert.is(res.headers.get('allow'), 'POST');
  assert.match(((await res.json()) as any).error.message, /POST/);
});

test('content-type must be application/json (charset allowed) -> else 415', async () => {
  const ok = await post(admin(), JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'admin.getNodeID' }), 'application/json; charset=UTF-8');
  assert.is(ok.status, 200);
  const bad = await post(admin(), '{}', 'text/plain');
  assert.is(bad.status, 415);
  assert.match(JSON.parse(bad.text).error.message, /content-type/);
  const none = await post(admin(), '{}', '');
  assert.is(none.status, 415);
});

test('body limit: larger bodies -> 413, the node keeps serving', async () => {
  const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'admin.alias', params: { endpoint: 'x'.repeat(5000), alias: 'y' } });
  const r = await post(admin(), big);
  assert.is(r.status, 413);
  assert.match(JSON.parse(r.text).error.message, /4096 bytes/);
  const after = await node.call('admin', 'admin.getNodeID');
  assert.ok(after.result);
});

test('a 413 answered before its body arrives reaches a client still sending it: the rest is read and dropped, then the node closes', async () => {
  const socket = connect({ port: Number(new URL(node.url).port), host: '127.0.0.1', allowHalfOpen: true });
  const errors: string[] = [];
  socket.on('error', (e) => errors.push(e.message));
  const closed = new Promise((r) => socket.once('close', r));
  await once(socket, 'connect');
  const size = 1 << 20;
  socket.write(`POST /ext/admin HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${size}\r\n\r\n`);
  let reply = '';
  socket.setEncoding('utf8');
  await new Promise<void>((resolve) => {
    socket.on('data', (d: string) => {
      reply += d;
      if (/\r\n\r\n\{.*\}$/s.test(reply)) resolve();
    });
  });
  assert.match(reply, /^HTTP\/1\.1 413 /);
  assert.match(reply, /\r\nconnection: close\r\n/i);
  assert.match(reply, /4096 bytes/);
  // Only now does the body follow, as from a client that writes it after its headers.
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  for (let sent = 0; sent < size && errors.length === 0; sent += chunk.length) {
    if (!socket.write(chunk)) await Promise.race([new Promise((r) => socket.once('drain', r)), closed]);
  }
  socket.end();
  await closed;
  assert.equal(errors, [], 'the node reset the connection under the client');
  assert.ok((await node.call('admin', 'admin.getNodeID')).result);
});

test('a body that is not valid UTF-8 -> -32700 naming it, and never reaches the method', async () => {
  const before = (await node.call('keystore', 'keystore.listUsers')).result.users as string[];
  const enc = new TextEncoder();
  const bad = (bytes: number[]) =>
    new Uint8Array([
      ...enc.encode('{"jsonrpc":"2.0","id":7,"method":"keystore.createUser","params":{"username":"bad'),
      ...bytes,
      ...enc.encode('user","password":"Wh1te-Rabbit-42!"}}'),
    ]);
  // A lone 0xff, a truncated 2-byte sequence, an overlong '/', a UTF-16 surrogate encoded as UTF-8.
  for (const bytes of [[0xff], [0xc3], [0xc0, 0xaf], [0xed, 0xa0, 0x80]]) {
    const res = await fetch(`${node.url}/ext/keystore`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: bad(bytes) });
    assert.is(res.status, 200);
    const body = (await res.json()) as any;
    assert.is(body.error.code, -32700, JSON.stringify(bytes));
    assert.is(body.error.message, 'request body is not valid UTF-8');
    assert.is(body.id, null);
  }
  assert.equal((await node.call('keystore', 'keystore.listUsers')).result.users, before, 'no user was created');
  const good = await post(`${node.url}/ext/keystore`, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'keystore.listUsers' }));
  assert.is(JSON.parse(good.text).id, 1, 'valid UTF-8 (including multi-byte) keeps working');
});

test('unknown path -> 404 with a JSON reason', async () => {
  const r = await post(`${node.url}/ext/nothing`, '{}');
  assert.is(r.status, 404);
  assert.match(JSON.parse(r.text).error.message, /no API at \/ext\/nothing/);
  const root = await post(`${node.url}/`, '{}');
  assert.is(root.status, 404);
});

test('CORS preflight is answered, without CORS headers for an origin not allowed (browser.test.ts)', async () => {
  const res = await fetch(admin(), { method: 'OPTIONS' });
  assert.is(res.status, 204);
  assert.is(res.headers.get('access-control-allow-origin'), null);
});

test('/ext/metrics serves Prometheus text with real request counters and latency', async () => {
  await node.call('admin', 'admin.getNodeID');
  await node.call('admin', 'admin.nope');
  await node.call('admin', 'admin.alias', { endpoint: 'nothing', alias: 'x' });
  const res = await fetch(`${node.url}/ext/metrics`);
  assert.is(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /text\/plain/);
  const text = await res.text();
  const count = Number(text.match(/cornice_api_requests_total\{method="admin.getNodeID"\} (\d+)/)?.[1]);
  assert.ok(count >= 1);
  assert.match(text, /cornice_api_requests_total\{method="unknown"\} \d+/);
  assert.match(text, /cornice_api_errors_total\{method="admin.alias",code="-32000"\} 1/);
  assert.match(text, /cornice_api_request_duration_seconds_bucket\{le="0.001",method="admin.getNodeID"\} \d+/);
  assert.match(text, /cornice_process_resident_memory_bytes/);
  const post405 = await fetch(`${node.url}/ext/metrics`, { method: 'POST' });
  assert.is(post405.status, 405);
});

test('/ext/health: JSON-RPC health.getLiveness and plain GET tell the truth with default flags', async () => {
  // Default flags: sybil protection on, so the timestamp chain needs the 5 local genesis validators,
  // and this node (with a fresh staking key) is none of them.
  const r = await node.call('health', 'health.getLiveness');
  assert.is(r.result.healthy, false);
  assert.is(r.result.checks.database.contiguousFailures, 0);
  assert.is(r.result.checks.database.error, undefined);
  assert.type(r.result.checks.database.timestamp, 'string');
  const chain = r.result.checks['chain timestamp'];
  assert.is(chain.error.message, 'waiting for validators: 0 of 5 connected, 0% of stake, need 75%');
  assert.is(chain.message.state, 'running');
  const res = await fetch(`${node.url}/ext/health`);
  assert.is(res.status, 503);
  assert.is(((await res.json()) as any).healthy, false);
});

test('many concurrent requests on keep-alive connections all succeed', async () => {
  const replies = await Promise.all(Array.from({ length: 200 }, () => node.call('admin', 'admin.getNodeID')));
  assert.ok(replies.every((r) => r.result?.nodeID === node.nodeId));
});

test('the typed client generated from a declaration calls the node and surfaces errors', async () => {
  const admin = createClient(adminApi, httpTransport(`${node.url}/ext/admin`));
  assert.equal(await admin.getNodeID(), { nodeID: node.nodeId });
  assert.equal(await admin.getNetworkID({}), { networkID: '12345' });
  try {
    await admin.getBlockchainID({ alias: 'nope' });
    assert.unreachable();
  } catch (e) {
    assert.instance(e, RpcCallError);
    assert.is((e as RpcCallError).rpcCode, -32000);
    assert.is((e as Error).message, 'there is no ID with alias nope');
  }
});

test.run();
