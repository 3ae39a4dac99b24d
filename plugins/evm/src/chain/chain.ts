/**
 * The EVM chain: Ethereum blocks under Snowman. Holds the accepted tip, the processing blocks, the
 * mempool, the executing VM (build/verify) and the reading VM (state reads, eth_call at the accepted
 * root), and persists accepted blocks with their trie nodes in one batch.
 *
 * One piece (past 600 lines) because verify, accept, reject, setPreference and the builder move the
 * same state together: the processing blocks, the preferred and last accepted block, the nonces
 * the preferred branch reaches and the caches of accepted blocks and txs. What stands apart is in
 * modules of its own: execution (executor.ts), reads and calls (reader.ts), the pool (mempool.ts),
 * admission (admission.ts), records (store.ts), the state trie (state/).
 */
import { BlockMap, EventWaiter, NodeError, NotFoundError, PrefixedStore, serializer, toHex, type ChainContext, type KeyValueStore, type Logger, type VMEvent } from '@cornice/sdk';
import { createBlockFromRLP, type Block as EthBlock } from '@ethereumjs/block';
import type { Common } from '@ethereumjs/common';
import type { TypedTransaction } from '@ethereumjs/tx';
import { equalsBytes, KECCAK256_RLP_ARRAY } from '@ethereumjs/util';
import { Subject } from 'rxjs';
import type { AcceptedBlock, TxView } from '../evm-backend.js';
import { EvmBlock, type BlockHost } from '../block.js';
import { EvmChainError } from '../errors.js';
import { TxAdmission } from './admission.js';
import { chainCommon, Executor, ZERO8, type CustomPrecompiles, type Execution } from './executor.js';
import type { BlockInfo, ChainRules, ChainRulesFactory, HeaderFields } from './rules.js';
import { dynamicFeeRules, type FeeRules } from './fees.js';
import { parseGenesis, type EvmGenesis } from './genesis.js';
import { feeHeaderFields, headerFields, headerProblem, hookState, knownHeaderFields, parentHeader } from './hooks.js';
import { Mempool, MEMPOOL_OPTION_MINIMUMS, type MempoolOptions } from './mempool.js';
import { StateReader } from './reader.js';
import { StateDB } from './state/state-db.js';
import { ChainStore, encodeReceipts } from './store.js';
import { blockView, receiptViews } from './views.js';

export interface EvmChainOptions {
  /** Fee rules from the genesis (default: the C-Chain's dynamic rule, 25 gwei floor). */
  fees?: (genesis: EvmGenesis) => FeeRules;
  /**
   * Chain rules from the genesis and the upgrade config (the subnet-EVM's fee config, precompiles,
   * allow lists): see chain/rules.ts.
   */
  rules?: ChainRulesFactory;
  /** ethereumjs custom precompiles (stateless; stateful ones go in `rules`). */
  customPrecompiles?: CustomPrecompiles;
  /** VM params overrides. */
  vmParams?: Record<string, Record<string, unknown>>;
  mempool?: MempoolOptions;
  /** Most txs in a block (default 2,000). */
  maxBlockTxs?: number;
  /** Largest raw tx admitted, bytes (default 128 KiB, as geth). */
  maxTxBytes?: number;
  /** Admit legacy txs without EIP-155 replay protection (default false, as coreth). */
  allowUnprotectedTxs?: boolean;
  /**
   * Most fee (gas × fee cap, whole native units) of a tx sent or signed through the RPC (default 100,
   * as coreth's rpc-tx-fee-cap; 0: no bound). admission.ts, tx-fee-cap.ts.
   */
  rpcTxFeeCap?: number;
  /** Gas cap of eth_call / eth_estimateGas (default 50,000,000, as coreth). */
  rpcGasCap?: bigint;
  /** Longest an eth_call or eth_estimateGas runs, ms (default 5,000, as geth's --rpc.evmtimeout; 0: no bound). */
  rpcEvmTimeoutMs?: number;
  /**
   * eth_calls / eth_estimateGas run at once, each on a VM of its own beside the one reads and
   * admission use (default 3); the JSON-RPC front end's call lane runs as many (rpc/lanes.ts).
   */
  rpcCallConcurrency?: number;
  /**
   * Bounds of the JSON-RPC front end (rpc/index.ts EthRpcLimits) from the chain config
   * (`batch-request-limit`, `batch-response-max-size`, `http-body-limit`): the VM hands them to
   * createEthRpc; the chain does not read them.
   */
  rpcLimits?: { readonly maxBatchItems?: number; readonly maxResponseChars?: number; readonly maxBodyBytes?: number };
  /** eth_getLogs bounds: widest block range (default 100,000) and most logs returned (default 10,000). */
  logsMaxBlockRange?: bigint;
  logsMaxResults?: number;
  /** How far ahead of local time a block's timestamp may be, seconds (default 10). */
  maxFutureSeconds?: number;
  /** Accepted blocks kept decoded in memory (default 256). */
  blockCacheSize?: number;
  /** Trie node LRU entries per trie (default 50,000). */
  trieCacheSize?: number;
  /** Locations of the most recently accepted txs kept in memory (default 65,536). */
  recentTxIndexSize?: number;
  /**
   * personal_ and the node-held accounts it manages (eth_accounts, eth_sendTransaction, eth_sign) are
   * served (default false, as coreth: its eth-apis without "internal-personal"). Read by the JSON-RPC
   * front end (rpc/personal.ts).
   */
  personalApi?: boolean;
  /** personal_unlockAccount over HTTP, for every caller, is allowed (default false: coreth's keystore-insecure-unlock-allowed, geth's --allow-insecure-unlock). */
  allowInsecureUnlock?: boolean;
  /**
   * Serve debug_trace*, debug_getRaw*, trace_transaction and trace_block (chain config `eth-apis`
   * listing "debug-tracer", "internal-debug" or geth's "debug"); the node's --evm-debug-api
   * (ChainContext.debugApis) turns them on whatever this says.
   */
  debugApi?: boolean;
  /**
   * Longest an eth_getTransactionReceipt of a pooled tx waits for the tx's block to be accepted, ms
   * (default 2,000; 0: answer null at once, as geth). See ChainBackend.receipt.
   */
  receiptWaitMs?: number;
}

