/**
 * The flag table: every setting the node reads from its command line, environment and config file.
 * `--help` is generated from it, and parse.ts knows nothing about individual flags, so a new setting
 * is one row here plus its field in NodeConfig (config.ts). A row's `key` is the NodeConfig field
 * (the flag name in camelCase); its value type parses and validates command-line/environment
 * strings and config-file JSON values; its default may depend on flags listed before it (`config`).
 *
 * One piece (past 600 lines) because the table is the one place a flag is declared and its order
 * is meaningful (defaults read the rows above them, `--help` lists them in it); the value types it
 * is written in sit above it, and the parsing that reads it is parse.ts.
 */
import { isIP } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LogLevel } from '@cornice/sdk';
import { DEFAULT_ALLOWED_HOSTS, hostProblem, originProblem } from '../api/access.js';
import { logLevels } from '../log/logger.js';
import { ipPortProblem, nodeIdProblem } from '../network/addresses.js';
import { BUILTIN_VM_PACKAGES } from '../vms/builtins.js';
import { isolationEntryProblem } from '../vms/isolation/plan.js';
import { networkNameOf, parseNetworkId, type DbType, type NodeConfig } from './config.js';

/** What value types need to know while parsing. */
export interface ValueContext {
  /** For `~` expansion and the default data dir. */
  readonly homedir: string;
}

/** How a flag's value is written, read and checked. */
export interface ValueType<T> {
  /** Shown after the flag name in --help, e.g. `int`, `bool`, `path`. */
  readonly label: string;
  /** Completes "expected ..." in error messages, e.g. `an integer from 0 to 65535`. */
  readonly expected: string;
  /** Booleans take no separate value on the command line (`--flag` means true). */
  readonly isBool?: boolean;
  /** `--flag=` (nothing after =) is a value, not a missing one (lists: the empty list). */
  readonly allowsEmpty?: boolean;
  /** Parses a command-line or environment string; undefined when invalid. */
  fromString(raw: string, ctx: ValueContext): T | undefined;
  /** Checks a config-file JSON value (strictly typed); undefined when invalid. */
  fromJson(value: unknown, ctx: ValueContext): T | undefined;
  /** Writes a value for --help. */
  show(value: T): string;
}

export type FlagSource = 'cli' | 'env' | 'file';

export interface DefaultContext extends ValueContext {
  /** The values of the flags listed before this one (after every source was applied). */
  readonly config: Readonly<Partial<NodeConfig>>;
}

export interface Flag<T = unknown> {
  /** Without dashes: `http-port`. Also the config-file key. */
  readonly name: string;
  /** The NodeConfig field it fills; undefined for --help and --version. */
  readonly key: keyof NodeConfig | undefined;
  readonly type: ValueType<T>;
  /** The value when no source sets the flag. */
  defaultValue(ctx: DefaultContext): T;
  /** How --help shows the default; undefined shows no default. */
  readonly defaultText: string | undefined;
  readonly description: string;
  /** Extra validation beyond the type: returns the "expected ..." text when the value is invalid. */
  validate?(value: T): string | undefined;
  /** Where the flag may be set. */
  readonly sources: readonly FlagSource[];
}

// ---------------------------------------------------------------------------------------------
// Value types

/** An integer in [min, max]; strings are plain decimal digits. */
export function intType(min: number, max: number): ValueType<number> {
  const check = (n: number): number | undefined => (Number.isSafeInteger(n) && n >= min && n <= max ? n : undefined);
  return {
    label: 'int',
    expected: `an integer from ${min} to ${max}`,
    fromString: (raw) => (/^-?[0-9]+$/.test(raw) ? check(Number(raw)) : undefined),
    fromJson: (v) => (typeof v === 'number' ? check(v) : undefined),
    show: (v) => String(v),
  };
}

/** A number (not necessarily whole) in [min, max]. */
export function numberType(min: number, max: number): ValueType<number> {
  const check = (n: number): number | undefined => (Number.isFinite(n) && n >= min && n <= max ? n : undefined);
  return {
    label: 'float',
    expected: `a number from ${min} to ${max}`,
    fromString: (raw) => (/^[0-9]+(\.[0-9]+)?$/.test(raw) ? check(Number(raw)) : undefined),
    fromJson: (v) => (typeof v === 'number' ? check(v) : undefined),
    show: (v) => String(v),
  };
}

