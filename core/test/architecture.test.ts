// DESIGN §2 dependency rules, checked on the sources: sdk imports nothing of ours; core imports the
// sdk and never a plugin; a plugin's (or the example's) src imports only the sdk.
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
const packages = (dir: string) => readdirSync(join(repo, dir)).filter((d) => statSync(join(repo, dir, d)).isDirectory()).map((d) => join(dir, d));

test('sdk/src imports nothing of ours', () => {
  for (const f of sources(join(repo, 'sdk/src'))) assert.equal(imports(f).filter(ours), [], f);
});

test('core/src imports only the sdk', () => {
  for (const f of sources(join(repo, 'core/src'))) {
    assert.equal(imports(f).filter((s) => ours(s) && s !== '@cornice/sdk'), [], f);
  }
});

// Declared exceptions, each a package ROOT (never a deep path): the subnet-EVM builds on the EVM's
// public API (issue 11), and the precompile example on the subnet-EVM's.
const alsoAllowed: Record<string, readonly string[]> = {
  'plugins/subnet-evm': ['@cornice/evm'],
  'examples/custom-precompile': ['@cornice/subnet-evm'],
};

test('plugin and example sources import only the sdk (and their declared package roots)', () => {
  const dirs = [...packages('plugins'), ...packages('examples')];
  assert.ok(dirs.length >= 2);
  for (const d of dirs) {
    const allowed = new Set(['@cornice/sdk', ...(alsoAllowed[d] ?? [])]);
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
