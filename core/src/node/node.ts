/**
 * The composition root: registers the node's parts in a tsyringe container (container.ts), starts
 * them in order and stops them in reverse. The platform chain is created first; it reports the
 * chains of its state, which the chain creator runs (chains/creator.ts). Classes elsewhere take
 * their options and dependencies as arguments and know nothing of how they are wired.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, sep } from 'node:path';
import type { AddressInfo } from 'node:net';
import { PrefixedStore, type KeyValueStore, type Logger, type VMFactory } from '@cornice/sdk';
import { adminService } from '../api/admin/service.js';
import { healthGet, healthService } from '../health/service.js';
import { keystoreService } from '../api/keystore/service.js';
import type { Registry } from '../metrics/metrics.js';
import { metricsHandler } from '../metrics/route.js';
import type { RouteTable } from '../api/routes.js';
import type { ChainAliases } from '../chains/aliases.js';
import { creatableVm, type ChainCreator } from '../chains/creator.js';
import type { ChainManager } from '../chains/manager.js';
import { containStreamErrors } from '../chains/faults.js';
import { ConfigError, networkLabel, networkNameOf, type NodeConfig } from '../config/config.js';
import { checkGenesis, checkNetwork } from '../db/meta.js';
import { openStore } from '../db/open.js';
import { parseGenesisFile } from '../genesis/file.js';
import { genesisHash, networkGenesis, type NetworkGenesis } from '../genesis/genesis.js';
import { IpcPublisher } from '../ipc/publisher.js';
import { ipcsService } from '../ipc/service.js';
import type { Keystore } from '../keystore/keystore.js';
import type { KdfParams } from '../keystore/crypto.js';
import { encodeGenesis } from '../platform/genesis.js';
import { DEFAULT_SUBNET_ID, PLATFORM_CHAIN_ID } from '../platform/model.js';
import { loadOrCreateStakingCert, type StakingCert } from '../staking/cert.js';
import { startNetwork, validatorCheck } from './network.js';
import type { PeerSummary } from '../network/types.js';
import { loopbackNetwork } from '../network/loopback.js';
import { BUILTIN_VM_PACKAGES } from '../vms/builtins.js';
import { loadVMs } from '../vms/loader.js';
import type { ValidatorSets } from '../validators/validators.js';
import type { VMRegistry } from '../vms/registry.js';
import { TOKENS, get, nodeContainer, provide, registerNodeParts, vmToken, type DependencyContainer } from './container.js';
import { warnOpenDirs } from './private-dirs.js';
import { nodeVersion } from './version.js';

export interface RunningNode {
  readonly nodeId: string;
  readonly config: NodeConfig;
  /** Where the HTTP API listens, e.g. `http://127.0.0.1:9650`. */
  readonly url: string;
  readonly address: AddressInfo;
  readonly routes: RouteTable;
  readonly chains: ChainAliases;
  readonly chainManager: ChainManager;
  readonly vms: VMRegistry;
  /** Runs the chains the platform chain reports. */
  readonly chainCreator: ChainCreator;
  /** Each subnet's current validators, as the platform chain reports them (what engines sample). */
  readonly validators: ValidatorSets;
  readonly keystore: Keystore;
  readonly metrics: Registry;
  /** Stops every part in reverse start order. Safe to call twice. */
  stop(): Promise<void>;
}

export interface NodeDeps {
  log: Logger;
  /** Scrypt cost for keystore passwords (tests lower it). */
  keystoreKdf?: KdfParams;
  /** Injected clock, ms (a shorthand for overriding TOKENS.clock). */
  now?: () => number;
  /** VMs available without loading (the test kit passes the VM under test). */
  builtinVMs?: VMFactory[];
  /** Replaces the network's genesis (the test kit's one-chain genesis). */
  genesis?: (vms: VMRegistry) => NetworkGenesis;
  /** Use this store instead of opening one (the test kit's restart); it is not closed on stop. */
  db?: KeyValueStore;
  /**
   * Replaces parts of the node before it starts: register another instance under a TOKENS entry
   * (clock, db, network, …). A part registered here is used instead of the one the node would make;
   * the node does not close a store given this way.
   */
  overrides?: (c: DependencyContainer) => void;
}

