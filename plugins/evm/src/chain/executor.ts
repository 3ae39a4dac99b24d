/**
 * Block execution on @ethereumjs/vm (hardfork cancun) with the "manual builder": one outer
 * checkpoint per block, `runTx` per tx on a header-only context block, the block
 * assembled once from the tx objects (never the stock BlockBuilder, whose cost is quadratic in the
 * block size). The same code builds a block from pending txs and re-executes a block from another
 * node on its parent's state; the caller compares the roots.
 *
 * One VM executes (build/verify): its state manager follows the block being executed and keeps its
 * caches as long as each block builds on the previous one's state. Everything here runs serialized
 * by the caller (the VM's execution queue).
 */
import { createCustomCommon, Hardfork, Mainnet, type Common } from '@ethereumjs/common';
import { Block, createBlock, createBlockHeader, paramsBlock, type HeaderData } from '@ethereumjs/block';
import { createMPT } from '@ethereumjs/mpt';
import { Caches, type MerkleStateManager } from '@ethereumjs/statemanager';
import { Capability, paramsTx, type TypedTransaction } from '@ethereumjs/tx';
import { Account, Address, equalsBytes, KECCAK256_RLP, KECCAK256_RLP_ARRAY } from '@ethereumjs/util';
import { Bloom, createVM, encodeReceipt, runTx, type RunTxResult, type VM } from '@ethereumjs/vm';
import { EvmChainError } from '../errors.js';
import { FastAccountStateManager } from './state/accounts.js';
import { CallGuard, installCallGuard } from './call-guard.js';
import { lightFrames } from './patches/frame-copies.js';
import { chainCrypto, keccak256 } from './crypto.js';
import { installFastOpcodes, withFastEipLookup } from './patches/fast-paths.js';
import { installJumpAnalysisCache } from './patches/jump-analysis.js';
import type { FeeRules } from './fees.js';
import type { EvmGenesis } from './genesis.js';
import { headerFields, hookState, installRules, precompilesWith, withBlockInfo } from './hooks.js';
import { withGuardedPrecompiles, type CustomPrecompiles } from './precompiles/guarded.js';
import type { BlockInfo, ChainRules, HeaderFields, HookState, IncludedTx } from './rules.js';
import { effectiveGasPrice } from './views.js';
import type { StateDB } from './state/state-db.js';
import type { StoredReceipt, RawLog } from './store.js';
import { orderedTrieRoot } from './state/trie-root.js';

/** The option type of a chain's custom precompiles, made where the list is extended (precompiles/guarded.ts). */
export type { CustomPrecompiles };

export interface ExecutionHooks {
  readonly fees: FeeRules;
  /** The chain rules (none: the C-Chain). */
  readonly rules?: ChainRules;
  readonly customPrecompiles?: CustomPrecompiles;
  /** VM params overrides (e.g. the subnet-EVM's no-refund rule: `{ 3529: { maxRefundQuotient: 2 ** 52 } }`: numbers, @ethereumjs copies params as JSON). */
  readonly vmParams?: Record<string, Record<string, unknown>>;
  /** Trie node LRU entries per trie (default 50,000). */
  readonly trieCacheSize?: number;
}

/** Block hash by number on the chain being executed (BLOCKHASH). */
export type BlockHashLookup = (number: bigint) => Promise<Uint8Array | undefined>;

export interface ExecutedTx {
  readonly tx: TypedTransaction;
  readonly result: RunTxResult;
}

export interface Execution {
  readonly block: Block;
  readonly receipts: readonly StoredReceipt[];
  readonly senders: readonly Uint8Array[];
  /** Txs left out while building, with the reason (they are dropped from the mempool). */
  readonly dropped: ReadonlyArray<{ readonly tx: TypedTransaction; readonly reason: string }>;
  /**
   * The accounts the block wrote (unprefixed hex address -> RLP, null: none): the parent's state
   * and the block's differ only in these. Undefined when not known.
   */
  readonly accounts?: ReadonlyMap<string, Uint8Array | null>;
}

export const ZERO32 = new Uint8Array(32);
export const ZERO8 = new Uint8Array(8);

/** The chain's Common: Mainnet rules at cancun with the chain's ID and fast crypto. */
export function chainCommon(chainId: bigint): Common {
  return withFastEipLookup(
    createCustomCommon({ chainId: Number(chainId), name: `evm-${chainId}` }, Mainnet, {
      hardfork: Hardfork.Cancun,
      customCrypto: chainCrypto(),
    }),
  );
}

