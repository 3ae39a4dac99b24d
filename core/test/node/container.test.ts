// The composition root's container: a test replaces a part (clock, store, transport, a VM factory)
// by registering another instance under its token before the node starts, and the node uses it.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Id, MemoryStore, defineVM, silentLogger, type ChainContext, type KeyValueStore, type VMFactory, type VMInit } from '@cornice/sdk';
import { parseConfig } from '../../src/config/parse.js';
import { TestVM } from '../../src/testing/simulation.js';
import { PrefixedStore } from '@cornice/sdk';
import { genesisChainId, genesisOf } from '../../src/genesis/genesis.js';
import { loopbackNetwork } from '../../src/network/loopback.js';
import { TOKENS, provide, vmToken } from '../../src/node/container.js';
import { startNode, type NodeDeps } from '../../src/node/node.js';
import { postRpc } from '../../src/testing/rpc.js';
import { FAST_KDF } from '../helpers/node.js';

class ContextVM extends TestVM {
  ctx: ChainContext | undefined;
  override async initialize(ctx: ChainContext, init: VMInit): Promise<void> {
    this.ctx = ctx;
    await ctx.db.put(new TextEncoder().encode('written-by-the-vm'), new Uint8Array([1]));
    return super.initialize(ctx, init);
  }
}

const made: ContextVM[] = [];
const factory = defineVM({ name: 'ctxvm', version: '1.0.0', create: () => made[made.push(new ContextVM()) - 1]! });
const chainId = genesisChainId(12345, { name: 'ctx', subnetId: Id.empty, vmId: factory.vmId, fxIds: [], genesis: new Uint8Array() });

async function count(store: KeyValueStore): Promise<number> {
  let n = 0;
  for await (const _ of store.iterate({})) n++;
  return n;
}

let dir: string;
test.before.each(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cornice-container-'));
  made.length = 0;
});
test.after.each(() => rm(dir, { recursive: true, force: true }));

/** A node with the default leveldb store type, so a store opened on disk would show. */
function start(overrides: NodeDeps['overrides'], builtinVMs: VMFactory[] = [factory], flags: string[] = []) {
  const parsed = parseConfig(['--http-port=0', '--staking-port=0', `--data-dir=${dir}`, '--log-level=off', '--sybil-protection-enabled=false', '--vms=', ...flags], {});
  if (parsed.kind !== 'run') throw new TypeError('run');
  return startNode(parsed.config, {
    log: silentLogger,
    keystoreKdf: FAST_KDF,
    builtinVMs,
    genesis: () => genesisOf(12345, { chains: [{ name: 'ctx', vmId: factory.vmId, aliases: ['ctx'] }], validators: [] }),
    overrides,
  });
}

test('a clock and a store registered before start are the ones the node and its chains use; the node leaves the store open', async () => {
  const store = new MemoryStore();
  const clock = { now: () => 1_234_567 };
  const node = await start((c) => {
    provide(c, TOKENS.db, store);
    provide(c, TOKENS.clock, clock);
  });
  try {
    assert.not.ok(existsSync(join(dir, 'db')), 'no database was opened on disk');
    const vm = made[0]!;
    assert.ok(node.chainManager.get('ctx')?.id.equals(chainId));
    assert.is(vm.ctx!.clock, clock, "the chain's context has the clock");
    assert.is(vm.ctx!.clock.now(), 1_234_567);
    const written = await new PrefixedStore(new PrefixedStore(store, 'chains'), chainId.bytes).get(new TextEncoder().encode('written-by-the-vm'));
    assert.equal(written, new Uint8Array([1]), "the chain's writes land in the given store");
    assert.is(await count(new PrefixedStore(store, 'meta')), 2, 'the network and genesis are recorded there');
    const created = await postRpc(`${node.url}/ext/keystore`, 'keystore.createUser', { username: 'alice', password: 'Ka7!qPz#91Lm&wR2' });
    assert.equal(created.result, { success: true }, JSON.stringify(created.error));
    assert.ok((await count(new PrefixedStore(store, 'keystore'))) > 0, 'the keystore writes to the given store');
  } finally {
    await node.stop();
  }
  assert.is(await store.get(new TextEncoder().encode('nothing')), undefined, 'the store was not closed');
});

test("--evm-debug-api is each chain's ChainContext.debugApis; without it, false on the local network", async () => {
  for (const [flags, want] of [[[], false], [['--evm-debug-api'], true]] as const) {
    made.length = 0;
    const node = await start((c) => provide(c, TOKENS.db, new MemoryStore()), [factory], [...flags]);
    try {
      assert.is(made[0]!.ctx!.networkId, 12345);
      assert.is(made[0]!.ctx!.debugApis, want, flags.join(' ') || 'no flag');
    } finally {
      await node.stop();
    }
  }
});

test('a replaced network transport is the one chains open their links on', async () => {
  const opened: string[] = [];
  const node = await start((c) => {
    c.register(TOKENS.network, {
      useFactory: (r) => {
        const inner = loopbackNetwork(r.resolve(TOKENS.nodeId));
        return { ...inner, open: (id: Id) => (opened.push(id.toString()), inner.open(id)) };
      },
    });
  });
  try {
    assert.equal(opened, [Id.empty.toString(), chainId.toString()], 'the platform chain, then the genesis chain');
  } finally {
    await node.stop();
  }
});

test('a VM factory registered under its vmID token is the one its chains are created with', async () => {
  let replaced = 0;
  const replacement: VMFactory = { ...factory, create: () => (replaced++, new ContextVM()) };
  const node = await start((c) => provide(c, vmToken(factory.vmId), replacement));
  try {
    assert.is(replaced, 1);
    assert.is(made.length, 0, 'the loaded factory was not used');
  } finally {
    await node.stop();
  }
});

test('the platform chain is created first: ID 111…LpoYY on the Default Subnet, aliases P and platform, endpoint /ext/P; platform.buildGenesis at /ext/vm/platform', async () => {
  const node = await start(undefined);
  try {
    const p = node.chainManager.chains[0]!;
    assert.ok(p.id.equals(Id.empty));
    assert.ok(p.subnetId.equals(Id.empty));
    assert.is(p.vmId.toString(), 'rWhpuQPF1kb72esV2momhMuTYGkEb1oL29pt2EBXWmSy4kxnT');
    assert.equal(node.chains.aliases(Id.empty), ['P', 'platform']);
    assert.ok(node.routes.lookup('P'), '/ext/P is routed');
    assert.ok(node.vms.has('platform'), 'the platform VM is known by its alias');
    const status = await postRpc(`${node.url}/ext/P`, 'platform.getBlockchainStatus', { blockchainID: chainId.toString() });
    assert.equal(status.result, { status: 'Validating' }, 'the platform service answers at /ext/P and sees the genesis chain running');
    const params = {
      address: 12345,
      accounts: [{ address: '6Y3kysjF9jnHnYkdS9yGAuoHyae2eNmeV', balance: '20000000000000' }],
      defaultSubnetValidators: [],
      chains: [],
      time: 1_572_566_400,
    };
    for (const path of ['vm/platform', 'vm/platformvm', `vm/${p.vmId}`]) {
      const built = await postRpc(`${node.url}/ext/${path}`, 'platform.buildGenesis', params);
      assert.type(built.result?.bytes, 'string', `platform.buildGenesis at /ext/${path}`);
    }
  } finally {
    await node.stop();
  }
});

test.run();
