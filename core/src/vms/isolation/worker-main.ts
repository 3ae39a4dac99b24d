/**
 * The entry of a VM's worker thread (`--vm-isolation`): imports the plugin module, makes its VM with
 * the factory's `create()`, gives it a ChainContext whose every part is a proxy to the host (host.ts),
 * and answers the host's calls. Nothing here polls: between calls the thread waits on its port.
 */
import { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { parentPort, workerData } from 'node:worker_threads';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  Id,
  isVMFactory,
  jsonReplacer,
  rootBatchOf,
  ShortId,
  type Block,
  type ChainContext,
  type ChainHandler,
  type ChainVM,
  type KeyRange,
  type KeyValueStore,
  type LogFields,
  type Logger,
  type LogLevel,
  type SharedMemory,
  type VMMetrics,
  type WebSocketConnection,
  type WriteBatch,
} from '@cornice/sdk';
import { IsolationError } from '../errors.js';
import { useNodeSdkFallback } from '../sdk.js';
import { Channel } from './channel.js';
import { EngineView } from './engine-view.js';
import { HOLD_PREFERENCE_ANSWER_MS, ITERATE_PAGE, plainFields, toWireError, type Message, type WorkerStart } from './protocol.js';
import { StoreCache } from './store-cache.js';
import type { BlockWire, BuiltWire, ContextWire, HandlerWire, HttpRequestWire, HttpResponseWire, SharedOps, VerifyOutcome } from './wire.js';

const start = workerData as WorkerStart;
const port = parentPort!;
const channel = new Channel((m: Message) => port.postMessage(m), {
  request: (op, args) => serve(op, args),
  event: (op, args) => onEvent(op, args),
  // setPreference's answer goes with the next message (the accept's, usually): it only clears the
  // host's deadline. waitForEvent's, to the end of this turn: the service call that woke it answers
  // in the same turn, and both go as one message.
  holdAnswer: (op) => (op === 'setPreference' ? HOLD_PREFERENCE_ANSWER_MS : op === 'waitForEvent' ? 0 : undefined),
});
port.on('message', (m: Message) => channel.receive(m));

const call = (op: string, ...args: unknown[]) => channel.request(op, args);
const bad = (what: string) => new IsolationError('BadRequest', what);

// ---- the proxied ChainContext --------------------------------------------------------------------

/** Batches made by a RemoteStore: their ops (and shared-memory ops joined to them) are written by the host in one commit. */
const remoteBatches = new WeakMap<WriteBatch, { ops: Array<[Uint8Array, Uint8Array | undefined]>; shared: SharedOps[] }>();

class RemoteStore implements KeyValueStore {
  /** The chain store's (store 0) reads and writes go through a cache: this worker is its only writer. */
  constructor(
    readonly store: number,
    private readonly cache?: StoreCache,
  ) {}
  get = (key: Uint8Array): Promise<Uint8Array | undefined> => {
    const fetch = () => call('db', this.store, 'get', key) as Promise<Uint8Array | undefined>;
    return this.cache ? this.cache.get(key, fetch) : fetch();
  };
  has = (key: Uint8Array): Promise<boolean> => {
    const fetch = () => call('db', this.store, 'has', key) as Promise<boolean>;
    return this.cache ? this.cache.has(key, fetch) : fetch();
  };
  put = (key: Uint8Array, value: Uint8Array) => this.#write([[key, value]], () => call('db', this.store, 'put', key, value));
  delete = (key: Uint8Array) => this.#write([[key, undefined]], () => call('db', this.store, 'delete', key));
  batch(): WriteBatch {
    const state = { ops: [] as Array<[Uint8Array, Uint8Array | undefined]>, shared: [] as SharedOps[] };
    const store = this.store;
    const batch: WriteBatch = {
      put: (k, v) => (state.ops.push([k, v]), batch),
      delete: (k) => (state.ops.push([k, undefined]), batch),
      get length() {
        return state.ops.length;
      },
      write: () => this.#write(state.ops, () => call('db', store, 'write', state.ops, state.shared), state.shared),
    };
    remoteBatches.set(batch, state);
    return batch;
  }
  async #write(ops: Array<[Uint8Array, Uint8Array | undefined]>, send: () => Promise<unknown>, shared: SharedOps[] = []): Promise<void> {
    // While an accept runs, the chain store's writes are written behind (see `accepting`).
    const sendVoid = this.store === 0 && accepting > 0 ? async () => writeBehind(ops, shared) : async () => void (await send());
    return this.cache ? this.cache.write(ops, sendVoid) : sendVoid();
  }
  /** In pages of ITERATE_PAGE entries, each from the key after the last one seen. */
  async *iterate(range: KeyRange = {}): AsyncIterable<[Uint8Array, Uint8Array]> {
    let left = range.limit ?? Infinity;
    let after: Uint8Array | undefined;
    while (left > 0) {
      const size = Math.min(ITERATE_PAGE, left);
      const page = (await call('db', this.store, 'page', range, after, size)) as Array<[Uint8Array, Uint8Array]>;
      for (const entry of page) yield entry;
      left -= page.length;
      if (page.length < size) return;
      after = page[page.length - 1]![0];
    }
  }
  close = async () => void (this.store !== 0 && (await call('db', this.store, 'close')));
}

