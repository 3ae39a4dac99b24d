/**
 * The main thread's side of an isolated VM (`--vm-isolation`): `WorkerVM` is an ordinary ChainVM
 * (with ordinary Blocks) to the engine, the chain manager and the HTTP front end, while the VM's own
 * code runs in a worker thread (worker-main.ts), one per chain. It also answers the worker's calls on
 * the chain's real ChainContext (store, shared memory, keystore, validators, log, metrics, clock,
 * gossip).
 *
 * Faults: every call but waitForEvent and WebSocket traffic has the deadline of --vm-call-timeout; a
 * call past it terminates the worker (the only way to stop a synchronous loop) and reports a fault,
 * as does a worker that exits or throws. The chain manager halts the chain on it (`onFault`).
 */
import { Worker } from 'node:worker_threads';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  compareBytes,
  Id,
  type ShortId,
  type Block,
  type BoundService,
  type ChainContext,
  type ChainHandler,
  type ChainVM,
  type Clock,
  type KeyRange,
  type KeyValueStore,
  type LogFields,
  type LogLevel,
  type ServiceDef,
  type VMEvent,
  type VMFactory,
  type VMInit,
  type VMState,
  type WebSocketConnection,
} from '@cornice/sdk';
import { dropsLevel, emittingLevels } from '../../log/logger.js';
import { SYSTEM_CLOCK } from '../../consensus/snowman/clock.js';
import { IsolationError } from '../errors.js';
import { Channel } from './channel.js';
import { fromWireError, HOLD_PREFERENCE_MS, type Message, type WorkerStart } from './protocol.js';
import type { BuiltWire, ContextWire, HandlerWire, HttpRequestWire, HttpResponseWire, SharedOps, VerifyOutcome } from './wire.js';

export interface WorkerVMOptions {
  /** `file:` URL of the plugin module exporting `vmFactory`. */
  moduleUrl: string;
  /** Deadline of every call but waitForEvent (--vm-call-timeout). */
  callTimeoutMs: number;
  /** How long a shutdown may take before the worker is terminated. */
  shutdownTimeoutMs: number;
  /** Largest request body a raw HTTP handler is given (--http-max-body-bytes). */
  maxBodyBytes: number;
  /** The node's system clock (default SYSTEM_CLOCK): a context with this clock lets the worker read its own (no crossing). */
  systemClock?: Clock;
  /**
   * Deadline of the worker's start: the thread up and the plugin's module loaded (default: the larger
   * of callTimeoutMs and 60 s). Apart from callTimeoutMs, which then bounds the VM's initialize alone:
   * start-up is the machine's speed, not the VM's, and a busy machine must not fail a short call
   * deadline for it; a module that never finishes loading still meets this bound (isolation.test.ts
   * "a worker whose module never finishes loading").
   */
  startTimeoutMs?: number;
}

/** Something that reports faults of its own (a worker that died): the chain manager halts the chain. */
export interface FaultSource {
  onFault(listener: (reason: string) => void): void;
}

export const isFaultSource = (vm: unknown): vm is FaultSource => typeof (vm as Partial<FaultSource> | null)?.onFault === 'function';

/** A factory whose VMs run in workers; name, vmId, static services and checkGenesis stay the loaded factory's. */
export function workerFactory(factory: VMFactory, o: WorkerVMOptions): VMFactory {
  return {
    name: factory.name,
    version: factory.version,
    vmId: factory.vmId,
    create: () => new WorkerVM(o),
    ...(factory.staticServices ? { staticServices: () => factory.staticServices!() } : {}),
    ...(factory.checkGenesis ? { checkGenesis: (g: Uint8Array) => factory.checkGenesis!(g) } : {}),
  };
}

const WORKER_MAIN = new URL('./worker-main.js', import.meta.url);

