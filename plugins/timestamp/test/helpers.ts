/** A ChainContext for unit tests, from the test kit's, with what the VM must not use made to throw. */
import { testChainContext } from '@cornice/core/testing';
import {
  MemoryStore,
  ShortId,
  vmIdFromName,
  type ChainContext,
  type KeyValueStore,
  type VMInit,
} from '@cornice/sdk';
import { TimestampVM, type TimestampVMOptions } from '../src/index.js';

/** A clock the test moves by hand (milliseconds). */
export class ManualClock {
  constructor(public ms = Date.UTC(2020, 4, 1) /* 2020-05-01 */) {}
  now(): number {
    return this.ms;
  }
  get seconds(): number {
    return Math.floor(this.ms / 1000);
  }
  advance(seconds: number): void {
    this.ms += seconds * 1000;
  }
}

const unused = (what: string) => () => {
  throw new TypeError(`${what} is not used by the timestamp VM`);
};

export function fakeContext(opts: { db?: KeyValueStore; clock?: ManualClock } = {}): ChainContext {
  return {
    ...testChainContext({ db: opts.db ?? new MemoryStore(), clock: opts.clock ?? new ManualClock(), vmId: vmIdFromName('timestamp') }),
    aliases: ['timestamp'],
    nodeId: ShortId.empty,
    // The timestamp VM must not reach for these.
    sharedMemory: { get: unused('sharedMemory'), list: unused('sharedMemory'), apply: unused('sharedMemory') },
    keystore: { openUser: unused('keystore') },
  };
}

export interface Setup {
  vm: TimestampVM;
  ctx: ChainContext;
  db: MemoryStore;
  clock: ManualClock;
}

/** A VM initialized over `db` (a fresh MemoryStore by default) and set to normal operation. */
export async function setup(
  opts: { db?: MemoryStore; clock?: ManualClock; genesis?: Uint8Array; vm?: TimestampVMOptions; config?: Uint8Array } = {},
): Promise<Setup> {
  const db = opts.db ?? new MemoryStore();
  const clock = opts.clock ?? new ManualClock();
  const ctx = fakeContext({ db, clock });
  const vm = new TimestampVM(opts.vm);
  const init: VMInit = { genesis: opts.genesis ?? new Uint8Array(0), ...(opts.config ? { config: opts.config } : {}) };
  await vm.initialize(ctx, init);
  await vm.setState('bootstrapping');
  await vm.setState('normalOp');
  return { vm, ctx, db, clock };
}

/** 32 bytes filled with `n`. */
export const payload = (n: number): Uint8Array => new Uint8Array(32).fill(n);

/** Resolves to the error `p` rejects with (fails when it resolves). */
export async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new TypeError('expected a rejection');
}
