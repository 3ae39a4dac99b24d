/**
 * The fault boundary around a chain's VM (ARCHITECTURE.md, "A chain's life"): every call the node makes into the VM has a
 * deadline, except waitForEvent, which may rightly wait forever. A call that does not settle in time
 * is reported once through `onHang` (the chain manager halts the chain, and a halted engine no longer
 * waits for its tasks). The calls consensus makes all the time (parse, get, verify, accept, …) are
 * only watched, so their promises reach the engine untouched (a wrapper would add promise turns
 * to every block on the one-node path: bench/timestamp.mjs); the rare ones that chain creation and shutdown wait for
 * (initialize, createHandlers, shutdown) also reject with VMCallTimeoutError at the deadline.
 * Blocks the VM hands out are wrapped, so verify/accept/reject are watched too.
 */
import { NodeError, type Block, type ChainHandler, type ChainVM, type Id, type ShortId, type VMEvent, type VMInit, type VMState } from '@cornice/sdk';
import type { ChainContext } from '@cornice/sdk';
import type { Scheduler } from '../consensus/index.js';

export class VMCallTimeoutError extends NodeError<'VMCallTimeout'> {}

export interface GuardOptions {
  /** Deadline of every bounded call. */
  timeoutMs: number;
  scheduler: Scheduler;
  /** A call did not settle within `timeoutMs` (called once per hung call). */
  onHang(call: string, timeoutMs: number): void;
}

/** `fn()` as a promise, a synchronous throw included. */
function invoke<T>(fn: () => Promise<T> | T): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (e) {
    return Promise.reject(e);
  }
}

interface InFlight {
  readonly call: string;
  readonly started: number;
  /** Set for bounded calls: rejects the caller's promise at the deadline. */
  readonly reject?: (e: unknown) => void;
}

/**
 * Deadlines for the calls in flight, with one timer at a time (armed for the oldest call) rather than
 * one per call: VM calls are many and short (every poll parses a block), hangs are rare.
 */
class Watchdog {
  /** In start order, so the oldest is first. */
  readonly #inFlight = new Set<InFlight>();
  #timer: { cancel(): void } | undefined;

  constructor(private readonly o: GuardOptions) {}

  /** Calls `fn` and returns its own promise; reports a hang if it has not settled by the deadline. */
  watched<T>(call: string, fn: () => Promise<T> | T): Promise<T> {
    const result = invoke(fn);
    const entry: InFlight = { call, started: this.o.scheduler.now() };
    this.#track(entry);
    const done = () => void this.#inFlight.delete(entry);
    result.then(done, done);
    return result;
  }

  /** Like `watched`, and the caller's promise also rejects with VMCallTimeoutError at the deadline. */
  bounded<T>(call: string, fn: () => Promise<T> | T): Promise<T> {
    const result = invoke(fn);
    return new Promise<T>((resolve, reject) => {
      const entry: InFlight = { call, started: this.o.scheduler.now(), reject };
      this.#track(entry);
      result.then(
        (v) => this.#inFlight.delete(entry) && resolve(v),
        (e: unknown) => this.#inFlight.delete(entry) && reject(e),
      );
    });
  }

  #track(entry: InFlight): void {
    this.#inFlight.add(entry);
    this.#timer ??= this.o.scheduler.setTimeout(() => this.#check(), this.o.timeoutMs);
  }

  /** Reports every call past its deadline, then waits for the oldest one left. */
  #check(): void {
    this.#timer = undefined;
    const now = this.o.scheduler.now();
    for (const entry of this.#inFlight) {
      const due = entry.started + this.o.timeoutMs;
      if (due > now) {
        this.#timer = this.o.scheduler.setTimeout(() => this.#check(), due - now);
        return;
      }
      this.#inFlight.delete(entry);
      entry.reject?.(new VMCallTimeoutError('VMCallTimeout', `${entry.call} did not settle within ${this.o.timeoutMs} ms`));
      this.o.onHang(entry.call, this.o.timeoutMs);
    }
  }
}

/** A block whose verify/accept/reject are watched; its fields are the VM block's. */
function guardBlock(w: Watchdog, block: Block): Block {
  return {
    get id() {
      return block.id;
    },
    get parentId() {
      return block.parentId;
    },
    get height() {
      return block.height;
    },
    get timestamp() {
      return block.timestamp;
    },
    get bytes() {
      return block.bytes;
    },
    verify: () => w.watched('block.verify', () => block.verify()),
    accept: () => w.watched('block.accept', () => block.accept()),
    reject: () => w.watched('block.reject', () => block.reject()),
  };
}

/** The VM as the engine and chain manager see it: watched or bounded, with watched blocks. */
export function guardVM(vm: ChainVM, o: GuardOptions): ChainVM {
  const w = new Watchdog(o);
  const block = (call: string, fn: () => Promise<Block>) => w.watched(call, fn).then((b) => guardBlock(w, b));
  return {
    initialize: (ctx: ChainContext, init: VMInit) => w.bounded('vm.initialize', () => vm.initialize(ctx, init)),
    setState: (state: VMState) => w.watched('vm.setState', () => vm.setState(state)),
    buildBlock: () => block('vm.buildBlock', () => vm.buildBlock()),
    parseBlock: (bytes: Uint8Array) => block('vm.parseBlock', () => vm.parseBlock(bytes)),
    getBlock: (id: Id) => block('vm.getBlock', () => vm.getBlock(id)),
    setPreference: (id: Id) => w.watched('vm.setPreference', () => vm.setPreference(id)),
    lastAccepted: () => w.watched('vm.lastAccepted', () => vm.lastAccepted()),
    getBlockIdAtHeight: (height: number) => w.watched('vm.getBlockIdAtHeight', () => vm.getBlockIdAtHeight(height)),
    waitForEvent: (signal: AbortSignal): Promise<VMEvent> => vm.waitForEvent(signal),
    createHandlers: (): Promise<ChainHandler[]> => w.bounded('vm.createHandlers', () => vm.createHandlers()),
    shutdown: () => w.bounded('vm.shutdown', () => vm.shutdown()),
    ...(vm.onGossip ? { onGossip: (from: ShortId, payload: Uint8Array) => w.watched('vm.onGossip', () => vm.onGossip!(from, payload)) } : {}),
  };
}
