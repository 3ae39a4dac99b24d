// The chain creator's policy, with fakes for the chain manager and the VM registry: which chains the
// platform chain reports are run, which wait (and why), and that a failed creation is contained.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Id, ShortId, vmIdFromName } from '@cornice/sdk';
import { ChainCreator, creatableVm } from '../../src/chains/creator.js';
import { PlatformError } from '../../src/platform/errors.js';
import { VMRegistry } from '../../src/vms/registry.js';
import type { ChainDefinition } from '../../src/chains/definition.js';
import type { ChainRecord } from '../../src/platform/model.js';
import { ValidatorSets } from '../../src/validators/validators.js';
import { captureLog } from '../helpers/log.js';

const self = ShortId.fromBytes(new Uint8Array(20).fill(1));
const other = ShortId.fromBytes(new Uint8Array(20).fill(2));
const subnet = Id.fromBytes(new Uint8Array(32).fill(5));
const timestampVm = vmIdFromName('timestamp');

let n = 0;
const record = (o: Partial<ChainRecord> = {}): ChainRecord => ({
  id: Id.fromBytes(new Uint8Array(32).fill(100 + ++n)),
  name: `chain ${n}`,
  subnetId: Id.empty,
  vmId: timestampVm,
  fxIds: [],
  genesisData: new Uint8Array([n]),
  ...o,
});

function setup(o: { loaded?: Id[]; fail?: (def: ChainDefinition) => string | undefined; aliases?: Map<string, { aliases: string[]; endpointAliases: string[] }> } = {}) {
  const created: ChainDefinition[] = [];
  const running = new Set<string>();
  const log = captureLog();
  const validators = new ValidatorSets();
  const creator = new ChainCreator({
    nodeId: self,
    vms: { has: (id) => (o.loaded ?? [timestampVm]).some((x) => x.equals(id)) },
    validators,
    create: async (def) => {
      const failure = o.fail?.(def);
      if (failure) throw new Error(failure);
      created.push(def);
      running.add(def.id.toString());
    },
    isRunning: (id) => running.has(id.toString()),
    aliasesOf: (id) => o.aliases?.get(id.key),
    log,
  });
  return { creator, created, log, validators, running };
}

test('a Default Subnet chain runs once the creator starts, with the genesis aliases when it has some', async () => {
  const genesisChain = record({ name: 'Simple Timestamp Server' });
  const later = record();
  const { creator, created, log } = setup({ aliases: new Map([[genesisChain.id.key, { aliases: ['timestamp'], endpointAliases: ['timestamp'] }]]) });
  creator.chainCreated(genesisChain);
  creator.chainCreated(later);
  await Promise.resolve();
  assert.equal(created, [], 'nothing is created before start()');
  creator.start();
  await creator.settled();
  assert.equal(created, [
    { id: genesisChain.id, name: 'Simple Timestamp Server', subnetId: Id.empty, vmId: timestampVm, fxIds: [], genesis: genesisChain.genesisData, aliases: ['timestamp'], endpointAliases: ['timestamp'] },
    { id: later.id, name: later.name, subnetId: Id.empty, vmId: timestampVm, fxIds: [], genesis: later.genesisData, aliases: [], endpointAliases: [] },
  ]);
  creator.chainCreated(later);
  await creator.settled();
  assert.is(created.length, 2, 'a chain reported again is not created twice');
  assert.equal(log.lines, []);
});

test('a chain whose VM is not loaded is not run, and a warning names the chain and the VM', async () => {
  const avm = record({ name: 'X-Chain', vmId: vmIdFromName('avm') });
  const odd = record({ name: 'odd', vmId: Id.fromBytes(new Uint8Array(32).fill(0xff)) });
  const { creator, created, log } = setup({ aliases: new Map([[avm.id.key, { aliases: ['X', 'avm'], endpointAliases: ['X'] }]]) });
  creator.start();
  creator.chainCreated(avm);
  creator.chainCreated(odd);
  await creator.settled();
  assert.equal(created, []);
  assert.equal(log.lines, [
    {
      level: 'warn',
      msg: 'chain not run: its VM is not loaded',
      fields: { chain: 'X-Chain', chainId: avm.id.toString(), alias: 'X', vmId: vmIdFromName('avm').toString(), vm: 'avm' },
    },
    {
      level: 'warn',
      msg: 'chain not run: its VM is not loaded',
      fields: { chain: 'odd', chainId: odd.id.toString(), alias: undefined, vmId: odd.vmId.toString(), vm: undefined },
    },
  ]);
});

