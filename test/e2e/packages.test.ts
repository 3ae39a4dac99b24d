import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { REPO, TIMESTAMP_CHAIN_ID, npmStartFlags } from '../src/fixtures.js';
import { KV_VM_ID, putAndGet } from '../src/kv.js';
import { installTarballs } from '../src/pack.js';
import { runCli, startNodeProcess, type NodeProcess } from '../src/process.js';

/**
 * The release path end to end: `npm run pack:all`'s script packs every package lerna releases; an
 * operator's project outside the repository installs @cornice/core and chosen plugins from those
 * tarballs alone (third-party dependencies from npm's cache or the registry); a node started from
 * that install's bin loads a plugin installed from its tarball by --vms, and one unpacked into
 * --plugin-dir (named by vmID, and by alias), and serves them.
 */
interface Packed {
  name: string;
  version: string;
  private: boolean;
  workspace: string;
  tarball: string;
  files: string[];
}

function run(cmd: string, args: string[], cwd: string, timeoutMs = 120_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { cwd, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${cmd} ${args.join(' ')} failed: ${err.message}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

let dir: string;
let packed: Packed[];
let tarball: (name: string) => string;
let op: string;
let bin: string;

test.before(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), 'cornice-e2e-packages-')));
  packed = JSON.parse(await run(process.execPath, [join(REPO, 'scripts/pack-all.mjs'), '--out', join(dir, 'packed'), '--json'], REPO)) as Packed[];
  tarball = (name) => packed.find((p) => p.name === name)?.tarball ?? (assert.unreachable(`${name} was not packed`) as never);
  // The operator's layout: the node and the plugins they chose, nothing else of ours.
  op = join(dir, 'operator');
  await installTarballs(op, ['@cornice/sdk', '@cornice/core', '@cornice/timestamp', '@cornice/example-kv-vm'].map(tarball));
  bin = join(op, 'node_modules/@cornice/core/bin/cornice.js');
  await writeFile(
    join(dir, 'genesis.json'),
    JSON.stringify({
      chains: [
        { name: 'Simple Timestamp Server', vm: 'timestamp', aliases: ['timestamp'] },
        { name: 'Key/value store', vm: 'kvvm', genesis: { note: 'JSON genesis, as UTF-8 JSON bytes' }, aliases: ['kv'] },
      ],
    }),
  );
});
test.after(() => rm(dir, { recursive: true, force: true }));