/** The platform chain's name, aliases and endpoint alias (its API at /ext/P and /ext/bc/P). */
const PLATFORM_CHAIN = { name: 'P-Chain', aliases: ['P', 'platform'], endpointAliases: ['P'] };

/** What startNode's steps share: the container, what to stop (in reverse), and whether a part was given. */
interface Startup {
  readonly config: NodeConfig;
  readonly deps: NodeDeps;
  readonly log: Logger;
  readonly c: DependencyContainer;
  readonly stops: Array<() => Promise<void>>;
  /** Whether the part is registered already (given by the caller, or made by an earlier step). */
  readonly given: (token: string | symbol) => boolean;
}

/** Starts the node's parts in named steps (in this order) and returns them; a failing step stops what was started. */
export async function startNode(config: NodeConfig, deps: NodeDeps): Promise<RunningNode> {
  const log = deps.log;
  const stops: Array<() => Promise<void>> = [];
  const stopAll = async () => {
    for (const stop of stops.reverse().splice(0)) {
      try {
        await stop();
      } catch (e) {
        log.error('error while stopping', { error: e });
      }
    }
  };
  const c = containerFor(config, deps);
  const s: Startup = { config, deps, log, c, stops, given: (t) => c.isRegistered(t) };
  try {
    const builtinGenesis = requireGenesis(s);
    await warnAboutOpenDirs(s);
    const stakingCert = await provideNodeId(s);
    const nodeId = get(c, TOKENS.nodeId).toString();
    const vms = await provideVMs(s);
    const genesis = await provideGenesis(s, vms, builtinGenesis);
    await openAndCheckDatabase(s, genesis);
    const platform = registerPlatformVM(s, vms, genesis);
    const api = resolveApiParts(s);
    mountStaticServices(api, vms);
    const peers = await startPeerNetwork(s, stakingCert);
    containStreamErrors(log.child({ module: 'chains' }));
    const chainManager = get(c, TOKENS.chainManager);
    mountNodeApis(s, api, nodeId, peers, chainManager);
    const chainsStarted = registerChainsHealth(s, chainManager);
    const http = get(c, TOKENS.http);
    const address = await http.listen();
    stops.push(() => http.close());
    const creator = await startChains(s, chainManager, platform.vmId, genesis);
    chainsStarted();
    // Registered again so that at a stop the API closes first, before the chains (close is idempotent).
    stops.push(() => http.close());
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    const url = `http://${host}:${address.port}`;
    log.info('node started', {
      nodeId,
      networkId: config.networkId,
      http: url,
      dbType: config.dbType,
      dbDir: config.dbType === 'leveldb' ? config.dbDir : undefined,
      chains: chainManager.chains.map((chain) => chain.id.toString()),
    });

    let stopping: Promise<void> | undefined;
    return {
      nodeId,
      config,
      url,
      address,
      routes: api.routes,
      chains: api.chains,
      chainManager,
      vms,
      chainCreator: creator,
      validators: get(c, TOKENS.validators),
      keystore: api.keystore,
      metrics: api.registry,
      stop: () => (stopping ??= stopAll().then(() => log.info('node stopped'))),
    };
  } catch (e) {
    await stopAll();
    throw e;
  }
}

/** The node's container with its parts registered, then what the caller gives in their place. */
function containerFor(config: NodeConfig, deps: NodeDeps): DependencyContainer {
  const c = nodeContainer();
  provide(c, TOKENS.config, config);
  provide(c, TOKENS.log, deps.log);
  registerNodeParts(c);
  if (deps.keystoreKdf) provide(c, TOKENS.keystoreKdf, { kdf: deps.keystoreKdf });
  if (deps.now) provide(c, TOKENS.clock, { now: deps.now });
  if (deps.db) provide(c, TOKENS.db, deps.db);
  deps.overrides?.(c);
  return c;
}

