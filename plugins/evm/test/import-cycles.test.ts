/**
 * No import circle among the package's modules: every relative import of src/ (type-only ones too,
 * and `import()`), followed from each file, never leads back to it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

/** The sources (this file runs from dist/test). */
const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? sources(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : []));
}

/** The files `file` imports by relative path. */
function importsOf(file: string, known: ReadonlySet<string>): string[] {
  const text = readFileSync(file, 'utf8');
  const specs = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'";]*?['"](\.{1,2}\/[^'"]+)['"]/g), ...text.matchAll(/import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g)].map((m) => m[1]!);
  return specs.map((s) => resolve(dirname(file), s.replace(/\.js$/, '.ts'))).filter((f) => known.has(f));
}

/** One circle of imports, as a path from a file back to it; undefined when there is none. */
function findCircle(graph: ReadonlyMap<string, readonly string[]>): string[] | undefined {
  const done = new Set<string>();
  const onPath: string[] = [];
  const visit = (f: string): string[] | undefined => {
    const at = onPath.indexOf(f);
    if (at >= 0) return [...onPath.slice(at), f];
    if (done.has(f)) return undefined;
    onPath.push(f);
    for (const g of graph.get(f) ?? []) {
      const circle = visit(g);
      if (circle) return circle;
    }
    onPath.pop();
    done.add(f);
    return undefined;
  };
  for (const f of graph.keys()) {
    const circle = visit(f);
    if (circle) return circle;
  }
  return undefined;
}

test('src/ has no import circle (type-only imports count)', () => {
  const files = sources(SRC);
  assert.ok(files.length > 50, `found ${files.length} sources under ${SRC}`);
  const known = new Set(files);
  const graph = new Map(files.map((f) => [f, importsOf(f, known)]));
  const circle = findCircle(graph);
  assert.is(circle?.map((f) => relative(SRC, f)).join(' -> '), undefined);
});

test('the check finds a circle', () => {
  assert.equal(findCircle(new Map([['a', ['b']], ['b', ['c']], ['c', ['b']]])), ['b', 'c', 'b']);
  assert.is(findCircle(new Map([['a', ['b', 'c']], ['b', ['c']], ['c', []]])), undefined);
});

test.run();
