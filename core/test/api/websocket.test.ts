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
import type { WebSocketLimits } from '../../src/api/websocket.js';

async function serve(opts: { allowedOrigins?: string[]; websocket?: Partial<WebSocketLimits>; maxConnections?: number } = {}) {
  const routes = new RouteTable();
  const server = new HttpApiServer(routes, {
    host: '127.0.0.1',
    port: 0,
    maxBodyBytes: 1 << 20,
    maxConnections: opts.maxConnections ?? 100,
    log: silentLogger,
    websocket: { maxMessageBytes: 1024, ...opts.websocket },
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

async function until(cond: () => boolean, ms: number, what: string): Promise<void> {
  const end = performance.now() + ms;
  while (!cond()) {
    if (performance.now() > end) assert.unreachable(`${what} within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The client's raw socket (ws keeps it private). */
const rawSocket = (ws: WebSocket) => (ws as unknown as { _socket: import('node:net').Socket })._socket;

test('a client that does not read is terminated at once, its buffers freed (issue 32, point 10)', async () => {
  const { server, url } = await serve({ websocket: { maxBufferedBytes: 64 * 1024 } });
  try {
    const ws = (await open(`${url}/burst`)).ws!;
    rawSocket(ws).pause(); // stops reading
    const t0 = performance.now();
    for (let i = 0; i < 400; i++) ws.send('y'.repeat(900)); // each answered with 500 messages of ~900 bytes
    await until(() => server.connections === 0, 5_000, 'the non-reader terminated');
    assert.ok(performance.now() - t0 < 3_000, 'not after a 30 s close handshake');
    assert.is(server.table.bufferedBytes, 0);
    ws.terminate();
  } finally {
    await server.close();
  }
});

test('a peer that does not answer pings is terminated; an idle one is closed with 1001 (issue 32, point 6)', async () => {
  const { server, url } = await serve({ websocket: { pingIntervalMs: 100, idleTimeoutMs: 60_000 } });
  try {
    const live = (await open(`${url}/echo`)).ws!;
    const dead = (await open(`${url}/echo`)).ws!;
    rawSocket(dead).pause(); // never sees the ping, never answers
    await until(() => server.connections === 1, 2_000, 'the dead peer terminated');
    await new Promise((r) => setTimeout(r, 300));
    live.send('still');
    assert.is(await nextMessage(live), 'echo still', 'a peer answering pings stays');
    live.close();
    dead.terminate();
  } finally {
    await server.close();
  }
  const idle = await serve({ websocket: { pingIntervalMs: 50, idleTimeoutMs: 300 } });
  try {
    const ws = (await open(`${idle.url}/echo`)).ws!;
    const code = closed(ws);
    const t0 = performance.now();
    assert.is(await code, 1001);
    assert.ok(performance.now() - t0 >= 250, 'not before the idle timeout');
  } finally {
    await idle.server.close();
  }
});

test('idle WebSockets filling the table are evicted, oldest first, for new clients (issue 32, point 6)', async () => {
  const { server, url } = await serve({ maxConnections: 10 });
  try {
    const sockets: WebSocket[] = [];
    for (let i = 0; i < 10; i++) sockets.push((await open(`${url}/echo`)).ws!);
    const firstClosed = closed(sockets[0]!);
    sockets[1]!.send('keeps me recent');
    await nextMessage(sockets[1]!);
    const http = url.replace('ws:', 'http:');
    const r = await fetch(`${http}/echo`, { method: 'POST', headers: { 'content-type': 'application/json', connection: 'close' }, body: '{}' });
    assert.is(r.status, 426, 'a new HTTP client is served');
    await firstClosed;
    assert.is(sockets[1]!.readyState, WebSocket.OPEN, 'the recently active one stays');
    for (const ws of sockets) ws.terminate();
  } finally {
    await server.close();
  }
});

test.run();
