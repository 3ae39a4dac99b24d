/**
 * The chain manager: creates chains — at start-up from genesis, later on request of the platform
 * chain — as vmID -> factory -> vm.initialize (with a prefixed store and a ChainContext) -> Snowman
 * engine (behind a RequestSender) -> API handlers at /ext/bc/<chainID> and every alias -> `accepted$`
 * -> a `chain <alias>` health check. Stops chains in reverse order of creation.
 *
 * Fault containment: the VM is reached only through guardVM (every call bounded), so a
 * VM call that never settles, a failed accept, or a process-level fault whose stack runs through the
 * VM's code (faults.ts) halts that chain only: its engine stops, its signal aborts, its VM is shut down,
 * its API answers "chain … is halted" and its health check says why. A chain whose creation fails is
 * undone (routes, aliases, health check, engine, VM) before the error is thrown.
 *
 * One piece (past 600 lines) because createChain is one sequence of steps over one ChainSetup:
 * each step leaves in its undo list what a later failure must take back, and the halt, the API's
 * refusal and the health check read its fault state. What stands apart is in modules of its own:
 * the VM guard (guard.ts), fault attribution (faults.ts), which chains run (creator.ts), aliases
 * (aliases.ts), health (health.ts), metrics (metrics.ts).
 */
import { pathToFileURL } from 'node:url';
import client from 'prom-client';
import { Subject, type Observable } from 'rxjs';
import type { Block, BoundService, ChainContext, ChainVM, Id, Logger, ShortId, VMFactory } from '@cornice/sdk';
import { NodeError } from '@cornice/sdk';
import type { HealthChecks } from '../health/checks.js';
import type { JsonRpcEndpoint } from '../api/jsonrpc.js';
import type { Registry } from '../metrics/metrics.js';
import type { RouteTable } from '../api/routes.js';
import {
  type AdaptiveTimeout,
  Benchlist,
  canPoll,
  RequestSender,
  SnowmanEngine,
  type BenchlistConfig,
  type Scheduler,
  type SnowParams,
  type ValidatorSampler,
} from '../consensus/index.js';
import type { ChainDefinition } from './definition.js';
import type { EngineNetwork } from '../network/loopback.js';
import { Bootstrapper } from '../consensus/bootstrap/bootstrapper.js';
import type { Beacon, BootstrapProgress } from '../consensus/bootstrap/types.js';
import { validatorSampler, type ValidatorSets } from '../validators/validators.js';
import { isFaultSource } from '../vms/isolation/host.js';
import type { VMRegistry } from '../vms/registry.js';
import type { ChainAliases } from './aliases.js';
import { guardVM } from './guard.js';
import { chainHealth, describeBootstrap } from './health.js';
import { proposerDelay, proposerWindowMs } from './proposers.js';
import { readChainConfigFiles } from './chain-config.js';
import { containedStream, describeFault, type FaultTarget } from './faults.js';

export class ChainError extends NodeError<'UnknownVM' | 'Exists' | 'InitFailed' | 'BadHandler' | 'Halted' | 'Bootstrapping'> {}

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
  /** The VM itself (tests look inside); the node reaches it only through the guard. */
  readonly vm: ChainVM;
  readonly engine: SnowmanEngine;
  /** Every block this node accepts on the chain, in order. */
  readonly accepted$: Observable<AcceptedBlock>;
  /** Why the chain was halted, once it was. */
  readonly fault: string | undefined;
}

/**
 * What one chain is given, built by the composition root (from the chain's own child container):
 * its ChainContext but for the abort signal, which the manager owns, and its engine's network link.
 */
export interface ChainParts {
  context: Omit<ChainContext, 'signal'>;
  link: ReturnType<EngineNetwork['open']>;
}

/** The name a chain is logged and health-checked under: its primary alias, else its ID. */
export const chainLabel = (def: ChainDefinition): string => def.aliases[0] ?? def.id.toString();

