/**
 * Loads the VMs a node can run into a VMRegistry, at start-up:
 *  1. built-ins (passed in by the composition root or the test kit);
 *  2. `--vms` specifiers: npm package names, resolved from the working directory first and then from
 *     core's own location (package `exports` honoured), or file/directory paths relative to it;
 *     without `--vms`, the built-in VM packages (builtins.ts) that are installed;
 *  3. `--plugin-dir` entries, each a .js/.mjs file or a package directory, named by the vmID it must
 *     provide (cb58) or by an alias from the aliases file, optionally with .js/.mjs.
 * Every module must export a `vmFactory`. A plugin's package.json may declare the @cornice/sdk range
 * it needs; the node checks it before importing the plugin, and lends its own sdk to a plugin that
 * has none (sdk.ts). Anything wrong is a VMLoadError naming the plugin — the node refuses to start
 * rather than run without a VM it was told to load.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Id, isVMFactory, type Logger, type VMFactory } from '@cornice/sdk';
import { VMLoadError } from './errors.js';
import { VMRegistry } from './registry.js';
import { checkSdkRange, useNodeSdkFallback } from './sdk.js';

export interface LoadVMsOptions {
  /** VMs that need no loading, registered first with source `builtin`. */
  builtins?: VMFactory[];
  /** `--vms`: npm package names or paths (relative to `cwd`). */
  specifiers?: readonly string[];
  /** Package names loaded when installed and skipped (with an info log) when not: the built-ins without `--vms`. */
  optionalPackages?: readonly string[];
  /** `--plugin-dir`: must exist when given. */
  pluginDir?: string;
  /** `--vm-aliases-file`: JSON `{ "<vmID>": ["alias", …] }`. */
  aliasesFile?: string;
  cwd: string;
  log: Logger;
}

/** Conditions used to pick a package's entry, as `import()` would. */
const IMPORT_CONDITIONS = new Set(['import', 'node', 'default']);

const errorCode = (e: unknown): string | undefined => (e as NodeJS.ErrnoException | null)?.code;
const errorMessage = (e: unknown): string => (e instanceof Error ? e.message : String(e));

export async function loadVMs(opts: LoadVMsOptions): Promise<VMRegistry> {
  const { log, cwd } = opts;
  const registry = new VMRegistry();
  const aliases = opts.aliasesFile === undefined ? undefined : await readAliasesFile(resolve(cwd, opts.aliasesFile));

  const add = (factory: VMFactory, source: string, path?: string, root?: string) => {
    try {
      registry.register(factory, source, root, path);
    } catch (e) {
      throw new VMLoadError('DuplicateVM', errorMessage(e), e);
    }
    log.info('VM loaded', { name: factory.name, vmId: Id.fromBytes(factory.vmId.bytes).toString(), version: factory.version, source, ...(path && path !== source ? { path } : {}) });
  };

  for (const factory of opts.builtins ?? []) add(factory, 'builtin');

  for (const spec of opts.optionalPackages ?? []) {
    const found = await resolveInstalledPackage(spec, cwd);
    if (!found) {
      log.info('built-in VM not installed; skipped', { package: spec });
      continue;
    }
    add(await importFactory(found, `${spec} (${found.entry})`, log), spec, found.entry, await codeRoot(found.entry));
  }

  for (const spec of opts.specifiers ?? []) {
    const found = await resolveSpecifier(spec, cwd);
    add(await importFactory(found, `${spec} (${found.entry})`, log), found.source, found.entry, await codeRoot(found.entry));
  }

  if (opts.pluginDir !== undefined) {
    const dir = resolve(cwd, opts.pluginDir);
    for (const plugin of await scanPluginDir(dir, aliases)) {
      const factory = await importFactory(plugin, plugin.path, log);
      const actual = Id.fromBytes(factory.vmId.bytes);
      if (!actual.equals(plugin.vmId)) {
        throw new VMLoadError(
          'VMIdMismatch',
          `VM plugin ${plugin.path} is named for vmID ${plugin.vmId.toString()}${plugin.alias ? ` (alias ${plugin.alias})` : ''} but its vmFactory has vmID ${actual.toString()}`,
        );
      }
      add(factory, plugin.path, plugin.entry, await realpath(plugin.path));
    }
  }

  if (aliases) {
    for (const [vmId, list] of aliases.byVm) {
      if (!registry.has(vmId)) {
        log.debug('VM aliases for a VM that is not loaded', { vmId: vmId.toString(), aliases: list });
        continue;
      }
      for (const a of list) {
        try {
          registry.alias(vmId, a);
        } catch (e) {
          throw new VMLoadError('BadAliasesFile', `VM aliases file ${aliases.path}: ${errorMessage(e)}`, e);
        }
      }
    }
  }
  return registry;
}

