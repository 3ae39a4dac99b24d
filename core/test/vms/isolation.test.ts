// A VM in a worker thread (--vm-isolation): the host's WorkerVM against the fixture tinyvm.js, with
// every part of the ChainContext crossing, and the faults (a loop, a crash) confined to the worker.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  hasErrorCode,
  Id,
  isInvalidParamsError,
  isNodeError,
  isNotFoundError,
  MemoryStore,
  NodeError,
  PrefixedStore,
  ShortId,
  utf8Decode,
  utf8Encode,
  type BoundService,
  type ChainContext,
  type ChainHandler,
  type KeyRange,
  type KeyValueStore,
  type Clock,
  type Logger,
  type WebSocketConnection,
} from '@cornice/sdk';
import { chainVMCompliance, sharedMemoryFor, testChainContext } from '../../src/testing/index.js';
import { WorkerVM, workerFactory } from '../../src/vms/isolation/host.js';
import { isolationPlan } from '../../src/vms/isolation/plan.js';
import { loadVMs } from '../../src/vms/loader.js';
import { createLogger } from '../../src/log/logger.js';
import { SYSTEM_CLOCK } from '../../src/consensus/snowman/clock.js';
import { captureLog } from '../helpers/log.js';

const TINY = fileURLToPath(new URL('../../../test/vms/fixtures/isolation/tinyvm.js', import.meta.url));
const TINY_URL = pathToFileURL(TINY).href;
const CHAIN = Id.fromBytes(new Uint8Array(32).fill(7));
const PEER = Id.fromBytes(new Uint8Array(32).fill(0x11));

interface Setup {
  vm: WorkerVM;
  ctx: ChainContext;
  root: MemoryStore;
  abort: AbortController;
  log: ReturnType<typeof captureLog>;
  gossip: Uint8Array[];
  faults: string[];
  metrics: Array<[string, string, number]>;
  userStores: Map<string, MemoryStore>;
  pages: KeyRange[];
  writes: number;
  /** While set, the chain store's batches wait for it before writing. */
  writeGate: Promise<void> | undefined;
  /** While set, the chain store's batches fail with it. */
  writeFailure: Error | undefined;
  handlers: ChainHandler[];
  call(method: string, params?: unknown): Promise<unknown>;
  stop(): Promise<void>;
}

/** Counts the batches the chain store writes and the iterations it opens; its batches may be held or failed. */
function counting(store: KeyValueStore, s: { pages: KeyRange[]; writes: number; writeGate: Promise<void> | undefined; writeFailure: Error | undefined }): KeyValueStore {
  return {
    get: (k) => store.get(k),
    has: (k) => store.has(k),
    put: (k, v) => store.put(k, v),
    delete: (k) => store.delete(k),
    batch: () => {
      const b = store.batch();
      const write = b.write.bind(b);
      const failOrWrite = () => (s.writeFailure ? Promise.reject(s.writeFailure) : write());
      return Object.assign(b, { write: () => ((s.writes += 1), s.writeGate ? s.writeGate.then(failOrWrite) : failOrWrite()) });
    },
    iterate: (r) => (s.pages.push(r ?? {}), store.iterate(r)),
    close: () => store.close(),
  };
}

