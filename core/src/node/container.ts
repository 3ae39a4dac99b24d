/**
 * The node's dependency container (tsyringe): one root container per node, where every node service
 * is registered once under an explicit token, and one child container per chain holding that
 * chain's context parts. Tokens are symbols (`vm:<vmID>` strings for VM factories), never classes:
 * nothing relies on decorator metadata. Tests replace a part by registering another instance under
 * its token before the node starts (NodeDeps.overrides).
 *
 * tsyringe is used here and in node.ts only; no container type reaches the chain manager, the sdk
 * or a plugin — they take their dependencies as arguments.
 */
import 'reflect-metadata';
import { container as globalContainer, instanceCachingFactory, type DependencyContainer } from 'tsyringe';
import { PrefixedStore, type BoundService, type Clock, type Id, type KeyValueStore, type Logger, type ShortId, type VMFactory } from '@cornice/sdk';
import { Profiler } from '../api/admin/profiler.js';
import { HealthChecks } from '../health/checks.js';
import { JsonRpcEndpoint } from '../api/jsonrpc.js';
import { ApiMetrics, createRegistry, type Registry } from '../metrics/metrics.js';
import { RouteTable } from '../api/routes.js';
import { currentClient } from '../api/request-context.js';
import { HttpApiServer } from '../api/server.js';
import { ChainAliases } from '../chains/aliases.js';
import { ChainCreator } from '../chains/creator.js';
import type { ChainDefinition } from '../chains/definition.js';
import { ChainManager, chainLabel, type ChainParts } from '../chains/manager.js';
import { vmMetrics } from '../chains/metrics.js';
import { sharedMemoryFor } from '../chains/shared-memory.js';
import type { NodeConfig } from '../config/config.js';
import { benchlistOf, snowParamsOf, timeoutsOf } from '../config/parse.js';
import { AdaptiveTimeout, systemScheduler, type Scheduler } from '../consensus/index.js';
import { SYSTEM_CLOCK } from '../consensus/snowman/clock.js';
import { genesisValidators, type NetworkGenesis } from '../genesis/genesis.js';
import { Keystore } from '../keystore/keystore.js';
import type { KdfParams } from '../keystore/crypto.js';
import type { EngineNetwork } from '../network/loopback.js';
import { BootstrapProgressOutput } from '../consensus/bootstrap/progress.js';
import { bootstrapPeersOf } from './network.js';
import { platformStaticService } from '../platform/static-service.js';
import { platformVMFactory, type PlatformVMDeps } from '../platform/vm.js';
import { ValidatorSets } from '../validators/validators.js';
import { isolationPlan } from '../vms/isolation/plan.js';
import type { VMRegistry } from '../vms/registry.js';

/** A container token carrying the type it resolves to. */
export type Token<T> = (symbol | string) & { readonly __resolvesTo?: T };
const token = <T>(name: string): Token<T> => Symbol(name) as Token<T>;

