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
  routes: RouteTable;
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
  return { server, routes, port: address.port, logs };
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

test('a full table closes the connection idle the longest for a new one (issue 32, point 6)', async () => {
  const cap = 8;
  const { server, port, logs } = await start({ maxConnections: cap });
  try {
    const held: Socket[] = [];
    for (let i = 0; i < cap; i++) {
      held.push(await open(port));
      await new Promise((r) => setTimeout(r, 5)); // distinct connect times: held[0] is the oldest
    }
    await until(() => server.connections === cap, 1_000, 'cap sockets open');
    // The oldest idle socket has done a request since: it is now the most recently active.
    assert.match(await exchange(held[0]!), /^HTTP\/1\.1 200/);
    const closed = held.map((s) => new Promise<void>((resolve) => s.on('close', () => resolve())));
    const fresh = await open(port);
    assert.match(await exchange(fresh), /^HTTP\/1\.1 200/, 'the new connection is served');
    await closed[1]; // the one idle the longest (connected second, never used) was closed
    assert.is(server.connections, cap);
    assert.match(await exchange(held[0]!), /^HTTP\/1\.1 200/, 'the recently used one still works');
    const evicted = logs.filter((l) => l.msg === 'http connection table full: closed the connection idle the longest');
    assert.is(evicted.length, 1);
    assert.is(evicted[0]!.limit, cap);
    // Many more: each evicts an idle one, the table never grows, and the log stays one line.
    for (let i = 0; i < 20; i++) (await open(port)).on('error', () => undefined);
    await until(() => server.table.count('evicted') === 21, 2_000, 'each new socket evicted an idle one');
    assert.ok(server.connections <= cap);
    assert.is(logs.filter((l) => l.msg === 'http connection table full: closed the connection idle the longest').length, 1, 'logged rate-limited');
    fresh.destroy();
    for (const s of held) s.destroy();
  } finally {
    await server.close();
  }
});

test('only when every connection is busy with a request is the new one closed', async () => {
  const cap = 4;
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const { server, routes, port, logs } = await start({ maxConnections: cap });
  routes.mount('slow', {
    kind: 'http',
    handle: async (req, res) => {
      req.resume();
      await released;
      res.end('done');
    },
  });
  try {
    const busy = await Promise.all(Array.from({ length: cap }, () => open(port)));
    for (const s of busy) s.write('GET /ext/slow HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n');
    await until(() => server.table.bufferedBytes === 0 && server.connections === cap, 1_000, 'cap busy sockets');
    await new Promise((r) => setTimeout(r, 50));
    const extra = await open(port);
    const closed = await new Promise<boolean>((resolve) => {
      extra.on('close', () => resolve(true));
      extra.on('error', () => undefined);
      setTimeout(() => resolve(false), 2_000).unref();
    });
    assert.ok(closed, 'the socket over the cap is closed when none is idle');
    assert.ok(logs.some((l) => l.msg === 'http connection refused: every connection is busy with a request'));
    release();
    for (const s of busy) s.destroy();
  } finally {
    await server.close();
  }
});

test.run();