export class WorkerVM implements ChainVM, FaultSource {
  #worker: Worker | undefined;
  #channel: Channel | undefined;
  #ctx: ChainContext | undefined;
  /** Why the worker is gone, once it is. */
  #gone: string | undefined;
  #stopping = false;
  readonly #faultListeners: Array<(reason: string) => void> = [];
  #nextId = 1;
  readonly #stores = new Map<number, KeyValueStore>();
  readonly #sockets = new Map<number, WebSocketConnection>();
  readonly #metrics = new Map<string, { inc?(by?: number): void; set?(v: number): void; observe?(v: number): void }>();
  #clock: { flag: Int32Array; value: Float64Array } | undefined;
  readonly #served = new Map<string, number>();
  /** Verifies the worker ran ahead (see buildBlock) still running there, by block ID key. */
  readonly #verifying = new Map<string, { settle(o: VerifyOutcome): void; fail(e: Error): void }>();
  /** The chain store's written-behind writes (see #writeBehind): the last one, while any runs. */
  #writes: Promise<void> | undefined;
  /** The first written-behind write that failed: every later request on the chain store fails with it. */
  #writeFailure: { error: unknown } | undefined;

  constructor(private readonly o: WorkerVMOptions) {}

  onFault(listener: (reason: string) => void): void {
    this.#faultListeners.push(listener);
  }

  /** How many requests and events of the worker the host served, by op (store ops as `db.<op>`): each is a crossing. */
  get served(): ReadonlyMap<string, number> {
    return this.#served;
  }

  /** Messages exchanged with the worker, each way (a batch is one): tests and the bench count crossings per block. */
  get messages(): { sent: number; received: number } {
    return { sent: this.#channel?.sent ?? 0, received: this.#channel?.received ?? 0 };
  }

  #count(op: string): void {
    this.#served.set(op, (this.#served.get(op) ?? 0) + 1);
  }

  /** Why the worker is gone (terminated, exited, crashed), if it is. */
  get gone(): string | undefined {
    return this.#gone;
  }