const sharedMemory: SharedMemory = {
  get: (peer, keys) => call('sm.get', peer.bytes, keys) as Promise<Array<Uint8Array | undefined>>,
  async *list(peer) {
    let after: Uint8Array | undefined;
    for (;;) {
      const page = (await call('sm.page', peer.bytes, after, ITERATE_PAGE)) as Array<[Uint8Array, Uint8Array]>;
      for (const entry of page) yield entry;
      if (page.length < ITERATE_PAGE) return;
      after = page[page.length - 1]![0];
    }
  },
  apply(peer, ops, batch) {
    const state = remoteBatches.get(rootBatchOf(batch) ?? batch);
    if (!state) throw bad('shared memory writes must join a batch of the chain database');
    state.shared.push([peer.bytes, ops.put ?? [], ops.remove ?? []]);
  },
};

function remoteLogger(bound: LogFields, levels: ReadonlySet<LogLevel>): Logger {
  const line = (level: Exclude<LogLevel, 'off'>) =>
    levels.has(level) ? (msg: string, fields?: LogFields) => channel.event('log', [level, msg, plainFields(fields), bound]) : () => {};
  return {
    trace: line('trace'),
    debug: line('debug'),
    info: line('info'),
    warn: line('warn'),
    error: line('error'),
    fatal: line('fatal'),
    child: (fields) => remoteLogger({ ...bound, ...plainFields(fields) }, levels),
  };
}

const metrics: VMMetrics = {
  counter: (name, help) => ({ inc: (by?: number) => channel.event('metric', ['counter', name, help, undefined, by ?? 1]) }),
  gauge: (name, help) => ({ set: (value: number) => channel.event('metric', ['gauge', name, help, undefined, value]) }),
  histogram: (name, help, buckets) => ({ observe: (value: number) => channel.event('metric', ['histogram', name, help, buckets, value]) }),
};

/**
 * The host's clock, read synchronously: post a request, then sleep on the shared flag until the host
 * wrote its time (at most 1 s; then the last value read). Without a buffer the host uses the system
 * clock and so does this thread.
 */
function hostClock(sab: SharedArrayBuffer | undefined): () => number {
  if (!sab) return () => Date.now();
  const flag = new Int32Array(sab, 0, 1);
  const value = new Float64Array(sab, 8, 1);
  return () => {
    Atomics.store(flag, 0, 0);
    channel.event('clock', []);
    Atomics.wait(flag, 0, 0, 1000);
    return value[0]!;
  };
}

const chainAbort = new AbortController();

/**
 * Accepts running (0 or 1: the engine decides one block at a time). Meanwhile the chain store's
 * writes are written behind: posted as a `db.writeBehind` event and taken as done, so the accept
 * does not wait a round trip per write. The host writes them in order, before any later request on
 * that store and before it reports the accept; a failed one fails the accept (the chain halts on it).
 */
let accepting = 0;

const isBytes = (v: unknown): boolean => v instanceof Uint8Array;

/**
 * Posts a write made during an accept (see `accepting`), held to the end of this turn so that it goes
 * with the accept's answer. Checked first to be only bytes, which always clone: a held message
 * cannot fail its sender later.
 */
function writeBehind(ops: Array<[Uint8Array, Uint8Array | undefined]>, shared: SharedOps[]): void {
  const ok =
    ops.every(([k, v]) => isBytes(k) && (v === undefined || isBytes(v))) &&
    shared.every(([peer, put, remove]) => isBytes(peer) && put.every(([k, v]) => isBytes(k) && isBytes(v)) && remove.every(isBytes));
  if (!ok) throw bad('a store write takes Uint8Array keys and values');
  channel.event('db.writeBehind', [ops, shared], 0);
}