export const TOKENS = {
  config: token<NodeConfig>('config'),
  log: token<Logger>('log'),
  clock: token<Clock>('clock'),
  scheduler: token<Scheduler>('scheduler'),
  /** scrypt cost of keystore passwords when not the default (tests lower it). A wrapper: tsyringe refuses nullish values. */
  keystoreKdf: token<{ kdf?: KdfParams }>('keystoreKdf'),
  nodeId: token<ShortId>('nodeId'),
  genesis: token<NetworkGenesis>('genesis'),
  db: token<KeyValueStore>('db'),
  keystore: token<Keystore>('keystore'),
  vms: token<VMRegistry>('vms'),
  /** Makes the platform chain's VM factory (tests put a stand-in here). */
  platformVM: token<(deps: PlatformVMDeps) => VMFactory>('platformVM'),
  chainAliases: token<ChainAliases>('chainAliases'),
  routes: token<RouteTable>('routes'),
  metrics: token<Registry>('metrics'),
  apiMetrics: token<ApiMetrics>('apiMetrics'),
  health: token<HealthChecks>('health'),
  profiler: token<Profiler>('profiler'),
  /** Builds a JSON-RPC endpoint with the node's limits, logging and metrics. */
  endpoint: token<(services: readonly BoundService[]) => JsonRpcEndpoint>('endpoint'),
  validators: token<ValidatorSets>('validators'),
  /** The engines' transport: who is connected, and each chain's link. */
  network: token<EngineNetwork>('network'),
  timeouts: token<AdaptiveTimeout>('timeouts'),
  chainManager: token<ChainManager>('chainManager'),
  chainCreator: token<ChainCreator>('chainCreator'),
  http: token<HttpApiServer>('http'),
  // One chain's parts, in its child container:
  chain: token<ChainDefinition>('chain'),
  chainVM: token<VMFactory>('chainVM'),
  chainLog: token<Logger>('chainLog'),
  chainDb: token<KeyValueStore>('chainDb'),
  chainParts: token<ChainParts>('chainParts'),
} as const;


/** The token a loaded VM's factory is registered under. */
export const vmToken = (vmId: Id): Token<VMFactory> => `vm:${vmId.toString()}`;

export type { DependencyContainer, PlatformVMDeps };

/**
 * A fresh root container for one node. The node registers nothing in the global container; only
 * @peculiar/x509 keeps its algorithms there, under its own string tokens (see staking/x509.ts).
 */
export const nodeContainer = (): DependencyContainer => globalContainer.createChildContainer();

export function get<T>(c: DependencyContainer, t: Token<T>): T {
  return c.resolve<T>(t);
}

/** Registers a value (not null or undefined: tsyringe reads those as no provider); a later registration under the same token wins. */
export function provide<T>(c: DependencyContainer, t: Token<T>, value: T): void {
  c.register<T>(t, { useValue: value });
}

/** Registers a part built on first resolution (once per container it is registered in). */
export function provideFactory<T>(c: DependencyContainer, t: Token<T>, make: (c: DependencyContainer) => T): void {
  c.register<T>(t, { useFactory: instanceCachingFactory<T>(make) });
}

/**
 * The node services built from other parts: registered before the overrides, so a test's
 * registration replaces any of them. Resolve them from the root (they cache where first resolved).
 */
