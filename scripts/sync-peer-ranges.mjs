#!/usr/bin/env node
/**
 * Run by `lerna version` (the root's "version" lifecycle, after the bump, before the commit): a
 * released package's peer range on another package of this repository (a plugin's `@cornice/sdk`,
 * the precompile example's `@cornice/subnet-evm`) that the new version no longer satisfies — a
 * breaking bump, e.g. 0.1.x -> 0.2.0 — becomes `^<new version>`; ranges it still satisfies (a patch
 * or a compatible minor) stay as they are. lerna itself rewrites dependencies, never plain peer
 * ranges. Prints what it changed.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import semver from 'semver';
import { releasedWorkspaces } from './pack-all.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const read = (w) => JSON.parse(readFileSync(join(ROOT, w, 'package.json'), 'utf8'));
const workspaces = releasedWorkspaces();
const versions = new Map(workspaces.map((w) => read(w)).map((p) => [p.name, p.version]));
for (const w of workspaces) {
  const pkg = read(w);
  let changed = false;
  for (const [dep, range] of Object.entries(pkg.peerDependencies ?? {})) {
    const version = versions.get(dep);
    if (version === undefined || semver.satisfies(version, range)) continue;
    pkg.peerDependencies[dep] = `^${version}`;
    changed = true;
    process.stdout.write(`${pkg.name}: peer ${dep} ${range} -> ^${version}\n`);
  }
  if (changed) writeFileSync(join(ROOT, w, 'package.json'), JSON.stringify(pkg, null, 2) + '\n');
}
