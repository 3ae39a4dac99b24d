import { ShortId, silentLogger, type Id, type Logger } from '@cornice/sdk';
import { DEFAULT_SNOW_PARAMS, type SnowParams } from '../../src/consensus/params.js';
import { drainMicrotasks, EventQueue, TestVM } from '../../src/testing/simulation.js';
import { SnowmanEngine, type EngineLimits } from '../../src/consensus/snowman/engine.js';
import type { EngineTransport, ValidatorSampler } from '../../src/consensus/snowman/types.js';

export const flush = drainMicrotasks;

export function nodeIdOf(n: number): ShortId {
  const b = new Uint8Array(20);
  b[0] = 0xee;
  b[19] = n;
  return ShortId.fromBytes(b);
}

export type Message =
  | { type: 'pushQuery'; from: ShortId; to: ShortId; requestId: number; bytes: Uint8Array }
  | { type: 'chits'; from: ShortId; to: ShortId; requestId: number; preferred: Id }
  | { type: 'get'; from: ShortId; to: ShortId; requestId: number; blockId: Id }
  | { type: 'put'; from: ShortId; to: ShortId; requestId: number; bytes: Uint8Array };

/** A transport that only records what the engine sends; the test decides what is delivered. */
export class RecordingTransport implements EngineTransport {
  readonly sent: Message[] = [];
  constructor(readonly self: ShortId) {}
  pushQuery(to: readonly ShortId[], requestId: number, bytes: Uint8Array): void {
    for (const t of to) this.sent.push({ type: 'pushQuery', from: this.self, to: t, requestId, bytes });
  }
  chits(to: ShortId, requestId: number, preferred: Id): void {
    this.sent.push({ type: 'chits', from: this.self, to, requestId, preferred });
  }
  get(to: ShortId, requestId: number, blockId: Id): void {
    this.sent.push({ type: 'get', from: this.self, to, requestId, blockId });
  }
  put(to: ShortId, requestId: number, bytes: Uint8Array): void {
    this.sent.push({ type: 'put', from: this.self, to, requestId, bytes });
  }
  /** Removes and returns the recorded messages (optionally only those of one type). */
  take(type?: Message['type']): Message[] {
    const out: Message[] = [];
    for (let i = 0; i < this.sent.length; ) {
      const m = this.sent[i] as Message;
      if (type === undefined || m.type === type) {
        out.push(m);
        this.sent.splice(i, 1);
      } else i++;
    }
    return out;
  }
}

/** A sampler that always returns the same bag; everyone in it is reachable unless `reachable` says otherwise. */
export function fixedSampler(bag: ShortId[], reachable: (id: ShortId) => boolean = () => true): ValidatorSampler {
  return {
    sample: (k) => bag.slice(0, k),
    reachability() {
      const r = { validators: 0, reachable: 0, benched: 0, unresponsive: 0, totalWeight: 0, reachableWeight: 0, unresponsiveWeight: 0 };
      const seen = new Set<string>();
      for (const id of bag) {
        r.totalWeight += 1;
        if (reachable(id)) r.reachableWeight += 1;
        if (seen.has(id.key)) continue;
        seen.add(id.key);
        r.validators += 1;
        if (reachable(id)) r.reachable += 1;
      }
      return r;
    },
  };
}

export interface Harness {
  self: ShortId;
  vm: TestVM;
  engine: SnowmanEngine;
  transport: RecordingTransport;
  clock: EventQueue;
  accepted: number[];
}

export function harness(
  opts: {
    params?: SnowParams;
    bag?: ShortId[];
    queryTimeoutMs?: number;
    limits?: Partial<EngineLimits>;
    log?: Logger;
  } = {},
): Harness {
  const self = nodeIdOf(1);
  const params = opts.params ?? DEFAULT_SNOW_PARAMS;
  const vm = new TestVM({ random: seeded(7) });
  const transport = new RecordingTransport(self);
  const clock = new EventQueue();
  const accepted: number[] = [];
  const engine = new SnowmanEngine({
    vm,
    params,
    transport,
    validators: fixedSampler(opts.bag ?? Array.from({ length: params.k }, () => self)),
    nodeId: self,
    scheduler: clock,
    log: opts.log ?? silentLogger,
    queryTimeoutMs: opts.queryTimeoutMs ?? 1000,
    // These tests deliver the engine's messages to itself by hand (loopback()).
    directSelfPolls: false,
    limits: opts.limits,
    onAccepted: (b) => accepted.push(b.height),
  });
  return { self, vm, engine, transport, clock, accepted };
}

/** A tiny deterministic random source. */
export function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

/**
 * Delivers the harness engine's messages to itself, one at a time in FIFO order (messages to other
 * nodes are left in `transport.sent`), flushing microtasks after each. Stops when `until` holds or no
 * self-addressed message is left; returns how many chits were delivered.
 */
export async function loopback(h: Harness, until: () => boolean = () => false, maxSteps = 10_000): Promise<number> {
  let chits = 0;
  for (let i = 0; i < maxSteps && !until(); i++) {
    const idx = h.transport.sent.findIndex((m) => m.to.equals(h.self));
    if (idx < 0) break;
    const [m] = h.transport.sent.splice(idx, 1) as [Message];
    await deliver(h.engine, m);
    if (m.type === 'chits') chits++;
    await flush();
  }
  return chits;
}

export async function deliver(engine: SnowmanEngine, m: Message): Promise<void> {
  switch (m.type) {
    case 'pushQuery':
      return engine.onPushQuery(m.from, m.requestId, m.bytes);
    case 'chits':
      return engine.onChits(m.from, m.requestId, m.preferred);
    case 'get':
      return engine.onGet(m.from, m.requestId, m.blockId);
    case 'put':
      return engine.onPut(m.from, m.requestId, m.bytes);
  }
}