export interface ChainManagerDeps {
  registry: Pick<VMRegistry, 'resolve' | 'rootOf'>;
  /** Builds a chain's context parts; the manager itself knows nothing of how they are made. */
  chainParts: (def: ChainDefinition, vm: VMFactory) => ChainParts;
  routes: RouteTable;
  aliases: ChainAliases;
  health: HealthChecks;
  log: Logger;
  metrics: Registry;
  nodeId: ShortId;
  validators: ValidatorSets;
  /** The nodes every chain bootstraps from (the --bootstrap-ids), equal weight. */
  beacons: readonly Beacon[];
  /** Every chain's bootstrap progress (the progress bar / log lines). */
  bootstrapProgress?: (p: BootstrapProgress) => void;
  /** Who is connected (each chain's link comes with its parts). */
  network: Pick<EngineNetwork, 'connected' | 'isConnected'>;
  snow: SnowParams;
  sybilProtection: boolean;
  scheduler: Scheduler;
  /** Node-wide adaptive request timeout (its maximum also bounds a poll). */
  timeouts: AdaptiveTimeout;
  benchlist: BenchlistConfig;
  /** Deadline of every VM call but waitForEvent. */
  vmCallTimeoutMs: number;
  /** Where each chain's config.json / upgrade.json live (`<dir>/<chain ID or alias>/`); none: no files. */
  chainConfigDir?: string;
  /** A chain whose oldest processing block is older than this is unhealthy. */
  maxProcessingMs: number;
  /** Builds the JSON-RPC endpoint for a chain's services (limits, metrics). */
  endpoint: (services: readonly BoundService[]) => JsonRpcEndpoint;
}

/** What createChain's steps build up for one chain, and what they share (the fault state, the undo list). */
interface ChainSetup {
  readonly def: ChainDefinition;
  /** chainLabel(def). */
  readonly name: string;
  readonly parts: ChainParts;
  readonly log: Logger;
  /** The chain's signal (ChainContext.signal): aborted when the chain halts or stops. */
  readonly abort: AbortController;
  /** What to undo if a later step fails, in the order made. */
  readonly undo: Array<() => unknown>;
  readonly faultTarget: FaultTarget;
  readonly shutdownVM: () => Promise<void>;
  /** Why the chain halted, once it did. */
  fault: string | undefined;
  engine: SnowmanEngine | undefined;
  /** The VM behind its guard, once created. */
  guarded: ChainVM | undefined;
  /** Set while the chain bootstraps (the API refuses meanwhile). */
  bootstrapping: BootstrapProgress | undefined;
}

interface RunningChain extends Chain {
  readonly faultTarget: FaultTarget;
  /** Where the VM's code lives (package dir or plugin file), when the loader knows. */
  readonly vmRoot: string | undefined;
  readonly sender: RequestSender;
  readonly sampler: ValidatorSampler;
  stop(): Promise<void>;
}

export class ChainManager {
  readonly #chains: RunningChain[] = [];