async function setup(o: { callTimeoutMs?: number; shutdownTimeoutMs?: number; now?: () => number; clock?: Clock; logger?: Logger } = {}): Promise<Setup> {
  const root = new MemoryStore();
  const log = captureLog();
  const abort = new AbortController();
  const s = {
    gossip: [] as Uint8Array[],
    faults: [] as string[],
    metrics: [] as Array<[string, string, number]>,
    userStores: new Map<string, MemoryStore>(),
    pages: [] as KeyRange[],
    writes: 0,
    writeGate: undefined as Promise<void> | undefined,
    writeFailure: undefined as Error | undefined,
  };
  const chainDb = new PrefixedStore(root, 'chain');
  const base = testChainContext({ chainId: CHAIN, log, signal: abort.signal, network: { gossip: (p) => s.gossip.push(p) }, debugApis: true });
  const ctx: ChainContext = {
    ...base,
    db: counting(chainDb, s),
    aliases: ['tiny', 'T'],
    nativeAsset: { id: Id.fromBytes(new Uint8Array(32).fill(3)), symbol: 'AVA' },
    clock: o.clock ?? { now: o.now ?? (() => 1_700_000_000_000) },
    ...(o.logger ? { log: o.logger } : {}),
    sharedMemory: sharedMemoryFor(new PrefixedStore(root, 'shared'), CHAIN),
    keystore: {
      openUser: async (username, password) => {
        if (password !== 'pw') throw new (await import('@cornice/sdk')).NodeError('BadPassword', 'incorrect password');
        let store = s.userStores.get(username);
        if (!store) s.userStores.set(username, (store = new MemoryStore()));
        return store;
      },
    },
    validators: { list: async () => [{ nodeId: ShortId.fromBytes(new Uint8Array(20).fill(9)), weight: 20n }] },
    metrics: {
      counter: (name) => ({ inc: (by = 1) => void s.metrics.push(['counter', name, by]) }),
      gauge: (name) => ({ set: (v) => void s.metrics.push(['gauge', name, v]) }),
      histogram: (name) => ({ observe: (v) => void s.metrics.push(['histogram', name, v]) }),
    },
  };
  const vm = new WorkerVM({ moduleUrl: TINY_URL, callTimeoutMs: o.callTimeoutMs ?? 10_000, shutdownTimeoutMs: o.shutdownTimeoutMs ?? 5_000, maxBodyBytes: 1024 });
  vm.onFault((r) => s.faults.push(r));
  await vm.initialize(ctx, { genesis: utf8Encode('hello') });
  await vm.setState('bootstrapping');
  await vm.setState('normalOp');
  const handlers = await vm.createHandlers();
  const service = handlers[0]!.services![0] as BoundService;
  return Object.assign(s, {
    vm,
    ctx,
    root,
    abort,
    log,
    handlers,
    call: (method: string, params: unknown = {}) => service.methods.get(`tiny.${method}`)!(params),
    stop: () => vm.shutdown(),
  });
}

async function buildAndAccept(t: Setup, data: string) {
  await t.call('propose', { data });
  const ac = new AbortController();
  assert.is(await t.vm.waitForEvent(ac.signal), 'pendingTxs');
  const b = await t.vm.buildBlock();
  await b.verify();
  await t.vm.setPreference(b.id);
  await b.accept();
  return b;
}

const until = async (cond: () => boolean, ms = 5000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
};

test('the context crosses: IDs, aliases, native asset, debugApis (--evm-debug-api), clock (the host clock), validators', async () => {
  let now = 1_700_000_000_000;
  const t = await setup({ now: () => now });
  try {
    assert.equal(await t.call('context'), {
      networkId: 12345,
      chainId: CHAIN.toString(),
      subnetId: Id.empty.toString(),
      nodeId: ShortId.fromBytes(new Uint8Array(20).fill(1)).toString(),
      vmId: Id.empty.toString(),
      aliases: ['tiny', 'T'],
      nativeAsset: { id: Id.fromBytes(new Uint8Array(32).fill(3)).toString(), symbol: 'AVA' },
      aborted: false,
      debugApis: true,
    });
    assert.equal(await t.call('now'), { now: 1_700_000_000_000 });
    now += 5_000;
    assert.equal(await t.call('now'), { now: 1_700_000_005_000 });
    assert.equal(await t.call('validators'), [{ nodeId: ShortId.fromBytes(new Uint8Array(20).fill(9)).toString(), weight: '20' }]);
    t.abort.abort();
    assert.is(((await t.call('context')) as { aborted: boolean }).aborted, true);
  } finally {
    await t.stop();
  }
});

