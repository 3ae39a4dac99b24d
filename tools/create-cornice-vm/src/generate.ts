/**
 * Writes a VM project: the files of `template/` with the placeholders filled in (`_gitignore`
 * becomes `.gitignore`: npm never packs a file named .gitignore), plus a package.json and a genesis
 * file computed here.
 */
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cb58Encode, vmIdOf } from './cb58.js';
import { ScaffoldError } from './errors.js';
import type { ProjectName } from './name.js';

/** This package's root (this file is dist/src/generate.js). */
const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const TEMPLATE_DIR = join(PACKAGE_ROOT, 'template');

/** Versions the generated project depends on. */
export interface Versions {
  sdk: string;
  core: string;
  typescript: string;
  uvu: string;
  typesNode: string;
}

/**
 * The versions this generator was released with: its own devDependencies, which `lerna version`
 * bumps with the sdk and core (a test checks they match the workspace's).
 */
export async function releasedVersions(): Promise<Versions> {
  const pkg = JSON.parse(await readFile(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
  const dev = pkg.devDependencies;
  return { sdk: dev['@cornice/sdk']!, core: dev['@cornice/core']!, typescript: dev.typescript!, uvu: dev.uvu!, typesNode: dev['@types/node']! };
}

/** The genesis the generated chain starts with (UTF-8 JSON of its first keys; see template/src/genesis.ts). */
export const GENESIS = { hello: 'world' };

export function packageJson(name: ProjectName, v: Versions): Record<string, unknown> {
  return {
    name: name.packageName,
    version: '0.1.0',
    description: `${name.vmName}: a VM for Cornice nodes`,
    type: 'module',
    main: './dist/src/index.js',
    types: './dist/src/index.d.ts',
    exports: { '.': { types: './dist/src/index.d.ts', default: './dist/src/index.js' } },
    files: ['dist/src', 'src', 'genesis.json', 'README.md'],
    engines: { node: '>=20.10' },
    scripts: {
      build: 'tsc -p .',
      test: 'tsc -p . && uvu dist/test .test.js$',
      start: 'tsc -p . && cornice --vms=./ --genesis-file=genesis.json --sybil-protection-enabled=false --data-dir=.cornice',
      prepack: 'tsc -p .',
    },
    // One @cornice/sdk per node process: the node's. A peer range says which versions this VM
    // works with; the node checks it before loading the VM.
    peerDependencies: { '@cornice/sdk': `^${v.sdk}` },
    devDependencies: {
      '@cornice/core': `^${v.core}`,
      '@cornice/sdk': `^${v.sdk}`,
      '@types/node': v.typesNode,
      typescript: v.typescript,
      uvu: v.uvu,
    },
  };
}

/** A node genesis file (`--genesis-file`) whose only chain runs this VM, aliased by its name. */
export function genesisFile(name: ProjectName): Record<string, unknown> {
  const genesisData = cb58Encode(new TextEncoder().encode(JSON.stringify(GENESIS)));
  return { chains: [{ name: name.vmName, vm: name.vmName, genesisData, aliases: [name.vmName] }] };
}

/** Refuses a target that exists and is not an empty directory. */
async function checkTarget(dir: string): Promise<void> {
  const st = await stat(dir).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return undefined;
    throw e;
  });
  if (!st) return;
  if (!st.isDirectory()) throw new ScaffoldError('TargetNotEmpty', `${dir} exists and is not a directory`);
  if ((await readdir(dir)).length > 0) throw new ScaffoldError('TargetNotEmpty', `${dir} exists and is not empty; choose another name or remove it`);
}

async function templateFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await templateFiles(path)));
    else out.push(path);
  }
  return out.sort();
}

export interface Generated {
  dir: string;
  /** Paths relative to `dir`. */
  files: string[];
}

/** Writes the project for `name` into `<cwd>/<vmName>`. */
export async function generate(name: ProjectName, cwd: string, versions?: Versions): Promise<Generated> {
  const dir = resolve(cwd, name.vmName);
  await checkTarget(dir);
  const v = versions ?? (await releasedVersions());
  const vars: Record<string, string> = {
    __PACKAGE_NAME__: name.packageName,
    __VM_NAME__: name.vmName,
    __VM_ID__: vmIdOf(name.vmName),
    __SDK_RANGE__: `^${v.sdk}`,
    // npm pack's file name: @scope/name -> scope-name
    __TGZ_NAME__: name.packageName.replace(/^@/, '').replace('/', '-'),
  };
  const fill = (text: string) => text.replace(/__[A-Z_]+__/g, (m) => vars[m] ?? m);
  const files: Array<[string, string]> = [];
  for (const path of await templateFiles(TEMPLATE_DIR)) {
    const rel = relative(TEMPLATE_DIR, path).replace(/(^|[/\\])_gitignore$/, '$1.gitignore');
    files.push([rel, fill(await readFile(path, 'utf8'))]);
  }
  files.push(['package.json', `${JSON.stringify(packageJson(name, v), null, 2)}\n`]);
  files.push(['genesis.json', `${JSON.stringify(genesisFile(name), null, 2)}\n`]);
  for (const [rel, text] of files) {
    await mkdir(dirname(join(dir, rel)), { recursive: true });
    await writeFile(join(dir, rel), text, { flag: 'wx' });
  }
  return { dir, files: files.map(([rel]) => rel).sort() };
}
