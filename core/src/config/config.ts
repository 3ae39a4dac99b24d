/**
 * The node's typed configuration, the result of flags + environment + config file + defaults
 * (see flags.ts for the table, parse.ts for the rules). Every field is named after its flag in
 * camelCase (`--http-port` -> `httpPort`); `--network-id` fills both networkId and networkName.
 */
import { NodeError, type LogLevel } from '@cornice/sdk';

export type DbType = 'leveldb' | 'memory';

export interface NodeConfig {
  /** The JSON config file that was read, if any (after `~` expansion). */
  configFile: string | undefined;
  /** uint32 network ID (local = 12345). */
  networkId: number;
  /** `mainnet`, `cascade`, `denali`, `local` or `network-<id>`; names the DB directory. */
  networkName: string;
  httpHost: string;
  /** 0 picks an ephemeral port. */
  httpPort: number;
  httpMaxBodyBytes: number;
  httpMaxBatchSize: number;
  /** Origins that get CORS headers (`*`: any); empty: none. */
  httpAllowedOrigins: string[];
  /** Host names served (`*`: any); IP literals always are. */
  httpAllowedHosts: string[];
  /** Open HTTP (and WebSocket) connections; a new one beyond it evicts the longest idle one. */
  httpMaxConnections: number;
  /** Deepest JSON nesting a JSON-RPC body may have. */
  httpMaxJsonDepth: number;
  /** ms without progress on a connection's pending reply bytes before it is closed. */
  httpWriteTimeout: number;
  /** Reply bytes pending over all connections; beyond it the slowest readers are closed. */
  httpMaxBufferedBytes: number;
  /** ms between WebSocket pings; ms without a message either way before a WebSocket is closed. */
  httpWsPingInterval: number;
  httpWsIdleTimeout: number;
  dataDir: string;
  dbDir: string;
  dbType: DbType;
  logLevel: LogLevel;
  apiAdminEnabled: boolean;
  /** Most aliases admin.alias (and, apart, admin.aliasChain) may add. */
  apiAdminMaxAliases: number;
  apiKeystoreEnabled: boolean;
  /** Whether keystore.listUsers names the users. */
  apiKeystoreListUsersEnabled: boolean;
  apiIpcsEnabled: boolean;
  apiHealthEnabled: boolean;
  apiMetricsEnabled: boolean;
  /** Developer/debug APIs of every chain's VM (the EVM's debug_ and trace_): each VM's ChainContext.debugApis. */
  evmDebugApi: boolean;
  stakingTlsCertFile: string;
  stakingTlsKeyFile: string;
  /** The staking (peer-to-peer) server: listen address ('' = every interface) and port (0 = ephemeral). */
  stakingHost: string;
  stakingPort: number;
  /** What other nodes should dial (default: the address they see). */
  publicIp: string | undefined;
  /** Bootstrap nodes: staking addresses and their node IDs, pairwise. */
  bootstrapIps: string[];
  bootstrapIds: string[];
  /**
   * Inbound connections before their handshake (network/inbound.ts): per IP a burst, then one per
   * cooldown (ms); at most this many in their handshake at once; TLS and Version within the timeout (ms).
   */
  networkInboundConnectionBurst: number;
  networkInboundConnectionCooldown: number;
  networkMaxHandshakingConnections: number;
  networkHandshakeTimeout: number;
  /**
   * What each peer's requests may cost (network/request-budget.ts): a non-validator's share of busy
   * time, its requests in progress, its reply bytes per second; a validator's reply bytes per second.
   */
  networkAtLargeBusyShare: number;
  networkAtLargeMaxRequestsInProgress: number;
  networkAtLargeReplyBytesPerSecond: number;
  networkValidatorReplyBytesPerSecond: number;
  profileDir: string;
  /** Profile files kept in profileDir; the oldest is deleted beyond it. */
  profileMaxFiles: number;
  /** Whether admin.memoryProfile may take full heap snapshots. */
  profileHeapSnapshotEnabled: boolean;
  /** Consensus parameters (validated together: k/2 < alpha <= k, 0 < betaVirtuous <= betaRogue…). */
  snowSampleSize: number;
  snowQuorumSize: number;
  snowVirtuousCommitThreshold: number;
  snowRogueCommitThreshold: number;
  snowConcurrentRepolls: number;
  /** ms: a chain whose oldest processing block is older is unhealthy. */
  snowMaxTimeProcessing: number;
  /** Off: consensus samples the connected nodes with equal weight (a one-node dev network). */
  sybilProtectionEnabled: boolean;
  /** Adaptive request deadline (ms): initial, floor, ceiling; coefficient × average latency; halflife of the average. */
  networkInitialTimeout: number;
  networkMinimumTimeout: number;
  networkMaximumTimeout: number;
  networkTimeoutCoefficient: number;
  networkTimeoutHalflife: number;
  /** Benching of failing validators: consecutive failures, over at least this long (ms), benched this long (ms). */
  benchlistFailThreshold: number;
  benchlistMinFailingDuration: number;
  benchlistDuration: number;
  /** ms before a VM call that has not settled halts its chain. */
  vmCallTimeout: number;
  /** `--vm-isolation` entries: `<vmID or alias>=worker` or `all`; empty: every VM in process. */
  vmIsolation: string[];
  /** ms a stop may take before the process exits anyway. */
  shutdownTimeout: number;
  /**
   * VM plugins to load: npm package names or paths (resolved from the working directory). Undefined
   * (no --vms): the built-in VM packages that are installed.
   */
  vms: string[] | undefined;
  /** Directory of VM plugins named by vmID or alias; ignored when missing. */
  pluginDir: string;
  /** Per-chain VM files: `<dir>/<chain ID or alias>/config.json`, `upgrade.json`. */
  chainConfigDir: string;
  /** JSON `{ "<vmID>": ["alias", …] }`, if any. */
  vmAliasesFile: string | undefined;
  /** JSON genesis replacing the built-in chains and validators, if any. */
  genesisFile: string | undefined;
  /** Where IPC sockets are created. */
  ipcsPath: string;
}

