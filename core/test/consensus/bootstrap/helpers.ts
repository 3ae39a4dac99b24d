import { silentLogger, type Id, type Logger, type ShortId } from '@cornice/sdk';
import { Bootstrapper, type BootstrapLimits, type BootstrapperOptions } from '../../../src/consensus/bootstrap/bootstrapper.js';
import type { BootstrapServerLimits } from '../../../src/consensus/bootstrap/server.js';
import type { Beacon, BootstrapProgress, BootstrapTarget, BootstrapTransport } from '../../../src/consensus/bootstrap/types.js';
import { EventQueue, TestVM, type TestBlock } from '../../../src/testing/simulation.js';
import { flush, nodeIdOf, seeded } from '../helpers.js';

export const CHAIN = 'C';

export type NetMessage =
  | { op: 'getAcceptedFrontier'; from: ShortId; to: ShortId; requestId: number }
  | { op: 'acceptedFrontier'; from: ShortId; to: ShortId; requestId: number; ids: readonly Id[] }
  | { op: 'getAccepted'; from: ShortId; to: ShortId; requestId: number; ids: readonly Id[] }
  | { op: 'accepted'; from: ShortId; to: ShortId; requestId: number; ids: readonly Id[] }
  | { op: 'getAncestors'; from: ShortId; to: ShortId; requestId: number; blockId: Id }
  | { op: 'ancestors'; from: ShortId; to: ShortId; requestId: number; blocks: readonly Uint8Array[] };

/**
 * An in-memory network on virtual time: each message is delivered `latencyMs` later (so never in
 * the sender's turn), unless `filter` drops it (false) or replaces it (a message).
 */
export class MemoryNet {
  readonly clock = new EventQueue();
  readonly targets = new Map<string, BootstrapTarget>();
  /** Every message sent, in order (before filtering). */
  readonly sent: NetMessage[] = [];
  latencyMs = 1;
  filter: (m: NetMessage) => boolean | NetMessage = () => true;

  add(id: ShortId, target: BootstrapTarget): void {
    this.targets.set(id.key, target);
  }

  count(op: NetMessage['op']): number {
    return this.sent.filter((m) => m.op === op).length;
  }

  transport(self: ShortId): BootstrapTransport {
    return {
      getAcceptedFrontier: (to, requestId) => {
        for (const t of to) this.send({ op: 'getAcceptedFrontier', from: self, to: t, requestId });
      },
      getAccepted: (to, requestId, ids) => {
        for (const t of to) this.send({ op: 'getAccepted', from: self, to: t, requestId, ids: [...ids] });
      },
      getAncestors: (to, requestId, blockId) => this.send({ op: 'getAncestors', from: self, to, requestId, blockId }),
      acceptedFrontier: (to, requestId, ids) => this.send({ op: 'acceptedFrontier', from: self, to, requestId, ids: [...ids] }),
      accepted: (to, requestId, ids) => this.send({ op: 'accepted', from: self, to, requestId, ids: [...ids] }),
      ancestors: (to, requestId, blocks) => this.send({ op: 'ancestors', from: self, to, requestId, blocks: [...blocks] }),
    };
  }

  send(m: NetMessage): void {
    this.sent.push(m);
    const verdict = this.filter(m);
    if (verdict === false) return;
    const out = verdict === true ? m : verdict;
    this.clock.setTimeout(() => void deliverTo(this.targets.get(out.to.key), out), this.latencyMs);
  }
}

export function deliverTo(t: BootstrapTarget | undefined, m: NetMessage): Promise<void> | void {
  if (!t) return;
  switch (m.op) {
    case 'getAcceptedFrontier':
      return t.onGetAcceptedFrontier(m.from, m.requestId);
    case 'acceptedFrontier':
      return t.onAcceptedFrontier(m.from, m.requestId, m.ids);
    case 'getAccepted':
      return t.onGetAccepted(m.from, m.requestId, m.ids);
    case 'accepted':
      return t.onAccepted(m.from, m.requestId, m.ids);
    case 'getAncestors':
      return t.onGetAncestors(m.from, m.requestId, m.blockId);
    case 'ancestors':
      return t.onAncestors(m.from, m.requestId, m.blocks);
  }
}

/**
 * Runs the network's events (flushing promise reactions after each) until `p` settles; fails when
 * nothing is left to run while `p` is still pending (a hang).
 */
