import { cp, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Id, InvalidParamsError, defineVM, silentLogger, vmIdFromName, type ChainVM } from '@cornice/sdk';
import { readUtxo } from '@cornice/sdk/components';
import { loadVMs, type LoadVMsOptions } from '../../src/vms/loader.js';
import { VMLoadError } from '../../src/vms/errors.js';
import { captureLog } from '../helpers/log.js';

/** The fixture plugins (plain .js, not compiled): core/test/vms/fixtures. */
const FIXTURES = fileURLToPath(new URL('../../../test/vms/fixtures/', import.meta.url));
const ID = {
  fixturevm: vmIdFromName('fixturevm').toString(),
  aliasvm: vmIdFromName('aliasvm').toString(),
  dirvm: vmIdFromName('dirvm').toString(),
  pkgvm: vmIdFromName('pkgvm').toString(),
  scopedvm: vmIdFromName('scopedvm').toString(),
  othervm: vmIdFromName('othervm').toString(),
  sdkvm: vmIdFromName('sdkvm').toString(),
};
/** The version of the node's own @cornice/sdk. */
const SDK_VERSION = (JSON.parse(await readFile(new URL('../../../../sdk/package.json', import.meta.url), 'utf8')) as { version: string }).version;

const temps: string[] = [];
/** A temp dir whose package.json makes its .js files ES modules (plugins live below it). */
async function tempRoot(type: 'module' | 'commonjs' = 'module'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'cornice-vms-'));
  temps.push(dir);
  await writeFile(join(dir, 'package.json'), JSON.stringify({ type }));
  return dir;
}
const fixture = (name: string, to: string) => cp(join(FIXTURES, name), to, { recursive: true });
test.after(async () => {
  for (const d of temps) await rm(d, { recursive: true, force: true });
});


async function loadError(opts: LoadVMsOptions, code: string, ...res: RegExp[]): Promise<VMLoadError> {
  try {
    await loadVMs(opts);
  } catch (e) {
    assert.instance(e, VMLoadError, `not a VMLoadError: ${String(e)}`);
    const err = e as VMLoadError;
    assert.is(err.code, code, err.message);
    for (const re of res) assert.match(err.message, re);
    return err;
  }
  return assert.unreachable('loadVMs should have failed') as never;
}
const esc = (s: string) => new RegExp(s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));

test('builtins, a plugin file named by vmID, one by alias, a package directory; logged once each', async () => {
  const root = await tempRoot();
  const plugins = join(root, 'plugins');
  await mkdir(plugins);
  await fixture('fixturevm.js', join(plugins, `${ID.fixturevm}.js`));
  await fixture('aliasvm.js', join(plugins, 'myalias.mjs'));
  await fixture('dirvm', join(plugins, ID.dirvm));
  await writeFile(join(plugins, '.DS_Store'), 'ignored');
  await mkdir(join(plugins, '.hidden'));
  const aliasesFile = join(root, 'aliases.json');
  await writeFile(aliasesFile, JSON.stringify({ [ID.aliasvm]: ['myalias', 'another'], [ID.fixturevm]: ['fx'], [ID.othervm]: ['not-loaded'] }));
  const log = captureLog();
  const builtin = defineVM({ name: 'builtinvm', version: '9.9.9', create: () => ({}) as ChainVM });

  const r = await loadVMs({ builtins: [builtin], pluginDir: plugins, aliasesFile: 'aliases.json', cwd: root, log });

  assert.is(r.resolve('builtinvm'), builtin);
  assert.equal(
    r.list().map((v) => [v.name, v.vmId.toString(), v.version, v.aliases, v.source]),
    [
      ['builtinvm', vmIdFromName('builtinvm').toString(), '9.9.9', ['builtinvm'], 'builtin'],
      ['dirvm', ID.dirvm, '3.0.0', ['dirvm'], join(plugins, ID.dirvm)],
      ['aliasvm', ID.aliasvm, '0.2.0', ['aliasvm', 'myalias', 'another'], join(plugins, 'myalias.mjs')],
      ['fixturevm', ID.fixturevm, '1.0.0', ['fixturevm', 'fx'], join(plugins, `${ID.fixturevm}.js`)],
    ],
  );
  assert.instance(r.resolve('myalias').vmId, Id);
  assert.ok(r.resolve(ID.fixturevm) === r.resolve('fx'));
  assert.not.ok(r.has('not-loaded'));

  const loaded = log.lines.filter((l) => l.msg === 'VM loaded');
  assert.equal(
    loaded.map((l) => [l.level, l.fields?.name, l.fields?.vmId, l.fields?.version, l.fields?.source]),
    [
      ['info', 'builtinvm', vmIdFromName('builtinvm').toString(), '9.9.9', 'builtin'],
      ['info', 'dirvm', ID.dirvm, '3.0.0', join(plugins, ID.dirvm)],
      ['info', 'aliasvm', ID.aliasvm, '0.2.0', join(plugins, 'myalias.mjs')],
      ['info', 'fixturevm', ID.fixturevm, '1.0.0', join(plugins, `${ID.fixturevm}.js`)],
    ],
  );
  assert.is(loaded[1]!.fields?.path, join(plugins, ID.dirvm, 'lib', 'main.js'));
  assert.is(loaded[3]!.fields?.path, undefined);
  const real = await realpath(plugins);
  assert.equal(r.list().map((v) => v.root), [undefined, join(real, ID.dirvm), join(real, 'myalias.mjs'), join(real, `${ID.fixturevm}.js`)], 'plugin-dir entries are their own code roots; builtins have none');
});

