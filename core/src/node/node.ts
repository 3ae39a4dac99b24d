/**
 * The composition root: builds the node's parts from its config, starts them in order and stops
 * them in reverse. Classes elsewhere take their options and dependencies as arguments and know
 * nothing of how they are wired.
 */
import { mkdir } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import type { KeyValueStore, Logger } from '@cornice/sdk';
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
import type { NodeConfig } from '../config/config.js';
import { openStore } from '../db/open.js';
import { PrefixedStore } from '../db/prefixed.js';
import { checkNetwork } from '../db/meta.js';
import { Keystore } from '../keystore/keystore.js';
import { loadOrCreateStakingCert } from '../staking/cert.js';
import type { BoundService } from '@cornice/sdk';

export interface RunningNode {
  readonly nodeId: string;
  readonly config: NodeConfig;
  /** Where the HTTP API listens, e.g. `http://127.0.0.1:9650`. */
  readonly url: string;
  readonly address: AddressInfo;
  readonly routes: RouteTable;
  readonly chains: ChainAliases;
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
    if (config.dbType === 'leveldb') await mkdir(config.dbDir, { recursive: true });
    const cert = await loadOrCreateStakingCert({ certFile: config.stakingTlsCertFile, keyFile: config.stakingTlsKeyFile });
    const nodeId = cert.nodeId.toString();

    const db: KeyValueStore = await openStore(config.dbType, config.dbDir);
    stops.push(() => db.close());
    await checkNetwork(new PrefixedStore(db, 'meta'), config.networkId);

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
    const profiler = new Profiler(config.profileDir);
    stops.push(() => profiler.close());
    const health = new HealthChecks();
    health.register('database', async () => {
      await db.get(new Uint8Array([0]));
      return { dbType: config.dbType };
    });

    const rpcLog = log.child({ module: 'api' });
    const endpoint = (...services: BoundService[]) =>
      new JsonRpcEndpoint(services, { maxBatchSize: config.httpMaxBatchSize, log: rpcLog, metrics: apiMetrics });
    if (config.apiAdminEnabled) {
      routes.mount('admin', {
        kind: 'jsonrpc',
        endpoint: endpoint(adminService({ nodeId, networkId: config.networkId, routes, chains, profiler, peers: () => [] })),
      });
    }
    if (config.apiKeystoreEnabled) routes.mount('keystore', { kind: 'jsonrpc', endpoint: endpoint(keystoreService(keystore)) });
    if (config.apiHealthEnabled) {
      routes.mount('health', { kind: 'jsonrpc', endpoint: endpoint(healthService(health)), get: (_req, res) => healthGet(health, res) });
    }
    if (config.apiMetricsEnabled) routes.mount('metrics', { kind: 'http', handle: metricsHandler(registry) });

    const http = new HttpApiServer(routes, {
      host: config.httpHost,
      port: config.httpPort,
      maxBodyBytes: config.httpMaxBodyBytes,
      log: log.child({ module: 'http' }),
    });
    const address = await http.listen();
    stops.push(() => http.close());
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    const url = `http://${host}:${address.port}`;
    log.info('node started', { nodeId, networkId: config.networkId, http: url, dbType: config.dbType, dbDir: config.dbType === 'leveldb' ? config.dbDir : undefined });

    let stopping: Promise<void> | undefined;
    return {
      nodeId,
      config,
      url,
      address,
      routes,
      chains,
      keystore,
      metrics: registry,
      stop: () => (stopping ??= stopAll().then(() => log.info('node stopped'))),
    };
  } catch (e) {
    await stopAll();
    throw e;
  }
}
