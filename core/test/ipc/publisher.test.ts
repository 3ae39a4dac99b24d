import { spawnSync } from 'node:child_process';
import { EventEmitter, once } from 'node:events';
import { lstat, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Subject } from 'rxjs';
import { Id, InvalidParamsError, readIpcFrames, sha256, type LogFields, type Logger, type ReadIpcFramesOptions } from '@cornice/sdk';
import { IpcPublisher, type AcceptedBlock, type ChainLookup } from '../../src/ipc/publisher.js';
import { IpcError } from '../../src/ipc/errors.js';
import { ipcsService } from '../../src/ipc/service.js';

// ---- helpers -------------------------------------------------------------------------------------

class TestChain {
  readonly chainId: Id;
  readonly subject = new Subject<AcceptedBlock>();
  readonly accepted$ = this.subject.asObservable();
  height = 0;
  constructor(readonly alias: string) {
    this.chainId = Id.fromBytes(sha256(new TextEncoder().encode(alias)));
  }
  accept(bytes: Uint8Array): void {
    this.subject.next({ id: Id.fromBytes(sha256(bytes)), height: ++this.height, bytes });
  }
}

const lookup = (...chains: TestChain[]): ChainLookup => ({
  resolve: (a) => chains.find((c) => c.alias === a || c.chainId.toString() === a),
});

/** Block i: its index (u32 BE) then filler, `size` bytes in all (at least 4). */
const block = (i: number, size = 64): Uint8Array => {
  const b = new Uint8Array(size).fill(i % 251);
  new DataView(b.buffer).setUint32(0, i, false);
  return b;
};

/** A logger that records lines and lets a test await a message. */
class SpyLog implements Logger {
  readonly lines: Array<{ level: string; msg: string; fields?: LogFields }> = [];
  readonly #ee = new EventEmitter();
  #at(level: string, msg: string, fields?: LogFields) {
    this.lines.push({ level, msg, ...(fields ? { fields } : {}) });
    this.#ee.emit('line');
  }
  trace = (m: string, f?: LogFields) => this.#at('trace', m, f);
  debug = (m: string, f?: LogFields) => this.#at('debug', m, f);
  info = (m: string, f?: LogFields) => this.#at('info', m, f);
  warn = (m: string, f?: LogFields) => this.#at('warn', m, f);
  error = (m: string, f?: LogFields) => this.#at('error', m, f);
  fatal = (m: string, f?: LogFields) => this.#at('fatal', m, f);
  child = () => this;
  count(msg: string): number {
    return this.lines.filter((l) => l.msg === msg).length;
  }
  async waitFor(msg: string, n = 1): Promise<void> {
    while (this.count(msg) < n) await once(this.#ee, 'line');
  }
}
const CONNECTED = 'ipc reader connected';
const DROPPED = 'ipc reader dropped: not keeping up';
const STOPPED = 'ipc stopped publishing chain';

