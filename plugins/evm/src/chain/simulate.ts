/**
 * eth_simulateV1 on the chain, as geth simulates: blocks on the state of a base block, each on the
 * last (state, numbers and times carry over), their calls run as unsigned txs from their `from`.
 * The blocks are real blocks in shape (hash, roots, bloom, size) but never stored: they run on a
 * VM of their own whose writes stay in memory (StateReader.scratch).
 *
 * - Numbers and times: a block without a number is the next; without a time, 12 s after the last
 *   (geth's). A number at or below the last's: -38020; a time at or below the last's: -38021; a gap
 *   in the numbers is filled with empty blocks; past 256 blocks after the base: -38026.
 * - Each block's state overrides apply before its calls; a call without gas gets what is left of
 *   the block's gas limit (more: -38015), capped by what is left of the request's budget
 *   (rpcGasCap over all calls).
 * - Without validation (the default) the base fee is 0 unless overridden and nonces are not
 *   checked; with it, the base fee follows the chain's fee rules and a wrong nonce (-38010 /
 *   -38011), a fee cap under the base fee (-32602) or too little gas (-38013) refuses the request.
 *   A sender that cannot pay gas * price + value is -38014 either way, as geth.
 * Tests: simulate.test.ts.
 */
import { Block, createBlockHeader, type HeaderData } from '@ethereumjs/block';
import type { Common } from '@ethereumjs/common';
import type { TypedTransaction } from '@ethereumjs/tx';
import { Account, Address, KECCAK256_RLP, KECCAK256_RLP_ARRAY } from '@ethereumjs/util';
import { Bloom, encodeReceipt, runTx, type RunTxResult } from '@ethereumjs/vm';
import {
  EvmRpcError,
  type BlockOverrides,
  type CallRequest,
  type LogView,
  type SimulateBlockRequest,
  type SimulatedBlock,
  type SimulatedCall,
  type SimulateRequest,
  type StateOverrides,
  type TxView,
} from '../evm-backend.js';
import { contextBlock, type BlockOpts } from './block-context.js';
import { callTx, callTxHash } from './call-tx.js';
import { keccak256 } from './crypto.js';
import { rpcErr, shortReason } from './eth-errors.js';
import type { FeeRules } from './fees.js';
import { withBlockInfo } from './hooks.js';
import type { StateView } from './reader.js';
import { orderedTrieRoot } from './state/trie-root.js';
import { TransferTracer } from './transfer-logs.js';
import { headerView, txView } from './views.js';

/** The most blocks one request simulates, counted from the base (geth's, the BLOCKHASH window). */
export const MAX_SIMULATE_BLOCKS = 256n;
/** Seconds between two simulated blocks whose time is not given (geth's). */
export const TIMESTAMP_INCREMENT = 12n;

const ZERO_ADDRESS = new Uint8Array(20);
const MAX_UINT64 = 2n ** 64n - 1n;
const ZERO32 = new Uint8Array(32);
const ZERO8 = new Uint8Array(8);

/** A block to simulate with its number and time settled. */
export interface PlannedBlock extends SimulateBlockRequest {
  readonly number: bigint;
  readonly time: bigint;
}

/** geth's sanitizeChain: numbers and times settled and checked, gaps filled with empty blocks. */
export function planBlocks(base: { readonly number: bigint; readonly timestamp: bigint }, blocks: readonly SimulateBlockRequest[]): PlannedBlock[] {
  const out: PlannedBlock[] = [];
  let prevNumber = base.number;
  let prevTime = base.timestamp;
  for (const b of blocks) {
    const number = b.blockOverrides?.number ?? prevNumber + 1n;
    if (number <= prevNumber) throw new EvmRpcError(-38020, `block numbers must be in order: ${number} <= ${prevNumber}`);
    if (number - base.number > MAX_SIMULATE_BLOCKS) throw new EvmRpcError(-38026, 'too many blocks');
    for (let n = prevNumber + 1n; n < number; n++) {
      prevTime += TIMESTAMP_INCREMENT;
      out.push({ number: n, time: prevTime, calls: [] });
    }
    prevNumber = number;
    const given = b.blockOverrides?.time;
    if (given !== undefined && given <= prevTime) throw new EvmRpcError(-38021, `block timestamps must be in order: ${given} <= ${prevTime}`);
    const time = given ?? prevTime + TIMESTAMP_INCREMENT;
    if (time > MAX_UINT64) throw new EvmRpcError(-32602, `block timestamp ${time} does not fit 64 bits`);
    prevTime = time;
    out.push({ ...b, number, time });
  }
  return out;
}

export interface SimulationChain {
  readonly common: Common;
  readonly blockOpts: BlockOpts;
  readonly chainId: bigint;
  readonly fees: FeeRules;
  /** The chain has rules (the subnet-EVM): blocks are registered with them (hooks.ts). */
  readonly hasRules: boolean;
  /** Base fees go to the coinbase instead of being burned. */
  readonly creditBaseFee: boolean;
  /** rpcGasCap: the gas all calls of a request may use together. */
  readonly gasBudget: bigint;
  readonly maxInitCodeSize: number;
  applyOverrides(sm: StateView['sm'], overrides: StateOverrides): Promise<void>;
}

