/**
 * The fault boundary around a chain's VM (DESIGN §3): every call the node makes into the VM has a
 * deadline, except waitForEvent, which may rightly wait forever. A call that does not settle in time rejects with VMCallTimeoutError and reports the hang
 * once through `onHang` (the chain manager halts the chain); the VM's late answer is ignored. Blocks
 * the VM hands out are wrapped the same way, so verify/accept/reject are bounded too.
 */
import { NodeError, type Block, type ChainHandler, type ChainVM, type Id, type VMEvent, type VMInit, type VMState } from '@cornice/sdk';
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

/** Calls `fn` and settles with it, or rejects once `timeoutMs` passed. */
function bounded<T>(o: GuardOptions, call: string, fn: () => Promise<T> | T): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let done = false;
    const timer = o.scheduler.setTimeout(() => {
      if (done) return;
      done = true;
      reject(new VMCallTimeoutError('VMCallTimeout', `${call} did not settle within ${o.timeoutMs} ms`));
      o.onHang(call, o.timeoutMs);
    }, o.timeoutMs);
    const settle = (ok: boolean, v: unknown) => {
      if (done) return;
      done = true;
      timer.cancel();
      if (ok) resolve(v as T);
      else reject(v);
    };
    try {
      Promise.resolve(fn()).then(
        (v) => settle(true, v),
        (e: unknown) => settle(false, e),
      );
    } catch (e) {
      settle(false, e);
    }
  });
}

/** A block whose verify/accept/reject are bounded; its fields are the VM block's. */
function guardBlock(o: GuardOptions, block: Block): Block {
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
    verify: () => bounded(o, 'block.verify', () => block.verify()),
    accept: () => bounded(o, 'block.accept', () => block.accept()),
    reject: () => bounded(o, 'block.reject', () => block.reject()),
  };
}

/** The VM as the engine and chain manager see it: bounded, with bounded blocks. */
export function guardVM(vm: ChainVM, o: GuardOptions): ChainVM {
  const block = async (call: string, fn: () => Promise<Block>) => guardBlock(o, await bounded(o, call, fn));
  return {
    initialize: (ctx: ChainContext, init: VMInit) => bounded(o, 'vm.initialize', () => vm.initialize(ctx, init)),
    setState: (state: VMState) => bounded(o, 'vm.setState', () => vm.setState(state)),
    buildBlock: () => block('vm.buildBlock', () => vm.buildBlock()),
    parseBlock: (bytes: Uint8Array) => block('vm.parseBlock', () => vm.parseBlock(bytes)),
    getBlock: (id: Id) => block('vm.getBlock', () => vm.getBlock(id)),
    setPreference: (id: Id) => bounded(o, 'vm.setPreference', () => vm.setPreference(id)),
    lastAccepted: () => bounded(o, 'vm.lastAccepted', () => vm.lastAccepted()),
    getBlockIdAtHeight: (height: number) => bounded(o, 'vm.getBlockIdAtHeight', () => vm.getBlockIdAtHeight(height)),
    waitForEvent: (signal: AbortSignal): Promise<VMEvent> => vm.waitForEvent(signal),
    createHandlers: (): Promise<ChainHandler[]> => bounded(o, 'vm.createHandlers', () => vm.createHandlers()),
    shutdown: () => bounded(o, 'vm.shutdown', () => vm.shutdown()),
  };
}