test('specifiers: packages from cwd (main; import-only exports, scoped) and paths relative to cwd', async () => {
  const root = await tempRoot();
  await fixture('pkgvm', join(root, 'node_modules', 'pkgvm'));
  await fixture('scopedvm', join(root, 'node_modules', '@acme', 'scopedvm'));
  await fixture('fixturevm.js', join(root, 'local', 'vm.js'));
  await fixture('dirvm', join(root, 'dirplugin'));
  const log = captureLog();
  const r = await loadVMs({ specifiers: ['pkgvm', '@acme/scopedvm', './local/vm.js', './dirplugin'], cwd: root, log });
  assert.equal(
    r.list().map((v) => [v.name, v.vmId.toString(), v.version, v.source]),
    [
      ['pkgvm', ID.pkgvm, '4.0.0', 'pkgvm'],
      ['scopedvm', ID.scopedvm, '5.0.0', '@acme/scopedvm'],
      ['fixturevm', ID.fixturevm, '1.0.0', join(root, 'local', 'vm.js')],
      ['dirvm', ID.dirvm, '3.0.0', join(root, 'dirplugin')],
    ],
  );
  const pkgLine = log.lines.find((l) => l.msg === 'VM loaded' && l.fields?.name === 'pkgvm');
  assert.is(pkgLine?.fields?.path, join(root, 'node_modules', 'pkgvm', 'index.js'));
  // absolute paths work too
  const abs = await loadVMs({ specifiers: [join(root, 'local', 'vm.js')], cwd: '/', log: silentLogger });
  assert.is(abs.list()[0]!.name, 'fixturevm');
  // Where each VM's code lives (faults whose stack runs through it are the VM's): the package
  // directory (for ./local/vm.js, the package at cwd), or the file itself when no package directory
  // holds it; symlinks resolved.
  const real = await realpath(root);
  assert.equal(
    r.list().map((v) => v.root),
    [join(real, 'node_modules', 'pkgvm'), join(real, 'node_modules', '@acme', 'scopedvm'), real, join(real, 'dirplugin')],
  );
  assert.is(r.rootOf('pkgvm'), join(real, 'node_modules', 'pkgvm'));
});

