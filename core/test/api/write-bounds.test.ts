/**
 * What the server holds for clients that do not read (issue 32, point 10), with real sockets on
 * 127.0.0.1: replies go out with backpressure, a connection whose reply makes no progress for
 * --http-write-timeout is closed, and reply bytes waiting over all connections stay under
 * --http-max-buffered-bytes (a reply that does not fit is refused with 503, -32000). A client that
 * reads gets every byte, however large the reply.
 */
import { connect, type Socket } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { bindService, defineService, method, p, result } from '@cornice/sdk';
import { JsonRpcEndpoint } from '../../src/api/jsonrpc.js';
import { RouteTable } from '../../src/api/routes.js';
import { HttpApiServer, type HttpServerOptions } from '../../src/api/server.js';
import { createLogger } from '../../src/log/logger.js';

const MiB = 1024 * 1024;
/** Larger than what the kernel buffers on a loopback socket, so a non-reader leaves bytes waiting in the node. */
const REPLY_MIB = 24;

async function start(opts: Partial<HttpServerOptions>) {
  const logs: Array<Record<string, unknown>> = [];
  const log = createLogger({ level: 'info', write: (line) => logs.push(JSON.parse(line)) });
  const routes = new RouteTable();
  const big = 'x'.repeat(REPLY_MIB * MiB);
  const svc = defineService('big', {
    get: method({ params: p.none(), result: result<string>() }),
    small: method({ params: p.none(), result: result<string>() }),
  });
  routes.mount('big', {
    kind: 'jsonrpc',
    endpoint: new JsonRpcEndpoint([bindService(svc, { get: async () => big, small: async () => 'ok' })], { maxBatchSize: 10, log }),
  });
  // A plugin-style route writing its whole reply at once (no backpressure of its own).
  routes.mount('raw', { kind: 'http', handle: (req, res) => {
      req.resume();
      res.end(big);
    },
  });
  const server = new HttpApiServer(routes, {
    host: '127.0.0.1',
    port: 0,
    maxBodyBytes: 4096,
    maxConnections: 100,
    log,
    writeTimeoutMs: 400,
    sweepIntervalMs: 50,
    maxBufferedBytes: 40 * MiB,
    ...opts,
  });
  const { port } = await server.listen();
  return { server, port, logs };
}

const call = (method: string) => {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method });
  return `POST /ext/big HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`;
};

function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => resolve(s));
    s.on('error', reject);
  });
}

/** A client that sends `request` and never reads. */
async function nonReader(port: number, request: string): Promise<{ socket: Socket }> {
  const socket = await open(port);
  socket.pause(); // a paused client never sees the server close it either: the tests watch the server
  socket.on('error', () => undefined);
  socket.write(request);
  return { socket };
}

/** Reads one whole response; resolves with its status line and body length. */
function readResponse(s: Socket): Promise<{ status: string; bodyBytes: number; body: string }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    let headEnd = -1;
    let length = -1;
    const onData = (d: Buffer) => {
      chunks.push(d);
      total += d.length;
      if (headEnd < 0) {
        const all = Buffer.concat(chunks);
        headEnd = all.indexOf('\r\n\r\n');
        if (headEnd < 0) return;
        length = Number(/content-length: (\d+)/i.exec(all.subarray(0, headEnd).toString('latin1'))?.[1] ?? 0);
      }
      if (total >= headEnd + 4 + length) {
        s.off('data', onData);
        const all = Buffer.concat(chunks);
        resolve({ status: all.subarray(0, all.indexOf('\r\n')).toString('latin1'), bodyBytes: length, body: length < 4096 ? all.subarray(headEnd + 4).toString() : '' });
      }
    };
    s.on('data', onData);
    s.once('error', reject);
  });
}

async function until(cond: () => boolean, ms: number, what: string): Promise<void> {
  const end = performance.now() + ms;
  while (!cond()) {
    if (performance.now() > end) assert.unreachable(`${what} within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

test('a client that stops reading is dropped after the write timeout; a reader gets the whole reply', async () => {
  const { server, port, logs } = await start({});
  try {
    const stuck = await nonReader(port, call('big.get'));
    await until(() => server.table.bufferedBytes > 0, 5_000, 'the reply waits for the non-reader');
    const t0 = performance.now();
    await until(() => server.table.count('stalled') === 1, 3_000, 'the non-reader dropped');
    assert.ok(performance.now() - t0 < 2_000, 'within the write timeout (400 ms) and a sweep');
    assert.is(server.table.bufferedBytes, 0, 'its bytes are released');
    assert.ok(logs.some((l) => l.msg === 'http connection closed: its client stopped reading'));
    stuck.socket.destroy();
    // A client that reads, even a 24 MiB reply, gets all of it.
    const reader = await open(port);
    reader.write(call('big.get'));
    const r = await readResponse(reader);
    assert.match(r.status, /200/);
    assert.ok(r.bodyBytes > REPLY_MIB * MiB);
    reader.destroy();
  } finally {
    await server.close();
  }
});

test('the total waiting for non-readers stays under --http-max-buffered-bytes; a reply that does not fit gets 503', async () => {
  const { server, port } = await start({ writeTimeoutMs: 60_000 });
  try {
    let peak = 0;
    const sampler = setInterval(() => (peak = Math.max(peak, server.table.bufferedBytes)), 5);
    const stuck = [];
    for (let i = 0; i < 6; i++) stuck.push(await nonReader(port, call('big.get')));
    // 6 × 24 MiB would be 144 MiB: the first fits (40 MiB bound), stalled ones are shed for later ones.
    await until(() => server.table.count('shed') >= 1, 5_000, 'a stalled non-reader shed');
    const reader = await open(port);
    reader.write(call('big.small'));
    const small = await readResponse(reader);
    assert.match(small.status, /200/, 'small replies still go out');
    clearInterval(sampler);
    assert.ok(peak <= 40 * MiB, `waiting bytes peaked at ${peak}`);
    // With every byte of the bound held by a (young) non-reader, a big reply is refused.
    const { server: s2, port: p2 } = await start({ writeTimeoutMs: 60_000, maxBufferedBytes: 30 * MiB, sweepIntervalMs: 60_000 });
    try {
      await nonReader(p2, call('big.get'));
      await until(() => s2.table.bufferedBytes > 0, 5_000, 'first reply waiting');
      const next = await open(p2);
      next.write(call('big.get'));
      const refused = await readResponse(next);
      assert.match(refused.status, /503/);
      assert.match(JSON.parse(refused.body).error.message, /^server busy: replies waiting for clients that read slowly exceed 31457280 bytes \(--http-max-buffered-bytes\)/);
      assert.is(JSON.parse(refused.body).error.code, -32000);
      next.destroy();
    } finally {
      await s2.close();
    }
    reader.destroy();
    for (const s of stuck) s.socket.destroy();
  } finally {
    await server.close();
  }
});

test("a plugin route's reply (written at once) is bounded by the same timeout", async () => {
  const { server, port } = await start({});
  try {
    const stuck = await nonReader(port, 'GET /ext/raw HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n');
    await until(() => server.table.count('stalled') === 1, 5_000, 'the non-reader of a plugin reply dropped');
    stuck.socket.destroy();
    assert.is(server.table.bufferedBytes, 0);
  } finally {
    await server.close();
  }
});

test.run();