  constructor(private readonly d: ChainManagerDeps) {
    chainStateMetrics(d.metrics, () => this.#chains);
  }

  get chains(): readonly Chain[] {
    return this.#chains;
  }

  /** The chain behind an alias or cb58 ID, if this node runs it. */
  get(aliasOrId: string): Chain | undefined {
    const id = this.d.aliases.resolve(aliasOrId);
    return id === undefined ? undefined : this.#chains.find((c) => c.id.toString() === id);
  }

  /** Whether this node runs the chain and it is not halted (platform.getBlockchainStatus 'Validating'). */
  isRunning(chainId: Id): boolean {
    return this.#chains.some((c) => c.id.equals(chainId) && c.fault === undefined);
  }

  /** For IPC: like get, with the alias table's error for unknown names. */
  resolve(aliasOrId: string): Chain | undefined {
    const id = this.d.aliases.lookup(aliasOrId);
    return this.#chains.find((c) => c.id.equals(id));
  }

  /**
   * The chains whose VM's code a stack runs through (its package directory or plugin file, as a path
   * or a file URL): a process-level fault there is theirs. The innermost frame in a VM's code decides,
   * and the most specific root when roots nest (a package inside another's node_modules).
   */
  chainsInStack(stack: string): FaultTarget[] {
    const roots = [...new Set(this.#chains.map((c) => c.vmRoot).filter((r): r is string => r !== undefined))].map((r) => ({ path: r, url: pathToFileURL(r).href }));
    for (const frame of stack.split('\n')) {
      let best: string | undefined;
      for (const r of roots) if ((frame.includes(r.path) || frame.includes(r.url)) && (!best || r.path.length > best.length)) best = r.path;
      if (best !== undefined) return this.#chains.filter((c) => c.vmRoot === best).map((c) => c.faultTarget);
    }
    return [];
  }

  /** Halts a chain this node runs (a fault confined to it); false when there is no such chain. */
  halt(chainId: Id, reason: string): boolean {
    const chain = this.#chains.find((c) => c.id.equals(chainId));
    chain?.faultTarget.fault(reason);
    return chain !== undefined;
  }

  /**
   * Creates a chain in named steps (the order below is the order of the chain's parts; each step
   * that makes something to undo pushes its undo, and a failing step undoes them in reverse).
   */
  async createChain(def: ChainDefinition): Promise<Chain> {
    if (this.#chains.some((c) => c.id.equals(def.id))) throw new ChainError('Exists', `chain ${def.id} already exists`);
    const factory = this.#resolveVM(def);
    const parts = this.#chainParts(def, factory);
    const s = this.#newSetup(def, parts);
    try {
      const { vm, guarded } = await this.#startVM(s, factory);
      await this.#initializeVM(s, guarded);
      const accepted = this.#acceptedStream(s);
      const sender = this.#requestSender(s);
      const sampler = this.#validatorSampler(s, sender);
      const engine = this.#newEngine(s, guarded, sender, sampler, accepted.subject);
      this.#attachToNetwork(s, guarded, sender, engine);
      this.#registerAliases(s);
      const bootstrapper = this.#newBootstrapper(s, guarded);
      const checkName = this.#registerHealthCheck(s, engine, sampler);
      const mounted = await this.#mountHandlers(s, guarded);
      await this.#bootstrapThenRun(s, bootstrapper, engine);
      const chain: RunningChain = {
        id: def.id,
        name: def.name,
        vmId: factory.vmId,
        subnetId: def.subnetId,
        vm,
        engine,
        accepted$: accepted.stream,
        get fault() {
          return s.fault;
        },
        faultTarget: s.faultTarget,
        vmRoot: this.d.registry.rootOf(def.vmId),
        sender,
        sampler,
        stop: async () => {
          for (const p of mounted) this.d.routes.unmount(p);
          this.d.health.unregister(checkName);
          s.abort.abort();
          await engine.stop();
          sender.stop();
          parts.link.close();
          accepted.subject.complete();
          await s.shutdownVM();
        },
      };
      this.#chains.push(chain);
      s.log.info('chain created', { chainId: def.id.toString(), name: def.name, vmId: factory.vmId.toString(), aliases: def.aliases });
      return chain;
    } catch (e) {
      await this.#undo(s, e);
      throw e;
    }
  }

  /** The chain's VM factory from the registry. */
  #resolveVM(def: ChainDefinition): VMFactory {
    try {
      return this.d.registry.resolve(def.vmId);
    } catch (e) {
      throw new ChainError('UnknownVM', `cannot create chain "${def.name}" (${def.id}): ${(e as Error).message}`);
    }
  }

  /** The chain's context parts and network link, from the composition root. */
  #chainParts(def: ChainDefinition, factory: VMFactory): ChainParts {
    try {
      return this.d.chainParts(def, factory);
    } catch (e) {
      throw new ChainError('InitFailed', `cannot create chain "${def.name}" (${def.id}): ${describeError(e)}`);
    }
  }

  /** The chain's abort signal, undo list and fault target: a fault halts the engine, aborts the signal and shuts the VM down. */
  #newSetup(def: ChainDefinition, parts: ChainParts): ChainSetup {
    const log = parts.context.log;
    const abort = new AbortController();
    let vmShutdown: Promise<void> | undefined;
    const s: ChainSetup = {
      def,
      name: chainLabel(def),
      parts,
      log,
      abort,
      undo: [() => abort.abort()],
      fault: undefined,
      engine: undefined,
      guarded: undefined,
      bootstrapping: undefined,
      /** Shuts the VM down once (bounded by the guard), whoever asks first. */
      shutdownVM: () =>
        (vmShutdown ??= s.guarded ? s.guarded.shutdown().catch((e: unknown) => log.warn('VM shutdown failed', { error: describeError(e) })) : Promise.resolve()),
      faultTarget: {
        name: chainLabel(def),
        fault: (reason) => {
          if (s.fault !== undefined) return;
          s.fault = reason;
          log.error('chain halted', { reason });
          s.engine?.halt(reason);
          abort.abort();
          // So that the VM stops its own timers; bounded by the guard.
          void s.shutdownVM();
        },
      },
    };
    return s;
  }

  /** Creates the VM and wraps it in the guard (every call bounded; a call that never settles faults the chain). */
  async #startVM(s: ChainSetup, factory: VMFactory): Promise<{ vm: ChainVM; guarded: ChainVM }> {
    const vm = await factory.create();
    // A VM in a worker thread reports the worker's death (timeout, exit, crash) as the chain's fault.
    if (isFaultSource(vm)) vm.onFault((reason) => s.faultTarget.fault(reason));
    const guarded = guardVM(vm, {
      timeoutMs: this.d.vmCallTimeoutMs,
      scheduler: this.d.scheduler,
      onHang: (call, ms) => s.faultTarget.fault(`${call} did not settle within ${ms} ms`),
    });
    s.guarded = guarded;
    s.undo.push(s.shutdownVM);
    return { vm, guarded };
  }