/** Where an accepted tx is: its block's number and its index there. */
export interface TxLocation {
  readonly number: bigint;
  readonly index: number;
}

/** The least each numeric option may be (a negative bound or size would mean none, or a crash later). */
const OPTION_MINIMUMS: Partial<Record<keyof EvmChainOptions, number>> = {
  maxBlockTxs: 1,
  maxTxBytes: 1,
  rpcEvmTimeoutMs: 0,
  rpcCallConcurrency: 1,
  logsMaxResults: 1,
  maxFutureSeconds: 0,
  blockCacheSize: 1,
  trieCacheSize: 0,
  recentTxIndexSize: 0,
  receiptWaitMs: 0,
};

/** Throws InvalidConfig naming the first option that is out of range. */
export function checkOptions(opts: EvmChainOptions): void {
  for (const [name, min] of Object.entries(OPTION_MINIMUMS) as [keyof EvmChainOptions, number][]) {
    const v = opts[name];
    if (v !== undefined && !(typeof v === 'number' && Number.isSafeInteger(v) && v >= min)) {
      throw new EvmChainError('InvalidConfig', `invalid chain option ${name}: must be a whole number >= ${min}, got ${String(v)}`);
    }
  }
  for (const [name, min] of Object.entries(MEMPOOL_OPTION_MINIMUMS) as [keyof MempoolOptions, number][]) {
    const v = opts.mempool?.[name];
    if (v !== undefined && !(typeof v === 'number' && Number.isSafeInteger(v) && v >= min)) {
      throw new EvmChainError('InvalidConfig', `invalid chain option mempool.${name}: must be a whole number >= ${min}, got ${String(v)}`);
    }
  }
  const feeCap = opts.rpcTxFeeCap;
  if (feeCap !== undefined && !(typeof feeCap === 'number' && Number.isFinite(feeCap) && feeCap >= 0)) {
    throw new EvmChainError('InvalidConfig', `invalid chain option rpcTxFeeCap: must be a number >= 0, got ${String(feeCap)}`);
  }
  for (const name of ['rpcGasCap', 'logsMaxBlockRange'] as const) {
    const v = opts[name];
    if (v !== undefined && !(typeof v === 'bigint' && v > 0n)) throw new EvmChainError('InvalidConfig', `invalid chain option ${name}: must be a bigint > 0, got ${String(v)}`);
  }
}

const systemTimers = {
  setTimeout(fn: () => void, ms: number) {
    const t = setTimeout(fn, ms);
    t.unref?.();
    return { cancel: () => clearTimeout(t) };
  },
};

export class EvmChain {
  readonly common: Common;
  /** The Common txs and blocks are decoded and signed with (shared, see sharedTxCommon). */
  readonly txCommon: Common;
  /** Options of the blocks the chain makes and decodes (Executor.blockOpts). */
  readonly blockOpts: Executor['blockOpts'];
  readonly genesis: EvmGenesis;
  readonly fees: FeeRules;
  /** The chain rules (undefined: the C-Chain). */
  readonly rules: ChainRules | undefined;
  readonly mempool: Mempool;
  readonly store: ChainStore;
  readonly reader: StateReader;
  readonly accepted$ = new Subject<AcceptedBlock>();
  readonly pending$ = new Subject<TxView>();
  /** Tx admission (sent, signed here, gossiped): its checks, the pool, the gossip hook `onAdmitted`. */
  readonly admission: TxAdmission;
  readonly log: Logger;
  /** The chain's store under which personal_ accounts live. */
  readonly accountsStore: KeyValueStore;

