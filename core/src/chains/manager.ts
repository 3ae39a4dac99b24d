/**
 * The chain manager: creates chains — at start-up from genesis, later on request of the platform
 * chain — as vmID -> factory -> vm.initialize (with a prefixed store and a ChainContext) -> Snowman
 * engine -> API handlers at /ext/bc/<chainID> and every alias -> `accepted$`. Stops chains in
 * reverse order of creation.
 */
import client from 'prom-client';
import { Subject, type Observable } from 'rxjs';
import type { Block, BoundService, ChainVM, Clock, Id, KeyValueStore, Logger, ShortId } from '@cornice/sdk';
import { NodeError } from '@cornice/sdk';
import type { JsonRpcEndpoint } from '../api/jsonrpc.js';
import type { Registry } from '../api/metrics/metrics.js';
import type { RouteTable } from '../api/routes.js';
import { SnowmanEngine, type Scheduler, type SnowParams } from '../consensus/index.js';
import { PrefixedStore } from '../db/prefixed.js';
import type { ChainDefinition } from '../genesis/genesis.js';
import type { Keystore } from '../keystore/keystore.js';
import type { EngineNetwork } from '../network/loopback.js';
import { validatorSampler, type ValidatorSets } from '../validators/validators.js';
import type { VMRegistry } from '../vms/registry.js';
import type { ChainAliases } from './aliases.js';
import { vmMetrics } from './metrics.js';
import { sharedMemoryFor } from './shared-memory.js';

export class ChainError extends NodeError<'UnknownVM' | 'Exists' | 'InitFailed' | 'BadHandler'> {}

export interface AcceptedBlock {
  id: Id;
  height: number;
  bytes: Uint8Array;
}

export interface Chain {
  readonly id: Id;
  readonly name: string;
  readonly vmId: Id;
  readonly subnetId: Id;
  readonly vm: ChainVM;
  readonly engine: SnowmanEngine;
  /** Every block this node accepts on the chain, in order. */
  readonly accepted$: Observable<AcceptedBlock>;
}

export interface ChainManagerDeps {
  registry: VMRegistry;
  root: KeyValueStore;
  routes: RouteTable;
  aliases: ChainAliases;
  log: Logger;
  metrics: Registry;
  nodeId: ShortId;
  networkId: number;
  keystore: Keystore;
  validators: ValidatorSets;
  network: EngineNetwork;
  snow: SnowParams;
  sybilProtection: boolean;
  clock: Clock;
  scheduler: Scheduler;
  nativeSymbol: string;
  /** Builds the JSON-RPC endpoint for a chain's services (limits, metrics). */
  endpoint: (services: readonly BoundService[]) => JsonRpcEndpoint;
}

interface RunningChain extends Chain {
  stop(): Promise<void>;
}

export class ChainManager {
  readonly #chains: RunningChain[] = [];
  readonly #chainsStore: PrefixedStore;
  readonly #shared: PrefixedStore;

  constructor(private readonly d: ChainManagerDeps) {
    this.#chainsStore = new PrefixedStore(d.root, 'chains');
    this.#shared = new PrefixedStore(d.root, 'shared');
  }

  get chains(): readonly Chain[] {
    return this.#chains;
  }

  /** The chain behind an alias or cb58 ID, if this node runs it. */
  get(aliasOrId: string): Chain | undefined {
    const id = this.d.aliases.resolve(aliasOrId);
    return id === undefined ? undefined : this.#chains.find((c) => c.id.toString() === id);
  }

  /** For IPC: like get, with the alias table's error for unknown names. */
  resolve(aliasOrId: string): Chain | undefined {
    const id = this.d.aliases.lookup(aliasOrId);
    return this.#chains.find((c) => c.id.equals(id));
  }