export async function drive<T>(net: MemoryNet, p: Promise<T>, maxEvents = 1_000_000): Promise<T> {
  let settled = false;
  p.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (let i = 0; i < maxEvents; i++) {
    await flush();
    if (settled) return p;
    if (!net.clock.runNext()) {
      await flush();
      if (settled) return p;
      throw new Error(`stuck at ${net.clock.now()} ms: nothing scheduled and the run has not ended`);
    }
  }
  throw new Error(`still running after ${maxEvents} events`);
}

/** Runs the network's events until virtual time `t` (or until nothing is scheduled). */
export async function runUntil(net: MemoryNet, t: number): Promise<void> {
  for (;;) {
    await flush();
    const next = net.clock.peekTime();
    if (next === undefined || next > t) break;
    net.clock.runNext();
  }
  net.clock.advanceTo(t);
  await flush();
}

/** A TestVM with `n` blocks accepted on genesis. */
export async function chainVM(n: number, seed = 1): Promise<TestVM> {
  const vm = new TestVM({ random: seeded(seed) });
  let parent: TestBlock = vm.genesis;
  for (let i = 0; i < n; i++) {
    const b = vm.makeBlock(parent);
    await b.verify();
    await b.accept();
    parent = b;
  }
  return vm;
}

/** A TestVM that accepted `source`'s blocks at heights 1..upTo (the same bytes). */
export async function copyVM(source: TestVM, upTo = source.lastAcceptedBlock.height): Promise<TestVM> {
  const vm = new TestVM({ random: seeded(99) });
  for (let h = 1; h <= upTo; h++) {
    const b = vm.intern((source.acceptedChain[h] as TestBlock).bytes);
    await b.verify();
    await b.accept();
  }
  return vm;
}

/** Heights of `vm`'s accepted chain are 0..n in order, with no contract breach. */
export function chainProblem(vm: TestVM, expected: TestVM): string | undefined {
  if (vm.violations.length > 0) return `violations: ${vm.violations.slice(0, 3).join('; ')}`;
  if (vm.acceptedChain.length !== expected.acceptedChain.length) return `accepted ${vm.acceptedChain.length - 1} blocks, expected ${expected.acceptedChain.length - 1}`;
  for (let h = 0; h < vm.acceptedChain.length; h++) {
    const a = vm.acceptedChain[h] as TestBlock;
    if (a.height !== h) return `block ${h} has height ${a.height}`;
    if (!a.id.equals((expected.acceptedChain[h] as TestBlock).id)) return `block at height ${h} differs`;
  }
  return undefined;
}

export const JOINER = nodeIdOf(1);
export const beaconId = (i: number): ShortId => nodeIdOf(10 + i);

/** A node that only answers (a Bootstrapper that is not running, as every node has one per chain). */
export function answering(net: MemoryNet, id: ShortId, vm: TestVM, serverLimits?: Partial<BootstrapServerLimits>): Bootstrapper {
  const b = new Bootstrapper({
    serverLimits,
    vm,
    transport: net.transport(id),
    beacons: () => [],
    isConnected: () => true,
    nodeId: id,
    scheduler: net.clock,
    log: silentLogger,
    chain: CHAIN,
  });
  net.add(id, b);
  return b;
}

export interface Joiner {
  vm: TestVM;
  boot: Bootstrapper;
  progress: BootstrapProgress[];
  connected: Set<string>;
}

/** The joining node: its VM (empty by default), a Bootstrapper on the network, and every beacon connected. */
export function joiner(
  net: MemoryNet,
  beacons: Beacon[],
  opts: { vm?: TestVM; limits?: Partial<BootstrapLimits>; log?: Logger; extra?: Partial<BootstrapperOptions> } = {},
): Joiner {
  const vm = opts.vm ?? new TestVM({ random: seeded(5) });
  const progress: BootstrapProgress[] = [];
  const connected = new Set(beacons.map((b) => b.nodeId.key));
  const boot = new Bootstrapper({
    vm,
    transport: net.transport(JOINER),
    beacons: () => beacons,
    isConnected: (n) => connected.has(n.key),
    nodeId: JOINER,
    scheduler: net.clock,
    log: opts.log ?? silentLogger,
    chain: CHAIN,
    limits: opts.limits,
    onProgress: (p) => progress.push(p),
    ...opts.extra,
  });
  net.add(JOINER, boot);
  return { vm, boot, progress, connected };
}

/** Beacons of weight 1 each, answering from `vms` (one each). */
export function honestBeacons(net: MemoryNet, vms: readonly TestVM[], serverLimits?: Partial<BootstrapServerLimits>): Beacon[] {
  return vms.map((vm, i) => {
    answering(net, beaconId(i), vm, serverLimits);
    return { nodeId: beaconId(i), weight: 1n };
  });
}