test('a package not under cwd resolves from core (and is refused when it is no VM)', async () => {
  const root = await tempRoot();
  await loadError({ specifiers: ['rxjs'], cwd: root, log: silentLogger }, 'NoFactory', /VM plugin rxjs \(.*rxjs.*\) has no vmFactory export \(it exports /);
});

test('missing module', async () => {
  const root = await tempRoot();
  await loadError({ specifiers: ['no-such-vm-package'], cwd: root, log: silentLogger }, 'NotFound', /VM plugin no-such-vm-package not found/, esc(root));
  await loadError({ specifiers: ['./nope.js'], cwd: root, log: silentLogger }, 'NotFound', /VM plugin \.\/nope\.js not found/, esc(join(root, 'nope.js')));
  await mkdir(join(root, 'emptydir'));
  await loadError({ specifiers: ['./emptydir'], cwd: root, log: silentLogger }, 'NotFound', esc(`VM plugin ${join(root, 'emptydir')} is a directory without a readable package.json`));
  await mkdir(join(root, 'node_modules', 'brokenmain'), { recursive: true });
  await writeFile(join(root, 'node_modules', 'brokenmain', 'package.json'), JSON.stringify({ name: 'brokenmain', main: './gone.js' }));
  await loadError({ specifiers: ['brokenmain'], cwd: root, log: silentLogger }, 'NotFound', /brokenmain/);
});

test('import failures include the cause', async () => {
  const root = await tempRoot();
  await fixture('throws.js', join(root, 'throws.js'));
  await fixture('syntax-error.js', join(root, 'syntax-error.js'));
  const e = await loadError(
    { specifiers: ['./throws.js'], cwd: root, log: silentLogger },
    'ImportFailed',
    esc(`cannot import VM plugin ./throws.js (${join(root, 'throws.js')}): fixture exploded while loading`),
  );
  assert.match(String((e.cause as Error).message), /fixture exploded/);
  await loadError({ specifiers: ['./syntax-error.js'], cwd: root, log: silentLogger }, 'ImportFailed', /cannot import VM plugin \.\/syntax-error\.js .*Unexpected token/);
  // an ES module in a .js file that Node takes for CommonJS: the message says what to do
  const cjsRoot = await tempRoot('commonjs');
  await fixture('cjs-syntax.js', join(cjsRoot, 'esm.js'));
  await loadError({ specifiers: ['./esm.js'], cwd: cjsRoot, log: silentLogger }, 'ImportFailed', /esm\.js/, /"type": "module"/);
});

test('no or invalid vmFactory export', async () => {
  const root = await tempRoot();
  await fixture('no-export.js', join(root, 'no-export.js'));
  await fixture('bad-factory.js', join(root, 'bad-factory.js'));
  await loadError({ specifiers: ['./no-export.js'], cwd: root, log: silentLogger }, 'NoFactory', /VM plugin \.\/no-export\.js .* has no vmFactory export \(it exports somethingElse\)/);
  await loadError(
    { specifiers: ['./bad-factory.js'], cwd: root, log: silentLogger },
    'NoFactory',
    /VM plugin \.\/bad-factory\.js .*: vmFactory is not a VMFactory \(create is not a function\)/,
  );
  // the plugin dir (entries in name order; the message names the file)
  const plugins = join(root, 'plugins');
  await fixture('no-export.js', join(plugins, `${ID.othervm}.js`));
  await loadError({ pluginDir: plugins, cwd: root, log: silentLogger }, 'NoFactory', esc(`VM plugin ${join(plugins, `${ID.othervm}.js`)} has no vmFactory export`));
});

test('duplicate vmIDs name both sources', async () => {
  const root = await tempRoot();
  const plugins = join(root, 'plugins');
  await fixture('fixturevm.js', join(root, 'vm.js'));
  await fixture('fixturevm.js', join(plugins, `${ID.fixturevm}.js`));
  await loadError(
    { specifiers: ['./vm.js'], pluginDir: plugins, cwd: root, log: silentLogger },
    'DuplicateVM',
    esc(`duplicate vmID ${ID.fixturevm}: fixturevm from ${join(root, 'vm.js')} and fixturevm from ${join(plugins, `${ID.fixturevm}.js`)}`),
  );
  const builtin = defineVM({ name: 'fixturevm', version: '0.0.1', create: () => ({}) as ChainVM });
  await loadError({ builtins: [builtin], specifiers: ['./vm.js'], cwd: root, log: silentLogger }, 'DuplicateVM', /fixturevm from builtin and fixturevm from .*vm\.js/);
});

test('plugin-dir entry whose vmID does not match its name', async () => {
  const root = await tempRoot();
  const plugins = join(root, 'plugins');
  await fixture('fixturevm.js', join(plugins, `${ID.othervm}.js`));
  await loadError(
    { pluginDir: plugins, cwd: root, log: silentLogger },
    'VMIdMismatch',
    esc(`VM plugin ${join(plugins, `${ID.othervm}.js`)} is named for vmID ${ID.othervm} but its vmFactory has vmID ${ID.fixturevm}`),
  );
  // named by an alias that belongs to another vmID
  const p2 = join(root, 'plugins2');
  await fixture('fixturevm.js', join(p2, 'other.js'));
  await writeFile(join(root, 'a.json'), JSON.stringify({ [ID.othervm]: ['other'] }));
  await loadError({ pluginDir: p2, aliasesFile: join(root, 'a.json'), cwd: root, log: silentLogger }, 'VMIdMismatch', /other\.js is named for vmID .* \(alias other\) but its vmFactory has vmID/);
});

test('plugin-dir entries named by neither a vmID nor an alias', async () => {
  const root = await tempRoot();
  const plugins = join(root, 'plugins');
  await fixture('fixturevm.js', join(plugins, 'whatever.js'));
  await loadError({ pluginDir: plugins, cwd: root, log: silentLogger }, 'BadPluginName', esc(`VM plugin ${join(plugins, 'whatever.js')} is named by neither a vmID nor an alias (no --vm-aliases-file given)`));
  await writeFile(join(root, 'a.json'), JSON.stringify({ [ID.fixturevm]: ['fx'] }));
  await loadError({ pluginDir: plugins, aliasesFile: 'a.json', cwd: root, log: silentLogger }, 'BadPluginName', esc(`is named by neither a vmID nor an alias of ${join(root, 'a.json')}`));
  const p2 = join(root, 'plugins2');
  await mkdir(p2);
  await writeFile(join(p2, `${ID.fixturevm}.txt`), 'x');
  await loadError({ pluginDir: p2, cwd: root, log: silentLogger }, 'BadPluginName', /\.txt is named by neither/);
  await loadError({ pluginDir: join(root, 'missing'), cwd: root, log: silentLogger }, 'PluginDir', esc(`cannot read the VM plugin directory ${join(root, 'missing')}`));
});

test('unreadable or malformed aliases file', async () => {
  const root = await tempRoot();
  const file = join(root, 'aliases.json');
  const opts = { aliasesFile: file, cwd: root, log: silentLogger };
  await loadError({ ...opts, aliasesFile: join(root, 'absent.json') }, 'BadAliasesFile', esc(`VM aliases file ${join(root, 'absent.json')}: cannot read it`));
  const cases: Array<[string, RegExp]> = [
    ['{ not json', /not valid JSON/],
    ['[]', /must be a JSON object/],
    ['{"not-an-id": ["a"]}', /key "not-an-id" is not a vmID/],
    [JSON.stringify({ [ID.fixturevm]: 'fx' }), /the aliases of .* must be an array of strings/],
    [JSON.stringify({ [ID.fixturevm]: ['x'], [ID.othervm]: ['x'] }), /alias x is given to both/],
  ];
  for (const [text, re] of cases) {
    await writeFile(file, text);
    await loadError(opts, 'BadAliasesFile', esc(`VM aliases file ${file}: `), re);
  }
  // an alias that is already another VM's name
  await fixture('fixturevm.js', join(root, 'vm.js'));
  await writeFile(file, JSON.stringify({ [ID.fixturevm]: ['builtinvm'] }));
  const builtin = defineVM({ name: 'builtinvm', version: '1.0.0', create: () => ({}) as ChainVM });
  await loadError({ ...opts, builtins: [builtin], specifiers: ['./vm.js'] }, 'BadAliasesFile', /VM alias builtinvm is already used by builtinvm/);
});

/** Copies a package fixture to `to` and sets its package.json fields. */
async function packageWith(name: string, to: string, fields: Record<string, unknown>): Promise<void> {
  await fixture(name, to);
  const pkg = JSON.parse(await readFile(join(to, 'package.json'), 'utf8')) as Record<string, unknown>;
  await writeFile(join(to, 'package.json'), JSON.stringify({ ...pkg, ...fields }));
}

test('a declared @cornice/sdk range the node does not satisfy is refused, before the plugin runs, naming both versions', async () => {
  const root = await tempRoot();
  const plugins = join(root, 'plugins');
  await packageWith('dirvm', join(plugins, ID.dirvm), { peerDependencies: { '@cornice/sdk': '^9.0.0' } });
  // its entry would throw if imported: the check comes first
  await writeFile(join(plugins, ID.dirvm, 'lib', 'main.js'), 'throw new Error("imported");\n');
  await loadError(
    { pluginDir: plugins, cwd: root, log: silentLogger },
    'IncompatibleSdk',
    esc(`VM plugin ${join(plugins, ID.dirvm)} needs @cornice/sdk ^9.0.0, but this node has @cornice/sdk ${SDK_VERSION}`),
  );
  // a package specifier, range under dependencies
  await packageWith('pkgvm', join(root, 'node_modules', 'pkgvm'), { dependencies: { '@cornice/sdk': '<0.1.0 || >=2' } });
  await loadError({ specifiers: ['pkgvm'], cwd: root, log: silentLogger }, 'IncompatibleSdk', /VM plugin pkgvm \(.*\) needs @cornice\/sdk <0\.1\.0 \|\| >=2, but this node has/);
  // a path specifier to a package directory
  await packageWith('dirvm', join(root, 'dirplugin'), { peerDependencies: { '@cornice/sdk': '~0.0.1' } });
  await loadError({ specifiers: ['./dirplugin'], cwd: root, log: silentLogger }, 'IncompatibleSdk', /~0\.0\.1/);
});

test('compatible ranges load; no range or a non-semver one loads with a log line', async () => {
  const root = await tempRoot();
  const [major, minor] = SDK_VERSION.split('.');
  const ranges = [`^${SDK_VERSION}`, `${major}.${minor}.x`, SDK_VERSION, `>=${SDK_VERSION} <99`, `<0.0.1 || ^${SDK_VERSION}`, '*'];
  for (const [i, range] of ranges.entries()) {
    await packageWith('pkgvm', join(root, `p${i}`), { peerDependencies: { '@cornice/sdk': range } });
    assert.is((await loadVMs({ specifiers: [`./p${i}`], cwd: root, log: silentLogger })).list()[0]!.name, 'pkgvm', range);
  }
  const log = captureLog();
  await packageWith('pkgvm', join(root, 'linked'), { dependencies: { '@cornice/sdk': 'file:../sdk' } });
  await fixture('fixturevm.js', join(root, 'bare.js'));
  await fixture('dirvm', join(root, 'norange'));
  const r = await loadVMs({ specifiers: ['./linked', './bare.js', './norange'], cwd: root, log });
  assert.equal(r.list().map((v) => v.name), ['pkgvm', 'fixturevm', 'dirvm']);
  const said = (msg: string) => log.lines.filter((l) => l.msg === msg).map((l) => [l.level, l.fields?.plugin]);
  assert.equal(said('VM plugin sdk range is not a semver range; not checked'), [['warn', `./linked (${join(root, 'linked', 'index.js')})`]]);
  assert.equal(said('VM plugin declares no sdk version range'), [
    ['info', `./bare.js (${join(root, 'bare.js')})`],
    ['info', `./norange (${join(root, 'norange', 'lib', 'main.js')})`],
  ]);
});

test('a plugin-dir entry without node_modules imports the node’s own @cornice/sdk', async () => {
  const root = await tempRoot();
  const plugins = join(root, 'plugins');
  await fixture('sdkvm.js', join(plugins, `${ID.sdkvm}.js`));
  const r = await loadVMs({ pluginDir: plugins, cwd: root, log: silentLogger });
  assert.is(r.list()[0]!.name, 'sdkvm');
  // the same module as ours: its classes are ours
  const mod = (await import(new URL(`file://${join(plugins, `${ID.sdkvm}.js`)}`).href)) as { ErrorClass: unknown; vmFactory: { vmId: unknown } };
  assert.is(mod.ErrorClass, InvalidParamsError);
  assert.instance(mod.vmFactory.vmId, Id);
  // a package directory too
  const p2 = join(root, 'plugins2');
  await mkdir(join(p2, ID.sdkvm), { recursive: true });
  await writeFile(join(p2, ID.sdkvm, 'package.json'), JSON.stringify({ name: 'sdkvm', type: 'module', main: 'vm.js', peerDependencies: { '@cornice/sdk': `^${SDK_VERSION}` } }));
  await fixture('sdkvm.js', join(p2, ID.sdkvm, 'vm.js'));
  assert.is((await loadVMs({ pluginDir: p2, cwd: root, log: silentLogger })).list()[0]!.name, 'sdkvm');
  // the sdk's subpath entries too (@cornice/sdk/components)
  const p3 = join(root, 'plugins3');
  await mkdir(p3);
  await writeFile(
    join(p3, `${ID.sdkvm}.js`),
    "import { defineVM } from '@cornice/sdk';\nimport { readUtxo } from '@cornice/sdk/components';\nexport const vmFactory = defineVM({ name: 'sdkvm', version: '6.0.0', create: () => ({}) });\nexport { readUtxo };\n",
  );
  assert.is((await loadVMs({ pluginDir: p3, cwd: root, log: silentLogger })).list()[0]!.name, 'sdkvm');
  const withComponents = (await import(new URL(`file://${join(p3, `${ID.sdkvm}.js`)}`).href)) as { readUtxo: unknown };
  assert.is(withComponents.readUtxo, readUtxo);
  // other missing packages are still missing
  await writeFile(join(root, 'other.js'), "import 'no-such-package-anywhere';\nexport const vmFactory = {};\n");
  await loadError({ specifiers: ['./other.js'], cwd: root, log: silentLogger }, 'ImportFailed', /Cannot find package 'no-such-package-anywhere'/);
});

test('optional packages (the built-ins without --vms): installed ones load, missing ones are skipped with an info log', async () => {
  const root = await tempRoot();
  await fixture('pkgvm', join(root, 'node_modules', 'pkgvm'));
  const log = captureLog();
  const r = await loadVMs({ optionalPackages: ['@cornice/not-installed-vm', 'pkgvm'], cwd: root, log });
  assert.equal(r.list().map((v) => [v.name, v.source]), [['pkgvm', 'pkgvm']]);
  assert.equal(
    log.lines.filter((l) => l.msg === 'built-in VM not installed; skipped').map((l) => [l.level, l.fields?.package]),
    [['info', '@cornice/not-installed-vm']],
  );
  // installed but broken is still an error
  await mkdir(join(root, 'node_modules', 'brokenvm'));
  await writeFile(join(root, 'node_modules', 'brokenvm', 'package.json'), JSON.stringify({ name: 'brokenvm', type: 'module', main: 'index.js' }));
  await writeFile(join(root, 'node_modules', 'brokenvm', 'index.js'), 'export const nothing = 1;\n');
  await loadError({ optionalPackages: ['brokenvm'], cwd: root, log: silentLogger }, 'NoFactory', /VM plugin brokenvm/);
  // named explicitly, a missing package fails as before
  await loadError({ specifiers: ['@cornice/not-installed-vm'], cwd: root, log: silentLogger }, 'NotFound', /VM plugin @cornice\/not-installed-vm not found/);
});

test.run();