test('blocks cross as bytes; accept writes the chain store, shared memory joins the same batch', async () => {
  const t = await setup();
  try {
    const genesis = await t.vm.getBlock(await t.vm.lastAccepted());
    assert.is(genesis.height, 0);
    const writesBefore = t.writes;
    const b = await buildAndAccept(t, 'export:a');
    assert.is(b.height, 1);
    assert.is(b.timestamp, 1_700_000_000);
    assert.ok(b.parentId.equals(genesis.id));
    assert.is(t.writes - writesBefore, 1, 'one batch for the block and its shared-memory export');
    assert.ok((await t.vm.lastAccepted()).equals(b.id));
    assert.ok((await t.vm.getBlockIdAtHeight(1)).equals(b.id));
    const parsed = await t.vm.parseBlock(b.bytes);
    assert.ok(parsed.id.equals(b.id));
    // The peer chain sees the export: shared memory written in the block's batch.
    const peerSide = sharedMemoryFor(new PrefixedStore(t.root, 'shared'), PEER);
    const [value] = await peerSide.get(CHAIN, [utf8Encode('a')]);
    assert.ok(value && Id.fromBytes(value).equals(b.id));
    assert.ok(t.gossip.some((g) => utf8Decode(g) === 'export:a'), 'gossip crossed');
    assert.ok(t.metrics.some(([kind, name]) => kind === 'counter' && name === 'tiny_built'), 'metrics crossed');
    const line = t.log.lines.find((l) => l.msg === 'tiny initialized');
    assert.is(line?.level, 'info');
    assert.is(line?.fields?.big, '5');
    try {
      await t.vm.getBlock(Id.fromBytes(new Uint8Array(32).fill(0xab)));
      assert.unreachable('unknown block');
    } catch (e) {
      assert.ok(isNotFoundError(e), 'NotFoundError recognised by brand on the host');
    }
  } finally {
    await t.stop();
  }
});

test('iteration crosses in pages of 256 entries, in order, with limit and reverse', async () => {
  const t = await setup();
  try {
    const tiny = new PrefixedStore(new PrefixedStore(t.root, 'chain'), 'tiny');
    for (let h = 1; h <= 600; h++) await tiny.put(utf8Encode(`h/${String(h).padStart(10, '0')}`), new Uint8Array(32).fill(h % 256));
    t.pages.length = 0;
    const all = (await t.call('heights')) as Array<[string, string]>;
    assert.is(all.length, 601);
    assert.is(all[0]![0], 'h/0000000000');
    assert.is(all[600]![0], 'h/0000000600');
    assert.is(t.pages.length, 3, 'three pages for 601 entries');
    const last = (await t.call('heights', { limit: 300, reverse: true })) as Array<[string, string]>;
    assert.is(last.length, 300);
    assert.is(last[0]![0], 'h/0000000600');
    assert.is(last[299]![0], 'h/0000000301');
  } finally {
    await t.stop();
  }
});

test('service errors keep their code, message, data and field; keystore and shared memory reads cross', async () => {
  const t = await setup();
  try {
    const failure = async (how: string) => {
      try {
        await t.call('fail', { how });
      } catch (e) {
        return e;
      }
      throw new Error('did not fail');
    };
    const params = await failure('params');
    assert.ok(isInvalidParamsError(params));
    assert.is((params as { field?: string }).field, 'how');
    assert.is((params as Error).message, 'how: is not good');
    assert.ok(isNotFoundError(await failure('notfound')));
    const withData = await failure('data');
    assert.ok(hasErrorCode(withData, 'WithData'));
    assert.equal((withData as { data?: unknown }).data, { n: '1', list: [1, 2] });
    const plain = await failure('plain');
    assert.is((plain as Error).message, 'plain failure');
    try {
      await t.call('propose', { data: 5 });
      assert.unreachable();
    } catch (e) {
      assert.ok(isInvalidParamsError(e), 'params parsed in the worker, error crosses');
    }

    assert.equal(await t.call('user', { username: 'alice', password: 'pw', value: 'one' }), { before: null });
    assert.equal(await t.call('user', { username: 'alice', password: 'pw', value: 'two' }), { before: 'one' });
    assert.is(utf8Decode((await t.userStores.get('alice')!.get(utf8Encode('v')))!), 'two');
    try {
      await t.call('user', { username: 'alice', password: 'nope', value: 'x' });
      assert.unreachable();
    } catch (e) {
      assert.ok(hasErrorCode(e, 'BadPassword'));
    }

    const peerSide = sharedMemoryFor(new PrefixedStore(t.root, 'shared'), PEER);
    const b = peerSide.apply.bind(peerSide);
    const batch = new PrefixedStore(t.root, 'x').batch();
    b(CHAIN, { put: [[utf8Encode('a'), utf8Encode('A')], [utf8Encode('b'), utf8Encode('B')]] }, batch);
    await batch.write();
    assert.equal(await t.call('imports'), { list: [['a', 'A'], ['b', 'B']], a: 'A' });
  } finally {
    await t.stop();
  }
});