/**
 * A Common for txs and block headers that they all share: @ethereumjs copies the Common and rebuilds
 * its params (a JSON deep copy) in each tx and header constructor — a third of a tx's decode time, and
 * a header's, twice per built block (plugins/evm/bench/block-bench.mjs). It holds the tx and the block
 * params (no key of both differs), so a block decoded with it gives its txs the same Common. Safe
 * because nothing changes such a Common once built: runTx only sets a tx's hardfork when it differs
 * from the block's, and it never does here (one hardfork); headers are made without setHardfork.
 */
export function sharedTxCommon(common: Common): Common {
  const shared = common.copy();
  shared.updateParams(paramsTx);
  shared.updateParams(paramsBlock);
  shared.copy = () => shared;
  shared.updateParams = () => shared;
  return shared;
}

/** A MerkleStateManager with caches over the chain's trie database at `root`. */
export async function stateManagerAt(common: Common, db: StateDB, root: Uint8Array | undefined, cacheSize: number): Promise<FastAccountStateManager> {
  const trie = await createMPT({ db: db.shallowCopy(), useKeyHashing: true, common, valueEncoding: 'view', cacheSize, ...(root ? { root } : {}) });
  return new FastAccountStateManager({ common, trie, caches: new Caches() });
}

/**
 * A VM on `sm`. With a `guard`, its calls give the event loop turns and large pairing checks run off
 * the event loop; a call run through `guard.run` is also bounded in time (call-guard.ts).
 */
export async function makeVM(common: Common, sm: MerkleStateManager, hooks: ExecutionHooks, blockHash: BlockHashLookup, guard?: CallGuard): Promise<VM> {
  await Promise.all([installJumpAnalysisCache(), installFastOpcodes()]);
  const blockchain = {
    async getBlock(n: number) {
      const h = (await blockHash(BigInt(n))) ?? ZERO32;
      return { hash: () => h };
    },
    async putBlock() {},
    shallowCopy() {
      return blockchain;
    },
  };
  const chainPrecompiles = precompilesWith(hooks.rules, hooks.customPrecompiles);
  const customPrecompiles = withGuardedPrecompiles(common, chainPrecompiles, guard);
  const vm = await createVM({
    common,
    stateManager: sm,
    blockchain,
    ...(hooks.vmParams ? { params: hooks.vmParams as never } : {}),
    ...(customPrecompiles ? { evmOpts: { customPrecompiles } } : {}),
  });
  if (hooks.rules) installRules(vm, hooks.rules, hooks.vmParams);
  if (guard) await installCallGuard(vm, guard);
  await lightFrames(vm.evm);
  return vm;
}

/** The header of a new block on `parent` with the rule-decided `fields` (roots and gas used filled in after execution). */
export function nextHeaderData(parent: Block, timestamp: bigint, fields: HeaderFields): HeaderData {
  return {
    parentHash: parent.hash(),
    number: parent.header.number + 1n,
    timestamp,
    gasLimit: fields.gasLimit,
    baseFeePerGas: fields.baseFeePerGas,
    coinbase: fields.coinbase,
    difficulty: 0n,
    nonce: ZERO8,
    mixHash: ZERO32,
    extraData: fields.extraData,
    uncleHash: KECCAK256_RLP_ARRAY,
    withdrawalsRoot: KECCAK256_RLP,
    blobGasUsed: 0n,
    excessBlobGas: 0n,
    parentBeaconBlockRoot: ZERO32,
  };
}

export class Executor {
  #root: Uint8Array;

  /** The shared Common of txs and headers (sharedTxCommon). */
  readonly dataCommon: Common;
  /**
   * Options of the blocks and headers the chain makes and decodes. Rules allowing more than
   * Ethereum's 32 bytes of extraData turn off @ethereumjs' post-merge format checks, which refuse
   * it; the chain checks the rest of them itself (EvmChain #checkHeader).
   */
  readonly blockOpts: { readonly common: Common; readonly skipConsensusFormatValidation?: boolean };

  private constructor(
    readonly common: Common,
    readonly vm: VM,
    private readonly sm: FastAccountStateManager,
    private readonly hooks: ExecutionHooks,
  ) {
    this.#root = KECCAK256_RLP;
    this.dataCommon = sharedTxCommon(common);
    this.blockOpts = { common: this.dataCommon, ...((hooks.rules?.maxExtraDataBytes ?? 32) > 32 ? { skipConsensusFormatValidation: true } : {}) };
  }