  async createChain(def: ChainDefinition): Promise<Chain> {
    const d = this.d;
    if (this.#chains.some((c) => c.id.equals(def.id))) throw new ChainError('Exists', `chain ${def.id} already exists`);
    let factory;
    try {
      factory = d.registry.resolve(def.vmId);
    } catch (e) {
      throw new ChainError('UnknownVM', `cannot create chain "${def.name}" (${def.id}): ${(e as Error).message}`);
    }
    const log = d.log.child({ chain: def.aliases[0] ?? def.id.toString(), vm: factory.name });
    const abort = new AbortController();
    const vm = await factory.create();
    const ctx = {
      networkId: d.networkId,
      subnetId: def.subnetId,
      chainId: def.id,
      aliases: def.aliases,
      nodeId: d.nodeId,
      vmId: factory.vmId,
      db: new PrefixedStore(this.#chainsStore, def.id.bytes),
      log,
      metrics: vmMetrics(d.metrics, factory.name, def.id),
      clock: d.clock,
      signal: abort.signal,
      sharedMemory: sharedMemoryFor(this.#shared, def.id),
      keystore: { openUser: (username: string, password: string) => d.keystore.openUserStore(username, password, def.id) },
      nativeAsset: { id: undefined, symbol: d.nativeSymbol },
      validators: d.validators,
    };
    try {
      await vm.initialize(ctx, { genesis: def.genesis });
    } catch (e) {
      throw new ChainError('InitFailed', `chain "${def.name}" (${def.id}) failed to initialize: ${(e as Error).message}`);
    }

    const accepted$ = new Subject<AcceptedBlock>();
    const acceptedCount = this.#acceptedCounter().labels({ chain: def.id.toString() });
    accepted$.subscribe(() => acceptedCount.inc());
    const link = d.network.open(def.id);
    const engine = new SnowmanEngine({
      vm,
      params: d.snow,
      transport: link.transport,
      validators: validatorSampler({ sybilProtection: d.sybilProtection, sets: d.validators, subnetId: def.subnetId, connected: () => d.network.connected() }),
      nodeId: d.nodeId,
      scheduler: d.scheduler,
      log: log.child({ module: 'snowman' }),
      onAccepted: (block: Block) => accepted$.next({ id: block.id, height: block.height, bytes: block.bytes }),
    });
    link.attach(engine);
    d.aliases.register(def.id, def.aliases);

    const mounted: string[] = [];
    for (const h of await vm.createHandlers()) {
      const path = h.path ? `bc/${def.id}/${h.path}` : `bc/${def.id}`;
      if (h.services?.length && h.http) throw new ChainError('BadHandler', `chain "${def.name}": handler ${h.path || '/'} has both services and http`);
      if (h.services?.length) d.routes.mount(path, { kind: 'jsonrpc', endpoint: d.endpoint(h.services) });
      else if (h.http) d.routes.mount(path, { kind: 'http', handle: h.http });
      else continue;
      mounted.push(path);
    }
    for (const alias of def.endpointAliases ?? []) d.routes.alias(`bc/${def.id}`, alias);

    await engine.start();
    const chain: RunningChain = {
      id: def.id,
      name: def.name,
      vmId: factory.vmId,
      subnetId: def.subnetId,
      vm,
      engine,
      accepted$,
      stop: async () => {
        for (const p of mounted) d.routes.unmount(p);
        abort.abort();
        await engine.stop();
        accepted$.complete();
        await vm.shutdown();
      },
    };
    this.#chains.push(chain);
    log.info('chain created', { chainId: def.id.toString(), name: def.name, vmId: factory.vmId.toString(), aliases: def.aliases });
    return chain;
  }

  #acceptedCounter(): client.Counter<'chain'> {
    const name = 'cornice_chain_blocks_accepted_total';
    return (
      (this.d.metrics.getSingleMetric(name) as client.Counter<'chain'> | undefined) ??
      new client.Counter({ name, help: 'Blocks accepted, by chain', labelNames: ['chain'], registers: [this.d.metrics] })
    );
  }

  /** Stops every chain, newest first. */
  async shutdown(): Promise<void> {
    for (const chain of this.#chains.splice(0).reverse()) {
      try {
        await chain.stop();
      } catch (e) {
        this.d.log.error('chain failed to stop', { chainId: chain.id.toString(), error: e });
      }
    }
  }
}
