#!/usr/bin/env node
// Runs every compiled uvu test file (dist/**/*.test.js) of the given workspaces (default: all), each
// in its own node process, and ends by printing one line `N passed, N failed` (totals over all
// packages). Fails when any test fails, when a file crashes or reports no tests (a forgotten
// `test.run()`), when a file skips tests (`test.skip`, or `test.only` leaving the others out), when
// a file exceeds its time limit, or when zero tests ran in all.
// Usage: node scripts/run-tests.mjs [workspace-dir ...] [--filter <regex>] [--lint]
// A whole run (no workspace, no filter) starts with the linter, counted as one test (--lint adds it to a part).
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import { join, relative, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
let filter;
let withLint = false;
const dirs = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--filter') filter = new RegExp(args[++i]);
  else if (args[i] === '--lint') withLint = true;
  else dirs.push(args[i]);
}
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
// Workspace entries may be `dir/*` globs (one level).
const expand = (ws) =>
  ws.endsWith('/*')
    ? readdirSync(join(root, ws.slice(0, -2)), { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .map((d) => `${ws.slice(0, -2)}/${d.name}`)
    : [ws];
const workspaces = (dirs.length ? dirs : pkg.workspaces).flatMap(expand);
const fileTimeoutMs = Number(process.env.TEST_FILE_TIMEOUT_MS ?? 300_000);

function findTests(dir) {
  if (!existsSync(dir)) return [];
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...findTests(p));
    else if (name.endsWith('.test.js')) out.push(p);
  }
  return out.sort();
}

function runFile(file) {
  return new Promise((resolvePromise) => {
    const child = spawn(process.execPath, [file], {
      cwd: root,
      env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => {
      out += `\n[run-tests] killed after ${fileTimeoutMs} ms\n`;
      child.kill('SIGKILL');
    }, fileTimeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const num = (label) => Number(out.match(new RegExp(`${label}:\\s+(\\d+)`))?.[1] ?? NaN);
      const total = num('Total');
      const passed = num('Passed');
      const skipped = num('Skipped');
      resolvePromise({ file, code, signal, out, total, passed, skipped });
    });
  });
}

let passed = 0;
let failed = 0;
let skipped = 0;
const problems = [];
const started = Date.now();

/**
 * The linter (biome.json: Biome's recommended rules and noImportCycles) over the whole repository,
 * counted as one test: it runs on a whole run (no workspace or filter given) or with --lint.
 */
function lint() {
  return new Promise((resolvePromise) => {
    const bin = join(root, 'node_modules', '@biomejs', 'biome', 'bin', 'biome');
    const child = spawn(process.execPath, [bin, 'lint', '--error-on-warnings', '--max-diagnostics=50', '.'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', (e) => resolvePromise({ code: 1, out: `${out}\n${e.message}` }));
    child.on('close', (code) => resolvePromise({ code, out }));
  });
}
if (withLint || (dirs.length === 0 && !filter)) {
  const t0 = Date.now();
  const r = await lint();
  if (r.code === 0) passed += 1;
  else {
    failed += 1;
    problems.push('lint: see its diagnostics above (npm run lint)');
    process.stdout.write(r.out);
  }
  console.log(`${r.code === 0 ? 'ok  ' : 'FAIL'} lint (biome, ${Date.now() - t0} ms)`);
}

for (const ws of workspaces) {
  const files = findTests(resolve(root, ws, 'dist')).filter((f) => !filter || filter.test(f));
  for (const file of files) {
    const rel = relative(root, file);
    const t0 = Date.now();
    const r = await runFile(file);
    const ms = Date.now() - t0;
    if (!Number.isFinite(r.total) || r.total === 0) {
      failed += 1;
      problems.push(`${rel}: ran no tests (crash, or a suite without .run())`);
      process.stdout.write(r.out);
    } else {
      const f = Math.max(0, r.total - r.passed);
      passed += r.passed;
      failed += f;
      skipped += r.skipped;
      if (r.skipped > 0) {
        failed += 1;
        problems.push(`${rel}: ${r.skipped} test(s) skipped (test.skip or test.only): every test must run`);
        process.stdout.write(r.out);
      }
      if (f > 0 || r.code !== 0) {
        if (f === 0) {
          failed += 1;
          problems.push(`${rel}: exited with ${r.signal ?? r.code}`);
        } else problems.push(`${rel}: ${f} failed`);
        process.stdout.write(r.out);
      }
    }
    // uvu exits 0 when a before-hook throws (its tests count as not passed): judge by the counts too.
    const clean = r.code === 0 && !(r.skipped > 0) && Number.isFinite(r.total) && r.total > 0 && r.passed === r.total;
    console.log(`${clean ? 'ok  ' : 'FAIL'} ${rel} (${r.passed ?? 0}/${r.total ?? 0}, ${ms} ms)`);
  }
}
if (passed + failed === 0) {
  problems.push('zero tests ran');
  failed += 0;
}
for (const p of problems) console.log(`problem: ${p}`);
console.log(`time: ${((Date.now() - started) / 1000).toFixed(1)} s`);
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(problems.length || failed || passed === 0 ? 1 : 0);
