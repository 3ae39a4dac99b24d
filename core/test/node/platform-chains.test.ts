// Chains are created from what the platform chain reports (a stand-in platform VM here): a chain on a
// subnet this node does not validate is not run, and the log says why, until the node becomes one of
// its current validators; a chain whose VM is missing is named in a warning; a failing creation
// leaves the node serving.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Id, ShortId, defineVM, vmIdFromName, type VMFactory } from '@cornice/sdk';
import type { ChainRecord } from '../../src/platform/model.js';
import { parseConfig } from '../../src/config/parse.js';
import { TestVM, TestVMError } from '../../src/testing/simulation.js';
import { genesisOf } from '../../src/genesis/genesis.js';
import { createLogger } from '../../src/log/logger.js';
import { TOKENS, provide, type PlatformVMDeps } from '../../src/node/container.js';
import { startNode, type RunningNode } from '../../src/node/node.js';
import { postRpc } from '../../src/testing/rpc.js';
import { fakePlatformVM } from '../helpers/platform.js';

type Line = Record<string, unknown> & { level: string; msg: string };

const testvm = defineVM({ name: 'testvm', version: '1.0.0', create: () => new TestVM() });
const subnet = Id.fromBytes(new Uint8Array(32).fill(5));
const record = (name: string, o: Partial<ChainRecord> = {}): ChainRecord => ({
  id: Id.fromBytes(new Uint8Array(32).fill(name.charCodeAt(0))),
  name,
  subnetId: Id.empty,
  vmId: testvm.vmId,
  fxIds: [],
  genesisData: new Uint8Array(),
  ...o,
});

let dir: string;
test.before.each(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cornice-pchains-'));
});
test.after.each(() => rm(dir, { recursive: true, force: true }));

async function start(atInit: (deps: PlatformVMDeps) => void, vms: VMFactory[] = [testvm]): Promise<{ node: RunningNode; lines: Line[]; deps: () => PlatformVMDeps }> {
  const lines: Line[] = [];
  const parsed = parseConfig(['--http-port=0', '--staking-port=0', '--db-type=memory', `--data-dir=${dir}`, '--sybil-protection-enabled=false', '--vms='], {});
  if (parsed.kind !== 'run') throw new TypeError('run');
  const platform = fakePlatformVM(atInit);
  const node = await startNode(parsed.config, {
    log: createLogger({ level: 'debug', write: (l) => lines.push(JSON.parse(l)) }),
    builtinVMs: vms,
    genesis: () => genesisOf(12345, { chains: [], validators: [] }),
    overrides: (c) => provide(c, TOKENS.platformVM, platform.make),
  });
  return { node, lines, deps: platform.deps };
}

test('a chain on a subnet this node does not validate is not run, the log says why; it starts when the node becomes a current validator', async () => {
  const chain = record('s', { subnetId: subnet });
  const { node, lines, deps } = await start((d) => d.events.chainCreated(chain));
  try {
    assert.is(node.chainManager.get(chain.id.toString()), undefined);
    assert.not.ok(deps().isChainRunning(chain.id));
    const why = lines.find((l) => l.msg === 'chain not run: this node does not validate its subnet');
    assert.equal([why?.level, why?.chain, why?.chainId, why?.subnetId], ['info', 's', chain.id.toString(), subnet.toString()]);

    const self = ShortId.fromString(node.nodeId);
    deps().events.validatorsChanged(subnet, [{ nodeId: ShortId.fromBytes(new Uint8Array(20).fill(9)), weight: 5n }]);
    await node.chainCreator.settled();
    assert.is(node.chainManager.get(chain.id.toString()), undefined, 'not while other nodes validate it');

    deps().events.validatorsChanged(subnet, [{ nodeId: self, weight: 7n }]);
    await node.chainCreator.settled();
    const running = node.chainManager.get(chain.id.toString());
    assert.ok(running?.subnetId.equals(subnet), 'the chain runs now');
    assert.ok(deps().isChainRunning(chain.id), 'platform getBlockchainStatus sees it Validating');
    assert.ok(lines.some((l) => l.msg === 'chain starting: this node now validates its subnet' && l.chainId === chain.id.toString()));
    assert.equal(node.chains.aliases(chain.id), [], 'a chain created at run time has no alias');
  } finally {
    await node.stop();
  }
});

test('validator changes reach the sets the engines sample', async () => {
  const { node, deps } = await start(() => {});
  try {
    const v = [{ nodeId: ShortId.fromBytes(new Uint8Array(20).fill(3)), weight: 11n }];
    deps().events.validatorsChanged(subnet, v);
    assert.equal(node.validators.listNow(subnet), v);
  } finally {
    await node.stop();
  }
});

test('a chain whose VM this node has not loaded is listed by the platform but not run; the warning names the chain and the VM', async () => {
  const x = record('X', { name: 'X-Chain', vmId: vmIdFromName('avm') });
  const { node, lines } = await start((d) => d.events.chainCreated(x));
  try {
    assert.is(node.chainManager.get(x.id.toString()), undefined);
    const warn = lines.find((l) => l.msg === 'chain not run: its VM is not loaded');
    assert.equal([warn?.level, warn?.chain, warn?.chainId, warn?.vm, warn?.vmId], ['warn', 'X-Chain', x.id.toString(), 'avm', vmIdFromName('avm').toString()]);
  } finally {
    await node.stop();
  }
});

test('a chain created at run time whose creation fails is logged and contained: the node and its other chains keep serving', async () => {
  const bad = defineVM({
    name: 'badvm',
    version: '1.0.0',
    create: () => {
      const vm = new TestVM();
      vm.initialize = async () => {
        throw new TestVMError('InvalidBlock', 'genesis is corrupt');
      };
      return vm;
    },
  });
  const good = record('g');
  const { node, lines, deps } = await start((d) => d.events.chainCreated(good), [testvm, bad]);
  try {
    const broken = record('b', { vmId: bad.vmId });
    deps().events.chainCreated(broken);
    await node.chainCreator.settled();
    const failed = lines.find((l) => l.msg === 'chain not run: its creation failed');
    assert.is(failed?.level, 'error');
    assert.is(failed?.chainId, broken.id.toString());
    assert.match(String(failed?.error), /genesis is corrupt/);
    assert.is(node.chainManager.get(broken.id.toString()), undefined);
    assert.ok(node.chainManager.get(good.id.toString()), 'the other chain still runs');
    assert.is((await postRpc(`${node.url}/ext/admin`, 'admin.getNodeID')).result?.nodeID, node.nodeId, 'the node serves');
    assert.equal(deps().resolveVm('testvm'), testvm.vmId, 'resolveVm goes through the VM registry');
    assert.throws(() => deps().resolveVm('nope'), /^no VM with ID 'nope' found; this node has loaded: testvm \(\w+\), badvm \(\w+\)$/);
  } finally {
    await node.stop();
  }
});

test.run();
