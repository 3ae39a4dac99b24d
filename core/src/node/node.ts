/**
 * The composition root: builds the node's parts from its config, starts them in order and stops
 * them in reverse. Classes elsewhere take their options and dependencies as arguments and know
 * nothing of how they are wired.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, sep } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { BoundService, Clock, KeyValueStore, Logger, VMFactory } from '@cornice/sdk';
import { adminService } from '../api/admin/service.js';
import { Profiler } from '../api/admin/profiler.js';
import { HealthChecks } from '../api/health/checks.js';
import { healthGet, healthService } from '../api/health/service.js';
import { JsonRpcEndpoint } from '../api/jsonrpc.js';
import { keystoreService } from '../api/keystore/service.js';
import { ApiMetrics, createRegistry, type Registry } from '../api/metrics/metrics.js';
import { metricsHandler } from '../api/metrics/route.js';
import { RouteTable } from '../api/routes.js';
import { HttpApiServer } from '../api/server.js';
import { ChainAliases } from '../chains/aliases.js';
import { ChainManager } from '../chains/manager.js';
import { containStreamErrors } from '../chains/faults.js';
import { ConfigError, networkLabel, type NodeConfig } from '../config/config.js';
import { benchlistOf, snowParamsOf, timeoutsOf } from '../config/parse.js';
import { AdaptiveTimeout, systemScheduler } from '../consensus/index.js';
import { checkGenesis, checkNetwork } from '../db/meta.js';
import { openStore } from '../db/open.js';
import { PrefixedStore } from '../db/prefixed.js';
import { parseGenesisFile } from '../genesis/file.js';
import { genesisHash, networkGenesis, runnableChains, type NetworkGenesis } from '../genesis/genesis.js';
import { IpcPublisher } from '../ipc/publisher.js';
import { ipcsService } from '../ipc/service.js';
import { Keystore } from '../keystore/keystore.js';
import { loopbackNetwork } from '../network/loopback.js';
import { loadOrCreateStakingCert } from '../staking/cert.js';
import { warnOpenDirs } from './private-dirs.js';
import { ValidatorSets } from '../validators/validators.js';
import { BUILTIN_VM_PACKAGES } from '../vms/builtins.js';
import { loadVMs } from '../vms/loader.js';
import type { VMRegistry } from '../vms/registry.js';

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
  readonly keystore: Keystore;
  readonly metrics: Registry;
  /** Stops every part in reverse start order. Safe to call twice. */
  stop(): Promise<void>;
}