/** The base block: the state the simulation starts on and the header its blocks follow. */
export interface SimulationBase {
  readonly block: Block;
}

const ERR_REVERT = 'revert';

export class Simulation {
  #budget: bigint;
  /** Hashes of the simulated blocks by number (BLOCKHASH). */
  readonly hashes = new Map<bigint, Uint8Array>();

  constructor(
    private readonly chain: SimulationChain,
    private readonly base: SimulationBase,
    private readonly req: SimulateRequest,
  ) {
    this.#budget = chain.gasBudget;
  }

  async run(view: StateView): Promise<SimulatedBlock[]> {
    const planned = planBlocks(this.base.block.header, this.req.blocks);
    const out: SimulatedBlock[] = [];
    let parent = this.base.block;
    for (const p of planned) {
      if (view.guard.expired) throw rpcErr(view.guard.message);
      const simulated = await this.#block(view, p, parent);
      out.push(simulated.result);
      this.hashes.set(p.number, simulated.block.hash());
      parent = simulated.block;
    }
    return out;
  }

  #header(p: PlannedBlock, parent: Block): HeaderData {
    const o: BlockOverrides = p.blockOverrides ?? {};
    const ph = parent.header;
    let baseFee = o.baseFeePerGas;
    if (baseFee === undefined) {
      baseFee = this.req.validation
        ? this.chain.fees.baseFee({ number: ph.number, timestamp: ph.timestamp, gasLimit: ph.gasLimit, gasUsed: ph.gasUsed, baseFeePerGas: ph.baseFeePerGas ?? 0n }, p.time)
        : 0n;
    }
    return {
      parentHash: parent.hash(),
      uncleHash: KECCAK256_RLP_ARRAY,
      coinbase: o.feeRecipient ?? ph.coinbase.bytes,
      difficulty: o.difficulty ?? ph.difficulty,
      number: p.number,
      gasLimit: o.gasLimit ?? ph.gasLimit,
      timestamp: p.time,
      extraData: new Uint8Array(),
      mixHash: o.prevRandao ?? ZERO32,
      nonce: ZERO8,
      baseFeePerGas: baseFee,
      withdrawalsRoot: KECCAK256_RLP,
      blobGasUsed: 0n,
      excessBlobGas: 0n,
      parentBeaconBlockRoot: o.beaconRoot ?? ZERO32,
    };
  }

  async #block(view: StateView, p: PlannedBlock, parent: Block): Promise<{ block: Block; result: SimulatedBlock }> {
    const { sm, vm, guard } = view;
    if ((p.blockOverrides?.withdrawals?.length ?? 0) > 0) throw new EvmRpcError(-32602, 'withdrawals are not supported on this chain');
    const hdr = this.#header(p, parent);
    const ctx = contextBlock(hdr, this.chain.blockOpts, p.blockOverrides?.blobBaseFee);
    if (this.chain.hasRules) withBlockInfo(ctx, parent.header.timestamp);
    const baseFee = hdr.baseFeePerGas as bigint;
    const gasLimit = hdr.gasLimit as bigint;
    if (p.stateOverrides) await this.chain.applyOverrides(sm, p.stateOverrides);
    const txs: TypedTransaction[] = [];
    const results: RunTxResult[] = [];
    const callLogs: RawLogs[] = [];
    let gasUsed = 0n;
    const tracer = this.req.traceTransfers ? new TransferTracer(vm) : undefined;
    try {
      for (const req of p.calls) {
        const from = new Address(req.from ?? ZERO_ADDRESS);
        const sender = (await sm.getAccount(from)) ?? new Account();
        const nonce = req.nonce ?? sender.nonce;
        let gas = req.gas ?? gasLimit - gasUsed;
        if (gasUsed + gas > gasLimit) throw new EvmRpcError(-38015, `block gas limit reached: ${gasUsed} >= ${gasLimit}`);
        if (gas > this.#budget) gas = this.#budget;
        this.#check(req, from, sender, nonce, gas, baseFee);
        const tx = callTx(req, { from, gas, nonce, chainId: this.chain.chainId, common: this.chain.common });
        // Without validation a fee cap under an overridden base fee still runs (geth's NoBaseFee); the
        // EVM here refuses it, so it runs at base fee 0.
        const runIn = !this.req.validation && (tx as { maxFeePerGas: bigint }).maxFeePerGas < baseFee ? contextBlock({ ...hdr, baseFeePerGas: 0n }, this.chain.blockOpts) : ctx;
        if (runIn !== ctx && this.chain.hasRules) withBlockInfo(runIn, parent.header.timestamp);
        let r: RunTxResult;
        try {
          r = await runTx(vm, { tx, block: runIn, blockGasUsed: gasUsed, skipNonce: !this.req.validation, skipBlockGasLimitValidation: true, skipHardForkValidation: true });
        } catch (e) {
          if (guard.expired) throw rpcErr(guard.message);
          throw rpcErr(shortReason(e));
        }
        if (guard.expired) throw rpcErr(guard.message);
        gasUsed += r.totalGasSpent;
        this.#budget -= r.totalGasSpent;
        if (this.chain.creditBaseFee && baseFee > 0n) {
          const coinbase = new Address(hdr.coinbase as Uint8Array);
          const acct = (await sm.getAccount(coinbase)) ?? new Account();
          acct.balance += baseFee * r.totalGasSpent;
          await sm.putAccount(coinbase, acct);
        }
        txs.push(tx);
        results.push(r);
        callLogs.push(tracer ? tracer.finish() : ((r.execResult.logs ?? []) as RawLogs));
      }
    } finally {
      tracer?.close();
    }
    return this.#assemble(hdr, txs, results, callLogs, gasUsed, await sm.getStateRoot());
  }

  /** geth's checks of a call before it runs, with its codes and texts. */
  #check(req: CallRequest, from: Address, sender: Account, nonce: bigint, gas: bigint, baseFee: bigint): void {
    const who = from.toString();
    if (!req.to && (req.data?.length ?? 0) > this.chain.maxInitCodeSize) {
      throw new EvmRpcError(-38025, `max initcode size exceeded: code size ${req.data!.length} limit ${this.chain.maxInitCodeSize}`);
    }
    const feeCap = req.maxFeePerGas ?? req.gasPrice ?? 0n;
    if (this.req.validation) {
      if (nonce < sender.nonce) throw new EvmRpcError(-38010, `nonce too low: address ${who}, tx: ${nonce} state: ${sender.nonce}`);
      if (nonce > sender.nonce) throw new EvmRpcError(-38011, `nonce too high: address ${who}, tx: ${nonce} state: ${sender.nonce}`);
      if (feeCap < baseFee) throw new EvmRpcError(-32602, `max fee per gas less than block base fee: address ${who}, maxFeePerGas: ${feeCap}, baseFee: ${baseFee}`);
    }
    const want = gas * feeCap + (req.value ?? 0n);
    if (sender.balance < want) throw new EvmRpcError(-38014, `insufficient funds for gas * price + value: address ${who} have ${sender.balance} want ${want}`);
    const intrinsic = callTx(req, { from, gas, nonce, chainId: this.chain.chainId, common: this.chain.common }).getIntrinsicGas();
    if (gas < intrinsic) throw new EvmRpcError(-38013, `intrinsic gas too low: have ${gas}, want ${intrinsic}`);
  }

  #assemble(hdr: HeaderData, txs: TypedTransaction[], results: RunTxResult[], callLogs: RawLogs[], gasUsed: bigint, stateRoot: Uint8Array): { block: Block; result: SimulatedBlock } {
    const common = this.chain.common;
    const hash = common.customCrypto.keccak256 ?? keccak256;
    const bloom = new Bloom(undefined, common);
    for (const r of results) bloom.or(r.bloom);
    const header = createBlockHeader(
      {
        ...hdr,
        stateRoot,
        transactionsTrie: orderedTrieRoot(txs.map((tx) => tx.serialize()), hash),
        receiptTrie: orderedTrieRoot(results.map((r, i) => encodeReceipt(r.receipt, txs[i]!.type)), hash),
        logsBloom: bloom.bitvector,
        gasUsed,
      },
      { ...this.chain.blockOpts, skipConsensusFormatValidation: true },
    );
    const block = new Block(header, txs, [], [], { common: this.chain.blockOpts.common });
    const blockHash = block.hash();
    const baseFee = header.baseFeePerGas ?? 0n;
    const txViews: TxView[] = [];
    const calls: SimulatedCall[] = [];
    let logIndex = 0;
    for (let i = 0; i < txs.length; i++) {
      const tx = txs[i]!;
      const r = results[i]!;
      const txHash = callTxHash(tx);
      txViews.push(txView(tx, baseFee, txHash));
      const logs: LogView[] = callLogs[i]!.map(([address, topics, data]) => ({
        address,
        topics,
        data,
        blockNumber: header.number,
        blockHash,
        transactionHash: txHash,
        transactionIndex: i,
        logIndex: logIndex++,
        removed: false,
      }));
      const err = r.execResult.exceptionError;
      const returnData = r.execResult.returnValue;
      calls.push({
        status: err ? 0 : 1,
        returnData,
        gasUsed: r.totalGasSpent,
        logs,
        ...(err && {
          error: err.error === ERR_REVERT ? { code: 3, message: 'execution reverted', data: returnData } : { code: -32015, message: err.error },
        }),
      });
    }
    const size = BigInt(block.serialize().length);
    return { block, result: { block: { header: headerView(block, Number(size)), transactions: txViews }, calls } };
  }
}

type RawLogs = Array<[Uint8Array, Uint8Array[], Uint8Array]>;