export type ConfigErrorCode =
  | 'UnknownFlag'
  | 'MissingValue'
  | 'InvalidValue'
  | 'UnexpectedArgument'
  | 'ConfigFileUnreadable'
  | 'ConfigFileInvalid'
  | 'UnknownKey'
  | 'NoGenesis';

/** A bad command line, environment variable or config file; the message says which and why. */
export class ConfigError extends NodeError<ConfigErrorCode> {}

/** Well-known network names and their IDs, as the reference node numbers them. */
export const networkIds: Readonly<Record<string, number>> = {
  mainnet: 1,
  cascade: 2,
  denali: 3,
  testnet: 3,
  local: 12345,
};

/** The canonical name of each well-known network ID (3 is `denali`; `testnet` is an alias). */
const networkNames: ReadonlyMap<number, string> = new Map([
  [1, 'mainnet'],
  [2, 'cascade'],
  [3, 'denali'],
  [12345, 'local'],
]);

/** `local` for 12345, `network-99` for 99. */
export function networkNameOf(id: number): string {
  return networkNames.get(id) ?? `network-${id}`;
}

/** For messages: `network mainnet (1)`, `network 99`. */
export function networkLabel(id: number): string {
  const name = networkNameOf(id);
  return name === `network-${id}` ? `network ${id}` : `network ${name} (${id})`;
}

const maxUint32 = 0xffff_ffff;

/**
 * Parses a network: a well-known name (case-insensitive), `network-<n>` or a bare uint32.
 * Returns undefined when it is none of these.
 */
export function parseNetworkId(text: string): number | undefined {
  const lower = text.toLowerCase();
  const known = Object.hasOwn(networkIds, lower) ? networkIds[lower] : undefined;
  if (known !== undefined) return known;
  const digits = lower.startsWith('network-') ? lower.slice('network-'.length) : lower;
  if (!/^[0-9]+$/.test(digits)) return undefined;
  const n = Number(digits);
  return Number.isSafeInteger(n) && n <= maxUint32 ? n : undefined;
}