  readonly #ctx: ChainContext;
  readonly #opts: EvmChainOptions;
  readonly #stateDb: StateDB;
  readonly #stateSub: PrefixedStore;
  readonly #chainSub: PrefixedStore;
  readonly #exec: Executor;
  readonly #execQueue = serializer();
  readonly #waiter: EventWaiter;
  readonly #host: BlockHost;
  /** Processing blocks by hash hex. */
  readonly #processing = new BlockMap<EvmBlock>();
  /** Recently accepted blocks by hash hex, least recently used first. */
  readonly #recent = new Map<string, EvmBlock>();
  /** The same blocks by height (accepted blocks are final: the height names one block). */
  readonly #recentByHeight = new Map<bigint, EvmBlock>();
  /** Where the txs of recently accepted blocks are, by tx hash hex, oldest first (bounded). */
  readonly #recentTxs = new Map<string, TxLocation>();
  #lastAccepted!: EvmBlock;
  #preferred!: EvmBlock;
  /** `#buildableAt`'s answer for one preferred block. */
  #buildable: { block: EvmBlock; at: Promise<bigint | undefined> } | undefined;
  #tip = new Map<string, bigint>();
  #closed = false;
  /** Receipt requests waiting for a pooled tx to leave the pool, by tx hash. */
  readonly #poolLeaveWaiters = new Map<string, Set<() => void>>();