test('every released package packs, with what it needs to install and run and nothing else', async () => {
  const workspaces = ['sdk', 'core', 'plugins/avm', 'plugins/evm', 'plugins/subnet-evm', 'plugins/timestamp', 'examples/custom-vm', 'examples/custom-precompile'];
  for (const w of workspaces) assert.ok(packed.some((p) => p.workspace === w), `${w} was not packed`);
  for (const p of packed) {
    const pkg = JSON.parse(await readFile(join(REPO, p.workspace, 'package.json'), 'utf8'));
    const at = p.name;
    assert.ok(p.files.includes('package.json') && p.files.includes('README.md'), at);
    assert.equal(p.files.filter((f) => !/^templates?\//.test(f) && /(^|\/)test\/|tsbuildinfo|^src\/|^tsconfig/.test(f)), [], `${at}: tests, build info or sources shipped`);
    // Every export's target is in the tarball.
    for (const target of [pkg.main, pkg.types, ...Object.values((pkg.exports ?? {}) as Record<string, Record<string, string>>).flatMap((e) => Object.values(e))].filter(Boolean)) {
      assert.ok(p.files.includes(String(target).replace(/^\.\//, '')), `${at}: ${target} not shipped`);
    }
    assert.is(pkg.license, 'BSD-3-Clause', at);
    assert.equal(pkg.engines, { node: '>=20.10' }, at);
    assert.equal(pkg.repository?.directory, p.workspace, at);
    assert.is(pkg.private === true, p.workspace.startsWith('examples/'), `${at}: only the examples stay private`);
    if (!pkg.private) assert.equal(pkg.publishConfig, { access: 'public' }, `${at}: a scoped package publishes public`);
    // Plugins take the sdk (and what they extend) as a peer range, never a pinned copy.
    if (p.workspace.startsWith('plugins/') || p.workspace.startsWith('examples/')) {
      assert.match(pkg.peerDependencies?.['@cornice/sdk'] ?? '', /^\^\d+\.\d+\.\d+$/, `${at}: sdk peer range`);
      assert.is(pkg.dependencies?.['@cornice/sdk'], undefined, at);
      for (const [dep, range] of Object.entries({ ...pkg.dependencies, ...pkg.peerDependencies })) {
        if (dep.startsWith('@cornice/')) assert.match(String(range), /^\^/, `${at}: ${dep} is a range`);
      }
    }
  }
  assert.ok(packed.find((p) => p.name === '@cornice/core')!.files.includes('bin/cornice.js'));
});

test('each VM reports its package\'s version (lerna version bumps package.json, not the source)', async () => {
  for (const w of ['plugins/avm', 'plugins/evm', 'plugins/subnet-evm', 'plugins/timestamp', 'examples/custom-vm']) {
    const pkg = JSON.parse(await readFile(join(REPO, w, 'package.json'), 'utf8')) as { version: string };
    const mod = (await import(join(REPO, w, 'dist/src/index.js'))) as { vmFactory: { version: string } };
    assert.is(mod.vmFactory.version, pkg.version, `${w}: vmFactory.version`);
  }
});

test('the installed bin runs: --version and vm-id', async () => {
  assert.is(await realpath(join(op, 'node_modules/.bin/cornice')), await realpath(bin), 'npm linked the bin');
  const v = await runCli(['--version'], 30_000, { bin, cwd: op });
  assert.match(v.stdout, /^cornice 0\.1\.0 /);
  const id = await runCli(['vm-id', 'kvvm'], 30_000, { bin, cwd: op });
  assert.is(id.stdout, `${KV_VM_ID}\n`);
});

async function withNode(flags: string[], check: (node: NodeProcess) => Promise<void>): Promise<void> {
  const node = await startNodeProcess([...npmStartFlags(), '--db-type=memory', ...flags], 30_000, { bin, cwd: op });
  try {
    await check(node);
  } finally {
    await node.stop();
  }
}

test('without --vms: the installed built-in (timestamp) runs; those not installed are skipped, their chains not run', async () => {
  await withNode([`--data-dir=${dir}/a`], async (node) => {
    assert.is((await node.call('admin', 'admin.getNodeID')).result?.nodeID, node.nodeId);
    const skipped = node.logs.filter((l) => l.msg === 'built-in VM not installed; skipped');
    assert.equal(skipped.map((l) => l.package), ['@cornice/avm', '@cornice/evm', '@cornice/subnet-evm']);
    const notRun = node.logs.filter((l) => l.msg === 'chain not run: its VM is not loaded');
    assert.equal(notRun.map((l) => [l.level, l.chain, l.vm]), [['warn', 'X-Chain', 'avm'], ['warn', 'C-Chain', 'evm']]);
    assert.ok(((node.logs.find((l) => l.msg === 'node started')?.chains ?? []) as string[]).includes(TIMESTAMP_CHAIN_ID));
    const block = await node.call('timestamp', 'timestamp.getBlock', {});
    assert.is((block.result as { parentID?: string } | undefined)?.parentID, '11111111111111111111111111111111LpoYY', JSON.stringify(block));
  });
});

test('a plugin installed from its tarball loads by --vms <package name> and serves its API', async () => {
  await withNode([`--data-dir=${dir}/b`, '--vms=@cornice/timestamp,@cornice/example-kv-vm', `--genesis-file=${dir}/genesis.json`], async (node) => {
    assert.equal(await putAndGet(node), { key: 'colour', value: 'blue', height: 1 });
    assert.ok(node.logs.some((l) => l.msg === 'VM loaded' && l.name === 'kvvm' && l.version === '0.1.0'));
  });
});

test('a plugin unpacked from its tarball into --plugin-dir, named by vmID or by alias, loads and serves', async () => {
  const byId = join(dir, 'plugins-by-id');
  await mkdir(join(byId, KV_VM_ID), { recursive: true });
  await run('tar', ['-xzf', tarball('@cornice/example-kv-vm'), '-C', join(byId, KV_VM_ID), '--strip-components=1'], dir);
  await withNode([`--data-dir=${dir}/c`, '--vms=@cornice/timestamp', `--plugin-dir=${byId}`, `--genesis-file=${dir}/genesis.json`], async (node) => {
    assert.equal(await putAndGet(node), { key: 'colour', value: 'blue', height: 1 });
  });
  const byAlias = join(dir, 'plugins-by-alias');
  await mkdir(join(byAlias, 'kvstore'), { recursive: true });
  await run('tar', ['-xzf', tarball('@cornice/example-kv-vm'), '-C', join(byAlias, 'kvstore'), '--strip-components=1'], dir);
  await writeFile(join(dir, 'aliases.json'), JSON.stringify({ [KV_VM_ID]: ['kvstore'] }));
  const flags = [`--data-dir=${dir}/d`, '--vms=@cornice/timestamp', `--plugin-dir=${byAlias}`, `--vm-aliases-file=${dir}/aliases.json`, `--genesis-file=${dir}/genesis.json`];
  await withNode(flags, async (node) => {
    assert.equal(await putAndGet(node), { key: 'colour', value: 'blue', height: 1 });
  });
});

test('named explicitly with --vms, a VM that is not installed fails start-up clearly', async () => {
  const r = await runCli([...npmStartFlags(), `--data-dir=${dir}/e`, '--db-type=memory', '--http-port=0', '--staking-port=0', '--vms=@cornice/avm'], 30_000, { bin, cwd: op });
  assert.is(r.code, 1);
  assert.match(r.stderr, /VM plugin @cornice\/avm not found: no package of that name is installed/);
});

test.run();
