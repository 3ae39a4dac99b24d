/**
 * Fault containment at the plugin boundary, on a real in-process node: a throwing accepted$
 * subscriber, a VM call that never settles, a chain whose creation fails, and uncaught exceptions /
 * unhandled rejections raised by a plugin's code — each confined to its chain while the node and its
 * other chains keep serving.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { map } from 'rxjs';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Id, defineVM, vmIdFromName, type Block, type ChainContext, type ChainVM, type VMFactory, type VMInit } from '@cornice/sdk';
import { installFaultHandlers } from '../../src/chains/faults.js';
import { parseConfig } from '../../src/config/parse.js';
import { TestVM, TestVMError } from '../../src/testing/simulation.js';
import { genesisChainId, genesisOf } from '../../src/genesis/genesis.js';
import { createLogger } from '../../src/log/logger.js';
import { startNode, type RunningNode } from '../../src/node/node.js';
import { postRpc } from '../../src/testing/rpc.js';

const test = suite('chain fault containment');

type Lines = Array<Record<string, unknown>>;
const dataDir = mkdtempSync(join(tmpdir(), 'cornice-faults-'));
test.after(() => rmSync(dataDir, { recursive: true, force: true }));

/** A TestVM that also serves `test.ping` so the chain's API can be called. */
class ServingVM extends TestVM {
  ctx: ChainContext | undefined;
  override async initialize(ctx: ChainContext, init: VMInit): Promise<void> {
    this.ctx = ctx;
    return super.initialize(ctx, init);
  }
}

function vmFactory(name: string, make: () => ChainVM): VMFactory {
  return defineVM({ name, version: '1.0.0', create: make });
}

const def = (factory: VMFactory, alias: string) => {
  const d = { name: alias, subnetId: Id.empty, vmId: factory.vmId, fxIds: [], genesis: new Uint8Array() };
  return { ...d, id: genesisChainId(12345, d), aliases: [alias] };
};

async function nodeWith(factories: VMFactory[], flags: string[] = []): Promise<{ node: RunningNode; lines: Lines }> {
  const lines: Lines = [];
  const parsed = parseConfig(
    ['--http-port=0', '--staking-port=0', '--db-type=memory', `--data-dir=${dataDir}`, '--sybil-protection-enabled=false', '--vms=', ...flags],
    {},
  );
  if (parsed.kind !== 'run') throw new TypeError('run');
  const node = await startNode(parsed.config, {
    log: createLogger({ level: 'debug', write: (l) => lines.push(JSON.parse(l)) }),
    builtinVMs: factories,
    genesis: () => genesisOf(12345, { chains: factories.map((f) => def(f, f.name)), validators: [] }),
  });
  return { node, lines };
}

/** Resolves with the next block accepted on `alias`. */
function nextAccepted(node: RunningNode, alias: string): Promise<{ height: number }> {
  return new Promise((resolve) => {
    const sub = node.chainManager.get(alias)!.accepted$.subscribe((b) => {
      sub.unsubscribe();
      resolve(b);
    });
  });
}

/** Waits (polling the event loop, not the clock) until `check` holds. */
async function until(check: () => boolean, what: string, maxMs = 5_000): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > maxMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