function chainContext(w: ContextWire): ChainContext {
  return {
    networkId: w.networkId,
    subnetId: Id.fromBytes(w.subnetId),
    chainId: Id.fromBytes(w.chainId),
    aliases: w.aliases,
    nodeId: ShortId.fromBytes(w.nodeId),
    vmId: Id.fromBytes(w.vmId),
    db: new RemoteStore(0, new StoreCache()),
    log: remoteLogger({}, new Set(w.logLevels)),
    metrics,
    clock: { now: hostClock(start.clock) },
    signal: chainAbort.signal,
    sharedMemory,
    keystore: { openUser: async (username, password) => new RemoteStore((await call('ks.open', username, password)) as number) },
    nativeAsset: { id: w.nativeAssetId ? Id.fromBytes(w.nativeAssetId) : undefined, symbol: w.nativeSymbol },
    validators: {
      list: async (subnetId) => {
        const list = (await call('validators', subnetId?.bytes)) as Array<{ nodeId: Uint8Array; weight: bigint }>;
        return list.map((v) => ({ nodeId: ShortId.fromBytes(v.nodeId), weight: v.weight }));
      },
    },
    network: { gossip: (payload) => channel.event('gossip', [payload]) },
    debugApis: w.debugApis === true,
  };
}

// ---- the VM and what it handed out ---------------------------------------------------------------

let vm: ChainVM | undefined;
let handlers: ChainHandler[] = [];
/** Blocks handed to the host, by ID key, so that verify/accept/reject reach the VM's own object. */
const blocks = new Map<string, Block>();
const MAX_BLOCKS = 16_384;
const waits = new Map<number, AbortController>();
const view = new EngineView();
const sockets = new Map<number, WorkerSocket>();

function theVM(): ChainVM {
  if (!vm) throw bad('the VM is not initialized');
  return vm;
}

function handOut(b: Block): BlockWire {
  const key = b.id.key;
  blocks.delete(key);
  blocks.set(key, b);
  if (blocks.size > MAX_BLOCKS) blocks.delete(blocks.keys().next().value!);
  return { id: b.id.bytes, parentId: b.parentId.bytes, height: b.height, timestamp: b.timestamp, bytes: b.bytes };
}

/** A block's height, or NaN when reading it throws (some VMs know it only once they know the parent). */
function heightOf(b: Block): number {
  try {
    return b.height;
  } catch {
    return Number.NaN;
  }
}

/** Runs the VM's verify of `b`; a block that failed it is forgotten. */
async function verify(b: Block): Promise<void> {
  try {
    await b.verify();
  } catch (e) {
    blocks.delete(b.id.key);
    view.failed(b.id.key);
    throw e;
  }
  view.verified(b.id.key, heightOf(b));
}

/**
 * buildBlock, and the verify the engine will run next when it will (engine-view.ts): the same calls
 * in the same order as in process, in one crossing. The verify answers with the build when it ends
 * within `verifyWithinMs` of the build's start (half the call deadline, so the answer stays within
 * it); else the build answers at that point and the outcome follows as a `verified` event.
 */
async function build(verifyWithinMs: number | undefined): Promise<BuiltWire> {
  const started = performance.now();
  const b = await theVM().buildBlock();
  const wire: BuiltWire = handOut(b);
  if (verifyWithinMs === undefined || !view.willVerify(b.id.key, b.parentId.key, wire.height)) return wire;
  const budget = verifyWithinMs - (performance.now() - started);
  if (!(budget > 0)) return wire;
  const outcome: Promise<VerifyOutcome> = verify(b).then(
    () => ({ ok: true }),
    (e: unknown) => ({ ok: false, error: toWireError(e) }),
  );
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<'pending'>((resolve) => (timer = setTimeout(() => resolve('pending'), budget)));
  wire.verified = await Promise.race([outcome, late]);
  clearTimeout(timer);
  if (wire.verified === 'pending') void outcome.then((o) => channel.event('verified', [wire.id, o]));
  return wire;
}

/** The VM's block for `id`: the one handed out, else the VM's own lookup (an evicted one). */
async function blockOf(id: Uint8Array): Promise<Block> {
  const key = Id.fromBytes(id);
  return blocks.get(key.key) ?? theVM().getBlock(key);
}