  private constructor(ctx: ChainContext, genesis: EvmGenesis, opts: EvmChainOptions, rules: ChainRules | undefined, exec: Executor, stateDb: StateDB, stateSub: PrefixedStore, chainSub: PrefixedStore, reader: StateReader) {
    this.#ctx = ctx;
    this.#opts = opts;
    this.genesis = genesis;
    this.rules = rules;
    this.common = exec.common;
    this.txCommon = exec.dataCommon;
    this.blockOpts = exec.blockOpts;
    this.fees = (opts.fees ?? ((g: EvmGenesis) => dynamicFeeRules({ gasLimit: g.gasLimit })))(genesis);
    // A tx leaving the pool by any way (evicted, expired, dropped, mined) releases receipt waiters at once.
    this.mempool = new Mempool(opts.mempool, {
      now: () => ctx.clock.now(),
      onLeave: (e, reason) => {
        this.#releasePoolLeave(e.hashKey);
        if (reason === 'evicted' || reason === 'expired') this.log.debug('tx left the pool', { tx: e.hashKey, reason });
      },
    });
    this.#stateDb = stateDb;
    this.#stateSub = stateSub;
    this.#chainSub = chainSub;
    this.store = new ChainStore(chainSub);
    this.accountsStore = new PrefixedStore(ctx.db, 'accounts');
    this.#exec = exec;
    this.reader = reader;
    this.log = ctx.log.child({ module: 'evm' });
    this.#waiter = new EventWaiter({ timers: systemTimers, now: () => ctx.clock.now(), maxSleepMs: 60_000 });
    this.#host = {
      verify: (b) => this.#verify(b),
      accept: (b) => this.#accept(b),
      reject: (b) => this.#reject(b),
    };
    this.admission = new TxAdmission(this, { maxTxBytes: opts.maxTxBytes, allowUnprotectedTxs: opts.allowUnprotectedTxs, rpcTxFeeCap: opts.rpcTxFeeCap });
  }

  /**
   * Opens the chain: writes the genesis on a new database, or resumes from the last accepted block.
   * `upgrade` (the chain's upgrade.json, if any) goes to the rules factory with the genesis.
   */
  static async open(ctx: ChainContext, genesisBytes: Uint8Array, opts: EvmChainOptions = {}, upgrade?: Uint8Array): Promise<EvmChain> {
    checkOptions(opts);
    const genesis = parseGenesis(genesisBytes);
    const rules = makeRules(opts.rules, genesis, upgrade);
    const common = chainCommon(genesis.chainId);
    const stateSub = new PrefixedStore(ctx.db, 'state');
    const chainSub = new PrefixedStore(ctx.db, 'chain');
    const stateDb = new StateDB(stateSub);
    const store = new ChainStore(chainSub);
    let chain: EvmChain | undefined;
    const blockHash = (n: bigint) => chain!.#hashAt(n);
    const fees = (opts.fees ?? ((g: EvmGenesis) => dynamicFeeRules({ gasLimit: g.gasLimit })))(genesis);
    const hooks = {
      fees,
      ...(rules ? { rules } : {}),
      ...(opts.customPrecompiles ? { customPrecompiles: opts.customPrecompiles } : {}),
      ...(opts.vmParams ? { vmParams: opts.vmParams } : {}),
      trieCacheSize: opts.trieCacheSize ?? 50_000,
    };
    const exec = await Executor.create(common, stateDb, hooks, blockHash);
    const reader = await StateReader.create(common, stateDb, hooks, blockHash, opts.rpcCallConcurrency);
    chain = new EvmChain(ctx, genesis, { ...opts, fees: () => fees }, rules, exec, stateDb, stateSub, chainSub, reader);
    const genesisBlock = await exec.genesisBlock(genesis);
    const lastHash = await store.lastAccepted();
    if (lastHash === undefined) {
      const g = chain.#make(genesisBlock, 'accepted');
      g.execution = { block: genesisBlock, receipts: [], senders: [], dropped: [] };
      await chain.#persist(g);
      chain.#lastAccepted = g;
      chain.log.info('genesis block written', { hash: toHex(genesisBlock.hash()), stateRoot: toHex(genesisBlock.header.stateRoot) });
    } else {
      const stored = await store.genesisHash();
      if (stored === undefined || !equalsBytes(stored, genesisBlock.hash())) {
        throw new EvmChainError('GenesisMismatch', 'the chain database was created from a different genesis', {
          expected: toHex(genesisBlock.hash()),
          stored: stored && toHex(stored),
        });
      }
      const last = await chain.#readAccepted(lastHash);
      if (!last) throw ChainStore.corrupt(`last accepted block ${toHex(lastHash)} is missing`);
      chain.#lastAccepted = last;
    }
    chain.#preferred = chain.#lastAccepted;
    chain.#cache(chain.#lastAccepted);
    await exec.moveTo(chain.#lastAccepted.eth.header.stateRoot);
    reader.setAcceptedRoot(chain.#lastAccepted.eth.header.stateRoot);
    chain.log.info('initialized', { lastAccepted: toHex(lastHash ?? genesisBlock.hash()), height: chain.#lastAccepted.height });
    return chain;
  }

  get lastAccepted(): EvmBlock {
    return this.#lastAccepted;
  }

  get preferred(): EvmBlock {
    return this.#preferred;
  }

  get chainId(): bigint {
    return this.genesis.chainId;
  }

  /** Base fee of the next block on the accepted tip. */
  async nextBaseFee(): Promise<bigint> {
    return (await this.nextHeader()).fields.baseFeePerGas;
  }

  /** The rule-decided header fields of the next block on the accepted tip, made now, with its BlockInfo. */
  async nextHeader(): Promise<{ readonly fields: HeaderFields; readonly info: BlockInfo }> {
    const parent = this.#lastAccepted.eth;
    const now = BigInt(Math.floor(this.#ctx.clock.now() / 1000));
    const timestamp = now > parent.header.timestamp ? now : parent.header.timestamp;
    const fields = await this.headerFieldsOn(parent, timestamp);
    const info: BlockInfo = { number: parent.header.number + 1n, timestamp, parentTimestamp: parent.header.timestamp, coinbase: fields.coinbase, baseFeePerGas: fields.baseFeePerGas };
    return { fields, info };
  }

  /** The rule-decided header fields of a block on `parent` at `timestamp` (the rules read the parent's state). */
  headerFieldsOn(parent: EthBlock, timestamp: bigint): Promise<HeaderFields> {
    if (!this.rules?.header) return Promise.resolve(feeHeaderFields(parent, timestamp, this.fees));
    // Asked on every admission: a known answer needs no turn on the reader's queue.
    const known = knownHeaderFields(parent, timestamp, this.rules);
    if (known) return Promise.resolve(known);
    return this.reader.readState(parent.header.stateRoot, (sm) => headerFields(parent, timestamp, this.fees, this.rules, () => hookState(sm)));
  }

  /** The rules' extra JSON fields of a block's header (eth_getBlockBy*, newHeads), if any. */
  headerExtras(b: EthBlock): Readonly<Record<string, unknown>> | undefined {
    return this.rules?.headerJson?.({ extraData: b.header.extraData, number: b.header.number });
  }

  /** The next nonce a sender's tx would need on the preferred chain, if processing blocks moved it. */
  tipNonce(senderKey: string): bigint | undefined {
    return this.#tip.get(senderKey);
  }

  get options(): Readonly<EvmChainOptions> {
    return this.#opts;
  }

  // ------------------------------------------------------------------ blocks

  /** A known block: processing, or accepted (from memory or the store). */
  async getBlock(hash: Uint8Array): Promise<EvmBlock | undefined> {
    const key = toHex(hash);
    return this.#processing.get(key) ?? this.#recentGet(key) ?? (await this.#readAccepted(hash));
  }

  /** The accepted block at `number`. */
  async acceptedAt(number: bigint): Promise<EvmBlock | undefined> {
    if (number < 0n || number > BigInt(this.#lastAccepted.height)) return undefined;
    if (number === BigInt(this.#lastAccepted.height)) return this.#lastAccepted;
    const recent = this.#recentByHeight.get(number);
    if (recent) return recent;
    const hash = await this.store.hashAt(number);
    return hash && (await this.getBlock(hash));
  }

  /**
   * Where an accepted tx is: from memory for the most recent ones (a client polls for the receipt of
   * what it just sent), else from the store's tx index.
   */
  async txLocation(hash: Uint8Array): Promise<TxLocation | undefined> {
    return this.#recentTxs.get(toHex(hash)) ?? (await this.store.txLocation(hash));
  }

  /** An accepted block by hash (not processing ones). */
  async acceptedByHash(hash: Uint8Array): Promise<EvmBlock | undefined> {
    const key = toHex(hash);
    const b = this.#recentGet(key) ?? (await this.#readAccepted(hash));
    return b?.status === 'accepted' ? b : undefined;
  }

  async parseBlock(bytes: Uint8Array): Promise<EvmBlock> {
    let eth: EthBlock;
    try {
      eth = createBlockFromRLP(bytes, this.blockOpts);
    } catch (e) {
      throw new EvmChainError('MalformedBlock', `block bytes are not an Ethereum block of this chain: ${(e as Error).message}`);
    }
    const hash = eth.hash();
    const known = (await this.getBlock(hash)) ?? this.#processing.get(toHex(hash));
    if (known) return known;
    // Not registered until verified (#verify): the engine parses a block each time a query, a Put or
    // gossip carries it, concurrently, and verifies one of the objects; an unverified twin left where
    // children look up their parent failed them (compliance check "one block per ID"), and blocks
    // that are never verified are not kept.
    return this.#make(eth, 'processing', bytes.slice());
  }

  async buildBlock(): Promise<EvmBlock> {
    this.#checkOpen();
    const parent = this.#preferred;
    const max = this.#opts.maxBlockTxs ?? 2000;
    const candidates = this.mempool.candidates(this.#tip, max);
    if (candidates.length === 0) throw new EvmChainError('NothingToBuild', 'no executable transaction to build a block from');
    const now = BigInt(Math.floor(this.#ctx.clock.now() / 1000));
    const timestamp = now > parent.eth.header.timestamp ? now : parent.eth.header.timestamp;
    const exec = await this.#execQueue(() => this.#exec.build(parent.eth, timestamp, candidates.map((c) => c.tx), max));
    for (const d of exec.dropped) {
      const key = toHex(d.tx.hash());
      this.mempool.remove(key);
      this.#releasePoolLeave(key);
      this.log.debug('tx dropped at build', { tx: key, reason: d.reason });
    }
    if (exec.block.transactions.length === 0) {
      throw new EvmChainError('NothingToBuild', 'no pending transaction could run on the preferred block');
    }
    const feeProblem = this.#exec.blockFeeProblem(exec);
    if (feeProblem !== undefined) {
      // Not proposed: the txs stay pooled; waitForEvent waits for the rules' buildableAt.
      this.log.debug('built block fails the block-fee check', { reason: feeProblem });
      throw new EvmChainError('NothingToBuild', `the block would fail the block-fee check: ${feeProblem}`);
    }
    const key = toHex(exec.block.hash());
    const known = this.#processing.get(key);
    if (known) return known;
    const block = this.#make(exec.block, 'processing', undefined, exec);
    this.#processing.add(block);
    return block;
  }

  setPreference(block: EvmBlock): void {
    this.#preferred = block;
    this.#recomputeTip();
    this.#waiter.wake();
  }

  waitForEvent(signal: AbortSignal): Promise<VMEvent> {
    return this.#waiter.wait(
      signal,
      async () => {
        if (!this.mempool.hasExecutable(this.#tip)) return undefined;
        const at = this.rules?.buildableAt ? await this.#buildableAt() : undefined;
        return at === undefined || at * 1000n <= BigInt(Math.floor(this.#ctx.clock.now())) ? 'now' : Number(at);
      },
      () => {
        if (this.#closed) throw new EvmChainError('ShutDown', 'the EVM chain is shut down');
        if (signal.aborted) throw new EvmChainError('Aborted', 'waitForEvent aborted');
      },
    );
  }

  /**
   * The rules' earliest second to build on the preferred block (read on its state). It depends on that
   * block alone, so it is kept per preferred block: waitForEvent asks on every pooled tx, and each read
   * opens the block's state.
   */
  #buildableAt(): Promise<bigint | undefined> {
    const block = this.#preferred;
    if (this.#buildable?.block === block) return this.#buildable.at;
    const parent = block.eth;
    const at = this.reader.readState(parent.header.stateRoot, (sm) => this.rules!.buildableAt!(parentHeader(parent), hookState(sm)));
    this.#buildable = { block, at };
    at.catch(() => {
      if (this.#buildable?.at === at) this.#buildable = undefined;
    });
    return at;
  }

  /**
   * Resolves once the pooled tx `hashKey` has left the pool (its block accepted, or dropped), or after
   * `ms`, or at shutdown; at once if it is not pooled.
   */
  untilLeavesPool(hashKey: string, ms: number): Promise<void> {
    if (this.#closed || ms <= 0 || !this.mempool.get(hashKey)) return Promise.resolve();
    return new Promise((resolve) => {
      let waiters = this.#poolLeaveWaiters.get(hashKey);
      if (!waiters) this.#poolLeaveWaiters.set(hashKey, (waiters = new Set()));
      // Not unref'd: a waiting request is work in flight (close() releases it).
      const timer = setTimeout(() => done(), ms);
      const done = () => {
        clearTimeout(timer);
        waiters.delete(done);
        if (waiters.size === 0) this.#poolLeaveWaiters.delete(hashKey);
        resolve();
      };
      waiters.add(done);
    });
  }

  #releasePoolLeave(hashKey: string): void {
    const waiters = this.#poolLeaveWaiters.get(hashKey);
    if (waiters) for (const done of [...waiters]) done();
  }

  /** Something may be executable now (a tx was admitted). */
  wake(): void {
    this.#waiter.wake();
  }

  close(): void {
    this.#closed = true;
    this.#waiter.wake();
    for (const key of [...this.#poolLeaveWaiters.keys()]) this.#releasePoolLeave(key);
    this.accepted$.complete();
    this.pending$.complete();
    this.#processing.clear();
  }

  // ------------------------------------------------------------------ decisions

  async #verify(b: EvmBlock): Promise<void> {
    this.#checkOpen();
    if (b.status === 'accepted') return;
    if (b.status === 'rejected') throw new EvmChainError('AlreadyDecided', `block ${b.id} was rejected`);
    if (b.verified) return;
    const parent = await this.getBlock(b.eth.header.parentHash);
    if (!parent) throw new EvmChainError('UnknownParent', `parent ${b.parentId} of block ${b.id} is unknown`);
    if (parent.status === 'rejected' || !parent.verified) throw new EvmChainError('UnknownParent', `parent ${b.parentId} of block ${b.id} is not verified`);
    if (b.execution) {
      // Built here on this parent: its execution is the verification.
      b.verified = true;
      this.#register(b);
      return;
    }
    this.#checkHeader(parent, b);
    b.execution = await this.#execQueue(async () => {
      // The rule-decided fields (gas limit, base fee, coinbase, extraData) on the parent's state.
      const state = await this.#exec.parentState(parent.eth);
      const why = await headerProblem(parent.eth, b.eth.header, this.fees, this.rules, () => state);
      if (why !== undefined) throw new EvmChainError('InvalidBlock', `invalid block ${b.id}: ${why}`);
      return this.#exec.replay(parent.eth, b.eth);
    });
    b.verified = true;
    this.#register(b);
  }

  /** A verified block becomes the one getBlock and its children's verify find (unless a twin was verified first). */
  #register(b: EvmBlock): void {
    this.#processing.addVerified(b);
  }

  /** The header checks that need no state. */
  #checkHeader(parent: EvmBlock, b: EvmBlock): void {
    const h = b.eth.header;
    const p = parent.eth.header;
    const bad = (why: string) => new EvmChainError('InvalidBlock', `invalid block ${b.id}: ${why}`);
    if (h.number !== p.number + 1n) throw bad(`number ${h.number} is not its parent's + 1`);
    if (h.timestamp < p.timestamp) throw bad("timestamp is before its parent's");
    const now = BigInt(Math.floor(this.#ctx.clock.now() / 1000));
    if (h.timestamp > now + BigInt(this.#opts.maxFutureSeconds ?? 10)) throw bad('timestamp is too far in the future');
    if (h.difficulty !== 0n) throw bad('difficulty must be 0');
    if (!equalsBytes(h.nonce, ZERO8)) throw bad('nonce must be 0');
    if (!equalsBytes(h.uncleHash, KECCAK256_RLP_ARRAY)) throw bad('uncle hash must be the empty list hash');
    if (b.eth.uncleHeaders.length > 0) throw bad('uncles are not allowed');
    if ((b.eth.withdrawals?.length ?? 0) > 0) throw bad('withdrawals are not allowed');
    if ((h.blobGasUsed ?? 0n) !== 0n || (h.excessBlobGas ?? 0n) !== 0n) throw bad('blob gas must be 0');
    const maxExtra = this.rules?.maxExtraDataBytes ?? 32;
    if (h.extraData.length > maxExtra) throw bad(`extra data is longer than ${maxExtra} bytes`);
  }

  async #accept(b: EvmBlock): Promise<void> {
    this.#checkOpen();
    if (b.status === 'accepted') return;
    if (b.status === 'rejected') throw new EvmChainError('AlreadyDecided', `block ${b.id} was rejected; it cannot be accepted`);
    if (!b.parentId.equals(this.#lastAccepted.id)) {
      throw new EvmChainError('NotNextBlock', `block ${b.id} does not extend the last accepted block ${this.#lastAccepted.id}`);
    }
    if (!b.execution) await this.#verify(b);
    await this.#persist(b);
    b.status = 'accepted';
    b.verified = true;
    this.#processing.delete(toHex(b.eth.hash()));
    const parentRoot = this.#lastAccepted.eth.header.stateRoot;
    this.#lastAccepted = b;
    this.#cache(b);
    const accounts = b.execution?.accounts;
    this.reader.setAcceptedRoot(b.eth.header.stateRoot, accounts ? { from: parentRoot, accounts } : undefined);
    // The reader has them now; the block stays cached (blockCacheSize) without them.
    if (accounts) b.execution = { ...b.execution!, accounts: undefined };
    const next = new Map<string, bigint>();
    const senders = b.execution!.senders;
    b.eth.transactions.forEach((tx, i) => {
      const key = toHex(senders[i]!);
      const n = tx.nonce + 1n;
      if ((next.get(key) ?? -1n) < n) next.set(key, n);
    });
    const promoted: TypedTransaction[] = [];
    for (const [key, n] of next) for (const e of this.mempool.accepted(key, n)) promoted.push(e.tx);
    // Announced (gossiped): unannounced, a tx sent to a node that was behind waits there and holds
    // every later nonce of its sender on the other nodes (gossip.test.ts "a tx sent to a node that is behind").
    if (promoted.length > 0) this.admission.announce(promoted);
    if (this.#poolLeaveWaiters.size > 0) for (const tx of b.eth.transactions) this.#releasePoolLeave(toHex(tx.hash()));
    if (this.#preferred.status !== 'processing' || !this.#onPreferredChain(this.#preferred)) this.#preferred = b;
    this.#recomputeTip();
    this.#waiter.wake();
    if (this.accepted$.observed) this.#emitAccepted(b);
  }

  #emitAccepted(b: EvmBlock): void {
    try {
      this.accepted$.next({ block: blockView(b.eth, b.rawBytes.length, this.headerExtras(b.eth)), receipts: receiptViews(b.eth, b.execution!.receipts, this.common) });
    } catch (e) {
      this.log.warn('accepted block subscriber failed', { error: (e as Error).message });
    }
  }

  async #reject(b: EvmBlock): Promise<void> {
    if (b.status === 'rejected') return;
    if (b.status === 'accepted') throw new EvmChainError('AlreadyDecided', `block ${b.id} was accepted; it cannot be rejected`);
    b.status = 'rejected';
    this.#processing.delete(toHex(b.eth.hash()));
    if (this.#preferred === b || !this.#onPreferredChain(this.#preferred)) this.#preferred = this.#lastAccepted;
    this.#recomputeTip();
    this.#waiter.wake();
  }

  /** Writes an accepted block's records and every held trie node in one batch. */
  async #persist(b: EvmBlock): Promise<void> {
    const exec = b.execution!;
    const batch = this.#ctx.db.batch();
    const snapshot = this.#stateDb.flushInto(this.#stateSub.within(batch));
    const hasLogs = exec.receipts.some((r) => r.logs.length > 0);
    this.store.accept(this.#chainSub.within(batch), {
      hash: b.eth.hash(),
      number: b.eth.header.number,
      bytes: b.rawBytes,
      receipts: encodeReceipts(exec.receipts),
      txHashes: b.eth.transactions.map((tx) => tx.hash()),
      ...(hasLogs ? { logsBloom: b.eth.header.logsBloom } : {}),
    });
    await batch.write();
    this.#stateDb.flushed(snapshot);
  }

  // ------------------------------------------------------------------ helpers

  #make(eth: EthBlock, status: 'processing' | 'accepted', bytes?: Uint8Array, execution?: Execution): EvmBlock {
    return new EvmBlock(this.#host, eth, bytes ?? eth.serialize(), status, execution);
  }

  /**
   * True when `b` descends from the last accepted block through processing blocks. The last accepted
   * block is no longer in #processing, so the walk ends at a parent hash, not at a processing block:
   * accepting the first of several processing blocks keeps the preference on their tip (ending the
   * walk at a missing entry reset it to the accepted block, and the next build made a sibling of
   * blocks already built, executing their txs again).
   */
  #onPreferredChain(b: EvmBlock): boolean {
    let cur = b;
    while (cur.status === 'processing') {
      const parent = this.#processing.get(toHex(cur.eth.header.parentHash));
      if (!parent) return equalsBytes(cur.eth.header.parentHash, this.#lastAccepted.eth.hash());
      cur = parent;
    }
    return cur === this.#lastAccepted;
  }

  /** The nonces the processing blocks from the last accepted to the preferred block reach. */
  #recomputeTip(): void {
    const tip = new Map<string, bigint>();
    let cur: EvmBlock | undefined = this.#preferred;
    while (cur && cur.status === 'processing') {
      const senders = cur.execution?.senders;
      cur.eth.transactions.forEach((tx, i) => {
        const key = toHex(senders ? senders[i]! : tx.getSenderAddress().bytes);
        const n = tx.nonce + 1n;
        if ((tip.get(key) ?? -1n) < n) tip.set(key, n);
      });
      cur = this.#processing.get(toHex(cur.eth.header.parentHash));
    }
    this.#tip = tip;
  }

  async #hashAt(n: bigint): Promise<Uint8Array | undefined> {
    // BLOCKHASH on the chain being executed: processing ancestors first, then the canonical index.
    for (const b of this.#processing.values()) if (b.eth.header.number === n && this.#onPreferredChain(b)) return b.eth.hash();
    return this.store.hashAt(n);
  }

  async #readAccepted(hash: Uint8Array): Promise<EvmBlock | undefined> {
    const key = toHex(hash);
    const cached = this.#recentGet(key);
    if (cached) return cached;
    const bytes = await this.store.blockBytes(hash);
    if (!bytes) return undefined;
    const receipts = await this.store.receipts(hash);
    if (!receipts) throw ChainStore.corrupt(`receipts of block ${key} are missing`);
    const eth = createBlockFromRLP(bytes, this.blockOpts);
    const block = this.#make(eth, 'accepted', bytes, { block: eth, receipts, senders: eth.transactions.map((t) => t.getSenderAddress().bytes), dropped: [] });
    this.#cache(block);
    return block;
  }

  #recentGet(key: string): EvmBlock | undefined {
    const b = this.#recent.get(key);
    if (b) {
      this.#recent.delete(key);
      this.#recent.set(key, b);
    }
    return b;
  }

  #cache(b: EvmBlock): void {
    const key = toHex(b.eth.hash());
    if (!this.#recent.has(key)) this.#indexTxs(b);
    this.#recent.delete(key);
    this.#recent.set(key, b);
    this.#recentByHeight.set(b.eth.header.number, b);
    const max = this.#opts.blockCacheSize ?? 256;
    while (this.#recent.size > max) {
      const [oldKey, old] = this.#recent.entries().next().value as [string, EvmBlock];
      this.#recent.delete(oldKey);
      if (this.#recentByHeight.get(old.eth.header.number) === old) this.#recentByHeight.delete(old.eth.header.number);
    }
  }

  /** Remembers where an accepted block's txs are (accepted is final: an entry never goes stale). */
  #indexTxs(b: EvmBlock): void {
    const number = b.eth.header.number;
    b.eth.transactions.forEach((tx, index) => this.#recentTxs.set(toHex(tx.hash()), { number, index }));
    const max = this.#opts.recentTxIndexSize ?? 65_536;
    while (this.#recentTxs.size > max) this.#recentTxs.delete(this.#recentTxs.keys().next().value as string);
  }

  #checkOpen(): void {
    if (this.#closed) throw new EvmChainError('ShutDown', 'the EVM chain is shut down');
  }

  /** Txs of a block for mempool bookkeeping. */
  static sendersOf(txs: readonly TypedTransaction[]): Uint8Array[] {
    return txs.map((t) => t.getSenderAddress().bytes);
  }
}

export { NotFoundError };

/** The chain's rules from its factory; a factory's error fails the chain's start (a typed one as it is). */
function makeRules(factory: ChainRulesFactory | undefined, genesis: EvmGenesis, upgrade: Uint8Array | undefined): ChainRules | undefined {
  if (!factory) return undefined;
  try {
    return factory(genesis, upgrade ?? new Uint8Array());
  } catch (e) {
    if (e instanceof NodeError) throw e;
    throw new EvmChainError('InvalidConfig', `invalid chain rules config: ${(e as Error).message}`);
  }
}