const DURATION_UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** `1h2m3s`, `2m30s`, `500ms`, `2.5s` -> milliseconds; a bare number is milliseconds. */
export function parseDuration(raw: string): number | undefined {
  if (/^[0-9]+$/.test(raw)) return Number(raw);
  if (!/^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$/.test(raw)) return undefined;
  let ms = 0;
  for (const [, n, , unit] of raw.matchAll(/([0-9]+(\.[0-9]+)?)(ms|s|m|h)/g)) ms += Number(n) * (DURATION_UNITS[unit as string] as number);
  return Math.round(ms);
}

/** Shows milliseconds as avalanchego writes durations: `2m30s`, `10s`, `500ms`. */
export function showDuration(ms: number): string {
  if (ms === 0) return '0s';
  let out = '';
  let rest = ms;
  for (const [unit, size] of [['h', 3_600_000], ['m', 60_000], ['s', 1_000]] as const) {
    if (rest >= size) {
      out += `${Math.floor(rest / size)}${unit}`;
      rest %= size;
    }
  }
  return rest > 0 ? `${out}${rest}ms` : out;
}

/** A duration in [minMs, maxMs] ms: `500ms`, `2s`, `2m30s`, `1h`, or a bare number of ms (also a JSON number). */
export function durationType(minMs: number, maxMs: number): ValueType<number> {
  const check = (n: number | undefined): number | undefined => (n !== undefined && Number.isSafeInteger(n) && n >= minMs && n <= maxMs ? n : undefined);
  return {
    label: 'duration',
    expected: `a duration from ${showDuration(minMs)} to ${showDuration(maxMs)} (e.g. 500ms, 2s, 2m30s; a bare number is milliseconds)`,
    fromString: (raw) => check(parseDuration(raw)),
    fromJson: (v) => (typeof v === 'string' ? check(parseDuration(v)) : typeof v === 'number' ? check(v) : undefined),
    show: showDuration,
  };
}

export const boolType: ValueType<boolean> = {
  label: 'bool',
  expected: 'true or false',
  isBool: true,
  fromString(raw) {
    const s = raw.toLowerCase();
    if (s === 'true' || s === '1') return true;
    if (s === 'false' || s === '0') return false;
    return undefined;
  },
  fromJson: (v) => (typeof v === 'boolean' ? v : undefined),
  show: (v) => String(v),
};

/** A non-empty string. */
export const stringType: ValueType<string> = {
  label: 'string',
  expected: 'a non-empty string',
  fromString: (raw) => (raw.length > 0 ? raw : undefined),
  fromJson: (v) => (typeof v === 'string' && v.length > 0 ? v : undefined),
  show: (v) => v,
};

/** Replaces a leading `~` (alone or followed by a separator) with the home directory. */
export function expandHome(path: string, homedir: string): string {
  if (path === '~') return homedir;
  if (path.startsWith('~/') || path.startsWith('~\\')) return join(homedir, path.slice(2));
  return path;
}

/** A non-empty file-system path; a leading `~` is expanded. */
export const pathType: ValueType<string> = {
  label: 'path',
  expected: 'a non-empty path',
  fromString: (raw, ctx) => (raw.length > 0 ? expandHome(raw, ctx.homedir) : undefined),
  fromJson: (v, ctx) => (typeof v === 'string' && v.length > 0 ? expandHome(v, ctx.homedir) : undefined),
  show: (v) => v,
};

/** One of a fixed set of words (case-insensitive on input). */
export function enumType<T extends string>(values: readonly T[]): ValueType<T> {
  const find = (s: string): T | undefined => values.find((v) => v === s.toLowerCase());
  return {
    label: values.join('|'),
    expected: `one of ${values.join(', ')}`,
    fromString: find,
    fromJson: (v) => (typeof v === 'string' ? find(v) : undefined),
    show: (v) => v,
  };
}

/** A list of non-empty strings: comma-separated on the command line, a JSON array in a config file. */
export const listType: ValueType<string[]> = {
  label: 'list',
  allowsEmpty: true,
  expected: 'a comma-separated list (a JSON array of strings in a config file)',
  fromString: (raw) => {
    const items = raw.split(',').map((s) => s.trim());
    return raw.trim() === '' ? [] : items.every((s) => s.length > 0) ? items : undefined;
  },
  fromJson: (v) => (Array.isArray(v) && v.every((s) => typeof s === 'string' && s.length > 0) ? (v as string[]) : undefined),
  show: (v) => v.join(','),
};