  static async create(common: Common, db: StateDB, hooks: ExecutionHooks, blockHash: BlockHashLookup): Promise<Executor> {
    const sm = await stateManagerAt(common, db, undefined, hooks.trieCacheSize ?? 50_000);
    // Turns for the event loop and off-thread pairing checks, with no deadline: a block's txs must
    // run to the same end on every node.
    const vm = await makeVM(common, sm, hooks, blockHash, new CallGuard());
    return new Executor(common, vm, sm, hooks);
  }

  /** The state root the executing state manager is at. */
  get root(): Uint8Array {
    return this.#root;
  }

  /** Moves the executing state to `root` (drops the caches only when it moves). */
  async moveTo(root: Uint8Array): Promise<void> {
    if (!equalsBytes(root, this.#root)) {
      await this.sm.setStateRoot(root);
      this.#root = root;
    }
    // What a block run from here writes is counted from here (#assemble).
    this.sm.takeFlushed();
  }

  /** The parent's state for the rules' header hooks (read only): the executing state moved to `parent`. */
  async parentState(parent: Block): Promise<HookState> {
    await this.moveTo(parent.header.stateRoot);
    return hookState(this.sm);
  }

  /** Writes the genesis allocation on the empty state (then the rules' beforeBlock); the genesis block. */
  async genesisBlock(g: EvmGenesis): Promise<Block> {
    await this.moveTo(KECCAK256_RLP);
    await this.sm.checkpoint();
    for (const a of g.alloc) {
      const address = new Address(a.address);
      await this.sm.putAccount(address, new Account(a.nonce, a.balance));
      if (a.code) await this.sm.putCode(address, a.code);
      for (const [slot, value] of a.storage) await this.sm.putStorage(address, slot, value);
    }
    const baseFeePerGas = g.baseFeePerGas ?? this.hooks.fees.minBaseFee;
    if (this.hooks.rules?.beforeBlock) {
      const info: BlockInfo = { number: 0n, timestamp: g.timestamp, parentTimestamp: undefined, coinbase: g.coinbase, baseFeePerGas };
      await this.#beforeBlock(info);
    }
    await this.sm.commit();
    const stateRoot = await this.sm.getStateRoot();
    this.#root = stateRoot;
    const header = createBlockHeader(
      {
        number: 0n,
        parentHash: ZERO32,
        timestamp: g.timestamp,
        gasLimit: g.gasLimit,
        extraData: g.extraData,
        coinbase: g.coinbase,
        difficulty: g.difficulty,
        mixHash: g.mixHash,
        nonce: g.nonce,
        stateRoot,
        baseFeePerGas,
        withdrawalsRoot: KECCAK256_RLP,
        blobGasUsed: 0n,
        excessBlobGas: 0n,
        parentBeaconBlockRoot: ZERO32,
      },
      { common: this.dataCommon, skipConsensusFormatValidation: true },
    );
    return new Block(header, [], [], [], { common: this.dataCommon });
  }

  /**
   * Builds a block on `parent` from `candidates` (in order; a sender's txs in nonce order). A tx
   * that fails (or that the rules' checkTx refuses) is left out (reported in `dropped`); a tx that
   * does not fit the block's gas is left for a later block, as are the sender's later txs.
   */
  async build(parent: Block, timestamp: bigint, candidates: readonly TypedTransaction[], maxTxs: number): Promise<Execution> {
    const rules = this.hooks.rules;
    await this.moveTo(parent.header.stateRoot);
    const fields = await headerFields(parent, timestamp, this.hooks.fees, rules, () => hookState(this.sm));
    const hdr = nextHeaderData(parent, timestamp, fields);
    const ctxBlock = createBlock({ header: hdr }, this.blockOpts);
    const info = rules ? withBlockInfo(ctxBlock, parent.header.timestamp) : undefined;
    const gasLimit = hdr.gasLimit as bigint;
    const included: ExecutedTx[] = [];
    const dropped: Array<{ tx: TypedTransaction; reason: string }> = [];
    const skipSender = new Set<string>();
    let gasUsed = 0n;
    await this.vm.evm.journal.checkpoint();
    try {
      if (rules?.beforeBlock) await this.#beforeBlock(info!);
      for (const tx of candidates) {
        if (included.length >= maxTxs) break;
        const sender = tx.getSenderAddress().toString();
        if (skipSender.has(sender)) continue;
        if (gasUsed + tx.gasLimit > gasLimit) {
          skipSender.add(sender);
          continue;
        }
        const refused = rules?.checkTx ? await rules.checkTx(tx.getSenderAddress().bytes, info!, hookState(this.sm)) : undefined;
        if (refused !== undefined) {
          skipSender.add(sender);
          dropped.push({ tx, reason: refused });
          continue;
        }
        try {
          const result = await runTx(this.vm, { tx, block: ctxBlock, blockGasUsed: gasUsed, skipHardForkValidation: true });
          gasUsed += result.totalGasSpent;
          await this.#creditBaseFee(hdr, result);
          included.push({ tx, result });
        } catch (e) {
          skipSender.add(sender);
          dropped.push({ tx, reason: (e as Error).message });
        }
      }
      await this.vm.evm.journal.commit();
    } catch (e) {
      await this.#abandon();
      throw e;
    }
    return this.#assemble(hdr, included, gasUsed, dropped);
  }

  /**
   * Executes another node's `block` on `parent`'s state with the block's own header fields (the
   * caller checked them); throws EvmChainError('InvalidBlock') when a tx fails or is refused by the
   * rules, when a root, the bloom or the gas used differ from the header's, or when the rules'
   * block-fee check fails.
   */
  async replay(parent: Block, block: Block): Promise<Execution> {
    const h = block.header;
    const rules = this.hooks.rules;
    await this.moveTo(parent.header.stateRoot);
    const hdr = nextHeaderData(parent, h.timestamp, { baseFeePerGas: h.baseFeePerGas ?? 0n, gasLimit: h.gasLimit, coinbase: h.coinbase.bytes, extraData: h.extraData });
    const ctxBlock = createBlock({ header: hdr }, this.blockOpts);
    const info = rules ? withBlockInfo(ctxBlock, parent.header.timestamp) : undefined;
    const included: ExecutedTx[] = [];
    let gasUsed = 0n;
    await this.vm.evm.journal.checkpoint();
    try {
      if (rules?.beforeBlock) await this.#beforeBlock(info!);
      for (const [i, tx] of block.transactions.entries()) {
        if (tx.type > 2) throw invalid(`tx ${i} has type ${tx.type}, which this chain does not support`);
        if (gasUsed + tx.gasLimit > h.gasLimit) throw invalid(`tx ${i} exceeds the block gas limit`);
        if (rules?.checkTx) {
          const refused = await rules.checkTx(tx.getSenderAddress().bytes, info!, hookState(this.sm));
          if (refused !== undefined) throw invalid(`tx ${i} is refused: ${refused}`);
        }
        let result: RunTxResult;
        try {
          result = await runTx(this.vm, { tx, block: ctxBlock, blockGasUsed: gasUsed, skipHardForkValidation: true });
        } catch (e) {
          throw invalid(`tx ${i} cannot run: ${(e as Error).message}`);
        }
        gasUsed += result.totalGasSpent;
        await this.#creditBaseFee(hdr, result);
        included.push({ tx, result });
      }
      await this.vm.evm.journal.commit();
    } catch (e) {
      await this.#abandon();
      throw e;
    }
    const out = await this.#assemble(hdr, included, gasUsed, []);
    const got = out.block.header;
    const checks: Array<[string, boolean]> = [
      ['gas used', got.gasUsed === h.gasUsed],
      ['state root', equalsBytes(got.stateRoot, h.stateRoot)],
      ['receipts root', equalsBytes(got.receiptTrie, h.receiptTrie)],
      ['transactions root', equalsBytes(got.transactionsTrie, h.transactionsTrie)],
      ['logs bloom', equalsBytes(got.logsBloom, h.logsBloom)],
    ];
    for (const [what, ok] of checks) if (!ok) throw invalid(`${what} does not match the block's execution`);
    const feeProblem = this.blockFeeProblem({ ...out, block });
    if (feeProblem !== undefined) throw invalid(feeProblem);
    return { ...out, block };
  }

  /** Why an executed block fails the rules' block-fee check, or undefined (also without the check). */
  blockFeeProblem(exec: Execution): string | undefined {
    const verify = this.hooks.rules?.verifyBlockFee;
    if (!verify) return undefined;
    const h = exec.block.header;
    const baseFee = h.baseFeePerGas ?? 0n;
    const txs: IncludedTx[] = exec.block.transactions.map((tx, i) => ({ gasUsed: exec.receipts[i]!.gasUsed, tipPerGas: effectiveGasPrice(tx, baseFee) - baseFee }));
    return verify({ baseFeePerGas: baseFee, gasLimit: h.gasLimit, coinbase: h.coinbase.bytes, extraData: h.extraData, number: h.number, timestamp: h.timestamp }, txs);
  }

  /** The rules' beforeBlock on the executing state (inside the block's checkpoint), then EIP-161 on what it touched. */
  async #beforeBlock(info: BlockInfo): Promise<void> {
    const journal = this.vm.evm.journal;
    await this.hooks.rules!.beforeBlock!(info, hookState(this.sm, journal));
    await journal.cleanup();
  }