test('a throwing accepted$ subscriber is logged with its chain; consensus and the process go on', async () => {
  const vms: TestVM[] = [];
  const factory = vmFactory('good', () => {
    const vm = new TestVM();
    vms.push(vm);
    return vm;
  });
  const uncaught: unknown[] = [];
  const onUncaught = (e: unknown) => uncaught.push(e);
  process.on('uncaughtException', onUncaught);
  const { node, lines } = await nodeWith([factory]);
  try {
    node.chainManager.get('good')!.accepted$.subscribe(() => {
      throw new Error('subscriber bug');
    });
    const first = nextAccepted(node, 'good');
    vms[0]!.notify();
    assert.is((await first).height, 1);
    await until(() => lines.some((l) => l.msg === 'stream subscriber failed'), 'the log line');
    const line = lines.find((l) => l.msg === 'stream subscriber failed')!;
    assert.is(line.chain, 'good');
    assert.match(String(line.error), /subscriber bug/);
    // Further down a pipe, rxjs catches it; the node logs it instead of rxjs rethrowing it later.
    node.chainManager.get('good')!.accepted$.pipe(map((b) => b.height)).subscribe(() => {
      throw new Error('piped subscriber bug');
    });
    const second = nextAccepted(node, 'good');
    vms[0]!.notify();
    assert.is((await second).height, 2, 'consensus keeps running');
    await until(() => lines.some((l) => l.msg === 'stream subscriber failed' && String(l.error).includes('piped subscriber bug')), 'the piped error logged');
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(uncaught, [], 'nothing reached the process as an uncaught exception');
  } finally {
    process.off('uncaughtException', onUncaught);
    await node.stop();
  }
});

test('a VM call that never settles halts that chain after --vm-call-timeout: red health, clear API error, other chains serve', async () => {
  class HangingVerify extends ServingVM {
    override async buildBlock(): Promise<Block> {
      const b = (await super.buildBlock()) as Block;
      return Object.assign(Object.create(Object.getPrototypeOf(b)), b, { verify: () => new Promise<void>(() => {}) }) as Block;
    }
  }
  const hanging = new HangingVerify();
  const good = new TestVM();
  const { node, lines } = await nodeWith([vmFactory('hang', () => hanging), vmFactory('fine', () => good)], ['--vm-call-timeout=150ms']);
  try {
    hanging.notify();
    const chain = node.chainManager.get('hang')!;
    await until(() => chain.fault !== undefined, 'the chain to halt');
    assert.is(chain.fault, 'block.verify did not settle within 150 ms');
    assert.is(chain.engine.stats.state, 'halted');
    assert.ok(hanging.ctx?.signal.aborted, "the chain's signal is aborted");
    const halted = lines.find((l) => l.msg === 'chain halted')!;
    assert.is(halted.level, 'error');
    assert.is(halted.chain, 'hang');

    const health = (await postRpc(`${node.url}/ext/health`, 'health.getLiveness')).result;
    assert.is(health.healthy, false);
    assert.is(health.checks['chain hang'].error.message, 'halted: block.verify did not settle within 150 ms');
    assert.is(health.checks['chain fine'].error, undefined, 'the other chain is healthy');

    const accepted = nextAccepted(node, 'fine');
    good.notify();
    assert.is((await accepted).height, 1, 'the other chain keeps accepting');
  } finally {
    await node.stop();
  }
});

test("a halted chain's API answers a clear error instead of calling the VM", async () => {
  const { bindService, defineService, method, p, result } = await import('@cornice/sdk');
  const api = defineService('svc', { ping: method({ params: p.object({}), result: result<{ pong: boolean }>() }) });
  let calls = 0;
  class WithApi extends TestVM {
    override async createHandlers() {
      return [{ path: '', services: [bindService(api, { ping: async () => ((calls += 1), { pong: true }) })] }];
    }
  }
  const { node } = await nodeWith([vmFactory('svcvm', () => new WithApi())]);
  try {
    const url = `${node.url}/ext/bc/svcvm`;
    assert.equal((await postRpc(url, 'svc.ping')).result, { pong: true });
    node.chainManager.halt(node.chainManager.get('svcvm')!.id, 'operator test');
    const r = await postRpc(url, 'svc.ping');
    assert.equal(r.error, { code: -32000, message: 'chain svcvm is halted: operator test', data: { code: 'Halted' } });
    assert.is(calls, 1);
  } finally {
    await node.stop();
  }
});