test('raw HTTP and WebSocket handlers cross', async () => {
  const t = await setup();
  let server: Server | undefined;
  try {
    assert.equal(t.handlers.map((h) => h.path), ['', 'raw', 'ws']);
    const http = t.handlers[1]!.http!;
    server = createServer((req, res) => void http(req, res));
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/x?y=1`;
    const res = await fetch(url, { method: 'POST', body: 'hi there' });
    assert.is(res.status, 201);
    assert.is(res.headers.get('x-tiny'), 'yes');
    assert.is(await res.text(), 'POST /x?y=1 hi there');
    const big = await fetch(url, { method: 'POST', body: 'x'.repeat(2000) });
    assert.is(big.status, 413);

    const sent: string[] = [];
    let onMessage: (text: string) => void = () => {};
    let onClose: () => void = () => {};
    const conn: WebSocketConnection = {
      send: (text) => void sent.push(text),
      close: () => onClose(),
      onMessage: (l) => void (onMessage = l),
      onClose: (l) => void (onClose = l),
      closed: false,
    };
    t.handlers[2]!.websocket!(conn);
    onMessage('ping');
    await until(() => sent.length > 0);
    assert.equal(sent, ['echo ping']);
  } finally {
    server?.close();
    await t.stop();
  }
});

const served = (t: Setup, op: string) => t.vm.served.get(op) ?? 0;

test('a block built on the last accepted one reads it from the worker cache: its propose -> accept sends the host one store message (the write, behind)', async () => {
  const t = await setup();
  try {
    await buildAndAccept(t, 'one');
    const before = new Map(t.vm.served);
    const b = await buildAndAccept(t, 'two');
    assert.is(b.height, 2);
    const delta = (op: string) => served(t, op) - (before.get(op) ?? 0);
    assert.is(delta('db.get'), 0, 'the parent block, written by the last accept, is not fetched');
    assert.is(delta('db.writeBehind'), 1);
    assert.is(delta('db.write'), 0);
    // What the accept wrote is what a read returns after it, without a fetch.
    assert.ok((await t.vm.getBlockIdAtHeight(2)).equals(b.id));
    assert.is(delta('db.get'), 0);
  } finally {
    await t.stop();
  }
});

/** Messages exchanged with the worker so far, both ways. */
const crossings = (t: Setup) => t.vm.messages.sent + t.vm.messages.received;

test('propose -> accept of a block built on the last accepted one crosses 12 messages (was 18: verify and the write are no round trips of their own, setPreference goes with the accept, its answer and the write with the accept answer)', async () => {
  const t = await setup();
  try {
    await buildAndAccept(t, 'one');
    const before = crossings(t);
    await buildAndAccept(t, 'two');
    // propose 2 (and its gossip 1), waitForEvent 2, buildBlock with verify 2 (and its clock read 1,
    // metric 1, debug line 1), setPreference 0 (it went with the accept), accept 2 (its answer with
    // the write and setPreference's answer)
    assert.is(crossings(t) - before, 12);
  } finally {
    await t.stop();
  }
});

test('a block built on the preferred tip is verified within buildBlock: the engine verify of it does not cross; the VM sees the calls in the engine order', async () => {
  const t = await setup();
  try {
    await buildAndAccept(t, 'one');
    await t.call('calls');
    const b = await buildAndAccept(t, 'two');
    assert.equal(await t.call('calls'), ['buildBlock two', 'verify two', 'setPreference two', 'accept two']);
    assert.is(b.height, 2);
    await t.call('propose', { data: 'bad' });
    const bad = await t.vm.buildBlock();
    const before = crossings(t);
    try {
      await bad.verify();
      assert.unreachable('a bad block fails verify');
    } catch (e) {
      assert.ok(hasErrorCode(e, 'BadBlock'), String(e));
      assert.is((e as Error).message, 'this block is bad');
    }
    assert.is(crossings(t), before, 'its failure came with the build');
    assert.equal(await t.call('calls'), ['buildBlock bad', 'verify bad']);
    // Built on a block that failed verify: the engine would not verify it, so neither does the
    // worker; a verify called anyway crosses.
    await t.vm.setPreference(bad.id);
    await t.call('propose', { data: 'child' });
    const child = await t.vm.buildBlock();
    assert.equal(await t.call('calls'), ['setPreference bad', 'buildBlock child']);
    const beforeChild = crossings(t);
    await child.verify();
    assert.is(crossings(t) - beforeChild, 2);
  } finally {
    await t.stop();
  }
});

test('before the worker saw an accept, a built block is not verified ahead (its verify crosses)', async () => {
  const t = await setup();
  try {
    await t.call('propose', { data: 'one' });
    const b = await t.vm.buildBlock();
    assert.equal(await t.call('calls'), ['buildBlock one']);
    const before = crossings(t);
    await b.verify();
    assert.is(crossings(t) - before, 2);
  } finally {
    await t.stop();
  }
});

test('a verify that outlasts half the deadline: buildBlock answers without it, its outcome follows as an event (no request)', async () => {
  const t = await setup({ callTimeoutMs: 400 });
  try {
    await buildAndAccept(t, 'one');
    await t.call('calls');
    await t.call('propose', { data: 'slow-verify' });
    const b = await t.vm.buildBlock(); // answers after ~200 ms; the verify takes 300
    const sent = t.vm.messages.sent;
    await b.verify();
    assert.is(t.vm.messages.sent, sent, 'no verify request');
    assert.is(served(t, 'verified'), 1);
    assert.equal(await t.call('calls'), ['buildBlock slow-verify', 'verify slow-verify']);
    assert.equal(t.faults, []);
  } finally {
    await t.stop();
  }
});

/** After an accepted block "one": a block of `data`, built and verified, not accepted. */
async function verifiedChild(t: Setup, data: string) {
  await buildAndAccept(t, 'one');
  await t.call('propose', { data });
  const b = await t.vm.buildBlock();
  await b.verify();
  return b;
}

test('an accept writes behind: the worker answers without waiting for the write; the host reports the accept, and answers later store requests, once it is stored', async () => {
  const t = await setup();
  try {
    const b = await verifiedChild(t, 'two');
    let open!: () => void;
    t.writeGate = new Promise<void>((r) => (open = r));
    const before = t.vm.messages;
    let accepted = false;
    const accepting = b.accept().then(() => (accepted = true));
    accepting.catch(() => undefined); // awaited below; a failed check must not leave it unhandled
    // The accept request out; the write (an event) with the accept's answer back, while the write waits.
    await until(() => t.vm.messages.received - before.received === 1);
    assert.is(served(t, 'db.writeBehind'), 2, 'this write and the one of block one');
    assert.is(t.vm.messages.sent - before.sent, 1);
    assert.is(accepted, false, 'not reported before the write is stored');
    let heights: unknown;
    const reading = t.call('heights', {}).then((h) => (heights = h));
    reading.catch(() => undefined);
    await new Promise((r) => setTimeout(r, 50));
    assert.is(heights, undefined, 'a store request waits for the write behind');
    t.writeGate = undefined;
    open();
    await accepting;
    await reading;
    assert.equal((heights as string[][]).map(([k]) => k), ['h/0000000000', 'h/0000000001', 'h/0000000002']);
  } finally {
    await t.stop();
  }
});

test('a failed write behind fails the accept with the store error, and every later request on the chain store', async () => {
  const t = await setup();
  try {
    const b = await verifiedChild(t, 'two');
    t.writeFailure = new NodeError('StorageFailed', 'disk full');
    try {
      await b.accept();
      assert.unreachable('the accept fails');
    } catch (e) {
      assert.ok(hasErrorCode(e, 'StorageFailed'), String(e));
    }
    t.writeFailure = undefined;
    try {
      await t.call('heights', {});
      assert.unreachable('the store is failed');
    } catch (e) {
      assert.match(String((e as Error).message), 'disk full');
    }
  } finally {
    await t.stop();
  }
});

test('a context with the node system clock: the worker reads its own clock, without crossing (no systemClock option needed)', async () => {
  const t = await setup({ clock: SYSTEM_CLOCK });
  try {
    const before = Date.now();
    const { now } = (await t.call('now')) as { now: number };
    assert.ok(now >= before && now <= Date.now() + 1, String(now));
    await buildAndAccept(t, 'one');
    assert.is(served(t, 'clock'), 0);
  } finally {
    await t.stop();
  }
});

test('log lines below the chain logger level are dropped in the worker, without crossing', async () => {
  const lines: string[] = [];
  const t = await setup({ logger: createLogger({ level: 'info', write: (l) => void lines.push(l) }) });
  try {
    const logsBefore = served(t, 'log');
    await buildAndAccept(t, 'one'); // buildBlock logs 'tiny building' at debug
    assert.is(served(t, 'log'), logsBefore, 'no debug line crossed');
    assert.ok(lines.some((l) => l.includes('"tiny initialized"')), 'info lines still cross');
    assert.ok(!lines.some((l) => l.includes('tiny building')));
  } finally {
    await t.stop();
  }
  const all = await setup();
  try {
    await buildAndAccept(all, 'one');
    assert.ok(all.log.lines.some((l) => l.msg === 'tiny building' && l.level === 'debug'), 'a logger writing debug gets it');
  } finally {
    await all.stop();
  }
});

test('setPreference is not waited for; the next engine call runs after it in the worker, and its failure is logged', async () => {
  const t = await setup();
  try {
    const b1 = await buildAndAccept(t, 'one');
    await t.call('propose', { data: 'two' });
    const b2 = await t.vm.buildBlock();
    await b2.verify();
    await t.call('holdPreference', { fail: false });
    // Resolves while the VM's setPreference still waits on its gate.
    await Promise.race([t.vm.setPreference(b2.id), new Promise((_, reject) => setTimeout(() => reject(new Error('setPreference was waited for')), 2000))]);
    await t.call('propose', { data: 'three' });
    let built: Awaited<ReturnType<typeof t.vm.buildBlock>> | undefined;
    const building = t.vm.buildBlock().then((b) => (built = b));
    await t.call('context'); // a service call is not held back: a round trip later, buildBlock still waits
    assert.is(built, undefined, 'buildBlock waits for the running setPreference');
    await t.call('releasePreference');
    await building;
    assert.ok(built!.parentId.equals(b2.id), 'built on the preference set before it');
    assert.ok(!built!.parentId.equals(b1.id));
    await t.call('holdPreference', { fail: true });
    await t.vm.setPreference(b1.id);
    await t.call('releasePreference');
    await until(() => t.log.lines.some((l) => l.msg === 'VM setPreference failed'));
    const line = t.log.lines.find((l) => l.msg === 'VM setPreference failed')!;
    assert.is(line.level, 'error');
    assert.is(line.fields?.blockId, b1.id.toString());
    assert.equal(t.faults, []);
  } finally {
    await t.stop();
  }
});

test('a setPreference stuck in a synchronous loop still meets the deadline: the worker is terminated, the fault reported', async () => {
  const t = await setup({ callTimeoutMs: 300 });
  await t.call('propose', { data: 'pref-loop' });
  await t.vm.setPreference(Id.fromBytes(new Uint8Array(32).fill(0xee))).catch(() => undefined);
  await until(() => t.faults.length > 0);
  assert.equal(t.faults, ['vm.setPreference did not settle within 300 ms; its VM worker was terminated']);
  await t.stop();
});

test('waitForEvent rejects when its signal aborts (the abort crosses)', async () => {
  const t = await setup();
  try {
    const ac = new AbortController();
    const p = t.vm.waitForEvent(ac.signal);
    setTimeout(() => ac.abort(), 10);
    try {
      await p;
      assert.unreachable();
    } catch (e) {
      assert.ok(isNodeError(e));
    }
  } finally {
    await t.stop();
  }
});

test('a synchronous loop in buildBlock: the worker is terminated at the deadline and the fault reported', async () => {
  const t = await setup({ callTimeoutMs: 300 });
  await t.call('propose', { data: 'loop' });
  const started = Date.now();
  try {
    await t.vm.buildBlock();
    assert.unreachable();
  } catch (e) {
    assert.ok(hasErrorCode(e, 'WorkerTimeout'), String(e));
  }
  assert.ok(Date.now() - started < 3000);
  assert.equal(t.faults, ['vm.buildBlock did not settle within 300 ms; its VM worker was terminated']);
  try {
    await t.vm.lastAccepted();
    assert.unreachable();
  } catch (e) {
    assert.ok(hasErrorCode(e, 'WorkerGone'));
  }
  await t.stop(); // resolves at once: the worker is gone
});

test('an uncaught exception in the worker reports a fault (the chain halts, not the process)', async () => {
  const t = await setup();
  await t.call('propose', { data: 'crash' });
  await until(() => t.faults.length > 0);
  assert.match(t.faults[0]!, /its VM worker failed: Error: tiny crashed/);
  await t.stop();
});

test('shutdown terminates a worker that does not stop within its bound, without a fault', async () => {
  const t = await setup({ callTimeoutMs: 20_000, shutdownTimeoutMs: 200 });
  const one = await buildAndAccept(t, 'one');
  // Parsed, not built: its verify crosses on its own (a built one is verified within buildBlock).
  const b = await t.vm.parseBlock(utf8Encode(JSON.stringify({ parent: one.id.toString(), height: 2, time: 0, data: 'block-on-verify' })));
  void b.verify().catch(() => {});
  await new Promise((r) => setTimeout(r, 50));
  const started = Date.now();
  await t.stop().catch(() => {});
  assert.ok(Date.now() - started < 3000, 'shutdown is bounded');
  assert.equal(t.faults, []);
});

test('a worker whose module has no vmFactory fails initialize clearly', async () => {
  const vm = new WorkerVM({ moduleUrl: pathToFileURL(fileURLToPath(new URL('../../../test/vms/fixtures/no-export.js', import.meta.url))).href, callTimeoutMs: 5000, shutdownTimeoutMs: 1000, maxBodyBytes: 1024 });
  try {
    await vm.initialize(testChainContext(), { genesis: new Uint8Array() });
    assert.unreachable();
  } catch (e) {
    assert.match((e as Error).message, /exports no vmFactory/);
  }
  await vm.shutdown();
});

test('a worker whose module never finishes loading meets the start deadline; start-up does not count against the call deadline', async () => {
  const vm = new WorkerVM({ moduleUrl: pathToFileURL(fileURLToPath(new URL('../../../test/vms/fixtures/never-loads.js', import.meta.url))).href, callTimeoutMs: 100, startTimeoutMs: 500, shutdownTimeoutMs: 1000, maxBodyBytes: 1024 });
  const faults: string[] = [];
  vm.onFault((r) => faults.push(r));
  try {
    await vm.initialize(testChainContext(), { genesis: new Uint8Array() });
    assert.unreachable();
  } catch (e) {
    assert.ok(hasErrorCode(e, 'WorkerTimeout'), String(e));
  }
  assert.equal(faults, ['vm.load did not settle within 500 ms; its VM worker was terminated']);
  await vm.shutdown();
});

test('isolationPlan: named VMs and all get worker factories; unknown names and VMs without a file are refused', async () => {
  const vms = await loadVMs({ specifiers: [TINY], cwd: process.cwd(), log: captureLog() });
  const tiny = vms.resolve('tinyvm');
  const opts = { callTimeoutMs: 1000, shutdownTimeoutMs: 1000, maxBodyBytes: 1024 };
  assert.is(isolationPlan([], vms, opts, captureLog())(tiny), tiny);
  const wrapped = isolationPlan(['tinyvm=worker'], vms, opts, captureLog())(tiny);
  assert.is.not(wrapped, tiny);
  assert.ok(wrapped.vmId.equals(tiny.vmId));
  assert.ok((await wrapped.create()) instanceof WorkerVM);
  assert.ok(wrapped.checkGenesis, 'checkGenesis stays in the main thread');
  assert.ok((await isolationPlan(['all'], vms, opts, captureLog())(tiny).create()) instanceof WorkerVM);
  assert.throws(() => isolationPlan(['nope=worker'], vms, opts, captureLog()), /no loaded VM is named nope/);
  assert.throws(() => isolationPlan(['tinyvm=process'], vms, opts, captureLog()), /the only isolation is worker/);
  vms.register({ ...workerFactory(tiny, { ...opts, moduleUrl: TINY_URL }), name: 'incode', vmId: Id.fromBytes(new Uint8Array(32).fill(5)) }, 'builtin');
  assert.throws(() => isolationPlan(['incode=worker'], vms, opts, captureLog()), /not loaded from a module file/);
});

for (const check of chainVMCompliance({ name: 'tinyvm', version: '1.0.0', vmId: Id.empty, create: () => ({}) as never }, {
  genesis: utf8Encode('g'),
  worker: { moduleUrl: TINY_URL },
  makePending: async (vm) => {
    const [h] = await vm.createHandlers();
    await h!.services![0]!.methods.get('tiny.propose')!({ data: `d${Math.random()}` });
  },
})) test(check.name, check.run);

test.run();