/** core's own package directory (this file is dist/src/vms/loader.js): a plugin's code root must never contain it. */
const CORE_PACKAGE_DIR = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * Where a loaded plugin's code lives, for pinning faults on it: the package directory of its entry
 * (symlinks resolved, as in stack traces), or the entry file itself when no package directory lies
 * between it and core's own.
 */
async function codeRoot(entry: string): Promise<string> {
  const file = await realpath(entry);
  const core = await realpath(CORE_PACKAGE_DIR).catch(() => resolve(CORE_PACKAGE_DIR));
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    if (dir === core || core.startsWith(dir + sep)) return file;
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) return file;
  }
}

// ---- aliases file --------------------------------------------------------------------------------

interface AliasesFile {
  path: string;
  /** vmID -> aliases, in file order */
  byVm: Array<[Id, string[]]>;
  /** alias -> vmID */
  byAlias: Map<string, Id>;
}

async function readAliasesFile(path: string): Promise<AliasesFile> {
  const bad = (problem: string, cause?: unknown) => new VMLoadError('BadAliasesFile', `VM aliases file ${path}: ${problem}`, cause);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw bad(`cannot read it: ${errorMessage(e)}`, e);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw bad(`not valid JSON: ${errorMessage(e)}`, e);
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw bad('must be a JSON object {"<vmID>": ["alias", ...]}');
  }
  const byVm: Array<[Id, string[]]> = [];
  const byAlias = new Map<string, Id>();
  for (const [key, value] of Object.entries(json)) {
    let vmId: Id;
    try {
      vmId = Id.fromString(key);
    } catch (e) {
      throw bad(`key "${key.slice(0, 128)}" is not a vmID (${errorMessage(e)})`, e);
    }
    if (!Array.isArray(value) || !value.every((a): a is string => typeof a === 'string')) {
      throw bad(`the aliases of ${key} must be an array of strings`);
    }
    for (const a of value) {
      const other = byAlias.get(a);
      if (other && !other.equals(vmId)) throw bad(`alias ${a.slice(0, 128)} is given to both ${other.toString()} and ${key}`);
      byAlias.set(a, vmId);
    }
    byVm.push([vmId, value]);
  }
  return { path, byVm, byAlias };
}

// ---- plugin directory ----------------------------------------------------------------------------

/** A plugin module to import, with the package.json of its package (none for a bare .js file). */
interface PluginModule {
  entry: string;
  pkg?: Readonly<Record<string, unknown>>;
}

interface DirPlugin extends PluginModule {
  /** The entry in the plugin directory (file or directory). */
  path: string;
  /** The vmID its name promises. */
  vmId: Id;
  /** The alias it was named by, if not by vmID. */
  alias?: string;
}

async function scanPluginDir(dir: string, aliases: AliasesFile | undefined): Promise<DirPlugin[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (e) {
    throw new VMLoadError('PluginDir', `cannot read the VM plugin directory ${dir}: ${errorMessage(e)}`, e);
  }
  const plugins: DirPlugin[] = [];
  for (const name of names.sort()) {
    if (name.startsWith('.')) continue;
    const path = join(dir, name);
    let st;
    try {
      st = await stat(path);
    } catch (e) {
      throw new VMLoadError('NotFound', `VM plugin ${path} cannot be read: ${errorMessage(e)}`, e);
    }
    const base = name.replace(/\.(m?js)$/, '');
    let vmId: Id | undefined;
    let alias: string | undefined;
    try {
      vmId = Id.fromString(base);
    } catch {
      vmId = aliases?.byAlias.get(base);
      if (vmId) alias = base;
    }
    if (!vmId) {
      throw new VMLoadError(
        'BadPluginName',
        `VM plugin ${path} is named by neither a vmID nor an alias${aliases ? ` of ${aliases.path}` : ' (no --vm-aliases-file given)'}; name it <vmID>[.js|.mjs] or <alias>[.js|.mjs]`,
      );
    }
    let module: PluginModule;
    if (st.isDirectory()) module = await packageDirEntry(path);
    else if (st.isFile() && /\.m?js$/.test(name)) module = { entry: path };
    else throw new VMLoadError('BadPluginName', `VM plugin ${path} is neither a .js/.mjs file nor a package directory`);
    plugins.push({ path, ...module, vmId, ...(alias ? { alias } : {}) });
  }
  return plugins;
}

// ---- resolution ----------------------------------------------------------------------------------

function isPathSpecifier(spec: string): boolean {
  return spec.startsWith('./') || spec.startsWith('../') || spec === '.' || spec === '..' || isAbsolute(spec) || spec.startsWith('file:');
}