  async #creditBaseFee(hdr: HeaderData, result: RunTxResult): Promise<void> {
    if (!(this.hooks.rules?.creditBaseFee ?? this.hooks.fees.creditBaseFee)) return;
    const coinbase = new Address(hdr.coinbase as Uint8Array);
    const acct = (await this.sm.getAccount(coinbase)) ?? new Account();
    acct.balance += (hdr.baseFeePerGas as bigint) * result.totalGasSpent;
    await this.sm.putAccount(coinbase, acct);
  }

  /** Reverts a block's outer checkpoint after a failure; the state stays at the parent's root. */
  async #abandon(): Promise<void> {
    await this.vm.evm.journal.revert();
  }

  async #assemble(hdr: HeaderData, included: readonly ExecutedTx[], gasUsed: bigint, dropped: Execution['dropped']): Promise<Execution> {
    const stateRoot = await this.sm.getStateRoot();
    this.#root = stateRoot;
    const accounts = this.sm.takeFlushed();
    const txs = included.map((e) => e.tx);
    const bloom = new Bloom(undefined, this.common);
    const receipts: StoredReceipt[] = [];
    const encodedReceipts: Uint8Array[] = [];
    const senders: Uint8Array[] = [];
    for (const { tx, result } of included) {
      const r = result.receipt as { status?: 0 | 1; cumulativeBlockGasUsed: bigint; logs: RawLog[] };
      encodedReceipts.push(encodeReceipt(result.receipt, tx.type));
      bloom.or(result.bloom);
      receipts.push({
        status: r.status === 1 ? 1 : 0,
        cumulativeGasUsed: r.cumulativeBlockGasUsed,
        gasUsed: result.totalGasSpent,
        ...(result.createdAddress ? { contractAddress: result.createdAddress.bytes } : {}),
        logs: r.logs,
      });
      senders.push(tx.getSenderAddress().bytes);
    }
    const hash = this.common.customCrypto.keccak256 ?? keccak256;
    const header = createBlockHeader(
      {
        ...hdr,
        stateRoot,
        transactionsTrie: orderedTrieRoot(txs.map((tx) => tx.serialize()), hash),
        receiptTrie: orderedTrieRoot(encodedReceipts, hash),
        logsBloom: bloom.bitvector,
        gasUsed,
      },
      this.blockOpts,
    );
    const block = new Block(header, txs, [], [], { common: this.dataCommon });
    return { block, receipts, senders, dropped, ...(accounts ? { accounts } : {}) };
  }
}

