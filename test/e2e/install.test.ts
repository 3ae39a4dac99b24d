import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { TIMESTAMP_CHAIN_ID, npmStartFlags } from '../src/fixtures.js';
import { installInto } from '../src/install.js';
import { runCli, startNodeProcess } from '../src/process.js';

// A node installed as npm would install @cornice/core alone: core and sdk, no built-in VM package.
let dir: string;
let bin: string;
test.before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cornice-e2e-install-'));
  await installInto(join(dir, 'node_modules'), { core: '@cornice/core', sdk: '@cornice/sdk' });
  bin = join(dir, 'node_modules', '@cornice', 'core', 'bin', 'cornice.js');
});
test.after(() => rm(dir, { recursive: true, force: true }));

test('a node installed without the built-in VM packages starts, serves admin, and says which chains it does not run', async () => {
  const node = await startNodeProcess([...npmStartFlags(), `--data-dir=${dir}/a`, '--db-type=memory'], 30_000, { bin, cwd: dir });
  try {
    assert.is((await node.call('admin', 'admin.getNodeID')).result?.nodeID, node.nodeId);
    const skipped = node.logs.filter((l) => l.msg === 'built-in VM not installed; skipped');
    assert.equal(skipped.map((l) => [l.level, l.package]), [['info', '@cornice/avm'], ['info', '@cornice/evm'], ['info', '@cornice/subnet-evm'], ['info', '@cornice/timestamp']]);
    const notRun = node.logs.filter((l) => l.msg === 'chain not run: its VM is not loaded');
    assert.equal(notRun.map((l) => [l.level, l.chain, l.vm]), [['warn', 'X-Chain', 'avm'], ['warn', 'C-Chain', 'evm'], ['warn', 'Simple Timestamp Server', 'timestamp']]);
    assert.is(notRun[2]!.chainId, TIMESTAMP_CHAIN_ID);
    assert.equal(node.logs.find((l) => l.msg === 'node started')?.chains, ['11111111111111111111111111111111LpoYY'], 'only the platform chain');
    const r = await fetch(`${node.url}/ext/timestamp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.is(r.status, 404);
  } finally {
    await node.stop();
  }
});

test('named explicitly with --vms, a VM that is not installed still fails start-up clearly', async () => {
  const r = await runCli([...npmStartFlags(), `--data-dir=${dir}/b`, '--db-type=memory', '--http-port=0', '--staking-port=0', '--vms=@cornice/timestamp'], 30_000, { bin, cwd: dir });
  assert.is(r.code, 1);
  assert.match(r.stderr, /VM plugin @cornice\/timestamp not found: no package of that name is installed/);
});

test.run();
