import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { IpcFrameDecoder, IpcReadError, ipcUrlPath, readIpcFrames } from '../../src/index.js';

const frame = (payload: Uint8Array): Uint8Array => {
  const out = new Uint8Array(4 + payload.length);
  new DataView(out.buffer).setUint32(0, payload.length, false);
  out.set(payload, 4);
  return out;
};
const bytes = (n: number, seed: number) => Uint8Array.from({ length: n }, (_, i) => (i * 7 + seed) & 0xff);

let dir: string;
let seq = 0;
test.before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cornice-ipcr-'));
});
const open = new Set<Socket>();
const servers: Server[] = [];
test.after(async () => {
  for (const s of open) s.destroy();
  for (const s of servers) s.close();
  await rm(dir, { recursive: true, force: true });
});

/** A raw frame server: `onConn` gets each accepted socket. */
async function serve(onConn: (s: Socket) => void): Promise<{ url: string; server: Server; closed: Promise<void> }> {
  const path = join(dir, `s${seq++}.ipc`);
  let closedResolve!: () => void;
  const closed = new Promise<void>((r) => (closedResolve = r));
  const server = createServer((s) => {
    open.add(s);
    s.on('close', () => {
      open.delete(s);
      closedResolve();
    });
    s.on('error', () => {});
    onConn(s);
  });
  servers.push(server);
  server.listen(path);
  await once(server, 'listening');
  return { url: `ipc://${path}`, server, closed };
}

async function rejects(p: Promise<unknown>, check: (e: unknown) => void): Promise<void> {
  try {
    await p;
  } catch (e) {
    check(e);
    return;
  }
  assert.unreachable('should have rejected');
}

async function collect(it: AsyncIterable<Uint8Array>): Promise<Uint8Array[]> {
  const out: Uint8Array[] = [];
  for await (const f of it) out.push(f.slice());
  return out;
}

test('decoder: frames split anywhere, several per chunk, empty frames', () => {
  const payloads = [bytes(10, 1), new Uint8Array(0), bytes(300, 2), bytes(1, 3), new Uint8Array(0)];
  const stream = new Uint8Array(payloads.reduce((n, p) => n + 4 + p.length, 0));
  let o = 0;
  for (const p of payloads) {
    stream.set(frame(p), o);
    o += 4 + p.length;
  }
  for (const size of [1, 2, 3, 5, 7, 64, stream.length]) {
    const d = new IpcFrameDecoder();
    const got: Uint8Array[] = [];
    for (let i = 0; i < stream.length; i += size) got.push(...d.push(stream.slice(i, i + size)).map((f) => f.slice()));
    d.end();
    assert.equal(got, payloads, `chunk size ${size}`);
    assert.is(d.pendingBytes, 0);
  }
});

test('decoder: oversized length refused from the header alone; truncation detected', () => {
  const d = new IpcFrameDecoder(100);
  assert.equal(d.push(frame(bytes(100, 0))).length, 1);
  // frames completed before the bad header in the same chunk are returned; the error waits
  const both = new Uint8Array(104 + 4);
  both.set(frame(bytes(100, 1)));
  both.set([0, 0, 0, 101], 104);
  assert.equal(d.push(both).length, 1);
  assert.is(d.error?.code, 'FrameTooLarge');
  assert.throws(() => d.end(), /frame of 101 bytes exceeds the limit of 100 bytes/);
  const d2 = new IpcFrameDecoder(100);
  try {
    d2.push(Uint8Array.of(0xff, 0xff, 0xff, 0xff));
    assert.unreachable();
  } catch (e) {
    assert.instance(e, IpcReadError);
    assert.is((e as IpcReadError).code, 'FrameTooLarge');
    assert.match((e as Error).message, /frame of 4294967295 bytes exceeds the limit of 100 bytes/);
  }
  const t = new IpcFrameDecoder();
  t.push(frame(bytes(10, 0)).subarray(0, 9));
  assert.is(t.pendingBytes, 9);
  assert.throws(() => t.end(), (e: unknown) => e instanceof IpcReadError && e.code === 'Truncated' && /5 bytes of a 10-byte payload/.test(e.message));
  const h = new IpcFrameDecoder();
  h.push(Uint8Array.of(0, 0));
  assert.throws(() => h.end(), /2 bytes of a 4-byte length/);
});

test('reads frames in order until the socket closes', async () => {
  const payloads = [bytes(5, 1), new Uint8Array(0), bytes(200_000, 2), bytes(3, 3)];
  const { url, server } = await serve((s) => {
    // header and payload in separate writes, then end
    for (const p of payloads) {
      const f = frame(p);
      s.write(f.subarray(0, 2));
      s.write(f.subarray(2));
    }
    s.end();
  });
  assert.equal(await collect(readIpcFrames(url)), payloads);
  server.close();
});

test('an oversized frame length rejects at once, before its payload arrives', async () => {
  const { url, server, closed } = await serve((s) => {
    s.write(frame(bytes(8, 0)));
    s.write(Uint8Array.of(0xff, 0xff, 0xff, 0xf0)); // and never any payload
  });
  const got: Uint8Array[] = [];
  await rejects(
    (async () => {
      for await (const f of readIpcFrames(url, { maxFrameBytes: 1024 })) got.push(f);
    })(),
    (e) => {
      assert.instance(e, IpcReadError);
      assert.is((e as IpcReadError).code, 'FrameTooLarge');
    },
  );
  assert.is(got.length, 1);
  await closed; // the reader hung up
  server.close();
});

test('a stream that ends inside a frame rejects as truncated', async () => {
  const { url, server } = await serve((s) => s.end(frame(bytes(10, 0)).subarray(0, 9)));
  await rejects(collect(readIpcFrames(url)), (e) => assert.is((e as IpcReadError).code, 'Truncated'));
  server.close();
});

test('bad urls and connection failures', async () => {
  assert.is(ipcUrlPath('ipc:///tmp/x.ipc'), '/tmp/x.ipc');
  for (const u of ['http://x', 'ipc://', '/tmp/x.ipc']) {
    await rejects(collect(readIpcFrames(u)), (e) => {
      assert.is((e as IpcReadError).code, 'BadUrl');
      assert.match((e as Error).message, /not an ipc:\/\/ url/);
    });
  }
  const missing = `ipc://${join(dir, 'missing.ipc')}`;
  await rejects(collect(readIpcFrames(missing)), (e) => {
    assert.is((e as IpcReadError).code, 'Connect');
    assert.match((e as Error).message, /cannot connect to ipc:\/\/.*missing\.ipc: .*ENOENT/);
  });
});

test('abort rejects with the reason and hangs up; break hangs up', async () => {
  const { url, server, closed } = await serve((s) => s.write(frame(bytes(4, 9))));
  const ac = new AbortController();
  const it = readIpcFrames(url, { signal: ac.signal });
  const first = await it.next();
  assert.equal(first.value, bytes(4, 9));
  const pending = it.next();
  ac.abort();
  await rejects(pending, (e) => assert.is((e as Error).name, 'AbortError'));
  await closed;
  server.close();

  await rejects(collect(readIpcFrames(url, { signal: AbortSignal.abort() })), (e) => assert.is((e as Error).name, 'AbortError'));

  const second = await serve((s) => {
    s.write(frame(bytes(1, 1)));
    s.write(frame(bytes(1, 2)));
  });
  for await (const f of readIpcFrames(second.url)) {
    assert.equal(f, bytes(1, 1));
    break;
  }
  await second.closed;
  second.server.close();
});

test.run();
