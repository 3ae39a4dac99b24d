// DESIGN §2 dependency rules, checked on the sources: sdk imports nothing of ours; core imports the
// sdk and never a plugin; a plugin's (or an example's) src imports the sdk and, when it extends
// another plugin (the subnet-EVM builds on the EVM), that plugin's package root — never core, never a
// plugin's internals.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const repo = fileURLToPath(new URL('../../../', import.meta.url));

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sources(p));
    else if (name.endsWith('.ts')) out.push(p);
  }
  return out;
}

function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)].map((m) => (m[1] ?? m[2])!);
}

const ours = (spec: string) => spec.startsWith('@cornice/');
/** The sdk's entry points: its root and each subpath its package.json exports (`@cornice/sdk/components`). */
const sdkEntries: ReadonlySet<string> = new Set(
  Object.keys(JSON.parse(readFileSync(join(repo, 'sdk/package.json'), 'utf8')).exports).map((k) => (k === '.' ? '@cornice/sdk' : `@cornice/sdk/${k.slice(2)}`)),
);
const packages = (dir: string) => readdirSync(join(repo, dir)).filter((d) => statSync(join(repo, dir, d)).isDirectory()).map((d) => join(dir, d));

test('sdk/src imports nothing of ours', () => {
  for (const f of sources(join(repo, 'sdk/src'))) assert.equal(imports(f).filter(ours), [], f);
});

test('core/src imports only the sdk', () => {
  for (const f of sources(join(repo, 'core/src'))) {
    assert.equal(imports(f).filter((s) => ours(s) && !sdkEntries.has(s)), [], f);
  }
});

test('plugin and example sources import the sdk and the roots of the plugins they depend on; never core or internals', () => {
  const dirs = [...packages('plugins'), ...packages('examples')];
  assert.ok(dirs.length >= 2);
  for (const d of dirs) {
    const pkg = JSON.parse(readFileSync(join(repo, d, 'package.json'), 'utf8'));
    const declared = Object.keys({ ...pkg.dependencies, ...pkg.peerDependencies }).filter((n) => n !== '@cornice/core');
    const allowed = new Set([...sdkEntries, ...declared]);
    for (const f of sources(join(repo, d, 'src'))) {
      assert.equal(imports(f).filter((s) => ours(s) && !allowed.has(s)), [], f);
    }
  }
});

// reflect-metadata is loaded by the composition root, and by the module that loads @peculiar/x509 (whose
// own tsyringe registry needs it at load time); nowhere else.
test('tsyringe is used only in the composition root (core/src/node); reflect-metadata is loaded there and before the X.509 library', () => {
  const users: string[] = [];
  const polyfill: string[] = [];
  for (const dir of ['sdk/src', 'core/src', ...packages('plugins').map((d) => join(d, 'src')), ...packages('examples').map((d) => join(d, 'src'))]) {
    for (const f of sources(join(repo, dir))) {
      const rel = f.slice(repo.length);
      if (imports(f).includes('tsyringe')) users.push(rel);
      if (imports(f).includes('reflect-metadata') || /import\s+['"]reflect-metadata['"]/.test(readFileSync(f, 'utf8'))) polyfill.push(rel);
    }
  }
  assert.ok(users.length > 0);
  for (const u of users) assert.ok(u.startsWith('core/src/node/'), `${u} imports tsyringe`);
  assert.equal(polyfill.sort(), ['core/src/node/container.ts', 'core/src/staking/x509.ts']);
});

test.run();