/** The network's built-in genesis, if any; throws when there is none and none is given. */
function requireGenesis(s: Startup): NetworkGenesis | undefined {
  const { config } = s;
  const builtinGenesis = networkGenesis(config.networkId);
  if (!s.deps.genesis && !config.genesisFile && !builtinGenesis && !s.given(TOKENS.genesis)) {
    throw new ConfigError('NoGenesis', `${networkLabel(config.networkId)} has no built-in genesis: give --genesis-file`);
  }
  return builtinGenesis;
}

/** Warns about private dirs others can read. (They are created 0700 where they are made: db/open.ts, staking/cert.ts, the profiler.) */
async function warnAboutOpenDirs(s: Startup): Promise<void> {
  const { config } = s;
  const stakingDir = dirname(config.stakingTlsKeyFile);
  await warnOpenDirs([
    config.dataDir,
    ...(config.dbType === 'leveldb' && !s.given(TOKENS.db) ? [config.dbDir] : []),
    ...(stakingDir.startsWith(config.dataDir + sep) ? [stakingDir] : []), // not the repo's fixtures
    config.profileDir,
  ], s.log);
}

/** The node ID from the staking certificate (loaded or created), unless given; returns the certificate when loaded. */
async function provideNodeId(s: Startup): Promise<StakingCert | undefined> {
  if (s.given(TOKENS.nodeId)) return undefined;
  const cert = await loadOrCreateStakingCert({ certFile: s.config.stakingTlsCertFile, keyFile: s.config.stakingTlsKeyFile });
  provide(s.c, TOKENS.nodeId, cert.nodeId);
  return cert;
}

/** The VM registry: built-ins, the configured packages, the plugin dir and the aliases file, unless given. */
async function provideVMs(s: Startup): Promise<VMRegistry> {
  const { config } = s;
  if (!s.given(TOKENS.vms)) {
    provide(s.c, TOKENS.vms, await loadVMs({
      builtins: s.deps.builtinVMs ?? [],
      ...(config.vms === undefined ? { optionalPackages: BUILTIN_VM_PACKAGES } : { specifiers: config.vms }),
      ...(existsSync(config.pluginDir) ? { pluginDir: config.pluginDir } : {}),
      ...(config.vmAliasesFile ? { aliasesFile: config.vmAliasesFile } : {}),
      cwd: process.cwd(),
      log: s.log.child({ module: 'vms' }),
    }));
  }
  return get(s.c, TOKENS.vms);
}

/** The network's genesis: the caller's, the --genesis-file, or the built-in one, unless given. */
async function provideGenesis(s: Startup, vms: VMRegistry, builtinGenesis: NetworkGenesis | undefined): Promise<NetworkGenesis> {
  const { config, deps } = s;
  if (!s.given(TOKENS.genesis)) {
    provide(s.c, TOKENS.genesis, deps.genesis
      ? deps.genesis(vms)
      : config.genesisFile
        ? await parseGenesisFile(
            await readFile(config.genesisFile, 'utf8'),
            config.genesisFile,
            config.networkId,
            (vm) => vms.resolve(vm).vmId,
            builtinGenesis?.platform.validators,
            (vmId) => vms.resolve(vmId).staticServices?.() ?? [],
          )
        : builtinGenesis!);
  }
  return get(s.c, TOKENS.genesis);
}

/** Opens the database (unless given; closed at stop) and checks it belongs to this network and genesis. */
async function openAndCheckDatabase(s: Startup, genesis: NetworkGenesis): Promise<void> {
  const { config } = s;
  if (!s.given(TOKENS.db)) {
    const opened = await openStore(config.dbType, config.dbDir);
    s.stops.push(() => opened.close());
    provide(s.c, TOKENS.db, opened);
  }
  const meta = new PrefixedStore(get(s.c, TOKENS.db), 'meta');
  await checkNetwork(meta, config.networkId);
  await checkGenesis(meta, genesisHash(genesis));
}

