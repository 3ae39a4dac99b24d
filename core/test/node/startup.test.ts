/**
 * The API answers while the chains start: a VM slow to initialize does not hold back admin or health;
 * the `chains` health check is red until every chain runs, and a chain's routes appear when it does.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Id, defineVM, silentLogger } from '@cornice/sdk';
import { parseConfig } from '../../src/config/parse.js';
import { TestVM } from '../../src/testing/simulation.js';
import { genesisOf } from '../../src/genesis/genesis.js';
import { startNode } from '../../src/node/node.js';
import { freePort } from '../network/helpers.js';

const dataDir = mkdtempSync(join(tmpdir(), 'cornice-startup-'));
test.after(() => rmSync(dataDir, { recursive: true, force: true }));

async function post(url: string, method: string): Promise<any> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: {} }) });
  return res.json();
}

test('admin and health answer while a slow VM initializes; the chains check is red until it runs', async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let initializing!: () => void;
  const initStarted = new Promise<void>((r) => (initializing = r));
  const slow = defineVM({
    name: 'slowvm',
    version: '1.0.0',
    create: () => {
      const vm = new TestVM();
      const initialize = vm.initialize.bind(vm);
      vm.initialize = async (ctx, init) => {
        initializing();
        await gate;
        return initialize(ctx, init);
      };
      return vm;
    },
  });
  const def = { name: 'slow', subnetId: Id.empty, vmId: slow.vmId, fxIds: [], genesis: new Uint8Array() };
  const port = await freePort();
  const parsed = parseConfig([`--http-port=${port}`, '--staking-port=0', '--db-type=memory', `--data-dir=${dataDir}`, '--log-level=off', '--sybil-protection-enabled=false', '--vms='], {});
  if (parsed.kind !== 'run') throw new TypeError('run');
  const starting = startNode(parsed.config, {
    log: silentLogger,
    builtinVMs: [slow],
    genesis: () => genesisOf(12345, { chains: [{ ...def, aliases: ['slow'] }], validators: [] }),
  });
  await initStarted;
  const base = `http://127.0.0.1:${port}/ext`;
  try {
    assert.ok((await post(`${base}/admin`, 'admin.getNodeID')).result.nodeID);
    const before = (await post(`${base}/health`, 'health.getLiveness')).result;
    assert.match(before.checks.chains.error.message, /^starting: 1 chain\(s\) running so far/);
    assert.is((await fetch(`${base}/bc/slow`, { method: 'POST' })).status, 404);
    release();
    const node = await starting;
    const after = (await post(`${base}/health`, 'health.getLiveness')).result;
    assert.equal(after.checks.chains.message, { running: 2 });
    assert.is(after.checks.chains.error, undefined);
    assert.ok(node.chainManager.get('slow'));
  } finally {
    release();
    await (await starting).stop();
  }
});

test('a chain whose creation fails keeps the chains check red, naming it and why; the node serves on', async () => {
  const broken = defineVM({
    name: 'brokenvm',
    version: '1.0.0',
    create: () => {
      const vm = new TestVM();
      vm.initialize = async () => {
        throw new Error('invalid chain config: config.feeConfig.gasLimit: must be > 0');
      };
      return vm;
    },
  });
  const def = { name: 'broken', subnetId: Id.empty, vmId: broken.vmId, fxIds: [], genesis: new Uint8Array() };
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'cornice-startup-broken-'));
  const parsed = parseConfig([`--http-port=${port}`, '--staking-port=0', '--db-type=memory', `--data-dir=${dir}`, '--log-level=off', '--sybil-protection-enabled=false', '--vms='], {});
  if (parsed.kind !== 'run') throw new TypeError('run');
  const node = await startNode(parsed.config, {
    log: silentLogger,
    builtinVMs: [broken],
    genesis: () => genesisOf(12345, { chains: [def], validators: [] }),
  });
  try {
    const health = (await post(`http://127.0.0.1:${port}/ext/health`, 'health.getLiveness')).result;
    assert.is(health.healthy, false);
    assert.match(health.checks.chains.error.message, /^1 chain\(s\) failed to start: \w+: .*config\.feeConfig\.gasLimit: must be > 0/);
    assert.ok((await post(`http://127.0.0.1:${port}/ext/admin`, 'admin.getNodeID')).result.nodeID, 'the node serves on');
  } finally {
    await node.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
