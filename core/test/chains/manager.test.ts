import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Id, defineVM, silentLogger, utf8Decode, type VMFactory, type VMInit } from '@cornice/sdk';
import { parseConfig } from '../../src/config/parse.js';
import { TestVM } from '../../src/testing/simulation.js';
import { genesisChainId, genesisOf } from '../../src/genesis/genesis.js';
import { startNode, type RunningNode } from '../../src/node/node.js';

const events: string[] = [];
const vms: TestVM[] = [];
const inits: VMInit[] = [];
const factory: VMFactory = defineVM({
  name: 'testvm',
  version: '1.2.3',
  create: () => {
    const vm = new TestVM();
    const n = vms.push(vm);
    events.push(`create ${n}`);
    const initialize = vm.initialize.bind(vm);
    vm.initialize = async (ctx, init) => {
      inits.push(init);
      return initialize(ctx, init);
    };
    const shutdown = vm.shutdown.bind(vm);
    vm.shutdown = async () => {
      events.push(`shutdown ${n}`);
      await shutdown();
    };
    return vm;
  },
});

const chainDef = (name: string, aliases: string[]) => {
  const def = { name, subnetId: Id.empty, vmId: factory.vmId, fxIds: [], genesis: new Uint8Array() };
  return { ...def, id: genesisChainId(12345, def), aliases };
};

let node: RunningNode;
const dataDir = mkdtempSync(join(tmpdir(), 'cornice-manager-'));
test.after(() => rmSync(dataDir, { recursive: true, force: true }));
const chainConfigs = join(dataDir, 'configs', 'chains');
test.before(async () => {
  // Per-chain files (the default --chain-config-dir): by alias for 'first', by chain ID for 'second'.
  mkdirSync(join(chainConfigs, 'one'), { recursive: true });
  writeFileSync(join(chainConfigs, 'one', 'config.json'), '{"first":true}');
  mkdirSync(join(chainConfigs, chainDef('second', []).id.toString()), { recursive: true });
  writeFileSync(join(chainConfigs, chainDef('second', []).id.toString(), 'upgrade.json'), '{"precompileUpgrades":[]}');
  mkdirSync(join(chainConfigs, 'big'), { recursive: true });
  writeFileSync(join(chainConfigs, 'big', 'config.json'), Buffer.alloc((1 << 20) + 1, 0x20));
  const parsed = parseConfig(['--http-port=0', '--staking-port=0', '--db-type=memory', `--data-dir=${dataDir}`, '--log-level=off', '--sybil-protection-enabled=false', '--vms='], {});
  if (parsed.kind !== 'run') throw new TypeError('run');
  node = await startNode(parsed.config, {
    log: silentLogger,
    builtinVMs: [factory],
    genesis: () => genesisOf(12345, { chains: [chainDef('first', ['one']), chainDef('second', ['two'])], validators: [] }),
  });
});

test('chains are created from genesis definitions in order, with their aliases, after the platform chain', () => {
  assert.equal(node.chainManager.chains.map((c) => c.name), ['P-Chain', 'first', 'second']);
  assert.equal(events, ['create 1', 'create 2']);
  assert.ok(node.chains.lookup('one').equals(chainDef('first', []).id));
  assert.ok(node.chainManager.get('two')?.id.equals(chainDef('second', []).id));
  assert.is(node.chainManager.get('nope'), undefined);
});

test('a block the VM asks for is built, decided by the engine and published on accepted$', async () => {
  const chain = node.chainManager.get('one')!;
  const accepted = new Promise<{ height: number }>((resolve) => chain.accepted$.subscribe(resolve));
  vms[0]!.notify();
  const block = await accepted;
  assert.is(block.height, 1);
  assert.ok((await chain.vm.lastAccepted()).equals((await chain.vm.getBlockIdAtHeight(1))));
});

test('creating a chain twice or for an unknown VM is a clear error', async () => {
  try {
    await node.chainManager.createChain(chainDef('first', ['again']));
    assert.unreachable();
  } catch (e) {
    assert.match((e as Error).message, /already exists/);
  }
  const unknown = { ...chainDef('third', ['three']), vmId: Id.fromBytes(new Uint8Array(32).fill(9)) };
  try {
    await node.chainManager.createChain(unknown);
    assert.unreachable();
  } catch (e) {
    assert.match((e as Error).message, /cannot create chain "third".*unknown vmID/);
  }
});

test('each VM gets its chain\'s config.json / upgrade.json from --chain-config-dir (by alias or chain ID); an oversized file fails that chain clearly', async () => {
  assert.equal(inits.slice(0, 2).map((i) => [i.config && utf8Decode(i.config), i.upgrade && utf8Decode(i.upgrade)]), [
    ['{"first":true}', undefined],
    [undefined, '{"precompileUpgrades":[]}'],
  ]);
  try {
    await node.chainManager.createChain(chainDef('fourth', ['big']));
    assert.unreachable();
  } catch (e) {
    assert.match((e as Error).message, /config\.json is 1048577 bytes; a chain's config\.json may be at most 1048576 bytes/);
  }
  assert.is(node.chainManager.get('big'), undefined);
});

test('shutdown stops chains in reverse order of creation', async () => {
  await node.stop();
  assert.equal(events.slice(-2), ['shutdown 2', 'shutdown 1']);
});

test.run();