/** The platform chain's VM, made now that the node's parts it reports to can be reached, registered with every VM's token. */
function registerPlatformVM(s: Startup, vms: VMRegistry, genesis: NetworkGenesis): VMFactory {
  const c = s.c;
  const platform = get(c, TOKENS.platformVM)({
    events: {
      chainCreated: (chain) => get(c, TOKENS.chainCreator).chainCreated(chain),
      validatorsChanged: (subnetId, validators) => get(c, TOKENS.chainCreator).validatorsChanged(subnetId, validators),
    },
    resolveVm: (vm) => creatableVm(vms, platform.vmId)(vm),
    checkGenesis: async (vmId, genesis) => {
      await vms.resolve(vmId).checkGenesis?.(genesis);
    },
    isChainRunning: (chainId) => get(c, TOKENS.chainManager).isRunning(chainId),
    ...(genesis.nativeAssetId ? { nativeAssetId: genesis.nativeAssetId } : {}),
  });
  vms.register(platform, 'builtin');
  vms.alias(platform.vmId, 'platform');
  for (const vm of vms.list()) if (!s.given(vmToken(vm.vmId))) provide(c, vmToken(vm.vmId), vms.resolve(vm.vmId));
  return platform;
}

/** The parts the node's APIs are made of, resolved from the container (the profiler closed at stop). */
function resolveApiParts(s: Startup) {
  const c = s.c;
  const keystore = get(c, TOKENS.keystore);
  const chains = get(c, TOKENS.chainAliases);
  const routes = get(c, TOKENS.routes);
  const registry = get(c, TOKENS.metrics);
  const profiler = get(c, TOKENS.profiler);
  s.stops.push(() => profiler.close());
  const health = get(c, TOKENS.health);
  const endpoint = get(c, TOKENS.endpoint);
  return { keystore, chains, routes, registry, profiler, health, endpoint };
}

type ApiParts = ReturnType<typeof resolveApiParts>;

/** VMs' static services: /ext/vm/<vmID> and /ext/vm/<alias>. */
function mountStaticServices({ routes, endpoint }: ApiParts, vms: VMRegistry): void {
  for (const vm of vms.list()) {
    const services = vms.resolve(vm.vmId).staticServices?.() ?? [];
    if (services.length === 0) continue;
    routes.mount(`vm/${vm.vmId}`, { kind: 'jsonrpc', endpoint: endpoint(services) });
    for (const alias of vm.aliases) routes.alias(`vm/${vm.vmId}`, `vm/${alias}`);
  }
}

/**
 * The peer-to-peer network, before any chain: chains bootstrap from its beacons. (A node given its
 * node ID without a certificate — a test — keeps the loopback.) Returns who the peers are.
 */
async function startPeerNetwork(s: Startup, stakingCert: StakingCert | undefined): Promise<() => PeerSummary[]> {
  const c = s.c;
  if (s.given(TOKENS.network)) return () => [];
  if (!stakingCert) {
    provide(c, TOKENS.network, loopbackNetwork(get(c, TOKENS.nodeId)));
    return () => [];
  }
  const network = await startNetwork(s.config, stakingCert, s.log.child({ module: 'network' }), validatorCheck(get(c, TOKENS.validators)));
  s.stops.push(() => network.stop());
  provide(c, TOKENS.network, network);
  get(c, TOKENS.health).register('network', async () => network.health());
  return () => network.peers();
}