/** A network: mainnet, cascade, denali, testnet, local, `network-<n>` or a bare uint32. */
export const networkType: ValueType<number> = {
  label: 'network',
  expected: 'mainnet, cascade, denali, testnet, local, network-<n> or an integer from 0 to 4294967295',
  fromString: (raw) => parseNetworkId(raw),
  fromJson: (v) =>
    typeof v === 'string'
      ? parseNetworkId(v)
      : typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 && v <= 0xffff_ffff
        ? v
        : undefined,
  show: (v) => networkNameOf(v),
};

// ---------------------------------------------------------------------------------------------
// Rows

interface RowSpec<T> {
  name: string;
  type: ValueType<T>;
  /** A value, or a function of the flags listed before this one. */
  default: T | ((ctx: DefaultContext) => T);
  /** Shown in --help (undefined: none); when absent, `type.show(default)` for a plain default. */
  defaultText?: string;
  description: string;
  validate?: (value: T) => string | undefined;
  sources?: readonly FlagSource[];
}

const everywhere: readonly FlagSource[] = ['cli', 'env', 'file'];

function row<T>(key: keyof NodeConfig | undefined, spec: RowSpec<T>): Flag<T> {
  const dflt = spec.default;
  const isDerived = (d: unknown): d is (ctx: DefaultContext) => T => typeof d === 'function';
  return {
    name: spec.name,
    key,
    type: spec.type,
    defaultValue: (ctx) => (isDerived(dflt) ? dflt(ctx) : dflt),
    defaultText:
      'defaultText' in spec
        ? spec.defaultText
        : isDerived(dflt) || dflt === undefined
          ? undefined
          : spec.type.show(dflt),
    description: spec.description,
    ...(spec.validate ? { validate: spec.validate } : {}),
    sources: spec.sources ?? everywhere,
  };
}

/** A row that fills NodeConfig[K]; the type checks that the value type matches the field. */
function field<K extends keyof NodeConfig>(key: K, spec: RowSpec<NodeConfig[K]>): Flag<NodeConfig[K]> {
  return row(key, spec);
}

/** The data dir as resolved so far (it is listed before every flag that derives from it). */
function dataDir(ctx: DefaultContext): string {
  return ctx.config.dataDir ?? join(ctx.homedir, '.cornice');
}

const dbTypes: readonly DbType[] = ['leveldb', 'memory'];
const DAY_MS = 86_400_000;
const uint32Max = 0xffff_ffff;

export const helpFlag: Flag<boolean> = row(undefined, {
  name: 'help',
  type: boolType,
  default: false,
  defaultText: undefined,
  description: 'Print this help and exit.',
  sources: ['cli'],
});

export const versionFlag: Flag<boolean> = row(undefined, {
  name: 'version',
  type: boolType,
  default: false,
  defaultText: undefined,
  description: 'Print the version and exit.',
  sources: ['cli'],
});

export const configFileFlag: Flag<string | undefined> = field('configFile', {
  name: 'config-file',
  type: pathType as ValueType<string | undefined>,
  default: undefined,
  description:
    'JSON file of flag values: an object whose keys are flag names without dashes, e.g. {"http-port": 9652}.',
  sources: ['cli', 'env'],
});

/**
 * Every flag, in --help order. A default may read only flags listed above it (data-dir comes
 * before the paths derived from it, network-id before db-dir).
 */
