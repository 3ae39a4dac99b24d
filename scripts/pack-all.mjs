#!/usr/bin/env node
/**
 * The release dry run: `npm pack` of every package lerna releases (lerna.json's "packages", private
 * ones too: they must pack even if they are not published) into one directory, then a check of each
 * tarball's contents and a listing. Offline: it packs what is built and runs no script (`npm run
 * pack:all` builds first). Exits 1 when a package fails to pack or a tarball holds what must not ship.
 *
 *   node scripts/pack-all.mjs [--out DIR] [--json]
 *
 * --out: where the tarballs go (default packed/, emptied first); --json: print
 * [{name, version, private, tarball, files}] instead of the table.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** What no tarball may hold: tests, build info, sources of the build (dist/ only), test fixtures. */
const FORBIDDEN = [
  [/(^|\/)test\//, 'a test directory'],
  [/\.test\.(js|ts|d\.ts)$/, 'a test file'],
  [/tsbuildinfo$/, 'TypeScript build info'],
  [/^src\/.*\.ts$/, 'TypeScript sources (ship dist/)'],
  [/^tsconfig.*\.json$/, 'a tsconfig'],
  [/(^|\/)fixtures\/(?!staking\/local\/)/, 'a fixture not needed at run time'],
];

/** The workspace directories lerna.json's "packages" name ("dir" or "dir/*"), in its order. */
export function releasedWorkspaces(root = ROOT) {
  const { packages } = JSON.parse(readFileSync(join(root, 'lerna.json'), 'utf8'));
  const dirs = [];
  for (const pattern of packages) {
    if (!pattern.endsWith('/*')) {
      if (existsSync(join(root, pattern, 'package.json'))) dirs.push(pattern);
      continue;
    }
    const parent = pattern.slice(0, -2);
    if (!existsSync(join(root, parent))) continue;
    for (const name of readdirSync(join(root, parent)).sort()) {
      if (existsSync(join(root, parent, name, 'package.json'))) dirs.push(`${parent}/${name}`);
    }
  }
  return dirs;
}

/** Packs `workspaces` into `out`; resolves with one entry per tarball. */
export function packAll(out, workspaces = releasedWorkspaces()) {
  mkdirSync(out, { recursive: true });
  const args = ['pack', '--json', '--ignore-scripts', '--pack-destination', out, ...workspaces.flatMap((w) => ['--workspace', w])];
  const stdout = execFileSync('npm', args, {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    timeout: 120_000,
    env: { ...process.env, npm_config_fund: 'false', npm_config_audit: 'false', npm_config_update_notifier: 'false' },
  });
  // npm lists them in the root's workspaces order: match them by name.
  const byName = new Map(workspaces.map((w) => [JSON.parse(readFileSync(join(ROOT, w, 'package.json'), 'utf8')), w]).map(([pkg, w]) => [pkg.name, { w, pkg }]));
  return JSON.parse(stdout).map((p) => {
    const { w, pkg } = byName.get(p.name);
    return { name: p.name, version: p.version, private: pkg.private === true, workspace: w, tarball: join(out, p.filename), size: p.size, files: p.files.map((f) => f.path), pkg };
  });
}

/**
 * The problems of one tarball's file list: `path: why` each. A template a package ships as data
 * (under `template/` or `templates/`, e.g. a scaffold's project with its tests) is not checked.
 */
export function forbiddenFiles(files, pkg = {}) {
  const problems = [];
  for (const path of files) {
    if (/^templates?\//.test(path)) continue;
    for (const [re, why] of FORBIDDEN) if (re.test(path)) problems.push(`${path}: ${why}`);
  }
  const entry = String(pkg.main ?? '');
  if (entry.replace(/^\.\//, '').startsWith('dist/src/') && !files.includes(entry.replace(/^\.\//, ''))) problems.push(`${entry} not in the tarball: built? (npm run build)`);
  return problems;
}

function main(argv) {
  let out = join(ROOT, 'packed');
  let json = false;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--out' && argv[i + 1]) out = resolve(argv[++i]);
    else if (argv[i].startsWith('--out=')) out = resolve(argv[i].slice('--out='.length));
    else if (argv[i] === '--json') json = true;
    else {
      process.stderr.write(`pack-all: unknown argument ${JSON.stringify(argv[i])}\nusage: node scripts/pack-all.mjs [--out DIR] [--json]\n`);
      return 2;
    }
  }
  rmSync(out, { recursive: true, force: true });
  let packed;
  try {
    packed = packAll(out);
  } catch (e) {
    process.stderr.write(`pack-all: npm pack failed: ${e.stderr || e.message}\n`);
    return 1;
  }
  let failed = false;
  for (const p of packed) {
    const problems = forbiddenFiles(p.files, p.pkg);
    if (problems.length) {
      failed = true;
      process.stderr.write(`pack-all: ${p.name} must not ship:\n${problems.map((x) => `  ${x}\n`).join('')}`);
    }
  }
  if (json) process.stdout.write(JSON.stringify(packed.map(({ pkg, ...p }) => p), null, 2) + '\n');
  else {
    process.stdout.write(`${packed.length} tarballs in ${relative(process.cwd(), out) || '.'}:\n`);
    for (const p of packed) {
      const note = p.private ? '  (private: packed, not published)' : '';
      process.stdout.write(`  ${relative(out, p.tarball).padEnd(44)} ${String(p.files.length).padStart(4)} files ${(p.size / 1024).toFixed(0).padStart(5)} KiB${note}\n`);
    }
  }
  return failed ? 1 : 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exitCode = main(process.argv.slice(2));
