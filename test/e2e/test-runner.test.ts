/**
 * The test command itself: it must fail when a file skips tests (test.skip, or test.only leaving
 * the others out) or forgets test.run(), and count what ran.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { REPO } from '../src/fixtures.js';

const uvu = pathToFileURL(join(REPO, 'node_modules/uvu/dist/index.mjs')).href;
let dir: string;
test.before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cornice-runner-'));
});
test.after(() => rm(dir, { recursive: true, force: true }));

async function run(name: string, body: string): Promise<{ code: number | null; out: string }> {
  const ws = join(dir, name);
  await mkdir(join(ws, 'dist'), { recursive: true });
  await writeFile(join(ws, 'dist', 'x.test.js'), `import { test } from '${uvu}';\n${body}\n`);
  const r = spawnSync(process.execPath, [join(REPO, 'scripts/run-tests.mjs'), ws], { encoding: 'utf8' });
  return { code: r.status, out: r.stdout + r.stderr };
}

test('all tests run and pass: exit 0, counted', async () => {
  const r = await run('ok', "test('a', () => {});\ntest('b', () => {});\ntest.run();");
  assert.is(r.code, 0);
  assert.match(r.out, /\n2 passed, 0 failed\n/);
});

test('test.skip fails the run', async () => {
  const r = await run('skip', "test('a', () => {});\ntest.skip('b', () => {});\ntest.run();");
  assert.is(r.code, 1);
  assert.match(r.out, /skipped \(test\.skip or test\.only\)/);
});

test('test.only fails the run (the other tests did not run)', async () => {
  const r = await run('only', "test('a', () => {});\ntest.only('b', () => {});\ntest.run();");
  assert.is(r.code, 1);
  assert.match(r.out, /1 test\(s\) skipped/);
});

test('a file that forgets test.run() fails the run', async () => {
  const r = await run('norun', "test('a', () => {});");
  assert.is(r.code, 1);
  assert.match(r.out, /ran no tests/);
});

test('a file whose before-hook throws is shown as FAIL and fails the run (uvu itself exits 0)', async () => {
  const r = await run('hook', "test.before(() => { throw new Error('setup broke'); });\ntest('a', () => {});\ntest.run();");
  assert.is(r.code, 1);
  assert.match(r.out, /\nFAIL .*x\.test\.js \(0\/1/);
});

test.run();