  /** vm.initialize with the chain's context, genesis, and config.json / upgrade.json when there are. */
  async #initializeVM(s: ChainSetup, vm: ChainVM): Promise<void> {
    const { def } = s;
    const ctx: ChainContext = { ...s.parts.context, signal: s.abort.signal };
    try {
      const { config, upgrade } = this.d.chainConfigDir ? await readChainConfigFiles(this.d.chainConfigDir, def.id, def.aliases) : {};
      await vm.initialize(ctx, { genesis: def.genesis, ...(config ? { config } : {}), ...(upgrade ? { upgrade } : {}) });
    } catch (e) {
      throw new ChainError('InitFailed', `chain "${def.name}" (${def.id}) failed to initialize: ${describeError(e)}`);
    }
  }

  /** `accepted$`, counted in cornice_chain_blocks_accepted_total. */
  #acceptedStream(s: ChainSetup): { subject: Subject<AcceptedBlock>; stream: Observable<AcceptedBlock> } {
    const subject = new Subject<AcceptedBlock>();
    // A subscriber that throws is logged with the chain; consensus and the other subscribers go on.
    const stream = containedStream(subject, (err) => s.log.error('stream subscriber failed', { error: describeFault(err) }));
    const count = this.#acceptedCounter().labels({ chain: s.def.id.toString() });
    stream.subscribe(() => count.inc());
    return { subject, stream };
  }

  /** The RequestSender between the engine and its link: deadlines, the benchlist, who answers. */
  #requestSender(s: ChainSetup): RequestSender {
    const d = this.d;
    const subnetId = s.def.subnetId;
    const sender = new RequestSender({
      link: s.parts.link.transport,
      isConnected: (node) => d.network.isConnected(node),
      scheduler: d.scheduler,
      timeouts: d.timeouts,
      // At most the share of stake a poll can miss is benched (see Benchlist).
      benchlist: new Benchlist(
        { maxPortion: 1 - d.snow.alpha / d.snow.k, ...d.benchlist },
        () => d.scheduler.now(),
        d.sybilProtection
          ? {
              weightOf: (key) => Number(d.validators.listNow(subnetId).find((v) => v.nodeId.key === key)?.weight ?? 0n),
              total: () => d.validators.listNow(subnetId).reduce((sum, v) => sum + Number(v.weight), 0),
            }
          : { weightOf: () => 1, total: () => d.network.connected().length },
      ),
      log: s.log.child({ module: 'requests' }),
    });
    s.undo.push(() => sender.stop());
    return sender;
  }

  /** Who the engine polls: the subnet's validators (or the connected nodes without sybil protection). */
  #validatorSampler(s: ChainSetup, sender: RequestSender): ValidatorSampler {
    const d = this.d;
    return validatorSampler({
      sybilProtection: d.sybilProtection,
      sets: d.validators,
      subnetId: s.def.subnetId,
      connected: () => d.network.connected(),
      status: (node) => sender.status(node),
      // A poll may miss 1 − alpha/k of the stake and still succeed: at most that is left out.
      maxLeftOut: 1 - d.snow.alpha / d.snow.k,
    });
  }

  /** The chain's Snowman engine: accepted blocks go to `accepted` (and are gossiped to non-validators); proposer windows with sybil protection. */
  #newEngine(s: ChainSetup, vm: ChainVM, sender: RequestSender, sampler: ValidatorSampler, accepted: Subject<AcceptedBlock>): SnowmanEngine {
    const d = this.d;
    const { def } = s;
    const link = s.parts.link;
    const engine = new SnowmanEngine({
      vm,
      params: d.snow,
      transport: sender,
      validators: sampler,
      nodeId: d.nodeId,
      scheduler: d.scheduler,
      log: s.log,
      queryTimeoutMs: d.timeouts.maximumMs,
      onAccepted: (block: Block) => {
        accepted.next({ id: block.id, height: block.height, bytes: block.bytes });
        // No poll reaches a node that does not validate: it hears of accepted blocks this way.
        if (d.sybilProtection) {
          const validators = new Set(d.validators.listNow(def.subnetId).map((v) => v.nodeId.key));
          const others = d.network.connected().filter((n) => !validators.has(n.key) && !n.equals(d.nodeId));
          if (others.length > 0) link.gossipAccepted(others, block.bytes);
        }
      },
      onHalt: (reason) => s.faultTarget.fault(reason),
      ...(d.sybilProtection
        ? {
            proposerDelay: proposerDelay({
              chainId: def.id,
              nodeId: d.nodeId,
              validators: () => d.validators.listNow(def.subnetId),
              // A validator that stopped answering (frozen, overloaded) loses its turn until it answers.
              isConnected: (node) => sender.status(node) === 'reachable',
              windowMs: proposerWindowMs(vm.onGossip !== undefined),
            }),
          }
        : {}),
    });
    s.engine = engine;
    s.undo.push(() => engine.stop());
    return engine;
  }

  /** Link -> sender -> engine, and the VM's app gossip (dropped once the chain is halted). */
  #attachToNetwork(s: ChainSetup, vm: ChainVM, sender: RequestSender, engine: SnowmanEngine): void {
    const link = s.parts.link;
    sender.attach(engine);
    link.attach(sender);
    s.undo.push(() => link.close());
    if (vm.onGossip) {
      const onGossip = vm.onGossip.bind(vm);
      link.attachGossip((from, payload) => {
        if (s.fault !== undefined) return;
        onGossip(from, payload).catch((e: unknown) => s.log.debug('gossip refused', { from: from.toString(), error: describeError(e) }));
      });
    }
  }

  #registerAliases(s: ChainSetup): void {
    const { def } = s;
    this.d.aliases.register(def.id, def.aliases);
    s.undo.push(() => this.d.aliases.unregister(def.id));
  }

  /** The chain's Bootstrapper (from the beacons, before the engine starts); the API says the chain is bootstrapping meanwhile. */
  #newBootstrapper(s: ChainSetup, vm: ChainVM): Bootstrapper {
    const d = this.d;
    s.bootstrapping = { chain: s.name, phase: 'waiting for beacons', fetched: 0, accepted: 0, targetHeight: undefined, height: 0, etaMs: undefined };
    const bootstrapper = new Bootstrapper({
      vm,
      transport: s.parts.link.bootstrap,
      beacons: () => d.beacons,
      isConnected: (node) => d.network.isConnected(node),
      nodeId: d.nodeId,
      scheduler: d.scheduler,
      log: s.log.child({ module: 'bootstrap' }),
      chain: s.name,
      timeouts: d.timeouts,
      onProgress: (p) => {
        if (s.bootstrapping) s.bootstrapping = p;
        d.bootstrapProgress?.(p);
      },
    });
    s.parts.link.attachBootstrap(bootstrapper);
    return bootstrapper;
  }

  /** The `chain <name>` health check; returns its name. */
  #registerHealthCheck(s: ChainSetup, engine: SnowmanEngine, sampler: ValidatorSampler): string {
    const d = this.d;
    const checkName = `chain ${s.name}`;
    d.health.register(checkName, async () =>
      chainHealth({ engine, sampler, fault: s.fault, bootstrapping: s.bootstrapping }, d.snow, d.maxProcessingMs, d.scheduler.now()),
    );
    s.undo.push(() => d.health.unregister(checkName));
    return checkName;
  }

  /** Mounts the VM's handlers at /ext/bc/<chainID>[/path] and the endpoint aliases; they refuse while the chain is halted or bootstrapping. Returns the paths mounted. */
  async #mountHandlers(s: ChainSetup, vm: ChainVM): Promise<string[]> {
    const d = this.d;
    const { def, name } = s;
    const mounted: string[] = [];
    s.undo.push(() => mounted.forEach((p) => d.routes.unmount(p)));
    /** Why the chain cannot serve now (halted, or still bootstrapping), or undefined. */
    const unavailable = (): ChainError | undefined =>
      s.fault !== undefined
        ? new ChainError('Halted', `chain ${name} is halted: ${s.fault}`)
        : s.bootstrapping
          ? new ChainError('Bootstrapping', `chain ${name} is bootstrapping (${describeBootstrap(s.bootstrapping)}); try again once it is done`)
          : undefined;
    for (const h of await vm.createHandlers()) {
      const path = h.path ? `bc/${def.id}/${h.path}` : `bc/${def.id}`;
      const kinds = [h.services?.length ? 'services' : undefined, h.http ? 'http' : undefined, h.websocket ? 'websocket' : undefined].filter(Boolean);
      if (kinds.length > 1) throw new ChainError('BadHandler', `chain "${def.name}": handler ${h.path || '/'} has ${kinds.join(' and ')}; give one kind`);
      if (h.services?.length) {
        d.routes.mount(path, { kind: 'jsonrpc', endpoint: d.endpoint(h.services.map((svc) => chainService(svc, unavailable))) });
      } else if (h.http) {
        const http = h.http;
        d.routes.mount(path, {
          kind: 'http',
          handle: (req, res) => {
            const halted = unavailable()?.message;
            if (halted === undefined) return http(req, res);
            req.resume();
            res.writeHead(503, { 'content-type': 'text/plain' });
            res.end(`${halted}\n`);
          },
        });
      } else if (h.websocket) {
        const accept = h.websocket;
        d.routes.mount(path, {
          kind: 'websocket',
          accept: (conn) => {
            const halted = unavailable()?.message;
            if (halted === undefined) accept(conn);
            else conn.close(1011, halted.slice(0, 120));
          },
        });
      } else continue;
      mounted.push(path);
    }
    for (const alias of def.endpointAliases ?? []) d.routes.alias(`bc/${def.id}`, alias);
    return mounted;
  }

  /**
   * Bootstrap, then run consensus. With no other beacon there is nothing to fetch: done at once,
   * before the chain counts as created; otherwise in the background (the API says so meanwhile).
   */
  async #bootstrapThenRun(s: ChainSetup, bootstrapper: Bootstrapper, engine: SnowmanEngine): Promise<void> {
    const d = this.d;
    const run = async () => {
      await bootstrapper.run(s.abort.signal);
      s.bootstrapping = undefined;
      await engine.start();
    };
    if (d.beacons.every((b) => b.nodeId.equals(d.nodeId))) await run();
    else {
      void run().catch((e: unknown) => {
        if (!s.abort.signal.aborted) s.faultTarget.fault(`bootstrapping failed: ${describeError(e)}`);
      });
    }
  }

  /** Undoes what the steps made, newest first, after a step failed with `e`. */
  async #undo(s: ChainSetup, e: unknown): Promise<void> {
    s.log.error('chain creation failed; undoing it', { error: describeError(e) });
    for (const step of s.undo.reverse()) {
      try {
        await step();
      } catch (err) {
        s.log.warn('cleanup step failed', { error: describeError(err) });
      }
    }
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
        this.d.log.error('chain failed to stop', { chainId: chain.id.toString(), error: describeError(e) });
      }
    }
  }
}