/** The node's own APIs, each when enabled: admin, keystore, health, metrics, ipcs. */
function mountNodeApis(s: Startup, api: ApiParts, nodeId: string, peers: () => PeerSummary[], chainManager: ChainManager): void {
  const { config, log } = s;
  const { keystore, chains, routes, registry, profiler, health, endpoint } = api;
  if (config.apiAdminEnabled) {
    routes.mount('admin', {
      kind: 'jsonrpc',
      endpoint: endpoint([
        adminService({
          nodeId,
          networkId: config.networkId,
          networkName: networkNameOf(config.networkId),
          version: nodeVersion(),
          routes,
          chains,
          profiler,
          peers,
          log: log.child({ module: 'admin' }),
        }),
      ]),
    });
  }
  if (config.apiKeystoreEnabled) {
    routes.mount('keystore', { kind: 'jsonrpc', endpoint: endpoint([keystoreService(keystore, { listUsers: config.apiKeystoreListUsersEnabled })]) });
  }
  if (config.profileHeapSnapshotEnabled) {
    log.warn('--profile-heap-snapshot-enabled: admin.memoryProfile {"kind":"snapshot"} stops the node for seconds and needs about the heap\'s size again in memory');
  }
  if (config.apiHealthEnabled) {
    routes.mount('health', { kind: 'jsonrpc', endpoint: endpoint([healthService(health)]), get: (_req, res) => healthGet(health, res) });
  }
  if (config.apiMetricsEnabled) routes.mount('metrics', { kind: 'http', handle: metricsHandler(registry) });
  if (config.apiIpcsEnabled) {
    const ipc = new IpcPublisher({
      dir: config.ipcsPath,
      chains: {
        resolve: (aliasOrId) => {
          const chain = chainManager.resolve(aliasOrId);
          return chain && { chainId: chain.id, accepted$: chain.accepted$ };
        },
      },
      log: log.child({ module: 'ipcs' }),
    });
    s.stops.push(() => ipc.close());
    routes.mount('ipcs', { kind: 'jsonrpc', endpoint: endpoint([ipcsService(ipc)]) });
  }
}

/**
 * The `chains` health check. The API answers while the chains start (a chain's VM may take a while
 * to initialize: a big database, a plugin's code to load); a chain's routes appear when it is
 * created, and the check is red until every chain of the genesis and the platform state runs. A
 * chain whose creation failed (a bad upgrade.json, a VM that throws at initialize) keeps it red,
 * naming the chain and why, until it is created. Returns what to call once the chains started.
 */
function registerChainsHealth(s: Startup, chainManager: ChainManager): () => void {
  let chainsStarted = false;
  get(s.c, TOKENS.health).register('chains', async () => {
    if (!chainsStarted) throw new Error(`starting: ${chainManager.chains.length} chain(s) running so far`);
    const failed = [...get(s.c, TOKENS.chainCreator).failures()];
    if (failed.length > 0) {
      const shown = failed.slice(0, 3).map(([id, why]) => `${id}: ${why.length > 300 ? `${why.slice(0, 300)}…` : why}`);
      throw new Error(`${failed.length} chain(s) failed to start: ${shown.join('; ')}${failed.length > 3 ? '; …' : ''}`);
    }
    return { running: chainManager.chains.length };
  });
  return () => (chainsStarted = true);
}

/**
 * The platform chain first: at initialize it reports the chains of its state (the genesis chains at
 * first start), which the creator then runs in order. Resolves once they are settled.
 */
async function startChains(s: Startup, chainManager: ChainManager, platformVmId: VMFactory['vmId'], genesis: NetworkGenesis): Promise<ChainCreator> {
  s.stops.push(() => chainManager.shutdown());
  const creator = get(s.c, TOKENS.chainCreator);
  s.stops.push(() => creator.stop()); // runs first: no chain is created while the chains stop
  await chainManager.createChain({
    ...PLATFORM_CHAIN,
    id: PLATFORM_CHAIN_ID,
    subnetId: DEFAULT_SUBNET_ID,
    vmId: platformVmId,
    fxIds: [],
    genesis: encodeGenesis(genesis.platform),
  });
  creator.start();
  await creator.settled();
  return creator;
}
