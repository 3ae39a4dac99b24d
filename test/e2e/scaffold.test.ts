/**
 * The VM author's path, from the packed tarballs alone: `npm exec` the packed create-cornice-vm,
 * install the generated project's sdk and core from their tarballs, its own tests pass, its start
 * command (the README's) runs it, then `npm pack` of the project installs beside @cornice/core in
 * an operator's directory and a node loads it as the README says, by --vms and by --plugin-dir.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { vmIdFromName } from '@cornice/sdk';
import { installTarballs, npm, packWorkspaces } from '../src/pack.js';
import { startNodeProcess, type NodeProcess } from '../src/process.js';

const NAME = 'my-vm';
let dir: string;
let tarballs: Record<string, string>;
let project: string;
test.before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cornice-e2e-scaffold-'));
  tarballs = await packWorkspaces(join(dir, 'tarballs'), ['sdk', 'core', 'tools/create-cornice-vm']);
  project = join(dir, 'work', NAME);
});
test.after(() => rm(dir, { recursive: true, force: true }));

const cornice = (root: string) => join(root, 'node_modules', '@cornice', 'core', 'bin', 'cornice.js');

/** Issues a tx through the generated service and waits for the block that applies it. */
async function setAndGet(node: NodeProcess, value: string) {
  const issued = await node.call(`bc/${NAME}`, `${NAME}.issueTx`, { key: 'colour', value });
  assert.type(issued.result?.txID, 'string', JSON.stringify(issued));
  for (let i = 0; i < 500; i++) {
    const r = await node.call(`bc/${NAME}`, `${NAME}.get`, { key: 'colour' });
    if (r.result?.value === value) return r.result;
    await new Promise((res) => setTimeout(res, 10));
  }
  throw new Error('the tx was not accepted');
}

test('npm exec of the packed create-cornice-vm writes a project whose own tests pass on the packed sdk and core', async () => {
  await mkdir(join(dir, 'work'));
  await npm(['exec', '--yes', '--prefer-offline', `--package=${tarballs['create-cornice-vm']}`, '--', 'create-cornice-vm', NAME], join(dir, 'work'), 60_000);
  assert.ok(existsSync(join(project, 'src', 'vm.ts')) && existsSync(join(project, 'genesis.json')));
  // --no-save: package.json keeps its registry ranges (^x.y.z); the tarballs stand in for the registry.
  await npm(['install', '--no-save', '--prefer-offline', '--no-audit', '--no-fund', tarballs['@cornice/sdk']!, tarballs['@cornice/core']!], project);
  const out = await npm(['test'], project, 120_000);
  const [, total, passed] = /Total:\s+(\d+)[\s\S]*Passed:\s+(\d+)/.exec(out.replace(/\x1b\[[0-9;]*m/g, '')) ?? [];
  assert.ok(Number(total) >= 10 && passed === total, out);
});

test('the start command (npm start, as the README gives it) runs the VM on a one-node network', async () => {
  const pkg = JSON.parse(await readFile(join(project, 'package.json'), 'utf8')) as { scripts: { start: string } };
  const [, flags] = /&& cornice (.*)$/.exec(pkg.scripts.start) ?? [];
  assert.ok(flags, pkg.scripts.start);
  const node = await startNodeProcess(flags.split(' '), 30_000, { bin: cornice(project), cwd: project });
  try {
    assert.equal(await setAndGet(node, 'blue'), { key: 'colour', value: 'blue', height: 1 });
    assert.equal((await node.call(`bc/${NAME}`, `${NAME}.get`, { key: 'hello' })).result, { key: 'hello', value: 'world', height: 0 });
  } finally {
    await node.stop();
  }
});

test("the packed project installs beside @cornice/core; the README's commands load it by --vms and by --plugin-dir", async () => {
  const packed = join(dir, 'tarballs', `${NAME}-0.1.0.tgz`);
  await npm(['pack', '--pack-destination', join(dir, 'tarballs')], project);
  const operator = join(dir, 'operator');
  await installTarballs(operator, [tarballs['@cornice/sdk']!, tarballs['@cornice/core']!, packed]);
  const readme = await readFile(join(project, 'README.md'), 'utf8');
  const commands = [...readme.matchAll(/^npx cornice (.*)$/gm)].map((m) => m[1]!.split(' '));
  assert.is(commands.length, 2, 'one command for --vms, one for --plugin-dir');
  await mkdir(join(operator, 'plugins'));
  await symlink(join(operator, 'node_modules', NAME), join(operator, 'plugins', vmIdFromName(NAME).toString()));
  for (const [i, flags] of commands.entries()) {
    const node = await startNodeProcess([...flags, `--data-dir=${join(dir, `node${i}`)}`, '--db-type=memory'], 30_000, { bin: cornice(operator), cwd: operator });
    try {
      const loaded = node.logs.find((l) => l.msg === 'VM loaded' && l.name === NAME);
      assert.ok(loaded && loaded.version === '0.1.0', `VM loaded by ${flags[0]}`);
      assert.equal(await setAndGet(node, `v${i}`), { key: 'colour', value: `v${i}`, height: 1 });
    } finally {
      await node.stop();
    }
  }
});

test.run();