export const flags: readonly Flag[] = [
  helpFlag,
  versionFlag,
  configFileFlag,
  field('networkId', {
    name: 'network-id',
    type: networkType,
    default: 12345,
    description: 'Network to run: mainnet (1), cascade (2), denali or testnet (3), local (12345), network-<n> or a bare uint32.',
  }),
  field('httpHost', {
    name: 'http-host',
    type: stringType,
    default: '127.0.0.1',
    description: 'Address the HTTP API listens on.',
  }),
  field('httpPort', {
    name: 'http-port',
    type: intType(0, 65535),
    default: 9650,
    description: 'Port of the HTTP API; 0 picks an ephemeral port.',
  }),
  field('httpMaxBodyBytes', {
    name: 'http-max-body-bytes',
    type: intType(1, uint32Max),
    default: 1_048_576,
    description: 'Largest accepted HTTP request body, in bytes.',
  }),
  field('httpMaxBatchSize', {
    name: 'http-max-batch-size',
    type: intType(1, uint32Max),
    default: 100,
    description: 'Most requests in one JSON-RPC batch.',
  }),
  field('httpAllowedOrigins', {
    name: 'http-allowed-origins',
    type: listType,
    default: [],
    defaultText: 'none',
    description:
      'Browser origins (e.g. https://app.example) whose pages may call the API: they get CORS headers; * allows any. Others get none.',
    validate: (origins) => origins.map(originProblem).find((p) => p !== undefined),
  }),
  field('httpAllowedHosts', {
    name: 'http-allowed-hosts',
    type: listType,
    default: [...DEFAULT_ALLOWED_HOSTS],
    description:
      'Host names the API answers to (DNS-rebinding protection); other names get 403. IP addresses always pass; * turns the check off.',
    validate: (hosts) => hosts.map(hostProblem).find((p) => p !== undefined),
  }),
  field('httpMaxConnections', {
    name: 'http-max-connections',
    type: intType(1, 1_000_000),
    default: 1024,
    description:
      'Most open HTTP and WebSocket connections; a new one beyond it closes the connection idle the longest (none idle: the new one is closed). Keep it well below ulimit -n.',
  }),
  field('httpMaxJsonDepth', {
    name: 'http-max-json-depth',
    type: intType(2, 10_000),
    default: 64,
    description: 'Deepest nesting of arrays and objects in a JSON-RPC body; deeper bodies are refused (-32700) before they are parsed.',
  }),
  field('httpWriteTimeout', {
    name: 'http-write-timeout',
    type: durationType(100, DAY_MS),
    default: 10_000,
    description: 'A connection whose pending reply bytes make no progress (the client stopped reading) for this long is closed.',
  }),
  field('httpMaxBufferedBytes', {
    name: 'http-max-buffered-bytes',
    type: intType(1024 * 1024, 2 ** 40),
    default: 64 * 1024 * 1024,
    description: 'Reply bytes waiting for clients to read, over every HTTP and WebSocket connection; beyond it the connections that read slowest are closed.',
  }),
  field('httpWsPingInterval', {
    name: 'http-ws-ping-interval',
    type: durationType(100, DAY_MS),
    default: 30_000,
    description: 'WebSockets are pinged this often; one that has not answered the previous ping is closed.',
  }),
  field('httpWsIdleTimeout', {
    name: 'http-ws-idle-timeout',
    type: durationType(1_000, DAY_MS),
    default: 600_000,
    description: 'A WebSocket that neither sends nor receives a message for this long is closed (1001).',
  }),
  field('dataDir', {
    name: 'data-dir',
    type: pathType,
    default: (ctx) => join(ctx.homedir, '.cornice'),
    defaultText: '~/.cornice',
    description: 'Directory of the node\'s data; the default of the database, staking and profile paths.',
  }),
  field('dbDir', {
    name: 'db-dir',
    type: pathType,
    default: (ctx) => join(dataDir(ctx), 'db', networkNameOf(ctx.config.networkId ?? 12345)),
    defaultText: '<data-dir>/db/<network name>',
    description: 'Directory of the database.',
  }),
  field('dbType', {
    name: 'db-type',
    type: enumType(dbTypes),
    default: 'leveldb',
    description: 'Database backend; memory keeps nothing after exit.',
  }),
  field('logLevel', {
    name: 'log-level',
    type: enumType<LogLevel>(logLevels),
    default: 'info',
    description: 'Lowest level of log lines written.',
  }),
  field('apiAdminEnabled', {
    name: 'api-admin-enabled',
    type: boolType,
    default: true,
    description: 'Serve the admin API (/ext/admin).',
  }),
  field('apiAdminMaxAliases', {
    name: 'api-admin-max-aliases',
    type: intType(0, 100_000),
    default: 64,
    description: 'Most aliases admin.alias may add (and, apart, admin.aliasChain); remove one with admin.removeAlias / admin.removeChainAlias.',
  }),
  field('apiKeystoreEnabled', {
    name: 'api-keystore-enabled',
    type: boolType,
    default: true,
    description: 'Serve the keystore API (/ext/keystore).',
  }),
  field('apiKeystoreListUsersEnabled', {
    name: 'api-keystore-list-users-enabled',
    type: boolType,
    default: false,
    description: 'Let keystore.listUsers name the users (off: usernames are not public, it answers an error).',
  }),
  field('apiIpcsEnabled', {
    name: 'api-ipcs-enabled',
    type: boolType,
    default: false,
    description: 'Serve the IPC API (/ext/ipcs).',
  }),
  field('apiHealthEnabled', {
    name: 'api-health-enabled',
    type: boolType,
    default: true,
    description: 'Serve the health API (/ext/health).',
  }),
  field('apiMetricsEnabled', {
    name: 'api-metrics-enabled',
    type: boolType,
    default: true,
    description: 'Serve Prometheus metrics (/ext/metrics).',
  }),
  field('evmDebugApi', {
    name: 'evm-debug-api',
    type: boolType,
    default: false,
    description:
      'Serve the debug API on every EVM chain (C-Chain and subnet-EVM chains: debug_trace*, debug_getRaw*, trace_transaction, trace_block), as on a dev node; npm start and cornice network start set it. Off: one chain turns it on with its config.json "eth-apis" listing "debug-tracer". Every VM sees it as ChainContext.debugApis.',
  }),
  field('stakingTlsCertFile', {
    name: 'staking-tls-cert-file',
    type: pathType,
    default: (ctx) => join(dataDir(ctx), 'staking', 'staker.crt'),
    defaultText: '<data-dir>/staking/staker.crt',
    description: 'Staking TLS certificate (PEM); it determines the node ID. Generated with the key when both are missing.',
  }),
  field('stakingTlsKeyFile', {
    name: 'staking-tls-key-file',
    type: pathType,
    default: (ctx) => join(dataDir(ctx), 'staking', 'staker.key'),
    defaultText: '<data-dir>/staking/staker.key',
    description: 'Private key of the staking TLS certificate (PKCS#8 PEM).',
  }),
  field('stakingHost', {
    name: 'staking-host',
    type: stringType,
    default: '',
    defaultText: 'every interface',
    description: 'Address the staking (peer-to-peer) server listens on.',
  }),
  field('stakingPort', {
    name: 'staking-port',
    type: intType(0, 65535),
    default: 9651,
    description: 'Port of the staking (peer-to-peer) server; 0 picks an ephemeral port.',
  }),
  field('publicIp', {
    name: 'public-ip',
    type: stringType as ValueType<string | undefined>,
    default: undefined,
    defaultText: 'the address peers see this node connect from',
    description: 'IP address other nodes should dial to reach this node (its staking port).',
    validate: (ip) => (ip === undefined || isIP(ip) ? undefined : `an IPv4 or IPv6 address (got ${JSON.stringify(ip.slice(0, 80))})`),
  }),
  field('bootstrapIps', {
    name: 'bootstrap-ips',
    type: listType,
    default: [],
    defaultText: 'none',
    description: 'Staking addresses (ip:port) of the nodes to join the network through; pair each with --bootstrap-ids.',
    validate: (ips) => ips.map(ipPortProblem).find((p) => p !== undefined),
  }),
  field('bootstrapIds', {
    name: 'bootstrap-ids',
    type: listType,
    default: [],
    defaultText: 'none',
    description: 'Node IDs of the --bootstrap-ips nodes, in the same order: they are the beacons a chain bootstraps from.',
    validate: (ids) => ids.map(nodeIdProblem).find((p) => p !== undefined),
  }),
  field('networkInboundConnectionBurst', {
    name: 'network-inbound-connection-burst',
    type: intType(1, 1_000_000),
    default: 16,
    description: 'Inbound connections one IP (IPv6: one /64) may have open before their handshake finishes; past it, one more per --network-inbound-connection-cooldown. A finished handshake gives its place back.',
  }),
  field('networkInboundConnectionCooldown', {
    name: 'network-inbound-connection-cooldown',
    type: durationType(0, DAY_MS),
    default: 1_000,
    description: 'After an IP used its burst of unauthenticated connections, how long until it may open one more.',
  }),
  field('networkMaxHandshakingConnections', {
    name: 'network-max-handshaking-connections',
    type: intType(1, 1_000_000),
    default: 64,
    description: 'Inbound connections in their handshake (TLS and Version) at once; a new one past it closes the oldest.',
  }),
  field('networkHandshakeTimeout', {
    name: 'network-handshake-timeout',
    type: durationType(1, DAY_MS),
    default: 10_000,
    description: 'Time a new peer connection has for its TLS handshake and its Version together.',
  }),
  field('networkAtLargeBusyShare', {
    name: 'network-at-large-busy-share',
    type: numberType(0, 1),
    default: 0.25,
    description: "Share of time one non-validator's requests may keep this node busy (all non-validators together: twice that, at most 1); past it they are dropped. Validators are not bounded by time.",
  }),
  field('networkAtLargeMaxRequestsInProgress', {
    name: 'network-at-large-max-requests-in-progress',
    type: intType(1, 1_000_000),
    default: 8,
    description: "A non-validator's requests handled at once (all non-validators together: four times that); more are dropped.",
  }),
  field('networkAtLargeReplyBytesPerSecond', {
    name: 'network-at-large-reply-bytes-per-second',
    type: intType(1, 2 ** 40),
    default: 1024 * 1024,
    description: "Bytes per second this node sends in reply to one non-validator's requests (bursts of four seconds; all non-validators together: twice that); past it its requests are dropped.",
  }),
  field('networkValidatorReplyBytesPerSecond', {
    name: 'network-validator-reply-bytes-per-second',
    type: intType(1, 2 ** 40),
    default: 32 * 1024 * 1024,
    description: "Bytes per second this node sends in reply to one validator's requests (bursts of two seconds); past it its requests are dropped.",
  }),
  field('profileDir', {
    name: 'profile-dir',
    type: pathType,
    default: (ctx) => join(dataDir(ctx), 'profiles'),
    defaultText: '<data-dir>/profiles',
    description: 'Directory where profiles are written.',
  }),
  field('profileMaxFiles', {
    name: 'profile-max-files',
    type: intType(1, 10_000),
    default: 5,
    description: 'Most profile files kept in the profile directory; writing another deletes the oldest one.',
  }),
  field('profileHeapSnapshotEnabled', {
    name: 'profile-heap-snapshot-enabled',
    type: boolType,
    default: false,
    description:
      'Allow admin.memoryProfile {"kind":"snapshot"}: a full heap snapshot stops the node for seconds (tens on a large heap) and needs about the heap\'s size again in memory. Off: only sampling heap profiles.',
  }),
  field('snowSampleSize', {
    name: 'snow-sample-size',
    type: intType(1, 10_000),
    default: 20,
    description: 'k: validators sampled (stake-weighted, with replacement) per consensus poll.',
  }),
  field('snowQuorumSize', {
    name: 'snow-quorum-size',
    type: intType(1, 10_000),
    default: 15,
    description: 'alpha: votes a poll needs for a block to count as preferred; k/2 < alpha <= k.',
  }),
  field('snowVirtuousCommitThreshold', {
    name: 'snow-virtuous-commit-threshold',
    type: intType(1, 10_000),
    default: 20,
    description: 'beta1: consecutive successful polls that accept a block without conflicts.',
  }),
  field('snowRogueCommitThreshold', {
    name: 'snow-rogue-commit-threshold',
    type: intType(1, 10_000),
    default: 30,
    description: 'beta2: consecutive successful polls that accept a block with conflicts; >= beta1.',
  }),
  field('snowConcurrentRepolls', {
    name: 'snow-concurrent-repolls',
    type: intType(1, 10_000),
    default: 4,
    description: 'Polls kept in flight while blocks are processing; <= beta2.',
  }),
  field('snowMaxTimeProcessing', {
    name: 'snow-max-time-processing',
    type: durationType(1, DAY_MS),
    default: 120_000,
    description: 'A chain whose oldest undecided block is older than this reports unhealthy.',
  }),
  field('sybilProtectionEnabled', {
    name: 'sybil-protection-enabled',
    type: boolType,
    default: true,
    description: 'Sample validators by stake; false samples the connected nodes equally (a one-node dev network).',
  }),
  field('networkInitialTimeout', {
    name: 'network-initial-timeout',
    type: durationType(1, DAY_MS),
    default: 5_000,
    description: 'Deadline of a request to a validator before any latency was observed.',
  }),
  field('networkMinimumTimeout', {
    name: 'network-minimum-timeout',
    type: durationType(1, DAY_MS),
    default: 2_000,
    description: 'Floor of the adaptive request deadline.',
  }),
  field('networkMaximumTimeout', {
    name: 'network-maximum-timeout',
    type: durationType(1, DAY_MS),
    default: 10_000,
    description: 'Ceiling of the adaptive request deadline; also bounds a consensus poll.',
  }),
  field('networkTimeoutCoefficient', {
    name: 'network-timeout-coefficient',
    type: numberType(1, 100),
    default: 2,
    description: 'The adaptive request deadline is this times the average response latency.',
  }),
  field('networkTimeoutHalflife', {
    name: 'network-timeout-halflife',
    type: durationType(1, 7 * DAY_MS),
    default: 300_000,
    description: 'Half-life of the latency average behind the adaptive request deadline.',
  }),
  field('benchlistFailThreshold', {
    name: 'benchlist-fail-threshold',
    type: intType(1, 1_000_000),
    default: 10,
    description: 'Consecutive failed requests after which a validator is benched (its requests then fail at once).',
  }),
  field('benchlistMinFailingDuration', {
    name: 'benchlist-min-failing-duration',
    type: durationType(0, 7 * DAY_MS),
    default: 150_000,
    description: 'How long a validator must have been failing before it is benched.',
  }),
  field('benchlistDuration', {
    name: 'benchlist-duration',
    type: durationType(0, 7 * DAY_MS),
    default: 900_000,
    description: 'How long a benched validator stays benched.',
  }),
  field('vmCallTimeout', {
    name: 'vm-call-timeout',
    type: durationType(1, DAY_MS),
    default: 30_000,
    description: 'A VM call (build, parse, verify, accept, ...) that has not settled after this halts its chain.',
  }),
  field('vmIsolation', {
    name: 'vm-isolation',
    type: listType,
    default: [],
    defaultText: 'none (every VM in the node process)',
    description:
      'VMs whose chains each run in a worker thread: <vmID or alias>=worker entries, or all. A call past --vm-call-timeout terminates the worker and halts only that chain.',
    validate: (entries) => entries.map(isolationEntryProblem).find((p) => p !== undefined),
  }),
  field('shutdownTimeout', {
    name: 'shutdown-timeout',
    type: durationType(1, DAY_MS),
    default: 10_000,
    description: 'How long a stop (SIGINT/SIGTERM) may take before the process exits anyway.',
  }),
  field('vms', {
    name: 'vms',
    type: listType as ValueType<string[] | undefined>,
    default: undefined,
    defaultText: `installed built-ins: ${BUILTIN_VM_PACKAGES.join(',')}`,
    description: 'VM plugins to load: npm package names or paths, resolved from the working directory; a named one that is missing fails start-up.',
  }),
  field('pluginDir', {
    name: 'plugin-dir',
    type: pathType,
    default: (ctx) => join(dataDir(ctx), 'plugins'),
    defaultText: '<data-dir>/plugins',
    description: 'Directory of VM plugins, each named by its vmID or an alias; ignored when missing.',
  }),
  field('chainConfigDir', {
    name: 'chain-config-dir',
    type: pathType,
    default: (ctx) => join(dataDir(ctx), 'configs', 'chains'),
    defaultText: '<data-dir>/configs/chains',
    description: "Per-chain VM files: <dir>/<chain ID or alias>/config.json and upgrade.json (e.g. a subnet-EVM's upgrades); ignored when missing.",
  }),
  field('vmAliasesFile', {
    name: 'vm-aliases-file',
    type: pathType as ValueType<string | undefined>,
    default: undefined,
    description: 'JSON file {"<vmID>": ["alias", ...]} naming VMs for --plugin-dir and chain creation.',
  }),
  field('genesisFile', {
    name: 'genesis-file',
    type: pathType as ValueType<string | undefined>,
    default: undefined,
    description: 'JSON genesis {"chains": [{"name", "vm", "genesisData" (cb58) or "genesis" (JSON, through the VM\'s buildGenesis if it has one, else UTF-8 JSON), "aliases"}], "validators"?, "accounts"?} replacing the built-in one.',
  }),
  field('ipcsPath', {
    name: 'ipcs-path',
    type: pathType,
    default: () => tmpdir(),
    defaultText: 'the OS temp dir',
    description: 'Directory of the IPC sockets of published chains.',
  }),
];

/** `http-port` -> `CORNICE_HTTP_PORT`. */
export function envName(flag: Flag): string {
  return 'CORNICE_' + flag.name.toUpperCase().replace(/-/g, '_');
}

/** The flag named `name` (without dashes), if any. */
export function findFlag(name: string): Flag | undefined {
  return flags.find((f) => f.name === name);
}