test('a chain on a subnet this node does not validate waits, saying why, and starts when the node becomes a current validator', async () => {
  const chain = record({ name: 'subnet chain', subnetId: subnet });
  const { creator, created, log, validators } = setup();
  creator.start();
  creator.validatorsChanged(subnet, [{ nodeId: other, weight: 10n }]);
  creator.chainCreated(chain);
  await creator.settled();
  assert.equal(created, []);
  assert.equal(log.lines, [
    { level: 'info', msg: 'chain not run: this node does not validate its subnet', fields: { chain: 'subnet chain', chainId: chain.id.toString(), subnetId: subnet.toString() } },
  ]);
  assert.equal(validators.listNow(subnet), [{ nodeId: other, weight: 10n }], 'the engines sample the reported validators');

  creator.validatorsChanged(Id.empty, [{ nodeId: self, weight: 1n }]);
  await creator.settled();
  assert.equal(created, [], 'validating the Default Subnet is not validating the subnet');

  creator.validatorsChanged(subnet, [{ nodeId: other, weight: 10n }, { nodeId: self, weight: 5n }]);
  await creator.settled();
  assert.equal(created.map((d) => d.id), [chain.id]);
  assert.equal(log.lines[1], {
    level: 'info',
    msg: 'chain starting: this node now validates its subnet',
    fields: { chain: 'subnet chain', chainId: chain.id.toString(), subnetId: subnet.toString() },
  });
  assert.equal(validators.listNow(subnet).map((v) => v.weight), [10n, 5n]);

  creator.validatorsChanged(subnet, [{ nodeId: self, weight: 6n }]);
  await creator.settled();
  assert.is(created.length, 1, 'a chain that runs is not created again');
});

test('a chain on a subnet this node already validates runs at once', async () => {
  const { creator, created } = setup();
  creator.start();
  creator.validatorsChanged(subnet, [{ nodeId: self, weight: 1n }]);
  const chain = record({ subnetId: subnet });
  creator.chainCreated(chain);
  await creator.settled();
  assert.equal(created.map((d) => d.id), [chain.id]);
});

test('a failed creation is logged with its reason and contained: the next chains are still created', async () => {
  const bad = record({ name: 'bad' });
  const good = record({ name: 'good' });
  const { creator, created, log } = setup({ fail: (def) => (def.name === 'bad' ? 'genesis is corrupt' : undefined) });
  creator.start();
  creator.chainCreated(bad);
  creator.chainCreated(good);
  await creator.settled();
  assert.equal(created.map((d) => d.name), ['good']);
  assert.equal(log.lines, [{ level: 'error', msg: 'chain not run: its creation failed', fields: { chain: 'bad', chainId: bad.id.toString(), error: 'genesis is corrupt' } }]);
  assert.is(creator.failureOf(bad.id), 'genesis is corrupt');
  assert.is(creator.failureOf(good.id), undefined);
});

test('the platform chain itself (already running) is not created again; stop() skips what is queued', async () => {
  const { creator, created, running } = setup();
  const p = record({ name: 'P' });
  running.add(p.id.toString());
  creator.chainCreated(p);
  creator.chainCreated(record());
  await creator.stop();
  assert.equal(created, []);
  creator.chainCreated(record());
  await creator.settled();
  assert.equal(created, [], 'nothing is created after stop()');
});

test('createBlockchain resolves a loaded VM by vmID or alias; an unknown one is named with the VMs this node loaded', () => {
  const registry = new VMRegistry();
  const vm = (name: string) => ({ name, version: '1.0.0', vmId: vmIdFromName(name), create: () => ({}) as never });
  registry.register(vm('platformvm'), 'builtin');
  registry.alias('platformvm', 'platform');
  registry.register(vm('timestamp'), 'builtin');
  registry.register(vm('kvvm'), 'plugin');
  registry.alias('kvvm', 'kv');
  const resolve = creatableVm(registry, vmIdFromName('platformvm'));
  assert.ok(resolve('kv').equals(vmIdFromName('kvvm')));
  assert.ok(resolve(timestampVm.toString()).equals(timestampVm));
  const loaded = `timestamp (${timestampVm}), kvvm (${vmIdFromName('kvvm')})`;
  assert.throws(() => resolve('nosuchvm'), (e: Error) => e instanceof PlatformError && e.code === 'UnknownVM' && e.message === `no VM with ID 'nosuchvm' found; this node has loaded: ${loaded}`);
  assert.throws(() => resolve('x'.repeat(5000)), (e: Error) => e.message.startsWith(`no VM with ID '${'x'.repeat(64)}…' found`));
});

test.run();