/** Reads a url in the background, keeping every frame. */
class Collector {
  readonly frames: Uint8Array[] = [];
  ended = false;
  error: unknown;
  readonly done: Promise<void>;
  readonly #ee = new EventEmitter();
  constructor(url: string, opts?: ReadIpcFramesOptions) {
    this.done = (async () => {
      try {
        for await (const f of readIpcFrames(url, opts)) {
          this.frames.push(f.slice());
          this.#ee.emit('change');
        }
      } catch (e) {
        this.error = e;
      } finally {
        this.ended = true;
        this.#ee.emit('change');
      }
    })();
  }
  async until(n: number): Promise<void> {
    while (this.frames.length < n) {
      if (this.ended) throw new Error(`stream ended after ${this.frames.length} of ${n} frames (${String(this.error)})`);
      await once(this.#ee, 'change');
    }
  }
}

const isGone = async (path: string) => {
  try {
    await lstat(path);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT';
  }
};

async function rejects(p: Promise<unknown>, code: string, re: RegExp): Promise<void> {
  try {
    await p;
  } catch (e) {
    assert.instance(e, IpcError, String(e));
    assert.is((e as IpcError).code, code);
    assert.match((e as Error).message, re);
    return;
  }
  assert.unreachable(`should have failed with ${re}`);
}

let root: string;
let n = 0;
const newDir = () => join(root, `d${n++}`);
test.before(async () => {
  root = await mkdtemp(join(tmpdir(), 'cornice-ipc-'));
});
/** Run after all tests, so that a failed test does not leave the process hanging. */
const cleanups: Array<() => unknown> = [];
test.after(async () => {
  for (const c of cleanups) await c();
  await rm(root, { recursive: true, force: true });
});

// ---- tests ---------------------------------------------------------------------------------------

test('every reader gets every block as one frame, in acceptance order', async () => {
  const a = new TestChain('A');
  const log = new SpyLog();
  const dir = newDir(); // created on publish
  const pub = new IpcPublisher({ dir, chains: lookup(a), log });
  const url = await pub.publish('A');
  assert.is(url, `ipc://${join(dir, `${a.chainId}.ipc`)}`);
  assert.ok((await lstat(join(dir, `${a.chainId}.ipc`))).isSocket());

  const readers = [new Collector(url), new Collector(url), new Collector(url)];
  await log.waitFor(CONNECTED, 3);
  const sizes = [4, 0, 100, 1_000_000, 5, 70_000, 4, 4, 300, 65_536];
  const blocks = sizes.map((s, i) => (s === 0 ? new Uint8Array(0) : block(i, s)));
  for (let i = 0; i < 60; i++) blocks.push(block(100 + i, 32 + i));
  for (const b of blocks) a.accept(b);
  for (const r of readers) {
    await r.until(blocks.length);
    assert.equal(r.frames, blocks);
  }
  await pub.close();
  for (const r of readers) {
    await r.done;
    assert.is(r.error, undefined);
    assert.is(r.frames.length, blocks.length);
  }
});

test('a reader that connects later gets the blocks from then on', async () => {
  const a = new TestChain('A');
  const log = new SpyLog();
  const pub = new IpcPublisher({ dir: newDir(), chains: lookup(a), log });
  const url = await pub.publish('A');
  a.accept(block(0)); // no reader yet: dropped on the floor
  const early = new Collector(url);
  await log.waitFor(CONNECTED, 1);
  a.accept(block(1));
  a.accept(block(2));
  await early.until(2);
  const late = new Collector(url);
  await log.waitFor(CONNECTED, 2);
  a.accept(block(3));
  a.accept(block(4));
  await early.until(4);
  await late.until(2);
  assert.equal(early.frames, [block(1), block(2), block(3), block(4)]);
  assert.equal(late.frames, [block(3), block(4)]);
  await pub.close();
});

test('publishing again (by alias or ID) returns the same url', async () => {
  const a = new TestChain('A');
  const pub = new IpcPublisher({ dir: newDir(), chains: lookup(a), log: new SpyLog() });
  const [u1, u2] = await Promise.all([pub.publish('A'), pub.publish('A')]);
  assert.is(u1, u2);
  assert.is(await pub.publish(a.chainId.toString()), u1);
  assert.ok(u1.endsWith(`/${a.chainId}.ipc`), 'named by chain ID even when an alias was given');
  await pub.close();
});

test('unpublish: errors, readers end, socket removed, publish again works', async () => {
  const a = new TestChain('A');
  const b = new TestChain('B');
  const log = new SpyLog();
  const pub = new IpcPublisher({ dir: newDir(), chains: lookup(a, b), log });
  await rejects(pub.unpublish('B'), 'NotPublishing', new RegExp(`^blockchainID not publishing: ${b.chainId}$`));
  await rejects(pub.unpublish('nope'), 'UnknownChain', /^there is no ID with alias nope$/);
  await rejects(pub.publish('nope'), 'UnknownChain', /^there is no ID with alias nope$/);

  const url = await pub.publish('A');
  const r = new Collector(url);
  await log.waitFor(CONNECTED, 1);
  a.accept(block(1));
  await r.until(1);
  await pub.unpublish(a.chainId.toString());
  await r.done;
  assert.is(r.error, undefined, 'the stream ends cleanly');
  assert.ok(await isGone(url.slice('ipc://'.length)));
  await rejects(pub.unpublish('A'), 'NotPublishing', new RegExp(`^blockchainID not publishing: ${a.chainId}$`));

  assert.is(await pub.publish('A'), url);
  const r2 = new Collector(url);
  await log.waitFor(CONNECTED, 2);
  a.accept(block(2));
  await r2.until(1);
  assert.equal(r2.frames, [block(2)]);
  await pub.close();
});

test('a stale socket file left by a crashed process is replaced; live sockets and other files are not', async () => {
  const a = new TestChain('A');
  const dir = newDir();
  const path = join(dir, `${a.chainId}.ipc`);
  // A process that listens on the path and dies without cleaning up.
  const crashed = spawnSync(process.execPath, [
    '-e',
    `require('fs').mkdirSync(${JSON.stringify(dir)}, { recursive: true });
     require('net').createServer().listen(${JSON.stringify(path)}, () => process.kill(process.pid, 'SIGKILL'));`,
  ]);
  assert.is(crashed.signal, 'SIGKILL');
  assert.ok((await lstat(path)).isSocket(), 'the stale socket file is there');

  const log = new SpyLog();
  const pub = new IpcPublisher({ dir, chains: lookup(a), log });
  const url = await pub.publish('A');
  assert.is(log.count('ipc replaced a stale socket file'), 1);
  const r = new Collector(url);
  await log.waitFor(CONNECTED, 1);
  a.accept(block(7));
  await r.until(1);

  // another publisher (as another node would) must not steal a live socket
  const other = new IpcPublisher({ dir, chains: lookup(a), log: new SpyLog() });
  await rejects(other.publish('A'), 'SocketInUse', /another process is serving it/);
  await pub.close();
  await other.close();

  // a path that is not a socket is left alone
  await writeFile(path, 'not a socket');
  const third = new IpcPublisher({ dir, chains: lookup(a), log: new SpyLog() });
  await rejects(third.publish('A'), 'Listen', /exists and is not a socket/);
  await third.close();
});

test('a reader that stops reading is dropped; the others keep getting everything', async () => {
  const a = new TestChain('A');
  const log = new SpyLog();
  const maxBufferedBytes = 64 * 1024;
  const pub = new IpcPublisher({ dir: newDir(), chains: lookup(a), log, maxBufferedBytes });
  cleanups.push(() => pub.close());
  const url = await pub.publish('A');
  // The slow reader connects and never reads.
  const slow = createConnection(url.slice('ipc://'.length));
  cleanups.push(() => slow.destroy());
  await once(slow, 'connect');
  const fast = new Collector(url);
  await log.waitFor(CONNECTED, 2);

  const size = 32 * 1024;
  const sent: Uint8Array[] = [];
  while (log.count(DROPPED) === 0 && sent.length < 2000) {
    const b = block(sent.length, size);
    sent.push(b);
    a.accept(b);
    await fast.until(sent.length); // the fast reader keeps up
  }
  assert.is(log.count(DROPPED), 1);
  const dropped = log.lines.find((l) => l.msg === DROPPED)!;
  assert.is(dropped.level, 'warn');
  assert.ok((dropped.fields!.bufferedBytes as number) > maxBufferedBytes);
  assert.is(dropped.fields!.maxBufferedBytes, maxBufferedBytes);

  for (let i = 0; i < 20; i++) {
    const b = block(sent.length, size);
    sent.push(b);
    a.accept(b);
    await fast.until(sent.length);
  }
  assert.equal(fast.frames, sent);
  assert.is(log.count(DROPPED), 1);

  // the slow reader's connection was closed, having got less than everything
  let got = 0;
  slow.on('data', (d: Buffer) => (got += d.length));
  slow.on('error', () => {});
  await once(slow, 'close');
  assert.ok(got < sent.length * (size + 4), `slow reader got ${got} bytes`);
  await pub.close();
});

test('the sdk reader refuses an oversized frame', async () => {
  const a = new TestChain('A');
  const log = new SpyLog();
  const pub = new IpcPublisher({ dir: newDir(), chains: lookup(a), log });
  const url = await pub.publish('A');
  const r = new Collector(url, { maxFrameBytes: 100 });
  await log.waitFor(CONNECTED, 1);
  a.accept(block(1, 100));
  a.accept(block(2, 101));
  await r.done;
  assert.equal(r.frames, [block(1, 100)]);
  assert.is((r.error as { code?: string }).code, 'FrameTooLarge');
  assert.match((r.error as Error).message, /frame of 101 bytes exceeds the limit of 100 bytes/);
  await pub.close();
});

test('close removes every socket, ends the readers and refuses new publishing', async () => {
  const a = new TestChain('A');
  const b = new TestChain('B');
  const log = new SpyLog();
  const pub = new IpcPublisher({ dir: newDir(), chains: lookup(a, b), log });
  const urls = [await pub.publish('A'), await pub.publish('B')];
  const readers = urls.map((u) => new Collector(u));
  await log.waitFor(CONNECTED, 2);
  await pub.close();
  for (const r of readers) await r.done;
  for (const u of urls) assert.ok(await isGone(u.slice('ipc://'.length)), `${u} removed`);
  await rejects(pub.publish('A'), 'Closed', /closed/);
  await pub.close(); // idempotent
});

test('when a chain stream ends, the chain is unpublished', async () => {
  const a = new TestChain('A');
  const log = new SpyLog();
  const pub = new IpcPublisher({ dir: newDir(), chains: lookup(a), log });
  const url = await pub.publish('A');
  const r = new Collector(url);
  await log.waitFor(CONNECTED, 1);
  a.subject.complete();
  await log.waitFor(STOPPED, 1);
  await r.done;
  assert.ok(await isGone(url.slice('ipc://'.length)));
  await rejects(pub.unpublish('A'), 'NotPublishing', /blockchainID not publishing/);
  await pub.close();
});

test('ipcs service: publishBlockchain and unpublishBlockchain', async () => {
  const a = new TestChain('A');
  const pub = new IpcPublisher({ dir: newDir(), chains: lookup(a), log: new SpyLog() });
  const svc = ipcsService(pub);
  assert.equal([...svc.methods.keys()], ['ipcs.publishBlockchain', 'ipcs.unpublishBlockchain']);
  const res = (await svc.methods.get('ipcs.publishBlockchain')!({ blockchainID: 'A' })) as { url: string };
  assert.is(res.url, `ipc://${join(root, `d${n - 1}`, `${a.chainId}.ipc`)}`);
  assert.equal(await svc.methods.get('ipcs.unpublishBlockchain')!([{ blockchainID: 'A' }]), { success: true });
  try {
    await svc.methods.get('ipcs.unpublishBlockchain')!({ blockchainID: 'A' });
    assert.unreachable();
  } catch (e) {
    assert.match((e as Error).message, /^blockchainID not publishing: /);
  }
  // An unknown field is ignored, as the reference node's JSON decoding ignores it.
  try {
    assert.is(((await svc.methods.get('ipcs.publishBlockchain')!({ blockchainID: 'A', extra: 1 })) as { url: string }).url, res.url);
    assert.equal(await svc.methods.get('ipcs.unpublishBlockchain')!({ blockchainID: 'A', extra: 1 }), { success: true });
  } finally {
    await pub.close();
  }
  try {
    await svc.methods.get('ipcs.publishBlockchain')!({ blockchainID: 7 });
    assert.unreachable();
  } catch (e) {
    assert.instance(e, InvalidParamsError);
  }
});

test.run();