function invalid(why: string): EvmChainError {
  return new EvmChainError('InvalidBlock', `invalid block: ${why}`);
}

/**
 * Freezes a tx decoded unfrozen (`freeze: false`) after recovering its sender once, so that every
 * later `getSenderAddress()` returns that Address. @ethereumjs caches the public key but hashes it into
 * an address again on each call (noble keccak, several calls per tx between admission and its
 * receipt, a visible share of a node's CPU under load: bench/evm.mjs); frozen as @ethereumjs freezes it, so its hash is cached as usual.
 * A tx already frozen is left as it is. Throws as `getSenderAddress` does for a bad signature.
 *
 * `encoded`: the bytes the tx was decoded from, which `serialize()` then returns instead of encoding
 * the tx again (for its hash and in every block that holds it, under pipelined transfers). They are its serialization: @ethereumjs decodes only canonical RLP (no
 * leading zeros in integers, no bytes after the list), so encoding the decoded tx gives them back.
 */
export function freezeWithSender(tx: TypedTransaction, encoded?: Uint8Array): Address {
  if (Object.isFrozen(tx)) return tx.getSenderAddress();
  const publicKey = tx.getSenderPublicKey();
  tx.cache.senderPubKey = publicKey;
  const sender = new Address(keccak256(publicKey).slice(12));
  (tx as { getSenderAddress: () => Address }).getSenderAddress = () => sender;
  if (encoded) (tx as { serialize: () => Uint8Array }).serialize = () => encoded;
  Object.freeze(tx);
  return sender;
}

/** True for tx types this chain admits (legacy, EIP-2930, EIP-1559; not blob or EIP-7702). */
export function supportedTxType(tx: TypedTransaction): boolean {
  return tx.type <= 2 && !tx.supports(Capability.EIP7702EOACode);
}
