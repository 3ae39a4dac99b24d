// The import rules of ARCHITECTURE.md, checked on the sources: sdk imports nothing of ours; core imports
// the sdk and never a plugin; a plugin's (or an example's) src imports the sdk and, when it extends
// another plugin (the subnet-EVM builds on the EVM), that plugin's package root — never core, never a
// plugin's internals. No package's files import each other in a circle, and inside core no folder
// imports one of a higher layer (the table of "Layers inside core").
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
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

/** What a file imports or re-exports: static (also `import type`, side-effect imports) and dynamic with a literal. */
function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [
    ...text.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s+['"]([^'"]+)['"]|(?:^|\n)\s*import\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g),
  ].map((m) => (m[1] ?? m[2] ?? m[3])!);
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

// ---- the import graph of a package's src: files, and the files each imports (relative imports, `.js` → `.ts`)

type Graph = Map<string, string[]>;

function importGraph(src: string): Graph {
  const g: Graph = new Map();
  for (const f of sources(src)) {
    const targets: string[] = [];
    for (const spec of imports(f)) {
      if (!spec.startsWith('.')) continue;
      const js = resolve(dirname(f), spec);
      const target = [js.replace(/\.js$/, '.ts'), js, join(js, 'index.ts')].find((p) => existsSync(p) && statSync(p).isFile());
      assert.ok(target !== undefined, `${relative(repo, f)}: import '${spec}' names no file`);
      if (target.endsWith('.ts')) targets.push(target);
    }
    g.set(f, targets);
  }
  return g;
}

/**
 * The cycles of a graph: one per strongly connected component of more than one file (or a file
 * importing itself), as a shortest path that closes, then the component's other files, if any.
 */
function cycles(g: Graph): Array<{ path: string[]; others: string[] }> {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  let next = 0;
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of g.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const c: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        c.push(w);
      } while (w !== v);
      if (c.length > 1 || (g.get(v) ?? []).includes(v)) components.push(c);
    }
  };
  for (const v of [...g.keys()].sort()) if (!index.has(v)) visit(v);
  return components.map((c) => {
    const path = closingPath(g, c);
    return { path, others: c.filter((f) => !path.includes(f)).sort() };
  });
}

/** A shortest path from a component's first file back to it, through the component only. */
function closingPath(g: Graph, c: string[]): string[] {
  const inside = new Set(c);
  const start = [...c].sort()[0]!;
  const from = new Map<string, string>();
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    const v = queue[i]!;
    for (const w of g.get(v) ?? []) {
      if (w === start) {
        const path = [v];
        while (path[0] !== start) path.unshift(from.get(path[0]!)!);
        return [...path, start];
      }
      if (inside.has(w) && !from.has(w)) {
        from.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start, start];
}

const everyPackage = () => ['sdk', 'core', ...packages('plugins'), ...packages('examples'), ...packages('tools')].filter((d) => existsSync(join(repo, d, 'src')));

test('no import cycles: in no package do files import each other in a circle', () => {
  const pkgs = everyPackage();
  assert.ok(pkgs.length >= 8, pkgs.join(' '));
  const found: string[] = [];
  for (const d of pkgs) {
    const src = join(repo, d, 'src');
    for (const { path, others } of cycles(importGraph(src))) {
      const also = others.length ? ` (and in the same circle: ${others.map((f) => relative(src, f)).join(', ')})` : '';
      found.push(`${d}/src: ${path.map((f) => relative(src, f)).join(' → ')}${also}`);
    }
  }
  assert.equal(found, [], `import cycles:\n  ${found.join('\n  ')}\n`);
});

// ---- core's floors: ARCHITECTURE.md "Layers inside core (top to bottom)", the same rows in the same order.

const CORE_LAYERS: ReadonlyArray<readonly string[]> = [
  ['index.ts', 'testing/'],
  ['cli/'],
  ['node/'],
  ['config/', 'genesis/'],
  ['chains/'],
  ['platform/'],
  ['api/'],
  ['vms/'],
  ['validators/'],
  ['network/'],
  ['consensus/'],
  ['keystore/'],
  ['db/'],
  ['staking/', 'ipc/', 'log/', 'health/', 'metrics/'],
];

const coreSrc = join(repo, 'core/src');
/** A core/src file's floor: its top folder (`api/`) or, for a file at the top, its name (`index.ts`). */
const floorOf = (file: string) => {
  const rel = relative(coreSrc, file);
  return rel.includes('/') ? `${rel.split('/')[0]}/` : rel;
};
const rank = new Map(CORE_LAYERS.flatMap((folders, i) => folders.map((f) => [f, CORE_LAYERS.length - i] as const)));

test("core's layer table is ARCHITECTURE.md's, and names every folder and file at the top of core/src", () => {
  const doc = readFileSync(join(repo, 'ARCHITECTURE.md'), 'utf8');
  const section = doc.split(/^## /m).find((s) => s.startsWith('Layers inside core'));
  assert.ok(section, 'ARCHITECTURE.md has a "Layers inside core" section');
  const rows = section
    .split('\n')
    .filter((l) => l.startsWith('|') && !/^\|\s*(layer|-)/.test(l))
    .map((l) => [...l.split('|')[2]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!));
  assert.equal(rows, CORE_LAYERS.map((r) => [...r]));
  const top = readdirSync(coreSrc).map((n) => (statSync(join(coreSrc, n)).isDirectory() ? `${n}/` : n)).filter((n) => n.endsWith('/') || n.endsWith('.ts'));
  assert.equal(top.filter((n) => !rank.has(n)), [], 'folders of core/src missing from the table');
  assert.equal([...rank.keys()].filter((n) => !top.includes(n)), [], 'folders of the table missing from core/src');
});

test("core's floors: no file imports a folder of a higher layer, and folders of one layer import each other in no circle", () => {
  const g = importGraph(coreSrc);
  const up: string[] = [];
  const folders: Graph = new Map();
  for (const [f, targets] of g) {
    const from = floorOf(f);
    for (const t of targets) {
      const to = floorOf(t);
      if (from === to) continue;
      if ((rank.get(to) ?? Infinity) > (rank.get(from) ?? -Infinity)) up.push(`${relative(coreSrc, f)} → ${relative(coreSrc, t)}`);
      folders.set(from, [...new Set([...(folders.get(from) ?? []), to])]);
    }
  }
  assert.equal(up, [], `imports of a higher layer:\n  ${up.join('\n  ')}\n`);
  const circles = cycles(folders).map(({ path, others }) => [...path, ...others].join(' → '));
  assert.equal(circles, [], `folders in a circle:\n  ${circles.join('\n  ')}\n`);
});

test.run();
