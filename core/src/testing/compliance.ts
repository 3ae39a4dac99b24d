/**
 * The ChainVM compliance checks: what the engine relies on, checked against a bare VM instance
 * (no engine) over a memory store. Framework-agnostic: each check is a named async function that
 * throws a ComplianceError; register them with your test runner:
 *   for (const c of chainVMCompliance(vmFactory, { makePending })) test(c.name, c.run);
 */
import { Id, isNotFoundError, MemoryStore, NodeError, type Block, type ChainVM, type KeyValueStore, type VMFactory } from '@cornice/sdk';
import { WorkerVM } from '../vms/isolation/host.js';
import { testChainContext } from './context.js';

export class ComplianceError extends NodeError<'Violation'> {}

export interface ComplianceOptions {
  /** Genesis bytes for initialize (default empty). */
  genesis?: Uint8Array;
  /** Makes the VM want a block (e.g. submits a transaction through its service). Called once per block the checks build. */
  makePending: (vm: ChainVM) => Promise<void>;
  /** Longest to wait for waitForEvent after makePending (default 2 s). */
  eventTimeoutMs?: number;
  /**
   * Runs every check with the VM in a worker thread, as `--vm-isolation` does: the `file:` URL of the
   * module exporting `vmFactory` (e.g. `import.meta.resolve('my-vm')`). `makePending` then gets the
   * host's proxy VM: reach the VM through its services (createHandlers), not its class.
   */
  worker?: { moduleUrl: string; callTimeoutMs?: number };
}

export interface ComplianceCheck {
  name: string;
  run: () => Promise<void>;
}

function check(cond: unknown, message: string): asserts cond {
  if (!cond) throw new ComplianceError('Violation', message);
}

async function rejectsNotFound(p: Promise<unknown>, what: string): Promise<void> {
  try {
    await p;
  } catch (e) {
    check(isNotFoundError(e), `${what} must throw NotFoundError (code 'NotFound'), threw ${(e as Error).message}`);
    return;
  }
  throw new ComplianceError('Violation', `${what} must throw NotFoundError, but resolved`);
}

