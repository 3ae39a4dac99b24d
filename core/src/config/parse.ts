/**
 * Command line + environment + config file -> NodeConfig, driven entirely by the flag table.
 *
 * - Command line: `--flag=value`, `--flag value`; a bare boolean `--flag` means true and never takes
 *   the next argument (`--flag=false` turns it off). A repeated flag: the last one wins.
 * - Environment: `CORNICE_<FLAG IN UPPER SNAKE CASE>`, e.g. `CORNICE_HTTP_PORT=9700`. Empty values are
 *   treated as unset; variables that name no flag are ignored (the environment is shared).
 * - Config file (`--config-file` or `CORNICE_CONFIG_FILE`): a JSON object whose keys are flag names
 *   without dashes; values are JSON-typed (numbers for ints, true/false for bools, strings otherwise;
 *   the network may be a name or a number).
 * - Precedence: command line > environment > config file > defaults. Defaults derived from other
 *   flags (db-dir, staking files, profile-dir) follow the final values of those flags.
 * - `--help` anywhere returns the help text without checking anything else; `--version` is answered
 *   once the command line parses, before the environment and config file are read.
 * The command-line rules are parseCommandLine's, which `cornice network` (cli/runner/args.ts) shares.
 */
import { readFileSync } from 'node:fs';
import { homedir as osHomedir } from 'node:os';
import { snowParamsProblem, type SnowParams } from '../consensus/params.js';
import type { BenchlistConfig } from '../consensus/requests/benchlist.js';
import { timeoutConfigProblem, type TimeoutConfig } from '../consensus/requests/timeouts.js';
import { ConfigError, networkNameOf, type NodeConfig } from './config.js';
import {
  configFileFlag,
  envName,
  findFlag,
  flags,
  helpFlag,
  versionFlag,
  type Flag,
  type FlagSource,
  type ValueContext,
} from './flags.js';

export type ParseResult = { kind: 'run'; config: NodeConfig } | { kind: 'help'; text: string } | { kind: 'version' };

export interface ParseOptions {
  /** Reads the config file (default: fs.readFileSync as UTF-8). */
  readFile?: (path: string) => string;
  /** Home directory for `~` and the default data dir (default: os.homedir()). */
  homedir?: string;
}

type Values = Map<Flag, unknown>;

const seeHelp = '(see cornice --help)';

function quote(value: unknown): string {
  let s: string;
  try {
    s = JSON.stringify(value) ?? String(value);
  } catch {
    s = String(value);
  }
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Converts a command-line or environment string, or throws naming `where` (`--x` or `CORNICE_X`). */
function fromString(flag: CommandLineFlag, raw: string, where: string, source: FlagSource, ctx: ValueContext): unknown {
  const value = flag.type.fromString(raw, ctx);
  const problem = value === undefined ? flag.type.expected : flag.validate?.(value);
  if (problem !== undefined) {
    throw new ConfigError('InvalidValue', `invalid value ${quote(raw)} for ${where}: expected ${problem}`, {
      flag: flag.name,
      source,
    });
  }
  return value;
}

function unknownFlag(arg: string, help: string): ConfigError {
  const eq = arg.indexOf('=');
  const shown = eq < 0 ? arg : arg.slice(0, eq);
  return new ConfigError('UnknownFlag', `unknown flag ${shown} ${help}`, { flag: shown });
}

/** Whether a command line asks for help: `--help` (or `--help=true`, `--help=1`) anywhere. */
export function wantsHelp(argv: readonly string[]): boolean {
  return argv.some((a) => a === '--help' || a === '--help=true' || a === '--help=1');
}

/** What the command-line rules need of a flag (a node flag's row, or another command's). */
export type CommandLineFlag = Pick<Flag, 'name' | 'type' | 'validate'>;

export interface CommandLineOptions<F extends CommandLineFlag> {
  /** The flag named `name` (without dashes), if this command has it. */
  find(name: string): F | undefined;
  /** Ends error messages: `(see cornice --help)`. */
  help: string;
  /** Arguments that are not flags are collected (default: refused as unexpected). */
  positionals?: boolean;
  /** For `~` expansion. */
  ctx: ValueContext;
}

/**
 * The node's command-line rules, for any table of flags: `--flag=value`, `--flag value`; a bare
 * boolean `--flag` means true and never takes the next argument; a repeated flag: the last one
 * wins; a value is checked by the flag's type and validate, errors name the flag and the expected
 * value. Used by the node (parseConfig) and by `cornice network` (cli/runner/args.ts).
 */
export function parseCommandLine<F extends CommandLineFlag>(
  argv: readonly string[],
  o: CommandLineOptions<F>,
): { values: Map<F, unknown>; positionals: string[] } {
  const values = new Map<F, unknown>();
  const positionals: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--' || !arg.startsWith('-') || arg === '-') {
      if (o.positionals && arg !== '--') {
        positionals.push(arg);
        continue;
      }
      throw new ConfigError('UnexpectedArgument', `unexpected argument ${quote(arg)} ${o.help}`, { argument: arg });
    }
    if (!arg.startsWith('--')) throw unknownFlag(arg, o.help);
    const eq = arg.indexOf('=');
    const name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
    const flag = o.find(name);
    if (!flag) throw unknownFlag(arg, o.help);
    const where = `--${name}`;
    let raw: string;
    if (eq >= 0) {
      raw = arg.slice(eq + 1);
    } else if (flag.type.isBool) {
      raw = 'true';
    } else {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith('--')) raw = '';
      else {
        raw = next;
        i++;
      }
    }
    if (raw === '' && !(eq >= 0 && flag.type.allowsEmpty)) throw new ConfigError('MissingValue', `missing value for ${where}`, { flag: name });
    values.set(flag, fromString(flag, raw, where, 'cli', o.ctx));
  }
  return { values, positionals };
}

