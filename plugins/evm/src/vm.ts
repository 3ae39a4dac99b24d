/**
 * The EVM chain as a Snowman ChainVM: blocks wrap Ethereum blocks (src/chain), handlers serve the
 * Ethereum JSON-RPC at `rpc` and `ws` over the chain's EvmBackend.
 */
import {
  PrefixedStore,
  Id,
  NotFoundError,
  type ChainContext,
  type ChainHandler,
  type ChainVM,
  type ShortId,
  type VMEvent,
  type VMInit,
  type VMState,
} from '@cornice/sdk';
import type { EvmBackend } from './evm-backend.js';
import type { EvmBlock } from './block.js';
import { ChainBackend } from './chain/chain-backend.js';
import { EvmChain, type EvmChainOptions } from './chain/chain.js';
import { parseChainConfig } from './chain-config.js';
import { EvmChainError } from './errors.js';
import { EVM_VM_VERSION } from './version.js';
import { decodeTxGossip, encodeTxGossip } from './gossip.js';
import { createEthRpc, DEFAULT_ETH_RPC_LIMITS, type EthMethod, type EthRpc, type EthRpcLimits } from './rpc/index.js';


/** Longest a gossip payload's admissions run before the event loop gets a turn, ms. */
const GOSSIP_SLICE_MS = 10;

export interface EvmVMOptions extends EvmChainOptions {
  /**
   * Per-chain config bytes (the operator's chain config) -> chain options that override these.
   * Default: parseChainConfig (a JSON object with coreth's keys: `allow-unprotected-txs`,
   * `rpc-gas-cap`, `tx-pool-*`, `eth-apis`, `keystore-insecure-unlock-allowed`; other keys are logged
   * and ignored); anything else is an InvalidConfig error.
   */
  parseConfig?: (config: Uint8Array) => Partial<EvmChainOptions>;
  /** Methods added to the JSON-RPC (e.g. the subnet-EVM's eth_feeConfig), made from the backend. */
  extraMethods?: (backend: EvmBackend, chain: EvmChain) => ReadonlyMap<string, EthMethod>;
  /** web3_clientVersion (default "cornice-evm/<version>"). */
  clientVersion?: string;
  /** net_version (default 1, the C-Chain's). */
  networkId?: bigint;
  /** Bounds of the JSON-RPC front end (API.md); the chain config's keys override these. */
  ethRpcLimits?: Partial<EthRpcLimits>;
}

export class EvmVM implements ChainVM {
  #chain: EvmChain | undefined;
  #backend: ChainBackend | undefined;
  #rpc: EthRpc | undefined;
  #rpcLimits: Partial<EthRpcLimits> = {};
  #ctx: ChainContext | undefined;
  #state: VMState = 'bootstrapping';
  #shutDown = false;

  constructor(private readonly opts: EvmVMOptions = {}) {}

