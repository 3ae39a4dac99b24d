/**
 * Installs made by copying built packages, as npm would lay them out outside this repository: a
 * plugin with its own copy of @cornice/sdk (a second module identity), a plugin with no
 * node_modules at all, a node installed without some package. Copies, not symlinks: a symlink
 * resolves to the repository's file and so to the same module.
 */
import { cp, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { REPO } from './fixtures.js';

/** Copies a built workspace package (package.json and what `dirs` names, e.g. dist/src) to `to`. */
export async function copyPackage(workspace: string, to: string, dirs: string[] = ['dist/src'], edit?: (pkg: Record<string, unknown>) => void): Promise<void> {
  await mkdir(to, { recursive: true });
  const pkg = JSON.parse(await readFile(join(REPO, workspace, 'package.json'), 'utf8')) as Record<string, unknown>;
  edit?.(pkg);
  await writeFile(join(to, 'package.json'), JSON.stringify(pkg, null, 2));
  for (const d of dirs) await cp(join(REPO, workspace, d), join(to, d), { recursive: true });
}

/**
 * Fills `nodeModules` as an install of the repository's packages would: a copy of each of
 * `copies` (workspace dir -> package name), and a symlink to every third-party package of the
 * repository's node_modules (their code is not under test). Other @cornice packages are absent.
 */
export async function installInto(nodeModules: string, copies: Record<string, string>): Promise<void> {
  await mkdir(join(nodeModules, '@cornice'), { recursive: true });
  for (const name of await readdir(join(REPO, 'node_modules'))) {
    if (name === '@cornice' || name.startsWith('.')) continue;
    await symlink(join(REPO, 'node_modules', name), join(nodeModules, name));
  }
  for (const [workspace, name] of Object.entries(copies)) {
    const dirs = workspace === 'core' ? ['dist/src', 'bin'] : ['dist/src'];
    await copyPackage(workspace, join(nodeModules, name), dirs);
    await linkNested(join(REPO, workspace, 'node_modules'), join(nodeModules, name, 'node_modules'));
  }
}

/** Links the dependencies npm nested under a workspace (a version the root does not hoist, e.g. ws 8 beside jayson's ws 7). */
async function linkNested(from: string, to: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(from);
  } catch {
    return;
  }
  await mkdir(to, { recursive: true });
  for (const name of names) {
    if (name.startsWith('.') || name === '@cornice') continue;
    await symlink(join(from, name), join(to, name));
  }
}