function parseArgs(argv: readonly string[], ctx: ValueContext): Values {
  const find = (name: string) => {
    const flag = findFlag(name);
    return flag?.sources.includes('cli') ? flag : undefined;
  };
  return parseCommandLine(argv, { find, help: seeHelp, ctx }).values;
}

function parseEnv(env: Record<string, string | undefined>, ctx: ValueContext): Values {
  const out: Values = new Map();
  for (const flag of flags) {
    if (!flag.sources.includes('env')) continue;
    const name = envName(flag);
    const raw = Object.hasOwn(env, name) ? env[name] : undefined;
    if (raw === undefined || raw === '') continue;
    out.set(flag, fromString(flag, raw, name, 'env', ctx));
  }
  return out;
}

function parseConfigFile(path: string, readFile: (path: string) => string, ctx: ValueContext): Values {
  let text: string;
  try {
    text = readFile(path);
  } catch (err) {
    throw new ConfigError('ConfigFileUnreadable', `cannot read config file ${path}: ${errorText(err)}`, { path });
  }
  const invalid = (problem: string, key?: string): ConfigError =>
    new ConfigError(key === undefined ? 'ConfigFileInvalid' : 'InvalidValue', `config file ${path}: ${problem}`, {
      path,
      ...(key === undefined ? {} : { key }),
    });
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw invalid(`invalid JSON: ${errorText(err)}`);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw invalid('expected a JSON object');
  const out: Values = new Map();
  for (const [key, value] of Object.entries(json)) {
    const flag = findFlag(key);
    if (!flag) throw new ConfigError('UnknownKey', `config file ${path}: unknown key ${quote(key)}`, { path, key });
    if (!flag.sources.includes('file')) {
      throw new ConfigError('UnknownKey', `config file ${path}: key ${quote(key)} cannot be set in a config file`, {
        path,
        key,
      });
    }
    const parsed = flag.type.fromJson(value, ctx);
    const problem = parsed === undefined ? flag.type.expected : flag.validate?.(parsed);
    if (problem !== undefined) throw invalid(`invalid value ${quote(value)} for ${quote(key)}: expected ${problem}`, key);
    out.set(flag, parsed);
  }
  return out;
}