export function registerNodeParts(c: DependencyContainer): void {
  const config = (r: DependencyContainer) => get(r, TOKENS.config);
  provideFactory(c, TOKENS.clock, () => SYSTEM_CLOCK);
  // The platform VM with platform.buildGenesis as its static service (/ext/vm/platform).
  provide(c, TOKENS.platformVM, (deps) => ({ ...platformVMFactory(deps), staticServices: () => [platformStaticService()] }));
  provideFactory(c, TOKENS.scheduler, (r) => {
    const clock = get(r, TOKENS.clock);
    return { ...systemScheduler, now: () => clock.now() };
  });
  provide(c, TOKENS.keystoreKdf, {});
  provideFactory(c, TOKENS.keystore, (r) => {
    const clock = get(r, TOKENS.clock);
    const { kdf } = get(r, TOKENS.keystoreKdf);
    return new Keystore({
      store: new PrefixedStore(get(r, TOKENS.db), 'keystore'),
      log: get(r, TOKENS.log).child({ module: 'keystore' }),
      now: () => clock.now(),
      // The throttle counts each client's failures apart (the HTTP layer names the client).
      clientOf: currentClient,
      ...(kdf ? { kdf } : {}),
    });
  });
  provideFactory(c, TOKENS.chainAliases, (r) => new ChainAliases({ maxAdminAliases: config(r).apiAdminMaxAliases }));
  provideFactory(c, TOKENS.routes, (r) => {
    const log = get(r, TOKENS.log).child({ module: 'api' });
    return new RouteTable(get(r, TOKENS.chainAliases), {
      maxAdminAliases: config(r).apiAdminMaxAliases,
      onAdminAliasDropped: (alias, by) => log.warn('admin alias dropped: the node now serves that path', { alias, path: by }),
    });
  });
  provideFactory(c, TOKENS.metrics, () => createRegistry());
  provideFactory(c, TOKENS.apiMetrics, (r) => new ApiMetrics(get(r, TOKENS.metrics)));
  provideFactory(
    c,
    TOKENS.profiler,
    (r) => new Profiler(config(r).profileDir, { maxFiles: config(r).profileMaxFiles, heapSnapshots: config(r).profileHeapSnapshotEnabled }),
  );
  provideFactory(c, TOKENS.health, (r) => {
    const health = new HealthChecks();
    const db = get(r, TOKENS.db);
    const dbType = config(r).dbType;
    health.register('database', async () => {
      await db.get(new Uint8Array([0]));
      return { dbType };
    });
    return health;
  });
  provideFactory(c, TOKENS.endpoint, (r) => {
    const options = {
      maxBatchSize: config(r).httpMaxBatchSize,
      maxJsonDepth: config(r).httpMaxJsonDepth,
      log: get(r, TOKENS.log).child({ module: 'api' }),
      metrics: get(r, TOKENS.apiMetrics),
    };
    return (services) => new JsonRpcEndpoint(services, options);
  });
  provideFactory(c, TOKENS.validators, (r) => new ValidatorSets(genesisValidators(get(r, TOKENS.genesis))));
  provideFactory(c, TOKENS.timeouts, (r) => {
    const scheduler = get(r, TOKENS.scheduler);
    return new AdaptiveTimeout(timeoutsOf(config(r)), () => scheduler.now());
  });
  provideFactory(c, TOKENS.chainManager, (r) => {
    const cfg = config(r);
    const vms = get(r, TOKENS.vms);
    // --vm-isolation: the chains of these VMs run in worker threads (their factories make WorkerVMs).
    const isolate = isolationPlan(
      cfg.vmIsolation ?? [],
      vms,
      { callTimeoutMs: cfg.vmCallTimeout, shutdownTimeoutMs: Math.min(cfg.vmCallTimeout, cfg.shutdownTimeout), maxBodyBytes: cfg.httpMaxBodyBytes },
      get(r, TOKENS.log).child({ module: 'vms' }),
    );
    return new ChainManager({
      // A VM factory registered under its vmID token (a test may replace one); the registry knows the rest.
      registry: {
        resolve: (vmId) => isolate(typeof vmId !== 'string' && r.isRegistered(vmToken(vmId), true) ? get(r, vmToken(vmId)) : vms.resolve(vmId)),
        rootOf: (vmId) => vms.rootOf(vmId),
      },
      chainParts: chainPartsFactory(r),
      routes: get(r, TOKENS.routes),
      aliases: get(r, TOKENS.chainAliases),
      health: get(r, TOKENS.health),
      log: get(r, TOKENS.log).child({ module: 'chains' }),
      metrics: get(r, TOKENS.metrics),
      nodeId: get(r, TOKENS.nodeId),
      validators: get(r, TOKENS.validators),
      network: get(r, TOKENS.network),
      beacons: bootstrapPeersOf(cfg).map((b) => ({ nodeId: b.nodeId, weight: 1n })),
      bootstrapProgress: new BootstrapProgressOutput({
        isTTY: process.stderr.isTTY === true,
        write: (text) => process.stderr.write(text),
        log: get(r, TOKENS.log).child({ module: 'bootstrap' }),
        now: () => get(r, TOKENS.scheduler).now(),
      }).update,
      snow: snowParamsOf(cfg),
      sybilProtection: cfg.sybilProtectionEnabled,
      scheduler: get(r, TOKENS.scheduler),
      timeouts: get(r, TOKENS.timeouts),
      benchlist: benchlistOf(cfg),
      vmCallTimeoutMs: cfg.vmCallTimeout,
      chainConfigDir: cfg.chainConfigDir,
      maxProcessingMs: cfg.snowMaxTimeProcessing,
      endpoint: get(r, TOKENS.endpoint),
    });
  });
  provideFactory(c, TOKENS.chainCreator, (r) => {
    const manager = get(r, TOKENS.chainManager);
    const genesis = get(r, TOKENS.genesis);
    const vms = get(r, TOKENS.vms);
    return new ChainCreator({
      nodeId: get(r, TOKENS.nodeId),
      vms: { has: (vmId) => vms.has(vmId) },
      validators: get(r, TOKENS.validators),
      create: (def) => manager.createChain(def),
      isRunning: (id) => manager.isRunning(id),
      aliasesOf: (id) => genesis.aliases.get(id.key),
      log: get(r, TOKENS.log).child({ module: 'chains' }),
    });
  });
  provideFactory(c, TOKENS.http, (r) => {
    const cfg = config(r);
    return new HttpApiServer(get(r, TOKENS.routes), {
      host: cfg.httpHost,
      port: cfg.httpPort,
      maxBodyBytes: cfg.httpMaxBodyBytes,
      allowedOrigins: cfg.httpAllowedOrigins,
      allowedHosts: cfg.httpAllowedHosts,
      maxConnections: cfg.httpMaxConnections,
      maxBufferedBytes: cfg.httpMaxBufferedBytes,
      writeTimeoutMs: cfg.httpWriteTimeout,
      websocket: { pingIntervalMs: cfg.httpWsPingInterval, idleTimeoutMs: cfg.httpWsIdleTimeout },
      log: get(r, TOKENS.log).child({ module: 'http' }),
    });
  });
}