  async initialize(ctx: ChainContext, init: VMInit): Promise<void> {
    this.#checkOpen();
    let fromConfig: Partial<EvmChainOptions> = {};
    if (init.config && this.opts.parseConfig) fromConfig = this.opts.parseConfig(init.config);
    else if (init.config) {
      const { options, ignored } = parseChainConfig(init.config);
      fromConfig = options;
      if (ignored.length > 0) ctx.log.warn('chain config keys this VM does not read were ignored', { keys: ignored.slice(0, 20).map((k) => k.slice(0, 64)).join(', ') });
    }
    this.#ctx = ctx;
    // The config's pool bounds (tx-pool-*) override the options' one by one.
    const mempool = this.opts.mempool || fromConfig.mempool ? { mempool: { ...this.opts.mempool, ...fromConfig.mempool } } : {};
    const opts = { ...this.opts, ...fromConfig, ...mempool };
    // The call lane runs as many eth_calls as the chain has call VMs.
    const callConcurrency = opts.rpcCallConcurrency ?? DEFAULT_ETH_RPC_LIMITS.callLane.concurrency;
    this.#rpcLimits = {
      ...this.opts.ethRpcLimits,
      ...fromConfig.rpcLimits,
      callLane: { ...DEFAULT_ETH_RPC_LIMITS.callLane, ...this.opts.ethRpcLimits?.callLane, concurrency: callConcurrency },
    };
    this.#chain = await EvmChain.open(ctx, init.genesis, { ...opts, rpcCallConcurrency: callConcurrency }, init.upgrade);
    this.#backend = new ChainBackend(this.#chain, this.opts.networkId ?? 1n);
    this.#chain.admission.onAdmitted = (raw) => this.#queueGossip(raw);
  }

  /**
   * Txs another node gossiped (gossip.ts): each admitted like one sent to this node, in order (a
   * sender's nonces follow each other), and not gossiped again; one that fails its checks is skipped.
   * Without gossip a tx waited for the node it was sent to to propose: transfers sent round-robin to
   * five nodes went one per block.
   */
  async onGossip(_from: ShortId, payload: Uint8Array): Promise<void> {
    const admission = this.chain.admission;
    // Admission resolves without I/O when the state it reads is cached, so a payload of 1,024 txs held
    // the event loop (every chain's API and health waited): give it a turn every 10 ms.
    // Test: mempool-queues.test.ts ("a gossip payload gives the event loop turns").
    let since = performance.now();
    for (const raw of decodeTxGossip(payload)) {
      if (this.#shutDown) return;
      await admission.admitGossiped(raw).catch(() => undefined);
      if (performance.now() - since >= GOSSIP_SLICE_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        since = performance.now();
      }
    }
  }

  /** Txs admitted through the RPC in this turn, gossiped together at its end. */
  #toGossip: Uint8Array[] = [];

  #queueGossip(raw: Uint8Array): void {
    if (this.#toGossip.length === 0) setImmediate(() => this.#flushGossip());
    this.#toGossip.push(raw);
  }

  #flushGossip(): void {
    const txs = this.#toGossip;
    this.#toGossip = [];
    if (this.#shutDown || !this.#ctx) return;
    try {
      for (const payload of encodeTxGossip(txs)) this.#ctx.network.gossip(payload);
    } catch (e) {
      // Best effort: the txs are pooled here and reach the others in this node's blocks.
      this.#chain?.log.warn('could not gossip admitted txs', { txs: txs.length, error: (e as Error).message });
    }
  }

  /** The chain (after initialize): for tests, benches and extensions. */
  get chain(): EvmChain {
    return this.#ready();
  }

  /** The EvmBackend the JSON-RPC serves (after initialize). */
  get backend(): ChainBackend {
    this.#ready();
    return this.#backend!;
  }

  get state(): VMState {
    return this.#state;
  }

  async setState(state: VMState): Promise<void> {
    this.#ready();
    this.#state = state;
  }

  async buildBlock(): Promise<EvmBlock> {
    return this.#ready().buildBlock();
  }

  async parseBlock(bytes: Uint8Array): Promise<EvmBlock> {
    return this.#ready().parseBlock(bytes);
  }

  async getBlock(id: Id): Promise<EvmBlock> {
    const b = await this.#ready().getBlock(id.bytes);
    if (!b || b.status === 'rejected') throw new NotFoundError(`block ${id} not found`);
    return b;
  }

  async setPreference(id: Id): Promise<void> {
    const b = await this.getBlock(id);
    this.#ready().setPreference(b);
  }

  async lastAccepted(): Promise<Id> {
    return this.#ready().lastAccepted.id;
  }

  async getBlockIdAtHeight(height: number): Promise<Id> {
    const chain = this.#ready();
    const last = chain.lastAccepted.height;
    if (!Number.isSafeInteger(height) || height < 0 || height > last) {
      throw new NotFoundError(`no accepted block at height ${height} (last accepted height is ${last})`);
    }
    const hash = await chain.store.hashAt(BigInt(height));
    if (!hash) throw new EvmChainError('CorruptDatabase', `accepted block at height ${height} is missing from the index`);
    return Id.fromBytes(hash);
  }

  async waitForEvent(signal: AbortSignal): Promise<VMEvent> {
    this.#checkOpen();
    return this.#ready().waitForEvent(signal);
  }

  async createHandlers(): Promise<ChainHandler[]> {
    const chain = this.#ready();
    const ctx = this.#ctx!;
    this.#rpc ??= createEthRpc(this.#backend!, {
      clientVersion: this.opts.clientVersion ?? `cornice-evm/${EVM_VM_VERSION}`,
      accounts: new PrefixedStore(ctx.db, 'personal'),
      log: chain.log,
      clock: ctx.clock,
      personal: { enabled: chain.options.personalApi ?? false, allowInsecureUnlock: chain.options.allowInsecureUnlock ?? false },
      // On for every EVM chain of a node started with --evm-debug-api (npm start, cornice network
      // start: a dev node), or for this chain by its config's eth-apis. Test: vm-debug-api.test.ts.
      debugApi: ctx.debugApis === true || chain.options.debugApi === true,
      limits: this.#rpcLimits,
      ...(this.opts.extraMethods ? { extraMethods: this.opts.extraMethods(this.#backend!, chain) } : {}),
    });
    return [
      { path: 'rpc', http: this.#rpc.http },
      { path: 'ws', websocket: this.#rpc.websocket },
    ];
  }

  async shutdown(): Promise<void> {
    if (this.#shutDown) return;
    this.#shutDown = true;
    this.#rpc?.close();
    this.#chain?.close();
    this.#chain?.log.info('shut down');
  }

  #checkOpen(): void {
    if (this.#shutDown) throw new EvmChainError('ShutDown', 'the EVM VM is shut down');
  }

  #ready(): EvmChain {
    this.#checkOpen();
    if (!this.#chain) throw new EvmChainError('NotInitialized', 'the EVM VM is not initialized');
    return this.#chain;
  }
}