/** The module to import for a `--vms` specifier, and the source to report: the package name or the absolute path. */
async function resolveSpecifier(spec: string, cwd: string): Promise<PluginModule & { source: string }> {
  if (isPathSpecifier(spec)) {
    let path = spec;
    let st;
    try {
      path = spec.startsWith('file:') ? fileURLToPath(spec) : resolve(cwd, spec);
      st = await stat(path);
    } catch (e) {
      throw new VMLoadError('NotFound', `VM plugin ${spec} not found: ${path} (${errorMessage(e)})`, e);
    }
    return { ...(st.isDirectory() ? await packageDirEntry(path) : { entry: path }), source: path };
  }
  const found = await resolveInstalledPackage(spec, cwd);
  if (found) return { ...found, source: spec };
  throw new VMLoadError('NotFound', `VM plugin ${spec} not found: no package of that name is installed for ${cwd}, nor for @cornice/core (${CORE_DIR})`);
}

const CORE_DIR = fileURLToPath(new URL('.', import.meta.url));

/** A package specifier resolved from `cwd`, else from core's own location; undefined when installed for neither. */
async function resolveInstalledPackage(spec: string, cwd: string): Promise<PluginModule | undefined> {
  for (const base of [cwd, CORE_DIR]) {
    const found = await resolvePackage(spec, base);
    if (found) return found;
  }
  return undefined;
}

/** `@scope/name/sub` -> [`@scope/name`, `/sub`]. */
function splitPackageSpecifier(spec: string): [name: string, subpath: string | undefined] | undefined {
  const m = /^((?:@[^/]+\/)?[^/]+)(\/.*)?$/.exec(spec);
  return m ? [m[1]!, m[2]] : undefined;
}

/** Resolves a package specifier from `base` (a directory); undefined when not installed there. */
async function resolvePackage(spec: string, base: string): Promise<PluginModule | undefined> {
  let entry: string;
  try {
    entry = createRequire(join(base, 'noop.js')).resolve(spec);
  } catch (e) {
    const code = errorCode(e);
    if (code === 'MODULE_NOT_FOUND') return undefined;
    if (code !== 'ERR_PACKAGE_PATH_NOT_EXPORTED') {
      throw new VMLoadError('NotFound', `VM plugin ${spec} cannot be resolved: ${errorMessage(e)}`, e);
    }
    return resolveImportOnly(spec, base);
  }
  return { entry, ...(await packageJsonAbove(entry, splitPackageSpecifier(spec)?.[0])) };
}

/** The package.json of package `name` that holds `file`: the nearest one above it with that name. */
async function packageJsonAbove(file: string, name: string | undefined): Promise<{ pkg?: PackageJson }> {
  if (name === undefined) return {};
  for (let dir = dirname(file); dirname(dir) !== dir; dir = dirname(dir)) {
    const pkg = await readPackageJson(dir).catch(() => undefined);
    if (pkg?.name === name) return { pkg };
  }
  return {};
}

/** A package that exists but exports nothing for require (e.g. only an "import" condition): resolved as import() would. */
async function resolveImportOnly(spec: string, base: string): Promise<PluginModule | undefined> {
  const parts = splitPackageSpecifier(spec);
  if (!parts) return undefined;
  const [name, rest] = parts;
  for (let dir = resolve(base); ; ) {
    const pkgDir = join(dir, 'node_modules', name!);
    const pkg = await readPackageJson(pkgDir).catch((e: unknown) => {
      if (e instanceof VMLoadError) throw e;
      return undefined;
    });
    if (pkg) {
      const target = pkg.exports === undefined ? undefined : exportsTarget(pkg.exports, rest ? `.${rest}` : '.');
      if (target === undefined) throw new VMLoadError('NotFound', `VM plugin ${spec}: package ${pkgDir} exports no entry for import()`);
      return { entry: resolve(pkgDir, target), pkg };
    }
    const parent = resolve(dir, '..');
    if (parent === dir) return undefined;
    dir = parent;
  }
}

interface PackageJson {
  name?: unknown;
  exports?: unknown;
  main?: unknown;
  [key: string]: unknown;
}

async function readPackageJson(dir: string): Promise<PackageJson> {
  const path = join(dir, 'package.json');
  const text = await readFile(path, 'utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new VMLoadError('ImportFailed', `VM plugin ${dir}: ${path} is not valid JSON: ${errorMessage(e)}`, e);
  }
  if (json === null || typeof json !== 'object') throw new VMLoadError('ImportFailed', `VM plugin ${dir}: ${path} is not a JSON object`);
  return json as PackageJson;
}