export function chainVMCompliance(factory: VMFactory, o: ComplianceOptions): ComplianceCheck[] {
  const timeout = o.eventTimeoutMs ?? 2000;
  const worker = o.worker;
  const create = (): ChainVM | Promise<ChainVM> =>
    worker
      ? new WorkerVM({ moduleUrl: worker.moduleUrl, callTimeoutMs: worker.callTimeoutMs ?? 30_000, shutdownTimeoutMs: worker.callTimeoutMs ?? 30_000, maxBodyBytes: 1 << 20 })
      : factory.create();
  const mode = worker ? ' (worker)' : '';
  const start = async (db: KeyValueStore = new MemoryStore()) => {
    const vm = await create();
    await vm.initialize(testChainContext({ db, vmId: factory.vmId }), { genesis: o.genesis ?? new Uint8Array() });
    await vm.setState('bootstrapping');
    await vm.setState('normalOp');
    return vm;
  };
  const build = async (vm: ChainVM): Promise<Block> => {
    await o.makePending(vm);
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(), timeout);
    try {
      check((await vm.waitForEvent(ac.signal)) === 'pendingTxs', 'waitForEvent must resolve pendingTxs after makePending');
    } finally {
      clearTimeout(timer);
    }
    return vm.buildBlock();
  };
  const accept = async (vm: ChainVM, b: Block) => {
    await b.verify();
    await vm.setPreference(b.id);
    await b.accept();
  };
  const c = (name: string, run: (vm: ChainVM) => Promise<void>): ComplianceCheck => ({
    name: `${factory.name} compliance${mode}: ${name}`,
    run: async () => {
      const vm = await start();
      try {
        await run(vm);
      } finally {
        await vm.shutdown();
      }
    },
  });
  return [
    c('factory has a name, a version and a 32-byte vmId', async () => {
      check(factory.name.length > 0 && /^\d+\.\d+\.\d+/.test(factory.version), 'name must be non-empty and version semver');
      check(factory.vmId.bytes.length === 32, 'vmId must be 32 bytes');
    }),
    c('genesis is the last accepted block at height 0', async (vm) => {
      const id = await vm.lastAccepted();
      const g = await vm.getBlock(id);
      check(g.height === 0, `genesis height must be 0, got ${g.height}`);
      check((await vm.getBlockIdAtHeight(0)).equals(id), 'getBlockIdAtHeight(0) must be the genesis');
    }),
    c('parseBlock(bytes) gives the same id', async (vm) => {
      const g = await vm.getBlock(await vm.lastAccepted());
      check((await vm.parseBlock(g.bytes)).id.equals(g.id), 'parsing the genesis bytes must give the genesis id');
      const b = await build(vm);
      const parsed = await vm.parseBlock(b.bytes);
      check(parsed.id.equals(b.id) && parsed.height === b.height && parsed.parentId.equals(b.parentId), 'parsing a built block must give the same id, height and parent');
    }),
    c('getBlock of an unknown id and getBlockIdAtHeight above the tip are NotFound', async (vm) => {
      await rejectsNotFound(vm.getBlock(Id.fromBytes(new Uint8Array(32).fill(0xab))), 'getBlock(unknown)');
      await rejectsNotFound(vm.getBlockIdAtHeight(1_000_000), 'getBlockIdAtHeight(above last accepted)');
    }),
    c('lastAccepted and the height index agree after each accept', async (vm) => {
      for (let i = 1; i <= 3; i++) {
        const b = await build(vm);
        check(b.height === i, `block ${i} must have height ${i}, got ${b.height}`);
        await accept(vm, b);
        check((await vm.lastAccepted()).equals(b.id), 'lastAccepted must be the block just accepted');
        check((await vm.getBlockIdAtHeight(i)).equals(b.id), `getBlockIdAtHeight(${i}) must be the block just accepted`);
        check((await vm.getBlock(b.id)).height === i, 'getBlock must find an accepted block');
      }
    }),
    c('buildBlock builds on the preference', async (vm) => {
      const b1 = await build(vm);
      await b1.verify();
      await vm.setPreference(b1.id);
      const b2 = await build(vm);
      check(b2.parentId.equals(b1.id), 'a block built after setPreference(b1) must have b1 as parent');
      check(b2.height === b1.height + 1, 'height must be parent height + 1');
    }),
    c('a rejected block is not accepted state', async (vm) => {
      const b = await build(vm);
      await b.verify();
      await b.reject();
      check(!(await vm.lastAccepted()).equals(b.id), 'a rejected block must not become last accepted');
      await rejectsNotFound(vm.getBlockIdAtHeight(b.height), 'getBlockIdAtHeight of a rejected height');
    }),
    c("one block per ID: concurrent parses of a peer's block, one verified, let its child verify", async (vm) => {
      // A peer built b1 and its child b2 (another instance of the VM on the same genesis). The engine
      // parses a block whenever a query, a Put or gossip carries it, concurrently, and verifies one of
      // the results: the VM must hand out one object per ID (or share the verified state), else the
      // child's verify finds an unverified parent and consensus stalls on it. (Two objects may exist
      // while neither is verified; the VM keeps the verified one.)
      const peer = await start();
      try {
        const b1 = await build(peer);
        await b1.verify();
        await peer.setPreference(b1.id);
        const b2 = await build(peer);
        check(b2.parentId.equals(b1.id), "the peer's second block must be built on its first");
        const [p, q] = await Promise.all([vm.parseBlock(b1.bytes), vm.parseBlock(b1.bytes)]);
        check(p.id.equals(q.id), 'two parses of one block must give one ID');
        await p.verify();
        await vm.setPreference(p.id);
        const child = await vm.parseBlock(b2.bytes);
        try {
          await child.verify();
        } catch (e) {
          throw new ComplianceError('Violation', `a block whose parent was verified (through another parse of it) must verify: ${(e as Error).message}`);
        }
        await p.accept();
        await child.accept();
        check((await vm.lastAccepted()).equals(b2.id), "the peer's blocks must be accepted in order");
      } finally {
        await peer.shutdown();
      }
    }),
    c('waitForEvent honours abort', async (vm) => {
      const ac = new AbortController();
      const p = vm.waitForEvent(ac.signal);
      setTimeout(() => ac.abort(), 10);
      const outcome = await Promise.race([
        p.then(
          () => 'resolved',
          () => 'rejected',
        ),
        new Promise((r) => setTimeout(() => r('hung'), 1000)),
      ]);
      check(outcome === 'rejected', `waitForEvent with nothing pending must reject when aborted (it ${outcome})`);
    }),
    {
      name: `${factory.name} compliance${mode}: accepted blocks survive a restart`,
      run: async () => {
        const db = new MemoryStore();
        const vm = await start(db);
        const b = await build(vm);
        await accept(vm, b);
        await vm.shutdown();
        const again = await start(db);
        try {
          check((await again.lastAccepted()).equals(b.id), 'lastAccepted must survive a restart');
          check((await again.getBlockIdAtHeight(b.height)).equals(b.id), 'the height index must survive a restart');
          check((await again.getBlock(b.id)).id.equals(b.id), 'accepted blocks must survive a restart');
        } finally {
          await again.shutdown();
        }
      },
    },
  ];
}