test('a chain whose initialize fails: its VM is shut down, its signal aborted, nothing of it stays registered, and the node serves on', async () => {
  let timer: NodeJS.Timeout | undefined;
  let signal: AbortSignal | undefined;
  let shutdowns = 0;
  class BadInit extends TestVM {
    override async initialize(ctx: ChainContext): Promise<void> {
      signal = ctx.signal;
      timer = setInterval(() => {}, 1_000);
      throw new TestVMError('InvalidBlock', 'genesis is corrupt');
    }
    override async shutdown(): Promise<void> {
      shutdowns += 1;
      clearInterval(timer);
    }
  }
  const lines: Lines = [];
  const parsed = parseConfig(['--http-port=0', '--staking-port=0', '--db-type=memory', `--data-dir=${dataDir}`, '--sybil-protection-enabled=false', '--vms='], {});
  if (parsed.kind !== 'run') throw new TypeError('run');
  const factory = vmFactory('badinit', () => new BadInit());
  const fine = vmFactory('fine', () => new TestVM());
  const node = await startNode(parsed.config, {
    log: createLogger({ level: 'debug', write: (l) => lines.push(JSON.parse(l)) }),
    builtinVMs: [factory, fine],
    genesis: () => genesisOf(12345, { chains: [def(factory, 'badinit'), def(fine, 'fine')], validators: [] }),
  });
  try {
    assert.is(shutdowns, 1);
    assert.ok(signal?.aborted);
    assert.ok(lines.some((l) => l.msg === 'chain creation failed; undoing it'));
    const failed = lines.find((l) => l.msg === 'chain not run: its creation failed');
    assert.is(failed?.level, 'error');
    assert.is(failed?.chain, 'badinit');
    assert.match(String(failed?.error), /chain "badinit" .* failed to initialize: genesis is corrupt/);
    assert.is(node.chains.resolve('badinit'), undefined, 'no alias is left');
    assert.equal(node.chainManager.chains.map((c) => c.name), ['P-Chain', 'fine'], 'the chains after it are created');
    assert.is((await postRpc(`${node.url}/ext/admin`, 'admin.getNodeID')).result?.nodeID, node.nodeId, 'the node serves');
    const gone = await fetch(`${node.url}/ext/bc/${def(factory, 'badinit').id}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.is(gone.status, 404, 'nothing is mounted for it');
  } finally {
    await node.stop();
  }
});

test('a chain whose createHandlers throws is undone too (routes, aliases, health check)', async () => {
  let shutdowns = 0;
  class BadHandlers extends TestVM {
    override async createHandlers(): Promise<never> {
      throw new TestVMError('InvalidBlock', 'no handlers today');
    }
    override async shutdown(): Promise<void> {
      shutdowns += 1;
    }
  }
  const good = vmFactory('ok', () => new TestVM());
  const { node } = await nodeWith([good]);
  try {
    const bad = vmFactory('nohandlers', () => new BadHandlers());
    node.vms.register(bad, 'test');
    try {
      await node.chainManager.createChain(def(bad, 'nohandlers'));
      assert.unreachable();
    } catch (e) {
      assert.match((e as Error).message, /no handlers today/);
    }
    assert.is(shutdowns, 1);
    assert.is(node.chains.resolve('nohandlers'), undefined, 'the alias is gone');
    const health = (await postRpc(`${node.url}/ext/health`, 'health.getLiveness')).result;
    assert.equal(Object.keys(health.checks).sort(), ['chain P', 'chain ok', 'chains', 'database', 'network']);
    await node.chainManager.createChain(def(bad, 'nohandlers')).catch(() => undefined);
    assert.is(shutdowns, 2, 'the same chain can be tried again (nothing was left behind)');
  } finally {
    await node.stop();
  }
});

/** Writes a VM plugin module (its own file, so faults can be pinned on it by stack) and returns its path. */
function pluginModule(name: string, buildBlock: string): string {
  const path = join(dataDir, `${name}.mjs`);
  const sdk = pathToFileURL(fileURLToPath(new URL('../../../../sdk/dist/src/index.js', import.meta.url))).href;
  const testvm = pathToFileURL(fileURLToPath(new URL('../../src/testing/simulation.js', import.meta.url))).href;
  writeFileSync(
    path,
    `import { defineVM } from '${sdk}';
import { TestVM } from '${testvm}';
class VM extends TestVM {
  async buildBlock() {
    ${buildBlock}
    return super.buildBlock();
  }
}
export const vmFactory = defineVM({ name: '${name}', version: '1.0.0', create: () => (globalThis.faultyVMs[${JSON.stringify(name)}] = new VM()) });
`,
  );
  return path;
}

test("an uncaught exception or unhandled rejection whose stack runs through a plugin's code halts its chain; the node and other chains go on", async () => {
  const vms: Record<string, TestVM> = ((globalThis as unknown as { faultyVMs: Record<string, TestVM> }).faultyVMs = {});
  const throws = pluginModule('throws', "setTimeout(() => { throw new Error('timer bug in the plugin'); }, 1);");
  const rejects = pluginModule('rejects', "void Promise.reject(new Error('forgotten promise'));");
  const good = new TestVM();
  const fine = vmFactory('fine', () => good);
  const lines: Lines = [];
  const parsed = parseConfig(['--http-port=0', '--staking-port=0', '--db-type=memory', `--data-dir=${dataDir}`, '--sybil-protection-enabled=false', `--vms=${throws},${rejects}`], {});
  if (parsed.kind !== 'run') throw new TypeError('run');
  const byName = (name: string) => ({ vmId: vmIdFromName(name), name } as unknown as VMFactory);
  const node = await startNode(parsed.config, {
    log: createLogger({ level: 'debug', write: (l) => lines.push(JSON.parse(l)) }),
    builtinVMs: [fine],
    genesis: () => genesisOf(12345, { chains: [def(byName('throws'), 'throws'), def(byName('rejects'), 'rejects'), def(fine, 'fine')], validators: [] }),
  });
  const fatal: string[] = [];
  const uninstall = installFaultHandlers({
    log: createLogger({ level: 'debug', write: (l) => lines.push(JSON.parse(l)) }),
    attribute: (stack) => node.chainManager.chainsInStack(stack),
    onFatal: (kind) => void fatal.push(kind),
  });
  try {
    const pinned = (stack: string) => node.chainManager.chainsInStack(stack).map((c) => c.name);
    assert.equal(pinned(`Error: x\n    at f (${pathToFileURL(rejects).href}:3:5)\n    at g (${throws}:1:1)`), ['rejects'], 'the innermost plugin frame decides');
    assert.equal(pinned('Error: x\n    at f (node:internal/timers:1:1)'), [], "not a plugin's fault");
    vms.throws!.notify();
    vms.rejects!.notify();
    await until(() => node.chainManager.get('throws')!.fault !== undefined && node.chainManager.get('rejects')!.fault !== undefined, 'both chains to halt');
    assert.is(node.chainManager.get('throws')!.fault, 'uncaught exception: Error: timer bug in the plugin');
    assert.is(node.chainManager.get('rejects')!.fault, 'unhandled rejection: Error: forgotten promise');
    assert.ok(lines.some((l) => l.msg === 'fault in a chain; halting it' && l.chain === 'throws'));
    assert.equal(fatal, []);
    assert.is(node.chainManager.get('fine')!.fault, undefined);
    const accepted = nextAccepted(node, 'fine');
    good.notify();
    assert.is((await accepted).height, 1);

    // A fault outside any plugin's code is the node's own: onFatal.
    setTimeout(() => {
      throw new Error('core bug');
    }, 1);
    await until(() => fatal.length > 0, 'onFatal');
    assert.equal(fatal, ['uncaught exception']);
  } finally {
    uninstall();
    await node.stop();
  }
});

test.run();
