/**
 * Browsers and DNS rebinding: no CORS headers unless --http-allowed-origins names the origin, and
 * requests whose Host is not in --http-allowed-hosts get 403 on every route.
 */
import { request } from 'node:http';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestNode, type TestNode } from '../helpers/node.js';

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** A request with any headers (fetch cannot set Host). */
function send(url: string, opts: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: opts.method ?? 'POST', headers: { 'content-type': 'application/json', ...opts.headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

const getNodeID = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'admin.getNodeID' });
const createUser = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'keystore.createUser', params: { username: 'victim', password: 'Wh1te-Rabbit-42!' } });
const corsHeaders = (r: Reply) => Object.keys(r.headers).filter((h) => h.startsWith('access-control-'));
const preflight = { 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' };

let node: TestNode;
test.before(async () => {
  node = await startTestNode(['--api-keystore-list-users-enabled']);
});
test.after(() => node.close());

test('defaults: a request without Origin works exactly as before, with no CORS headers', async () => {
  const r = await send(`${node.url}/ext/admin`, { body: getNodeID });
  assert.is(r.status, 200);
  assert.is(JSON.parse(r.text).result.nodeID, node.nodeId);
  assert.equal(corsHeaders(r), []);
});

test('defaults: a foreign Origin gets no access-control-allow-origin, and its preflight no allow headers', async () => {
  const origin = { origin: 'https://evil.example' };
  const r = await send(`${node.url}/ext/keystore`, { headers: origin, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'keystore.listUsers' }) });
  assert.equal(corsHeaders(r), []);
  for (const path of ['admin', 'keystore', 'health']) {
    const p = await send(`${node.url}/ext/${path}`, { method: 'OPTIONS', headers: { ...origin, ...preflight } });
    assert.equal(corsHeaders(p), [], path);
  }
  const metrics = await send(`${node.url}/ext/metrics`, { method: 'GET', headers: origin });
  assert.is(metrics.status, 200);
  assert.equal(corsHeaders(metrics), []);
});

test('a foreign Host gets 403 with a JSON-RPC error naming the host, on every route, and reaches no method', async () => {
  for (const path of ['admin', 'keystore', 'health', 'metrics', 'nothing']) {
    const r = await send(`${node.url}/ext/${path}`, { headers: { host: `evil.example:${node.address.port}` }, body: createUser });
    assert.is(r.status, 403, path);
    const body = JSON.parse(r.text);
    assert.is(body.id, null);
    assert.is(body.error.code, -32600);
    assert.match(body.error.message, /host "evil\.example" is not allowed/);
    assert.match(body.error.message, /--http-allowed-hosts/);
  }
  const get = await send(`${node.url}/ext/health`, { method: 'GET', headers: { host: 'evil.example' } });
  assert.is(get.status, 403);
  assert.equal((await node.call('keystore', 'keystore.listUsers')).result.users, [], 'no user was created');
});

test('allowed hosts: localhost (any case, any port), loopback IPs, IPv6 in brackets and IP literals', async () => {
  const port = node.address.port;
  for (const host of ['localhost', `localhost:${port}`, `LocalHost:${port}`, '127.0.0.1', `127.0.0.1:${port}`, '[::1]', `[::1]:${port}`, `10.1.2.3:${port}`, '[fe80::1]:80']) {
    const r = await send(`${node.url}/ext/admin`, { headers: { host }, body: getNodeID });
    assert.is(r.status, 200, host);
  }
  for (const host of ['localhost.evil.example', 'evil.example', `127.0.0.1.nip.io:${port}`, 'local']) {
    const r = await send(`${node.url}/ext/admin`, { headers: { host }, body: getNodeID });
    assert.is(r.status, 403, host);
  }
});

test('--http-allowed-origins names the origins that get CORS headers; * allows any', async () => {
  const n = await startTestNode(['--http-allowed-origins=https://app.example,http://localhost:3000']);
  try {
    const ok = await send(`${n.url}/ext/admin`, { headers: { origin: 'https://app.example' }, body: getNodeID });
    assert.is(ok.status, 200);
    assert.is(ok.headers['access-control-allow-origin'], 'https://app.example');
    assert.match(String(ok.headers.vary), /origin/i);
    const pre = await send(`${n.url}/ext/admin`, { method: 'OPTIONS', headers: { origin: 'http://localhost:3000', ...preflight } });
    assert.is(pre.status, 204);
    assert.is(pre.headers['access-control-allow-origin'], 'http://localhost:3000');
    assert.match(String(pre.headers['access-control-allow-methods']), /POST/);
    assert.match(String(pre.headers['access-control-allow-headers']), /content-type/);
    const other = await send(`${n.url}/ext/admin`, { headers: { origin: 'https://evil.example' }, body: getNodeID });
    assert.is(other.headers['access-control-allow-origin'], undefined);
    const none = await send(`${n.url}/ext/admin`, { body: getNodeID });
    assert.is(none.headers['access-control-allow-origin'], undefined);
  } finally {
    await n.close();
  }
  const any = await startTestNode(['--http-allowed-origins=*']);
  try {
    const r = await send(`${any.url}/ext/admin`, { headers: { origin: 'https://whatever.example' }, body: getNodeID });
    assert.is(r.headers['access-control-allow-origin'], '*');
  } finally {
    await any.close();
  }
});

test('--http-allowed-hosts replaces the defaults; * turns the check off', async () => {
  const n = await startTestNode(['--http-allowed-hosts=node.example,[::1]']);
  try {
    assert.is((await send(`${n.url}/ext/admin`, { headers: { host: 'NODE.example:9650' }, body: getNodeID })).status, 200);
    assert.is((await send(`${n.url}/ext/admin`, { headers: { host: 'localhost' }, body: getNodeID })).status, 403);
    assert.is((await send(`${n.url}/ext/admin`, { body: getNodeID })).status, 200, 'IP literals (127.0.0.1 here) always pass');
  } finally {
    await n.close();
  }
  const any = await startTestNode(['--http-allowed-hosts=*']);
  try {
    assert.is((await send(`${any.url}/ext/admin`, { headers: { host: 'evil.example' }, body: getNodeID })).status, 200);
  } finally {
    await any.close();
  }
});

test.run();
