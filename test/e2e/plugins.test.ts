import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { REPO, npmStartFlags } from '../src/fixtures.js';
import { copyPackage, installInto } from '../src/install.js';
import { KV_VM_ID, putAndGet } from '../src/kv.js';
import { runCli, startNodeProcess, type NodeProcess } from '../src/process.js';

let dir: string;
test.before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cornice-e2e-plugins-'));
  await writeFile(
    join(dir, 'genesis.json'),
    JSON.stringify({
      chains: [
        { name: 'Simple Timestamp Server', vm: 'timestamp', aliases: ['timestamp'] },
        { name: 'Key/value store', vm: 'kvvm', aliases: ['kv'] },
      ],
    }),
  );
});
test.after(() => rm(dir, { recursive: true, force: true }));

test('the example VM loads from a --plugin-dir entry named by its vmID and serves its API', async () => {
  const plugins = join(dir, 'plugins');
  await mkdir(plugins);
  await symlink(join(REPO, 'examples/custom-vm'), join(plugins, KV_VM_ID));
  const node = await startNodeProcess([...npmStartFlags(), `--data-dir=${dir}/a`, '--db-type=memory', `--plugin-dir=${plugins}`, `--genesis-file=${dir}/genesis.json`]);
  try {
    assert.equal(await putAndGet(node), { key: 'colour', value: 'blue', height: 1 });
    assert.ok(node.logs.some((l) => l.msg === 'VM loaded' && l.name === 'kvvm' && l.version === '0.1.0'), 'the loaded VM is logged with its version');
  } finally {
    await node.stop();
  }
});

test('the example VM loads from a package specifier', async () => {
  const node = await startNodeProcess([
    ...npmStartFlags(),
    `--data-dir=${dir}/b`,
    '--db-type=memory',
    '--vms=@cornice/timestamp,@cornice/example-kv-vm',
    `--genesis-file=${dir}/genesis.json`,
  ]);
  try {
    assert.equal(await putAndGet(node), { key: 'colour', value: 'blue', height: 1 });
  } finally {
    await node.stop();
  }
});

test('a bad plugin fails start-up with a message naming it', async () => {
  const plugins = join(dir, 'bad-plugins');
  await mkdir(plugins);
  await writeFile(join(plugins, `${KV_VM_ID}.js`), 'export const notAFactory = 1;\n');
  const r = await runCli([...npmStartFlags(), `--data-dir=${dir}/c`, '--db-type=memory', '--http-port=0', '--staking-port=0', `--plugin-dir=${plugins}`]);
  assert.is(r.code, 1);
  assert.match(r.stderr, new RegExp(`${KV_VM_ID}\\.js`));
  assert.match(r.stderr, /vmFactory/);
});

test('a genesis chain whose VM is not loaded is a clear start-up error', async () => {
  const r = await runCli([...npmStartFlags(), `--data-dir=${dir}/d`, '--db-type=memory', '--http-port=0', '--staking-port=0', '--vms=@cornice/timestamp', `--genesis-file=${dir}/genesis.json`]);
  assert.is(r.code, 1);
  assert.match(r.stderr, /kvvm/);
});

/**
 * Starts a node loading the example VM with `flag`; its typed errors, thrown by whatever copy of
 * the sdk it runs with, must reach the client typed, and its chain must work.
 */
async function checkExampleVM(dataDir: string, flag: string) {
  const node = await startNodeProcess([...npmStartFlags(), `--data-dir=${dataDir}`, '--db-type=memory', flag, `--genesis-file=${dir}/genesis.json`]);
  try {
    await typedErrors(node);
    assert.equal(await putAndGet(node), { key: 'colour', value: 'blue', height: 1 });
  } finally {
    await node.stop();
  }
}

async function typedErrors(node: NodeProcess) {
  // InvalidParamsError from the plugin's own param parser
  assert.equal((await node.call('bc/kv', 'kv.put', { key: 5, value: 'x' })).error, {
    code: -32602,
    message: 'key: expected a string but got number',
    data: { field: 'key' },
  });
  // NotFoundError, a NodeError subclass, from the plugin's handler
  assert.equal((await node.call('bc/kv', 'kv.get', { key: 'absent' })).error, { code: -32000, message: 'key "absent" not found', data: { code: 'NotFound' } });
}

test('a plugin with its own copy of @cornice/sdk: typed errors keep their codes, via --plugin-dir and via a --vms path', async () => {
  const plugins = join(dir, 'own-sdk');
  const pkg = join(plugins, KV_VM_ID);
  await copyPackage('examples/custom-vm', pkg);
  await installInto(join(pkg, 'node_modules'), { sdk: '@cornice/sdk' });
  await checkExampleVM(`${dir}/own-a`, `--plugin-dir=${plugins}`);
  await checkExampleVM(`${dir}/own-b`, `--vms=@cornice/timestamp,${pkg}`);
});

test('a --plugin-dir package without node_modules runs on the node’s own @cornice/sdk', async () => {
  const plugins = join(dir, 'no-modules');
  await copyPackage('examples/custom-vm', join(plugins, KV_VM_ID));
  await checkExampleVM(`${dir}/nm`, `--plugin-dir=${plugins}`);
});

test('a plugin declaring an sdk range the node does not have is refused at start, naming both versions', async () => {
  const sdkVersion = (JSON.parse(await readFile(join(REPO, 'sdk/package.json'), 'utf8')) as { version: string }).version;
  const plugins = join(dir, 'incompatible');
  await copyPackage('examples/custom-vm', join(plugins, KV_VM_ID), ['dist/src'], (pkg) => {
    pkg.peerDependencies = { '@cornice/sdk': '^7.0.0' };
  });
  const r = await runCli([...npmStartFlags(), `--data-dir=${dir}/inc`, '--db-type=memory', '--http-port=0', '--staking-port=0', `--plugin-dir=${plugins}`]);
  assert.is(r.code, 1);
  assert.ok(r.stderr.includes(`VM plugin ${join(plugins, KV_VM_ID)} needs @cornice/sdk ^7.0.0, but this node has @cornice/sdk ${sdkVersion}`), r.stderr);
});

test.run();