/** The entry module of a package directory: its `exports` ('.'), else `main`, else index.js. */
async function packageDirEntry(dir: string): Promise<PluginModule> {
  let pkg: PackageJson;
  try {
    pkg = await readPackageJson(dir);
  } catch (e) {
    if (e instanceof VMLoadError) throw e;
    throw new VMLoadError('NotFound', `VM plugin ${dir} is a directory without a readable package.json (${errorMessage(e)})`, e);
  }
  let target: string;
  if (pkg.exports !== undefined) {
    const t = exportsTarget(pkg.exports, '.');
    if (t === undefined) throw new VMLoadError('NotFound', `VM plugin ${dir}: package.json "exports" names no entry for import()`);
    target = t;
  } else if (typeof pkg.main === 'string' && pkg.main) target = pkg.main;
  else target = 'index.js';
  const entry = resolve(dir, target);
  try {
    await stat(entry);
  } catch (e) {
    throw new VMLoadError('NotFound', `VM plugin ${dir}: its entry ${target} (from package.json) does not exist`, e);
  }
  return { entry, pkg };
}

/** A package's `exports` target for `subpath` under the import conditions (patterns with one `*`). */
function exportsTarget(exports: unknown, subpath: string): string | undefined {
  const isSubpathMap =
    exports !== null && typeof exports === 'object' && !Array.isArray(exports) && Object.keys(exports).some((k) => k.startsWith('.'));
  if (!isSubpathMap) return subpath === '.' ? conditionTarget(exports, undefined) : undefined;
  const map = exports as Record<string, unknown>;
  if (subpath in map) return conditionTarget(map[subpath], undefined);
  for (const [key, value] of Object.entries(map)) {
    const star = key.indexOf('*');
    if (star < 0) continue;
    const prefix = key.slice(0, star);
    const suffix = key.slice(star + 1);
    if (subpath.startsWith(prefix) && subpath.endsWith(suffix) && subpath.length >= key.length - 1) {
      return conditionTarget(value, subpath.slice(prefix.length, subpath.length - suffix.length));
    }
  }
  return undefined;
}

function conditionTarget(target: unknown, star: string | undefined): string | undefined {
  if (typeof target === 'string') {
    if (!target.startsWith('./')) return undefined;
    return star === undefined ? target : target.replaceAll('*', star);
  }
  if (Array.isArray(target)) {
    for (const t of target) {
      const r = conditionTarget(t, star);
      if (r !== undefined) return r;
    }
    return undefined;
  }
  if (target !== null && typeof target === 'object') {
    for (const [cond, t] of Object.entries(target)) {
      if (!IMPORT_CONDITIONS.has(cond)) continue;
      const r = conditionTarget(t, star);
      if (r !== undefined) return r;
    }
  }
  return undefined;
}

// ---- import --------------------------------------------------------------------------------------

/**
 * Checks the plugin's sdk range, then imports its entry and returns its valid `vmFactory`; `label`
 * names the plugin in errors.
 */
async function importFactory(plugin: PluginModule, label: string, log: Logger): Promise<VMFactory> {
  await checkSdkRange(label, plugin.pkg, log);
  await useNodeSdkFallback(plugin.entry);
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(plugin.entry).href)) as Record<string, unknown>;
  } catch (e) {
    const msg = errorMessage(e);
    const hint = /Cannot use import statement outside a module|Unexpected token 'export'/.test(msg)
      ? ' (an ES module in a .js file needs {"type": "module"} in the nearest package.json; or name it .mjs)'
      : '';
    throw new VMLoadError('ImportFailed', `cannot import VM plugin ${label}: ${msg}${hint}`, e);
  }
  const fromDefault = (mod.default as Record<string, unknown> | null | undefined)?.vmFactory;
  const factory = 'vmFactory' in mod ? mod.vmFactory : fromDefault;
  if (factory === undefined) {
    const names = Object.keys(mod).filter((k) => k !== 'default');
    throw new VMLoadError('NoFactory', `VM plugin ${label} has no vmFactory export${names.length ? ` (it exports ${names.slice(0, 10).join(', ')}${names.length > 10 ? ', …' : ''})` : ''}`);
  }
  if (!isVMFactory(factory)) {
    throw new VMLoadError('NoFactory', `VM plugin ${label}: vmFactory is not a VMFactory (${factoryProblem(factory)})`);
  }
  return factory;
}

function factoryProblem(x: unknown): string {
  if (x === null || typeof x !== 'object') return `it is ${x === null ? 'null' : typeof x}, not an object`;
  const f = x as Record<string, unknown>;
  if (typeof f.name !== 'string') return 'name is not a string';
  if (typeof f.version !== 'string') return 'version is not a string';
  if (typeof f.create !== 'function') return 'create is not a function';
  return 'vmId is not an ID of 32 bytes';
}