/** Parses the command line (without the node and script paths), environment and config file. */
export function parseConfig(
  argv: readonly string[],
  env: Record<string, string | undefined>,
  opts: ParseOptions = {},
): ParseResult {
  if (wantsHelp(argv)) return { kind: 'help', text: helpText() };
  const ctx: ValueContext = { homedir: opts.homedir ?? osHomedir() };
  const cli = parseArgs(argv, ctx);
  if (cli.get(helpFlag) === true) return { kind: 'help', text: helpText() };
  if (cli.get(versionFlag) === true) return { kind: 'version' };
  const fromEnv = parseEnv(env, ctx);
  const configFile = (cli.get(configFileFlag) ?? fromEnv.get(configFileFlag)) as string | undefined;
  const fromFile: Values =
    configFile === undefined
      ? new Map()
      : parseConfigFile(configFile, opts.readFile ?? ((p) => readFileSync(p, 'utf8')), ctx);

  const config: Partial<Record<keyof NodeConfig, unknown>> = {};
  for (const flag of flags) {
    if (flag.key === undefined) continue;
    const source = [cli, fromEnv, fromFile].find((values) => values.has(flag));
    config[flag.key] = source
      ? source.get(flag)
      : flag.defaultValue({ homedir: ctx.homedir, config: config as Partial<NodeConfig> });
    if (flag.key === 'networkId') config.networkName = networkNameOf(config.networkId as number);
  }
  const problem =
    snowParamsProblem(snowParamsOf(config as NodeConfig)) ??
    timeoutConfigProblem(timeoutsOf(config as NodeConfig)) ??
    bootstrapProblem(config as NodeConfig);
  if (problem) throw new ConfigError('InvalidValue', problem);
  return { kind: 'run', config: config as NodeConfig };
}

function bootstrapProblem(c: NodeConfig): string | undefined {
  if (c.bootstrapIps.length === c.bootstrapIds.length) return undefined;
  return `--bootstrap-ips names ${c.bootstrapIps.length} node(s) but --bootstrap-ids ${c.bootstrapIds.length}: give one node ID per address, in the same order`;
}

/** The consensus parameters of a config. */
export function snowParamsOf(c: NodeConfig): SnowParams {
  return {
    k: c.snowSampleSize,
    alpha: c.snowQuorumSize,
    betaVirtuous: c.snowVirtuousCommitThreshold,
    betaRogue: c.snowRogueCommitThreshold,
    concurrentRepolls: c.snowConcurrentRepolls,
  };
}

/** The adaptive request deadline's settings of a config. */
export function timeoutsOf(c: NodeConfig): TimeoutConfig {
  return {
    initialMs: c.networkInitialTimeout,
    minimumMs: c.networkMinimumTimeout,
    maximumMs: c.networkMaximumTimeout,
    coefficient: c.networkTimeoutCoefficient,
    halflifeMs: c.networkTimeoutHalflife,
  };
}

/** The benchlist's settings of a config. */
export function benchlistOf(c: NodeConfig): BenchlistConfig {
  return { failThreshold: c.benchlistFailThreshold, minFailingDurationMs: c.benchlistMinFailingDuration, durationMs: c.benchlistDuration };
}

/** The --help text, generated from the flag table. */
export function helpText(): string {
  const lines = [
    'Usage: cornice [flags]',
    '',
    'Runs a Cornice node.',
    '',
    'Commands:',
    '  cornice network start|stop|status|restart   a local network of node processes (see cornice network --help)',
    '  cornice vm-id <name>                        the vmID (cb58) of a VM name',
    '  cornice genesis encode <file|->             the cb58 of a file\'s bytes (or stdin\'s), for "genesisData"',
    '',
    'Flags:',
  ];
  for (const flag of flags) {
    const dflt = flag.defaultText === undefined ? '' : ` (default ${flag.defaultText})`;
    lines.push(`  --${flag.name} ${flag.type.label}${dflt}`);
    const where: string[] = [];
    if (flag.sources.includes('env')) where.push(`env ${envName(flag)}`);
    if (!flag.sources.includes('file')) where.push(where.length ? 'not in the config file' : 'command line only');
    lines.push(`        ${flag.description} [${where.join('; ')}]`);
  }
  lines.push(
    '',
    'Values: --flag=value or --flag value; a bare boolean --flag means true, --flag=false turns it off.',
    'Environment: CORNICE_<FLAG IN UPPER SNAKE CASE>, e.g. CORNICE_HTTP_PORT=9700.',
    'Config file: a JSON object keyed by flag names without dashes, e.g. {"http-port": 9652}.',
    'Precedence: command line > environment > config file > defaults. Paths expand a leading ~.',
  );
  return lines.join('\n') + '\n';
}