  async initialize(ctx: ChainContext, init: VMInit): Promise<void> {
    if (this.#worker) throw new IsolationError('BadRequest', 'initialize was already called');
    this.#ctx = ctx;
    const sab = ctx.clock === (this.o.systemClock ?? SYSTEM_CLOCK) ? undefined : new SharedArrayBuffer(16);
    if (sab) this.#clock = { flag: new Int32Array(sab, 0, 1), value: new Float64Array(sab, 8, 1) };
    const start: WorkerStart = { moduleUrl: this.o.moduleUrl, clock: sab };
    const worker = new Worker(WORKER_MAIN, { workerData: start });
    this.#worker = worker;
    const channel = new Channel((m: Message) => worker.postMessage(m), {
      request: (op, args) => this.#serve(op, args),
      event: (op, args) => this.#onEvent(op, args),
    });
    this.#channel = channel;
    worker.on('message', (m: Message) => channel.receive(m));
    worker.on('error', (e: Error) => this.#die(`its VM worker failed: ${e.name}: ${e.message}`));
    worker.on('exit', (code) => this.#die(`its VM worker exited (code ${code})`));
    if (ctx.signal.aborted) channel.event('abort', []);
    else ctx.signal.addEventListener('abort', () => this.#gone === undefined && channel.event('abort', []), { once: true });
    const wire: ContextWire = {
      networkId: ctx.networkId,
      subnetId: ctx.subnetId.bytes,
      chainId: ctx.chainId.bytes,
      aliases: [...ctx.aliases],
      nodeId: ctx.nodeId.bytes,
      vmId: ctx.vmId.bytes,
      nativeAssetId: ctx.nativeAsset.id?.bytes,
      nativeSymbol: ctx.nativeAsset.symbol,
      debugApis: ctx.debugApis,
      logLevels: emittingLevels.filter((level) => !dropsLevel(ctx.log, level)),
    };
    await this.#call('vm.load', 'load', [], true, this.o.startTimeoutMs ?? Math.max(this.o.callTimeoutMs, 60_000));
    await this.#call('vm.initialize', 'initialize', [wire, init]);
  }

  setState = (state: VMState) => this.#call('vm.setState', 'setState', [state]).then(() => undefined);
  /**
   * The worker verifies the built block right after building it when the engine will (engine-view.ts),
   * within half the deadline, and answers both at once: the engine's verify of it then does not cross.
   */
  buildBlock = () => this.#block('vm.buildBlock', 'buildBlock', [Math.floor(this.o.callTimeoutMs / 2)]);
  parseBlock = (bytes: Uint8Array) => this.#block('vm.parseBlock', 'parseBlock', [bytes]);
  getBlock = (id: Id) => this.#block('vm.getBlock', 'getBlock', [id.bytes]);
  /**
   * Not waited for (the engine only logs a failure): the worker runs the engine's next call after it,
   * as in process, and a failure is logged here. Still bounded: a worker stuck in it is terminated.
   * Sent with the next message to the worker (the engine's next call, at most HOLD_PREFERENCE_MS
   * later), so that one message wakes the worker for both; the worker holds its answer likewise.
   */
  setPreference(id: Id): Promise<void> {
    const p = this.#call('vm.setPreference', 'setPreference', [id.bytes], true, this.o.callTimeoutMs, HOLD_PREFERENCE_MS);
    p.catch((e: unknown) => {
      if (this.#gone === undefined) this.#ctx?.log.error('VM setPreference failed', { blockId: id.toString(), error: e });
    });
    return this.#gone === undefined ? Promise.resolve() : p.then(() => undefined);
  }
  lastAccepted = () => this.#call('vm.lastAccepted', 'lastAccepted', []).then((b) => Id.fromBytes(b as Uint8Array));
  getBlockIdAtHeight = (height: number) => this.#call('vm.getBlockIdAtHeight', 'getBlockIdAtHeight', [height]).then((b) => Id.fromBytes(b as Uint8Array));
  onGossip = (from: ShortId, payload: Uint8Array) => this.#call('vm.onGossip', 'onGossip', [from.bytes, payload]).then(() => undefined);

  waitForEvent(signal: AbortSignal): Promise<VMEvent> {
    if (signal.aborted) return Promise.reject(signal.reason ?? new IsolationError('BadRequest', 'aborted'));
    const id = this.#nextId++;
    const abort = () => this.#gone === undefined && this.#channel?.event('abortWait', [id]);
    signal.addEventListener('abort', abort, { once: true });
    const p = this.#call('vm.waitForEvent', 'waitForEvent', [id], false) as Promise<VMEvent>;
    const done = () => signal.removeEventListener('abort', abort);
    p.then(done, done);
    return p;
  }

  async createHandlers(): Promise<ChainHandler[]> {
    const wires = (await this.#call('vm.createHandlers', 'createHandlers', [])) as HandlerWire[];
    return wires.map((h, i) => this.#handler(h, i));
  }

  async shutdown(): Promise<void> {
    if (this.#stopping) return;
    this.#stopping = true;
    const worker = this.#worker;
    if (!worker || this.#gone !== undefined) return;
    try {
      await this.#call('vm.shutdown', 'shutdown', [], true, this.o.shutdownTimeoutMs);
    } finally {
      this.#die('the chain stopped');
      await worker.terminate();
    }
  }

  // ---- calls into the worker ---------------------------------------------------------------------

  /** A request to the worker; bounded ones terminate it when not answered within the deadline. */
  #call(label: string, op: string, args: unknown[], bounded = true, timeoutMs = this.o.callTimeoutMs, holdMs?: number): Promise<unknown> {
    if (this.#gone !== undefined) return Promise.reject(new IsolationError('WorkerGone', `${label}: ${this.#gone}`));
    if (!this.#channel) return Promise.reject(new IsolationError('BadRequest', `${label} before initialize`));
    const p = this.#channel.request(op, args, holdMs);
    return bounded ? this.#bounded(label, p, timeoutMs) : p;
  }

  /** `p`, with a deadline: the worker is terminated when it has not settled within `timeoutMs`. */
  #bounded<T>(label: string, p: Promise<T>, timeoutMs = this.o.callTimeoutMs): Promise<T> {
    const timer = setTimeout(() => this.#die(`${label} did not settle within ${timeoutMs} ms; its VM worker was terminated`, 'WorkerTimeout'), timeoutMs);
    const clear = () => clearTimeout(timer);
    p.then(clear, clear);
    return p;
  }

  async #block(label: string, op: string, args: unknown[]): Promise<Block> {
    const w = (await this.#call(label, op, args)) as BuiltWire;
    const verb = (v: 'verify' | 'accept' | 'reject') => () => this.#call(`block.${v}`, 'block', [v, w.id]).then(() => undefined);
    let verify: () => Promise<void> = verb('verify');
    if (w.verified !== undefined) {
      // Verified by the worker after building it: the first verify takes that outcome, later ones cross.
      const ahead = this.#verifiedAhead(w);
      const crossing = verify;
      verify = () => {
        verify = crossing;
        return ahead();
      };
    }
    const accept = verb('accept');
    return {
      id: Id.fromBytes(w.id),
      parentId: Id.fromBytes(w.parentId),
      height: w.height,
      timestamp: w.timestamp,
      bytes: w.bytes,
      verify: () => verify(),
      // Reported once the writes it made (written behind) are stored.
      accept: () => accept().then(() => (this.#writesOutstanding ? this.#writesDone() : undefined)),
      reject: verb('reject'),
    };
  }

  /** The verify a buildBlock answer carried (or announced): as the engine's call of it. */
  #verifiedAhead(w: BuiltWire): () => Promise<void> {
    const apply = (o: VerifyOutcome): void => {
      if (o !== 'pending' && !o.ok) throw fromWireError(o.error);
    };
    if (w.verified !== 'pending') {
      const o = w.verified!;
      return async () => apply(o);
    }
    const key = Id.fromBytes(w.id).key;
    const outcome = new Promise<VerifyOutcome>((settle, fail) => this.#verifying.set(key, { settle, fail }));
    outcome.catch(() => undefined); // the engine may not call verify before the worker is gone
    const settled = () => void this.#verifying.delete(key);
    outcome.then(settled, settled);
    return () => this.#bounded('block.verify', outcome).then(apply);
  }

  /** The worker is gone (or must be): terminate it, fail what waits on it, report the fault unless stopping. */
  #die(reason: string, code: 'WorkerGone' | 'WorkerTimeout' = 'WorkerGone'): void {
    if (this.#gone !== undefined) return;
    this.#gone = reason;
    const faulted = !this.#stopping;
    void this.#worker?.terminate();
    for (const s of this.#sockets.values()) s.close(1011, 'chain halted');
    this.#sockets.clear();
    const gone = new IsolationError(code, reason);
    for (const v of this.#verifying.values()) v.fail(gone);
    this.#verifying.clear();
    // The fault first, so that the engine is halted before it sees the failed calls.
    if (faulted) for (const l of this.#faultListeners) l(reason);
    this.#channel?.failAll(gone);
  }

  #handler(h: HandlerWire, index: number): ChainHandler {
    if (h.services) {
      return {
        path: h.path,
        services: h.services.map((s, si): BoundService => {
          const def: ServiceDef = { name: s.name, methods: {} };
          const methods = new Map(
            s.methods.map((name) => [
              name,
              async (params: unknown) => JSON.parse((await this.#call(`service ${name}`, 'service', [index, si, name, params])) as string) as unknown,
            ]),
          );
          return { def, methods };
        }),
      };
    }
    if (h.http) return { path: h.path, http: (req, res) => this.#http(index, req, res) };
    if (h.websocket) return { path: h.path, websocket: (conn) => this.#websocket(index, conn) };
    return { path: h.path };
  }

  async #http(index: number, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req, this.o.maxBodyBytes);
    if (body === undefined) {
      res.writeHead(413, { 'content-type': 'text/plain', connection: 'close' });
      return void res.end(`request body too large: more than ${this.o.maxBodyBytes} bytes\n`);
    }
    const wire: HttpRequestWire = { method: req.method ?? 'GET', url: req.url ?? '/', headers: { ...req.headers }, remoteAddress: req.socket?.remoteAddress, body };
    let out: HttpResponseWire;
    try {
      out = (await this.#call('http handler', 'http', [index, wire])) as HttpResponseWire;
    } catch (e) {
      if (!res.headersSent) res.writeHead(503, { 'content-type': 'text/plain' });
      return void res.end(`${(e as Error).message}\n`);
    }
    if (out.destroyed && out.body.length === 0) return void res.destroy();
    res.writeHead(out.status, out.headers);
    res.end(out.body);
  }

  #websocket(index: number, conn: WebSocketConnection): void {
    if (this.#gone !== undefined || !this.#channel) return conn.close(1011, 'chain halted');
    const id = this.#nextId++;
    this.#sockets.set(id, conn);
    const channel = this.#channel;
    conn.onMessage((text) => this.#gone === undefined && channel.event('ws.message', [id, text]));
    conn.onClose(() => {
      this.#sockets.delete(id);
      if (this.#gone === undefined) channel.event('ws.closed', [id]);
    });
    channel.event('ws.open', [index, id]);
  }

  // ---- the worker's calls on the ChainContext ----------------------------------------------------

  #context(): ChainContext {
    if (!this.#ctx) throw new IsolationError('BadRequest', 'no chain context yet');
    return this.#ctx;
  }

  #store(handle: number): KeyValueStore {
    const store = handle === 0 ? this.#context().db : this.#stores.get(handle);
    if (!store) throw new IsolationError('BadRequest', `no store ${handle}`);
    return store;
  }

  async #serve(op: string, args: unknown[]): Promise<unknown> {
    this.#count(op === 'db' ? `db.${String(args[1])}` : op);
    const ctx = this.#context();
    // The chain store and shared memory answer after the writes written behind before this request.
    if (this.#writesOutstanding && ((op === 'db' && args[0] === 0) || op.startsWith('sm.'))) await this.#writesDone();
    switch (op) {
      case 'db':
        return this.#db(args[0] as number, args[1] as string, args.slice(2));
      case 'sm.get':
        return ctx.sharedMemory.get(Id.fromBytes(args[0] as Uint8Array), args[1] as Uint8Array[]);
      case 'sm.page': {
        const [peer, after, size] = args as [Uint8Array, Uint8Array | undefined, number];
        const out: Array<[Uint8Array, Uint8Array]> = [];
        // Shared memory lists in key order; a page resumes after the last key sent.
        for await (const [k, v] of ctx.sharedMemory.list(Id.fromBytes(peer))) {
          if (after && compareBytes(k, after) <= 0) continue;
          out.push([k, v]);
          if (out.length >= size) break;
        }
        return out;
      }
      case 'ks.open': {
        const store = await ctx.keystore.openUser(args[0] as string, args[1] as string);
        const handle = this.#nextId++;
        this.#stores.set(handle, store);
        return handle;
      }
      case 'validators': {
        const subnet = args[0] as Uint8Array | undefined;
        const list = await ctx.validators.list(subnet ? Id.fromBytes(subnet) : undefined);
        return list.map((v) => ({ nodeId: v.nodeId.bytes, weight: v.weight }));
      }
      default:
        throw new IsolationError('BadRequest', `unknown request ${op}`);
    }
  }

  async #db(handle: number, op: string, args: unknown[]): Promise<unknown> {
    const store = this.#store(handle);
    switch (op) {
      case 'get':
        return store.get(args[0] as Uint8Array);
      case 'has':
        return store.has(args[0] as Uint8Array);
      case 'put':
        return store.put(args[0] as Uint8Array, args[1] as Uint8Array);
      case 'delete':
        return store.delete(args[0] as Uint8Array);
      case 'write': {
        const [ops, shared] = args as [Array<[Uint8Array, Uint8Array | undefined]>, SharedOps[]];
        if (shared.length > 0 && handle !== 0) throw new IsolationError('BadRequest', 'shared memory writes must join a batch of the chain database');
        const batch = store.batch();
        for (const [k, v] of ops) v === undefined ? batch.delete(k) : batch.put(k, v);
        for (const [peer, put, remove] of shared) this.#context().sharedMemory.apply(Id.fromBytes(peer), { put, remove }, batch);
        return batch.write();
      }
      case 'page': {
        const [range, after, size] = args as [KeyRange, Uint8Array | undefined, number];
        const r: KeyRange = { ...range, limit: size };
        if (after) {
          if (range.reverse) r.lt = after;
          else r.gte = Uint8Array.of(...after, 0);
        }
        const out: Array<[Uint8Array, Uint8Array]> = [];
        for await (const entry of store.iterate(r)) out.push(entry);
        return out;
      }
      case 'close':
        this.#stores.delete(handle);
        return store.close();
      default:
        throw new IsolationError('BadRequest', `unknown store request ${op}`);
    }
  }

  /**
   * A write of the chain store made during an accept, not waited for by the worker (worker-main.ts,
   * `accepting`): run after the ones before it; the first failure is kept for #writesDone.
   */
  #writeBehind(args: [Array<[Uint8Array, Uint8Array | undefined]>, SharedOps[]]): void {
    const write = async () => {
      if (this.#writeFailure) return;
      try {
        await this.#db(0, 'write', args);
      } catch (error) {
        this.#writeFailure = { error };
      }
    };
    const p = (this.#writes ?? Promise.resolve()).then(write);
    this.#writes = p;
    void p.then(() => {
      if (this.#writes === p) this.#writes = undefined;
    });
  }

  /** Whether a written-behind write is still running or has failed (#writesDone would wait or throw). */
  get #writesOutstanding(): boolean {
    return this.#writes !== undefined || this.#writeFailure !== undefined;
  }

  /** Resolves once the writes written behind so far are stored; rejects if one failed. */
  async #writesDone(): Promise<void> {
    if (this.#writes) await this.#writes;
    if (this.#writeFailure) throw this.#writeFailure.error;
  }

  #onEvent(op: string, args: unknown[]): void {
    this.#count(op);
    const ctx = this.#ctx;
    if (!ctx) return;
    switch (op) {
      case 'db.writeBehind':
        this.#writeBehind(args as [Array<[Uint8Array, Uint8Array | undefined]>, SharedOps[]]);
        return;
      case 'verified': {
        const v = this.#verifying.get(Id.fromBytes(args[0] as Uint8Array).key);
        v?.settle(args[1] as VerifyOutcome);
        return;
      }
      case 'clock': {
        const c = this.#clock;
        if (!c) return;
        c.value[0] = ctx.clock.now();
        Atomics.store(c.flag, 0, 1);
        Atomics.notify(c.flag, 0);
        return;
      }
      case 'log': {
        const [level, msg, fields, bound] = args as [Exclude<LogLevel, 'off'>, string, LogFields | undefined, LogFields];
        const log = Object.keys(bound).length > 0 ? ctx.log.child(bound) : ctx.log;
        log[level](msg, fields);
        return;
      }
      case 'metric':
        this.#metric(ctx, args as [string, string, string, number[] | undefined, number]);
        return;
      case 'gossip':
        ctx.network.gossip(args[0] as Uint8Array);
        return;
      case 'ws.send':
        this.#sockets.get(args[0] as number)?.send(args[1] as string);
        return;
      case 'ws.close': {
        const [id, code, reason] = args as [number, number | undefined, string | undefined];
        this.#sockets.get(id)?.close(code, reason);
        return;
      }
    }
  }

  #metric(ctx: ChainContext, [kind, name, help, buckets, value]: [string, string, string, number[] | undefined, number]): void {
    let m = this.#metrics.get(name);
    try {
      if (!m) {
        m = kind === 'counter' ? ctx.metrics.counter(name, help) : kind === 'gauge' ? ctx.metrics.gauge(name, help) : ctx.metrics.histogram(name, help, buckets);
        this.#metrics.set(name, m);
      }
      if (kind === 'counter') m.inc?.(value);
      else if (kind === 'gauge') m.set?.(value);
      else m.observe?.(value);
    } catch (e) {
      ctx.log.warn('VM metric refused', { name, error: (e as Error).message });
    }
  }
}

/** The request body, or undefined when it is larger than `max` bytes. */
async function readBody(req: IncomingMessage, max: number): Promise<Uint8Array | undefined> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Uint8Array>) {
    size += chunk.length;
    if (size > max) {
      req.resume();
      return undefined;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