async function loadVM(): Promise<ChainVM> {
  const entry = fileURLToPath(start.moduleUrl);
  await useNodeSdkFallback(entry);
  const mod = (await import(start.moduleUrl)) as Record<string, unknown>;
  const factory = 'vmFactory' in mod ? mod.vmFactory : (mod.default as Record<string, unknown> | undefined)?.vmFactory;
  if (!isVMFactory(factory)) throw new IsolationError('Unsupported', `${start.moduleUrl} exports no vmFactory`);
  return factory.create();
}

/**
 * The VM's setPreference while it runs: the host does not wait for it, so the engine's next call
 * waits for it here, as it would in process (service and HTTP calls do not).
 */
let preferring: Promise<void> | undefined;

/** Runs the VM's setPreference after the one still running, if any. */
function prefer(id: Id): Promise<void> {
  const before = preferring;
  const p = before === undefined ? theVM().setPreference(id) : before.catch(() => undefined).then(() => theVM().setPreference(id));
  preferring = p;
  const settled = () => {
    if (preferring === p) preferring = undefined;
  };
  p.then(settled, settled);
  return p;
}

async function serve(op: string, args: unknown[]): Promise<unknown> {
  if (op === 'setPreference') return prefer(Id.fromBytes(args[0] as Uint8Array));
  if (preferring !== undefined && op !== 'service' && op !== 'http') await preferring.catch(() => undefined);
  switch (op) {
    case 'load':
      vm ??= await loadVM();
      return undefined;
    case 'initialize': {
      const [ctx, init] = args as [ContextWire, Parameters<ChainVM['initialize']>[1]];
      vm ??= await loadVM();
      await vm.initialize(chainContext(ctx), init);
      return undefined;
    }
    case 'setState':
      return theVM().setState(args[0] as 'bootstrapping' | 'normalOp');
    case 'buildBlock':
      return build(args[0] as number | undefined);
    case 'parseBlock':
      return handOut(await theVM().parseBlock(args[0] as Uint8Array));
    case 'getBlock':
      return handOut(await theVM().getBlock(Id.fromBytes(args[0] as Uint8Array)));
    case 'lastAccepted':
      return (await theVM().lastAccepted()).bytes;
    case 'getBlockIdAtHeight':
      return (await theVM().getBlockIdAtHeight(args[0] as number)).bytes;
    case 'waitForEvent': {
      const ac = new AbortController();
      const id = args[0] as number;
      waits.set(id, ac);
      try {
        return await theVM().waitForEvent(ac.signal);
      } finally {
        waits.delete(id);
      }
    }
    case 'onGossip':
      return theVM().onGossip?.(ShortId.fromBytes(args[0] as Uint8Array), args[1] as Uint8Array);
    case 'block': {
      const [verb, id] = args as ['verify' | 'accept' | 'reject', Uint8Array];
      const b = await blockOf(id);
      if (verb === 'verify') return verify(b);
      if (verb === 'reject') {
        // The engine forgets it whatever the outcome.
        view.rejected(b.id.key);
        await b.reject();
        blocks.delete(b.id.key);
        return undefined;
      }
      accepting++;
      try {
        await b.accept();
      } finally {
        accepting--;
      }
      view.accepted(b.id.key, heightOf(b));
      blocks.delete(b.id.key);
      return undefined;
    }
    case 'createHandlers':
      handlers = await theVM().createHandlers();
      return handlers.map(describeHandler);
    case 'service': {
      const [h, s, name, params] = args as [number, number, string, unknown];
      const method = handlers[h]?.services?.[s]?.methods.get(name);
      if (!method) throw bad(`no service method ${name}`);
      return JSON.stringify((await method(params)) ?? null, jsonReplacer);
    }
    case 'http': {
      const [h, req] = args as [number, HttpRequestWire];
      const http = handlers[h]?.http;
      if (!http) throw bad(`no HTTP handler ${h}`);
      return serveHttp(http, req);
    }
    case 'shutdown':
      chainAbort.abort();
      for (const s of sockets.values()) s.closedByHost();
      await vm?.shutdown();
      return undefined;
    default:
      throw bad(`unknown request ${op}`);
  }
}

function onEvent(op: string, args: unknown[]): void {
  switch (op) {
    case 'abort':
      chainAbort.abort();
      return;
    case 'abortWait':
      waits.get(args[0] as number)?.abort();
      return;
    case 'ws.open': {
      const [h, id] = args as [number, number];
      const accept = handlers[h]?.websocket;
      const socket = new WorkerSocket(id);
      if (!accept) return socket.close(1011, 'no such handler');
      sockets.set(id, socket);
      accept(socket);
      return;
    }
    case 'ws.message':
      sockets.get(args[0] as number)?.received(args[1] as string);
      return;
    case 'ws.closed':
      sockets.get(args[0] as number)?.closedByHost();
      return;
  }
}

