/**
 * Real npm tarballs of this repository's packages, installed the way a user outside the repository
 * installs them: `npm pack` of each workspace, then `npm install <tarballs>` in a temporary project
 * whose resolution never reaches this repository (third-party dependencies come from the registry,
 * or npm's cache when it has them).
 */
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { REPO } from './fixtures.js';

/** Runs npm with `args` in `cwd`; rejects with its stderr when it fails or outlives `timeoutMs`. */
export function npm(args: string[], cwd: string, timeoutMs = 240_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('npm', args, { cwd, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, npm_config_fund: 'false', npm_config_audit: 'false', npm_config_update_notifier: 'false' } }, (err, stdout, stderr) => {
      if (err) reject(new Error(`npm ${args.join(' ')} (in ${cwd}) failed: ${err.message}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

/**
 * Packs the workspaces (directories relative to the repository, e.g. 'sdk', 'plugins/timestamp')
 * into `dir` as npm publishes them; resolves with package name -> tarball path. The workspaces must
 * be built (`tsc -b`) first: packing runs no build.
 */
export async function packWorkspaces(dir: string, workspaces: readonly string[]): Promise<Record<string, string>> {
  await mkdir(dir, { recursive: true });
  const args = ['pack', '--json', '--ignore-scripts', '--pack-destination', dir, ...workspaces.flatMap((w) => ['--workspace', w])];
  const packed = JSON.parse(await npm(args, REPO)) as Array<{ name: string; filename: string }>;
  return Object.fromEntries(packed.map((p) => [p.name, join(dir, p.filename)]));
}

/**
 * Makes `dir` an npm project that depends on `tarballs` (paths) and installs them, preferring npm's
 * cache for third-party packages. Resolves with the project's node_modules.
 */
export async function installTarballs(dir: string, tarballs: readonly string[], timeoutMs = 240_000): Promise<string> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'cornice-install-test', private: true, type: 'module' }, null, 2));
  await npm(['install', '--prefer-offline', '--no-audit', '--no-fund', ...tarballs], dir, timeoutMs);
  return join(dir, 'node_modules');
}