/**
 * What the root gives the chain manager: each chain's parts come from a child container of the
 * root holding that chain's definition, VM, log, store and context.
 */
function chainPartsFactory(root: DependencyContainer): (def: ChainDefinition, vm: VMFactory) => ChainParts {
  const db = get(root, TOKENS.db);
  const chains = new PrefixedStore(db, 'chains');
  const shared = new PrefixedStore(db, 'shared');
  return (def, vm) => {
    const c = root.createChildContainer();
    provide(c, TOKENS.chain, def);
    provide(c, TOKENS.chainVM, vm);
    provideFactory(c, TOKENS.chainLog, (r) => get(r, TOKENS.log).child({ module: 'chains', chain: chainLabel(def), vm: vm.name }));
    provideFactory(c, TOKENS.chainDb, () => new PrefixedStore(chains, def.id.bytes));
    provideFactory(c, TOKENS.chainParts, (r) => {
      const keystore = get(r, TOKENS.keystore);
      const genesis = get(r, TOKENS.genesis);
      const link = get(r, TOKENS.network).open(def.id);
      return {
        context: {
          networkId: get(r, TOKENS.config).networkId,
          subnetId: def.subnetId,
          chainId: def.id,
          aliases: def.aliases,
          nodeId: get(r, TOKENS.nodeId),
          vmId: vm.vmId,
          db: get(r, TOKENS.chainDb),
          log: get(r, TOKENS.chainLog),
          metrics: vmMetrics(get(r, TOKENS.metrics), vm.name, def.id),
          clock: get(r, TOKENS.clock),
          sharedMemory: sharedMemoryFor(shared, def.id),
          keystore: { openUser: (username: string, password: string) => keystore.openUserStore(username, password, def.id) },
          nativeAsset: { id: genesis.nativeAssetId, symbol: NATIVE_SYMBOL },
          validators: get(r, TOKENS.validators),
          network: { gossip: (payload: Uint8Array) => link.gossip(payload) },
          debugApis: get(r, TOKENS.config).evmDebugApi,
        },
        link,
      };
    });
    return get(c, TOKENS.chainParts);
  };
}

/** The native token's symbol (AVA, as the reference node names it). */
export const NATIVE_SYMBOL = 'AVA';