function describeHandler(h: ChainHandler): HandlerWire {
  return {
    path: h.path,
    services: h.services?.map((s) => ({ name: s.def.name, methods: [...s.methods.keys()] })),
    http: h.http !== undefined,
    websocket: h.websocket !== undefined,
  };
}

// ---- HTTP and WebSocket handlers -----------------------------------------------------------------

/** Collects what a raw HTTP handler writes, for the host to send. */
class BufferedResponse extends Writable {
  statusCode = 200;
  statusMessage = '';
  headersSent = false;
  readonly #headers = new Map<string, string | number | string[]>();
  readonly chunks: Uint8Array[] = [];

  setHeader(name: string, value: string | number | readonly string[]): this {
    this.#headers.set(name.toLowerCase(), Array.isArray(value) ? [...(value as string[])] : (value as string | number));
    return this;
  }
  getHeader(name: string) {
    return this.#headers.get(name.toLowerCase());
  }
  hasHeader(name: string) {
    return this.#headers.has(name.toLowerCase());
  }
  removeHeader(name: string): void {
    this.#headers.delete(name.toLowerCase());
  }
  getHeaders(): Record<string, string | number | string[]> {
    return Object.fromEntries(this.#headers);
  }
  writeHead(status: number, a?: string | Record<string, string | number | string[]>, b?: Record<string, string | number | string[]>): this {
    this.statusCode = status;
    const headers = typeof a === 'string' ? b : a;
    if (typeof a === 'string') this.statusMessage = a;
    for (const [k, v] of Object.entries(headers ?? {})) this.setHeader(k, v);
    this.headersSent = true;
    return this;
  }
  flushHeaders(): void {
    this.headersSent = true;
  }
  override _write(chunk: Uint8Array | string, _enc: BufferEncoding, done: () => void): void {
    this.headersSent = true;
    this.chunks.push(typeof chunk === 'string' ? new TextEncoder().encode(chunk) : new Uint8Array(chunk));
    done();
  }
}

function serveHttp(handler: NonNullable<ChainHandler['http']>, r: HttpRequestWire): Promise<HttpResponseWire> {
  const req = Object.assign(Readable.from(r.body.length ? [Buffer.from(r.body)] : []), {
    method: r.method,
    url: r.url,
    headers: r.headers,
    httpVersion: '1.1',
    socket: { remoteAddress: r.remoteAddress },
  }) as unknown as IncomingMessage;
  const res = new BufferedResponse();
  return new Promise<HttpResponseWire>((resolve, reject) => {
    const answer = (destroyed: boolean) => {
      const headers: Record<string, string | string[]> = {};
      for (const [k, v] of Object.entries(res.getHeaders())) headers[k] = Array.isArray(v) ? v : String(v);
      resolve({ status: res.statusCode, headers, body: Buffer.concat(res.chunks), destroyed });
    };
    res.on('finish', () => answer(false));
    res.on('close', () => answer(!res.writableFinished));
    Promise.resolve()
      .then(() => handler(req, res as unknown as ServerResponse))
      .catch(reject);
  });
}

/** A WebSocket connection of the host, as the VM's handler sees it. */
class WorkerSocket implements WebSocketConnection {
  #closed = false;
  readonly #onMessage: Array<(text: string) => void> = [];
  readonly #onClose: Array<() => void> = [];

  constructor(readonly id: number) {}

  get closed() {
    return this.#closed;
  }
  send(text: string): void {
    if (!this.#closed) channel.event('ws.send', [this.id, text]);
  }
  close(code?: number, reason?: string): void {
    if (this.#closed) return;
    channel.event('ws.close', [this.id, code, reason]);
    this.closedByHost();
  }
  onMessage(listener: (text: string) => void): void {
    this.#onMessage.push(listener);
  }
  onClose(listener: () => void): void {
    this.#onClose.push(listener);
  }
  received(text: string): void {
    for (const l of this.#onMessage) l(text);
  }
  closedByHost(): void {
    if (this.#closed) return;
    this.#closed = true;
    sockets.delete(this.id);
    for (const l of this.#onClose) l();
  }
}
