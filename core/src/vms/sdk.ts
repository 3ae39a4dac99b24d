/**
 * How plugins meet the node's `@cornice/sdk`:
 *  - a plugin may declare the sdk versions it works with (`peerDependencies` or `dependencies` of
 *    its package.json); the node refuses one whose range its own sdk version does not satisfy;
 *  - a plugin that has no sdk of its own (a package dir or .js file in --plugin-dir, without
 *    node_modules) gets the node's copy, through a resolution hook registered on first need.
 */
import { readFile } from 'node:fs/promises';
import { createRequire, register } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import semver from 'semver';
import type { Logger } from '@cornice/sdk';
import { VMLoadError } from './errors.js';
import type { SdkHookData } from './sdk-hook.js';

export const SDK_PACKAGE = '@cornice/sdk';

/** The node's own sdk: its entry URL and version (from its package.json). */
export interface NodeSdk {
  url: string;
  version: string;
}

let nodeSdkPromise: Promise<NodeSdk> | undefined;

export function nodeSdk(): Promise<NodeSdk> {
  return (nodeSdkPromise ??= findNodeSdk());
}

async function findNodeSdk(): Promise<NodeSdk> {
  const url = import.meta.resolve(SDK_PACKAGE);
  // The entry lies somewhere below the package root (dist/src/index.js): walk up to its package.json.
  for (let dir = dirname(fileURLToPath(url)); ; dir = dirname(dir)) {
    const pkg = await readJson(join(dir, 'package.json'));
    if (pkg?.name === SDK_PACKAGE && typeof pkg.version === 'string') return { url, version: pkg.version };
    if (dirname(dir) === dir) throw new VMLoadError('ImportFailed', `cannot find the version of the node's own ${SDK_PACKAGE} (${url})`);
  }
}

async function readJson(path: string): Promise<Record<string, unknown> | undefined> {
  try {
    const json: unknown = JSON.parse(await readFile(path, 'utf8'));
    return json !== null && typeof json === 'object' && !Array.isArray(json) ? (json as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The sdk range a package.json declares: peerDependencies first, then dependencies. */
export function declaredSdkRange(pkg: Readonly<Record<string, unknown>>): string | undefined {
  for (const key of ['peerDependencies', 'dependencies']) {
    const deps = pkg[key];
    if (deps === null || typeof deps !== 'object') continue;
    const range = (deps as Record<string, unknown>)[SDK_PACKAGE];
    if (typeof range === 'string') return range;
  }
  return undefined;
}

/**
 * Refuses a plugin whose declared sdk range the node's sdk version does not satisfy. `pkg` is the
 * plugin's package.json (undefined for a bare .js file); no range, or one that is not a semver
 * range (`file:`, `workspace:`), loads with a log line saying so.
 */
export async function checkSdkRange(label: string, pkg: Readonly<Record<string, unknown>> | undefined, log: Logger): Promise<void> {
  const { version } = await nodeSdk();
  const range = pkg && declaredSdkRange(pkg);
  if (range === undefined) {
    log.info('VM plugin declares no sdk version range', { plugin: label, sdkVersion: version });
    return;
  }
  if (semver.validRange(range) === null) {
    log.warn('VM plugin sdk range is not a semver range; not checked', { plugin: label, range: range.slice(0, 128), sdkVersion: version });
    return;
  }
  if (!semver.satisfies(version, range, { includePrerelease: true })) {
    throw new VMLoadError(
      'IncompatibleSdk',
      `VM plugin ${label} needs ${SDK_PACKAGE} ${range.slice(0, 128)}, but this node has ${SDK_PACKAGE} ${version}`,
    );
  }
}

let fallbackRegistered = false;

/**
 * Makes `import '@cornice/sdk'` work in `entry` (a plugin's module) when Node cannot resolve it
 * from there: registers the resolution hook (once per process) that hands out the node's copy.
 * A plugin with its own installed copy keeps it.
 */
export async function useNodeSdkFallback(entry: string): Promise<void> {
  if (fallbackRegistered || canResolveSdk(entry)) return;
  const subpath = `${SDK_PACKAGE}/components`;
  const data: SdkHookData = { sdkUrl: (await nodeSdk()).url, subpathUrls: { [subpath]: import.meta.resolve(subpath) } };
  register(new URL('./sdk-hook.js', import.meta.url), { data });
  fallbackRegistered = true;
}

function canResolveSdk(entry: string): boolean {
  try {
    createRequire(entry).resolve(SDK_PACKAGE);
    return true;
  } catch {
    return false;
  }
}
