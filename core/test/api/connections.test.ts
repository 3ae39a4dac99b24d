/**
 * Connection bounds of the HTTP server, with real sockets on 127.0.0.1 and short injected timeouts:
 * sockets whose headers time out are destroyed (not left half-open for a client that never reads),
 * idle keep-alive sockets close, and beyond the connection cap new sockets are refused cleanly while
 * the open ones keep working.
 */
import { connect, type Socket } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { JsonRpcEndpoint } from '../../src/api/jsonrpc.js';
import { RouteTable } from '../../src/api/routes.js';
import { HttpApiServer, type HttpServerOptions } from '../../src/api/server.js';
import { createLogger } from '../../src/log/logger.js';

interface Running {
  server: HttpApiServer;
  port: number;
  logs: Array<Record<string, unknown>>;
}

async function start(opts: Partial<HttpServerOptions>): Promise<Running> {
  const logs: Array<Record<string, unknown>> = [];
  const log = createLogger({ level: 'info', write: (line) => logs.push(JSON.parse(line)) });
  const routes = new RouteTable();
  routes.mount('rpc', { kind: 'jsonrpc', endpoint: new JsonRpcEndpoint([], { maxBatchSize: 10, log }) });
  const server = new HttpApiServer(routes, { host: '127.0.0.1', port: 0, maxBodyBytes: 4096, maxConnections: 100, log, ...opts });
  const address = await server.listen();
  return { server, port: address.port, logs };
}

function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => resolve(s));
    s.on('error', reject);
  });
}

/** Resolves once `cond` holds; fails after `ms`. */
async function until(cond: () => boolean, ms: number, what: string): Promise<void> {
  const end = performance.now() + ms;
  while (!cond()) {
    if (performance.now() > end) assert.unreachable(`${what} within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const request = (body = '{"jsonrpc":"2.0","id":1,"method":"x.y"}') =>
  `POST /ext/rpc HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`;

/** Sends one request on `s` and resolves with the whole response text. */
function exchange(s: Socket, text = request()): Promise<string> {
  return new Promise((resolve, reject) => {
    let got = '';
    const onData = (d: Buffer) => {
      got += d.toString('latin1');
      const head = got.indexOf('\r\n\r\n');
      if (head < 0) return;
      const length = Number(/content-length: (\d+)/i.exec(got.slice(0, head))?.[1] ?? 0);
      if (got.length >= head + 4 + length) {
        s.off('data', onData);
        resolve(got);
      }
    };
    s.on('data', onData);
    s.once('error', reject);
    s.write(text);
  });
}

test('sockets whose headers time out are destroyed, even when the client never reads', async () => {
  const { server, port } = await start({ timeouts: { headersMs: 150, requestMs: 300, checkIntervalMs: 25 } });
  try {
    const slow: Socket[] = [];
    for (let i = 0; i < 30; i++) {
      const s = await open(port);
      s.pause(); // never reads: a half-closed socket would stay open on the server forever
      if (i % 2 === 0) s.write('POST /ext/rpc HTTP/1.1\r\nhost: 127.0.0.1\r\n'); // headers never finished
      slow.push(s);
    }
    await until(() => server.connections === 30, 1_000, 'all slow sockets open');
    await until(() => server.connections === 0, 3_000, 'every slow socket destroyed by the server');
    const fresh = await open(port);
    assert.match(await exchange(fresh), /^HTTP\/1\.1 200/, 'the server still serves');
    fresh.destroy();
    for (const s of slow) s.destroy();
  } finally {
    await server.close();
  }
});

test('a body that never completes is bounded by the request timeout', async () => {
  const { server, port } = await start({ timeouts: { headersMs: 150, requestMs: 300, checkIntervalMs: 25 } });
  try {
    const s = await open(port);
    s.pause();
    s.write('POST /ext/rpc HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"jsonrpc"');
    await until(() => server.connections === 0, 3_000, 'the stalled request destroyed');
    s.destroy();
  } finally {
    await server.close();
  }
});

test('idle keep-alive sockets are closed after the keep-alive timeout', async () => {
  const { server, port } = await start({ timeouts: { keepAliveMs: 100, checkIntervalMs: 25 } });
  try {
    const sockets = await Promise.all(Array.from({ length: 5 }, () => open(port)));
    for (const s of sockets) assert.match(await exchange(s), /^HTTP\/1\.1 200/);
    for (const s of sockets) s.pause();
    await until(() => server.connections === 0, 3_000, 'idle keep-alive sockets closed');
    for (const s of sockets) s.destroy();
  } finally {
    await server.close();
  }
});

test('beyond --http-max-connections new sockets are closed at once; open ones keep working; logged once', async () => {
  const cap = 8;
  const { server, port, logs } = await start({ maxConnections: cap });
  try {
    const held = await Promise.all(Array.from({ length: cap }, () => open(port)));
    await until(() => server.connections === cap, 1_000, 'cap sockets open');
    for (let i = 0; i < 3; i++) {
      const extra = await open(port);
      let data = '';
      extra.on('data', (d) => (data += d));
      const closed = await new Promise<boolean>((resolve) => {
        extra.on('close', () => resolve(true));
        extra.on('error', () => undefined);
        setTimeout(() => resolve(false), 2_000).unref();
      });
      assert.ok(closed, 'the socket over the cap is closed by the server');
      assert.is(data, '', 'and nothing is served on it');
    }
    assert.is(server.connections, cap);
    for (const s of held) assert.match(await exchange(s), /^HTTP\/1\.1 200/, 'open sockets still work');
    const refusedLogs = logs.filter((l) => l.msg === 'http connections refused: limit reached');
    assert.is(refusedLogs.length, 1, 'refusals are logged rate-limited');
    assert.is(refusedLogs[0]!.limit, cap);
    held[0]!.destroy();
    await until(() => server.connections === cap - 1, 1_000, 'a slot freed');
    const again = await open(port);
    assert.match(await exchange(again), /^HTTP\/1\.1 200/, 'a new socket is served once below the cap');
    again.destroy();
    for (const s of held) s.destroy();
  } finally {
    await server.close();
  }
});

test.run();