/** Gauges read from each chain's engine and request sender when /ext/metrics is scraped. */
function chainStateMetrics(registry: Registry, chains: () => readonly RunningChain[]): void {
  const gauges: Array<[string, string, (c: RunningChain) => number]> = [
    ['cornice_chain_polls', 'Consensus polls sent since start', (c) => c.engine.stats.pollsStarted],
    ['cornice_chain_processing_blocks', 'Blocks verified and not yet decided', (c) => c.engine.stats.processing],
    ['cornice_chain_waiting_for_validators', '1 while too little stake is reachable for a poll to succeed', (c) => (canPoll(c.sampler.reachability(), c.engine.params) ? 0 : 1)],
    ['cornice_chain_halted', '1 once the chain is halted', (c) => (c.fault !== undefined || c.engine.stats.state === 'halted' ? 1 : 0)],
    ['cornice_chain_build_failures', 'Consecutive failed block builds', (c) => c.engine.stats.buildFailures],
    ['cornice_chain_request_timeouts', 'Requests to validators that timed out since start', (c) => c.sender.stats.timedOut],
    ['cornice_chain_benched_validators', 'Validators benched now', (c) => c.sender.stats.benched],
  ];
  for (const [name, help, read] of gauges) {
    if (registry.getSingleMetric(name)) continue;
    new client.Gauge({
      name,
      help,
      labelNames: ['chain'],
      registers: [registry],
      collect() {
        this.reset();
        for (const c of chains()) this.set({ chain: c.id.toString() }, read(c));
      },
    });
  }
}

/** A chain's service as mounted: its methods refuse while the chain is halted or bootstrapping. */
function chainService(service: BoundService, unavailable: () => ChainError | undefined): BoundService {
  const methods = new Map<string, (raw: unknown) => Promise<unknown>>();
  for (const [name, method] of service.methods) {
    methods.set(name, (raw) => {
      const refused = unavailable();
      return refused === undefined ? method(raw) : Promise.reject(refused);
    });
  }
  return { def: service.def, methods };
}

function describeError(e: unknown): string {
  try {
    return e instanceof Error ? e.message : String(e);
  } catch {
    return 'an unprintable value';
  }
}
