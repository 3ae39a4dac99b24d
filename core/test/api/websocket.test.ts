/**
 * WebSocket routes: upgrades pass the Host check and an Origin check (a hostile page cannot open a
 * socket to a local node unless --http-allowed-origins names it); text only, bounded messages; a
 * throwing handler closes its connection only.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { WebSocket } from 'ws';
import { silentLogger, type WebSocketConnection } from '@cornice/sdk';
import { RouteTable } from '../../src/api/routes.js';
import { HttpApiServer } from '../../src/api/server.js';

async function serve(opts: { allowedOrigins?: string[] } = {}) {
  const routes = new RouteTable();
  const server = new HttpApiServer(routes, {
    host: '127.0.0.1',
    port: 0,
    maxBodyBytes: 1 << 20,
    maxConnections: 100,
    log: silentLogger,
    websocket: { maxMessageBytes: 1024 },
    ...(opts.allowedOrigins ? { allowedOrigins: opts.allowedOrigins } : {}),
  });
  routes.mount('echo', {
    kind: 'websocket',
    accept: (conn: WebSocketConnection) => conn.onMessage((text) => conn.send(`echo ${text}`)),
  });
  routes.mount('burst', {
    kind: 'websocket',
    accept: (conn: WebSocketConnection) =>
      conn.onMessage((text) => {
        for (let i = 0; i < 500; i++) conn.send(`${text} ${i}`);
      }),
  });
  routes.mount('broken', {
    kind: 'websocket',
    accept: () => {
      throw new Error('plugin bug');
    },
  });
  const { port } = await server.listen();
  return { server, url: `ws://127.0.0.1:${port}/ext` };
}

/** Opens a socket; resolves with it when open, or with the HTTP status that refused it. */
function open(url: string, headers: Record<string, string> = {}): Promise<{ ws?: WebSocket; status?: number }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.once('open', () => resolve({ ws }));
    ws.once('unexpected-response', (_req, res) => resolve({ status: res.statusCode }));
    ws.once('error', reject);
  });
}

const nextMessage = (ws: WebSocket) => new Promise<string>((r) => ws.once('message', (d) => r(d.toString())));
const closed = (ws: WebSocket) => new Promise<number>((r) => ws.once('close', (code) => r(code)));

test('a WebSocket route answers; a request without an Origin (not a browser) is served', async () => {
  const { server, url } = await serve();
  try {
    const { ws } = await open(`${url}/echo`);
    ws!.send('hello');
    assert.is(await nextMessage(ws!), 'echo hello');
    ws!.close();
  } finally {
    await server.close();
  }
});

test('many messages sent in one turn (corked into one write) all arrive, in order, burst after burst', async () => {
  const { server, url } = await serve();
  try {
    const { ws } = await open(`${url}/burst`);
    for (const round of ['a', 'b', 'c']) {
      const got: string[] = [];
      const all = new Promise<void>((r) => ws!.on('message', (d) => got.push(d.toString()) === 500 && r()));
      ws!.send(round);
      await all;
      ws!.removeAllListeners('message');
      assert.equal(got, Array.from({ length: 500 }, (_, i) => `${round} ${i}`));
    }
    ws!.close();
  } finally {
    await server.close();
  }
});

test('a page from another origin cannot open a socket unless --http-allowed-origins names it', async () => {
  const { server, url } = await serve();
  try {
    assert.is((await open(`${url}/echo`, { origin: 'https://evil.example' })).status, 403);
  } finally {
    await server.close();
  }
  const allowed = await serve({ allowedOrigins: ['https://app.example'] });
  try {
    const { ws } = await open(`${allowed.url}/echo`, { origin: 'https://app.example' });
    ws!.send('x');
    assert.is(await nextMessage(ws!), 'echo x');
    ws!.close();
    assert.is((await open(`${allowed.url}/echo`, { origin: 'https://evil.example' })).status, 403);
  } finally {
    await allowed.server.close();
  }
});

test('a Host not allowed gets 403; an unknown path 404; a plain POST to a WebSocket route 426', async () => {
  const { server, url } = await serve();
  try {
    assert.is((await open(`${url}/echo`, { host: 'attacker.example' })).status, 403);
    assert.is((await open(`${url}/nothing`)).status, 404);
    const http = url.replace('ws:', 'http:');
    const r = await fetch(`${http}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.is(r.status, 426);
    assert.match(((await r.json()) as { error: { message: string } }).error.message, /WebSocket endpoint/);
  } finally {
    await server.close();
  }
});

test('binary and oversized messages close the connection; a throwing handler closes only its own', async () => {
  const { server, url } = await serve();
  try {
    const a = (await open(`${url}/echo`)).ws!;
    const aClosed = closed(a);
    a.send(Buffer.from([1, 2, 3]));
    assert.is(await aClosed, 1003);
    const b = (await open(`${url}/echo`)).ws!;
    const bClosed = closed(b);
    b.send('x'.repeat(2048));
    assert.is(await bClosed, 1009);
    const c = (await open(`${url}/broken`)).ws!;
    assert.is(await closed(c), 1011);
    const d = (await open(`${url}/echo`)).ws!;
    d.send('still here');
    assert.is(await nextMessage(d), 'echo still here');
    d.close();
  } finally {
    await server.close();
  }
});

test.run();
