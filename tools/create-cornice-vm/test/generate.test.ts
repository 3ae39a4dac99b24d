import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cb58Decode, utf8Decode, vmIdFromName } from '@cornice/sdk';
import { cb58Encode, vmIdOf } from '../src/cb58.js';
import { main, type Output } from '../src/cli.js';
import { ScaffoldError } from '../src/errors.js';
import { generate, releasedVersions } from '../src/generate.js';
import { parseProjectName } from '../src/name.js';

const REPO = fileURLToPath(new URL('../../../../', import.meta.url));
const readJson = async (path: string) => JSON.parse(await readFile(path, 'utf8')) as Record<string, any>;

let tmp: string;
test.before(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'create-cornice-vm-'));
});
test.after(() => rm(tmp, { recursive: true, force: true }));

async function filesUnder(dir: string, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    if (e.isDirectory()) out.push(...(await filesUnder(join(dir, e.name), `${prefix}${e.name}/`)));
    else out.push(`${prefix}${e.name}`);
  }
  return out.sort();
}

test('cb58 and vmIDs agree with the sdk', () => {
  for (const name of ['timestamp', 'my-vm', 'x'.repeat(32), '']) assert.is(vmIdOf(name), vmIdFromName(name).toString(), name);
  assert.is(vmIdOf('timestamp'), 'tGas3T58KzdjLHhBDMnH2TvrddhqTji5iZAMZ3RXs2NLpSnhH');
  for (const bytes of [new Uint8Array(), Uint8Array.of(0, 0, 1), new TextEncoder().encode('{"hello":"world"}')]) {
    assert.equal(cb58Decode(cb58Encode(bytes)), bytes);
  }
});

test('the versions the generator writes are the workspace versions it is released with', async () => {
  const root = await readJson(join(REPO, 'package.json'));
  assert.equal(await releasedVersions(), {
    sdk: (await readJson(join(REPO, 'sdk/package.json'))).version,
    core: (await readJson(join(REPO, 'core/package.json'))).version,
    typescript: root.devDependencies.typescript,
    uvu: root.devDependencies.uvu,
    typesNode: root.devDependencies['@types/node'],
  });
});

test('a project: every file, no placeholder left, the sdk as a peer, a genesis file with cb58 genesisData', async () => {
  const { dir, files } = await generate(parseProjectName('@acme/my-vm'), tmp);
  assert.is(dir, join(tmp, 'my-vm'));
  assert.equal(await filesUnder(dir), files);
  for (const f of ['package.json', 'genesis.json', 'README.md', '.gitignore', 'tsconfig.json', 'src/index.ts', 'src/vm.ts', 'test/vm.test.ts']) {
    assert.ok(files.includes(f), f);
  }
  for (const f of files) assert.not.match(await readFile(join(dir, f), 'utf8'), /__[A-Z_]+__/, `${f} still has a placeholder`);

  const sdkVersion = (await readJson(join(REPO, 'sdk/package.json'))).version;
  const pkg = await readJson(join(dir, 'package.json'));
  assert.is(pkg.name, '@acme/my-vm');
  assert.equal(pkg.peerDependencies, { '@cornice/sdk': `^${sdkVersion}` });
  assert.is(pkg.devDependencies['@cornice/sdk'], `^${sdkVersion}`);
  assert.ok(pkg.devDependencies['@cornice/core'] && pkg.devDependencies.typescript && pkg.devDependencies.uvu);
  assert.equal(pkg.dependencies, undefined, 'a VM has no runtime dependency on the sdk (it is the peer)');
  assert.equal(Object.keys(pkg.scripts).sort(), ['build', 'prepack', 'start', 'test']);
  assert.equal(pkg.files, ['dist/src', 'src', 'genesis.json', 'README.md']);
  assert.is(pkg.exports['.'].default, './dist/src/index.js');

  const genesis = await readJson(join(dir, 'genesis.json'));
  const [chain] = genesis.chains;
  assert.equal({ ...chain, genesisData: undefined }, { name: 'my-vm', vm: 'my-vm', genesisData: undefined, aliases: ['my-vm'] });
  assert.equal(JSON.parse(utf8Decode(cb58Decode(chain.genesisData))), { hello: 'world' });

  const index = await readFile(join(dir, 'src/index.ts'), 'utf8');
  assert.match(index, "name: 'my-vm'");
  assert.match(index, vmIdFromName('my-vm').toString());
  assert.match(await readFile(join(dir, 'README.md'), 'utf8'), 'writes acme-my-vm-0.1.0.tgz');
});

test('an existing non-empty directory is refused and left as it was', async () => {
  const dir = join(tmp, 'taken');
  await mkdir(dir);
  await writeFile(join(dir, 'mine.txt'), 'keep');
  try {
    await generate(parseProjectName('taken'), tmp);
    assert.unreachable('generated into a non-empty directory');
  } catch (e) {
    assert.instance(e, ScaffoldError);
    assert.is((e as ScaffoldError).code, 'TargetNotEmpty');
    assert.match((e as Error).message, `${dir} exists and is not empty`);
  }
  assert.equal(await readdir(dir), ['mine.txt']);
  assert.is(await readFile(join(dir, 'mine.txt'), 'utf8'), 'keep');
});

test('a file of that name is refused; an existing empty directory is used', async () => {
  await writeFile(join(tmp, 'afile'), 'x');
  try {
    await generate(parseProjectName('afile'), tmp);
    assert.unreachable();
  } catch (e) {
    assert.match((e as Error).message, 'exists and is not a directory');
  }
  await mkdir(join(tmp, 'empty'));
  const { files } = await generate(parseProjectName('empty'), tmp);
  assert.ok(files.includes('package.json'));
});

function capture(): Output & { text: () => string } {
  let text = '';
  return { out: (t) => (text += t), err: (t) => (text += t), text: () => text };
}

test('the CLI: usage, bad names and taken directories exit 1 with the reason; a good name exits 0', async () => {
  const run = async (args: string[]) => {
    const io = capture();
    return { code: await main(args, tmp, io), text: io.text() };
  };
  const help = await run(['--help']);
  assert.is(help.code, 0);
  assert.match(help.text, 'Usage: npm create cornice-vm <name>');
  const none = await run([]);
  assert.is(none.code, 1);
  assert.match(none.text, 'create-cornice-vm: a name is required');
  assert.is((await run(['a', 'b'])).code, 1);
  const flag = await run(['--force', 'x']);
  assert.is(flag.code, 1);
  assert.match(flag.text, 'unknown option --force');
  const bad = await run(['Bad Name']);
  assert.is(bad.code, 1);
  assert.match(bad.text, 'create-cornice-vm: invalid name "Bad Name"');
  const ok = await run(['cli-vm']);
  assert.is(ok.code, 0, ok.text);
  assert.match(ok.text, `Wrote cli-vm to ${join(tmp, 'cli-vm')}`);
  const again = await run(['cli-vm']);
  assert.is(again.code, 1);
  assert.match(again.text, 'exists and is not empty');
  const io = capture();
  await writeFile(join(tmp, 'plain-file'), 'x');
  assert.is(await main(['x'], join(tmp, 'plain-file'), io), 1, 'a file system error is an exit code, not a crash');
  assert.match(io.text(), /^create-cornice-vm: ENOTDIR/);
});

test.run();