export interface NodeDeps {
  log: Logger;
  /** Scrypt cost for keystore passwords (tests lower it). */
  keystoreKdf?: { N: number; r: number; p: number };
  now?: () => number;
  /** VMs available without loading (the test kit passes the VM under test). */
  builtinVMs?: VMFactory[];
  /** Replaces the network's genesis (the test kit's one-chain genesis). */
  genesis?: (vms: VMRegistry) => NetworkGenesis;
  /** Use this store instead of opening one (the test kit's restart); it is not closed on stop. */
  db?: KeyValueStore;
}

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
  try {
    const builtinGenesis = networkGenesis(config.networkId);
    if (!deps.genesis && !config.genesisFile && !builtinGenesis) {
      throw new ConfigError('NoGenesis', `${networkLabel(config.networkId)} has no built-in genesis: give --genesis-file`);
    }
    // Private dirs are created 0700 where they are made (db/open.ts, staking/cert.ts, the profiler).
    const stakingDir = dirname(config.stakingTlsKeyFile);
    await warnOpenDirs([
      config.dataDir,
      ...(config.dbType === 'leveldb' && !deps.db ? [config.dbDir] : []),
      ...(stakingDir.startsWith(config.dataDir + sep) ? [stakingDir] : []), // not the repo's fixtures
      config.profileDir,
    ], log);
    const cert = await loadOrCreateStakingCert({ certFile: config.stakingTlsCertFile, keyFile: config.stakingTlsKeyFile });
    const nodeId = cert.nodeId.toString();

    const vms = await loadVMs({
      builtins: deps.builtinVMs ?? [],
      ...(config.vms === undefined ? { optionalPackages: BUILTIN_VM_PACKAGES } : { specifiers: config.vms }),
      ...(existsSync(config.pluginDir) ? { pluginDir: config.pluginDir } : {}),
      ...(config.vmAliasesFile ? { aliasesFile: config.vmAliasesFile } : {}),
      cwd: process.cwd(),
      log: log.child({ module: 'vms' }),
    });
    const genesis = deps.genesis
      ? deps.genesis(vms)
      : config.genesisFile
        ? parseGenesisFile(
            await readFile(config.genesisFile, 'utf8'),
            config.genesisFile,
            config.networkId,
            (vm) => vms.resolve(vm).vmId,
            builtinGenesis?.validators,
          )
        : builtinGenesis!;

    const db: KeyValueStore = deps.db ?? (await openStore(config.dbType, config.dbDir));
    if (!deps.db) stops.push(() => db.close());
    const meta = new PrefixedStore(db, 'meta');
    await checkNetwork(meta, config.networkId);
    await checkGenesis(meta, genesisHash(genesis));

    const keystore = new Keystore({
      store: new PrefixedStore(db, 'keystore'),
      log: log.child({ module: 'keystore' }),
      ...(deps.keystoreKdf ? { kdf: deps.keystoreKdf } : {}),
      ...(deps.now ? { now: deps.now } : {}),
    });
    const chains = new ChainAliases();
    const routes = new RouteTable(chains);
    const registry = createRegistry();
    const apiMetrics = new ApiMetrics(registry);
    const profiler = new Profiler(config.profileDir, { maxFiles: config.profileMaxFiles });
    stops.push(() => profiler.close());
    const health = new HealthChecks();
    health.register('database', async () => {
      await db.get(new Uint8Array([0]));
      return { dbType: config.dbType };
    });

    const rpcLog = log.child({ module: 'api' });
    const endpoint = (services: readonly BoundService[]) =>
      new JsonRpcEndpoint(services, { maxBatchSize: config.httpMaxBatchSize, log: rpcLog, metrics: apiMetrics });

    // VMs' static services: /ext/vm/<vmID> and /ext/vm/<alias>.
    for (const vm of vms.list()) {
      const services = vms.resolve(vm.vmId).staticServices?.() ?? [];
      if (services.length === 0) continue;
      routes.mount(`vm/${vm.vmId}`, { kind: 'jsonrpc', endpoint: endpoint(services) });
      for (const alias of vm.aliases) routes.alias(`vm/${vm.vmId}`, `vm/${alias}`);
    }

    const clock: Clock = { now: deps.now ?? (() => Date.now()) };
    const scheduler = deps.now ? { ...systemScheduler, now: deps.now } : systemScheduler;
    containStreamErrors(log.child({ module: 'chains' }));
    const chainManager = new ChainManager({
      registry: vms,
      root: db,
      routes,
      aliases: chains,
      health,
      log: log.child({ module: 'chains' }),
      metrics: registry,
      nodeId: cert.nodeId,
      networkId: config.networkId,
      keystore,
      validators: new ValidatorSets(genesis.validators),
      network: loopbackNetwork(cert.nodeId),
      snow: snowParamsOf(config),
      sybilProtection: config.sybilProtectionEnabled,
      clock,
      scheduler,
      timeouts: new AdaptiveTimeout(timeoutsOf(config), () => scheduler.now()),
      benchlist: benchlistOf(config),
      vmCallTimeoutMs: config.vmCallTimeout,
      maxProcessingMs: config.snowMaxTimeProcessing,
      nativeSymbol: 'AVA',
      endpoint,
    });
    stops.push(() => chainManager.shutdown());
    for (const def of runnableChains(genesis, vms, log.child({ module: 'genesis' }))) await chainManager.createChain(def);

    if (config.apiAdminEnabled) {
      routes.mount('admin', {
        kind: 'jsonrpc',
        endpoint: endpoint([adminService({ nodeId, networkId: config.networkId, routes, chains, profiler, peers: () => [] })]),
      });
    }
    if (config.apiKeystoreEnabled) routes.mount('keystore', { kind: 'jsonrpc', endpoint: endpoint([keystoreService(keystore)]) });
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
      stops.push(() => ipc.close());
      routes.mount('ipcs', { kind: 'jsonrpc', endpoint: endpoint([ipcsService(ipc)]) });
    }

    const http = new HttpApiServer(routes, {
      host: config.httpHost,
      port: config.httpPort,
      maxBodyBytes: config.httpMaxBodyBytes,
      allowedOrigins: config.httpAllowedOrigins,
      allowedHosts: config.httpAllowedHosts,
      maxConnections: config.httpMaxConnections,
      log: log.child({ module: 'http' }),
    });
    const address = await http.listen();
    stops.push(() => http.close());
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    const url = `http://${host}:${address.port}`;
    log.info('node started', {
      nodeId,
      networkId: config.networkId,
      http: url,
      dbType: config.dbType,
      dbDir: config.dbType === 'leveldb' ? config.dbDir : undefined,
      chains: chainManager.chains.map((c) => c.id.toString()),
    });

    let stopping: Promise<void> | undefined;
    return {
      nodeId,
      config,
      url,
      address,
      routes,
      chains,
      chainManager,
      vms,
      keystore,
      metrics: registry,
      stop: () => (stopping ??= stopAll().then(() => log.info('node stopped'))),
    };
  } catch (e) {
    await stopAll();
    throw e;
  }
}
