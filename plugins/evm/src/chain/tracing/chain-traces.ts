/**
 * The debug_ methods' side of the chain backend (ChainBackend delegates to it): which block and tx
 * a trace replays, geth's texts for the ones it cannot (unknown tx, genesis, unknown block), the
 * call a debug_traceCall runs, and the raw encodings (debug_getRaw*).
 * Tests: tracing.test.ts "replay", "debug_ methods on a chain".
 */
import { toHex } from '@cornice/sdk';
import { createBlockFromRLP, type Block } from '@ethereumjs/block';
import { Account, Address } from '@ethereumjs/util';
import { Bloom, encodeReceipt } from '@ethereumjs/vm';
import { EvmRpcError, type BlockOverrides, type BlockRef, type CallRequest, type Hash, type StateOverrides, type StopSignal, type TraceBlockRef, type TraceRequest, type TxTraceJson } from '../../evm-backend.js';
import type { EvmBlock } from '../../block.js';
import { overriddenBlock } from '../block-context.js';
import { callTx } from '../call-tx.js';
import type { EvmChain } from '../chain.js';
import type { StateView } from '../reader.js';
import { tracerMaker } from './registry.js';
import { BlockContexts, traceBlockTxs, traceOneCall, type ReplayChain, type TraceBounds } from './replay.js';

/** What ChainBackend lends the traces (its eth_call rules). */
export interface CallRules {
  /** The block a ref names, or eth_call's -32000 "header not found". */
  resolve(ref: BlockRef): Promise<EvmBlock>;
  /** eth_call's checks of a request (fee caps, initcode size). */
  checkRequest(req: CallRequest): void;
  /** The gas of a call that names none, at `b` (rpcGasCap and the block's limit). */
  gasCap(b: EvmBlock): bigint;
  /** The most gas a call may ask for (rpcGasCap). */
  rpcGasCap(): bigint;
  /** Registers the block info the chain rules show a call in `ctx`, `b` overridden. */
  blockInfo(b: EvmBlock, ctx: Block): Promise<void>;
  applyOverrides(sm: StateView['sm'], overrides: StateOverrides): Promise<void>;
}

const ZERO_ADDRESS = new Uint8Array(20);

function notFound(message: string): EvmRpcError {
  return new EvmRpcError(-32000, message);
}

export class ChainTraces {
  readonly #replay: ReplayChain;

  constructor(
    private readonly chain: EvmChain,
    private readonly rules: CallRules,
  ) {
    this.#replay = {
      blockOpts: chain.blockOpts,
      rules: chain.rules,
      creditBaseFee: chain.rules?.creditBaseFee ?? chain.fees.creditBaseFee ?? false,
      replayAt: (root, fn) => chain.reader.trace(root, fn),
      contexts: new BlockContexts(),
    };
  }

  #bounds(req: TraceRequest, signal: StopSignal | undefined): TraceBounds {
    return { timeoutMs: req.timeoutMs, maxChars: req.maxChars, ...(signal ? { signal } : {}) };
  }

  async #parentOf(block: Block): Promise<Block> {
    if (block.header.number === 0n) throw notFound('genesis is not traceable');
    const parent = await this.chain.getBlock(block.header.parentHash);
    if (!parent) throw notFound(`parent block 0x${toHex(block.header.parentHash)} not found`);
    return parent.eth;
  }

  async traceTransaction(hash: Hash, req: TraceRequest, signal?: StopSignal): Promise<string> {
    const loc = await this.chain.txLocation(hash);
    // geth looks in the chain only: a pooled tx is not found either.
    if (!loc) throw notFound('transaction not found');
    if (loc.number === 0n) throw notFound('genesis is not traceable');
    const block = await this.chain.acceptedAt(loc.number);
    if (!block) throw notFound('transaction not found');
    const make = tracerMaker(req);
    const parent = await this.#parentOf(block.eth);
    const [trace] = await traceBlockTxs(this.#replay, parent, block.eth, loc.index, (i) => i === loc.index, make, this.#bounds(req, signal));
    return trace!.json;
  }

  async traceBlock(ref: TraceBlockRef, req: TraceRequest, signal?: StopSignal): Promise<readonly TxTraceJson[]> {
    let block: Block;
    if (typeof ref === 'object' && 'rlp' in ref) {
      try {
        block = createBlockFromRLP(ref.rlp, this.chain.blockOpts);
      } catch (e) {
        throw new EvmRpcError(-32000, `could not decode block: ${(e as Error).message}`);
      }
    } else {
      const b = await this.#resolve(ref);
      if (!b) throw notFound(typeof ref === 'object' ? `block 0x${toHex(ref.hash)} not found` : `block #${String(ref)} not found`);
      block = b.eth;
    }
    const make = tracerMaker(req);
    const parent = await this.#parentOf(block);
    const traces = await traceBlockTxs(this.#replay, parent, block, block.transactions.length - 1, () => true, make, this.#bounds(req, signal));
    return traces.map((t) => ({ txHash: t.txHash, json: t.json }));
  }

  async #resolve(ref: BlockRef): Promise<EvmBlock | undefined> {
    try {
      return await this.rules.resolve(ref);
    } catch (e) {
      if (e instanceof EvmRpcError && e.rpcCode === -32000) return undefined;
      throw e;
    }
  }

  async traceCall(call: CallRequest, ref: BlockRef, req: TraceRequest, overrides?: StateOverrides, blockOverrides?: BlockOverrides, signal?: StopSignal): Promise<string> {
    const b = await this.rules.resolve(ref);
    this.rules.checkRequest(call);
    const make = tracerMaker(req);
    const priced = call.gasPrice !== undefined || call.maxFeePerGas !== undefined;
    // An unpriced call runs without a base fee, as geth runs it (its BASEFEE reads 0).
    const ctxBlock = overriddenBlock(b.eth, { ...blockOverrides, ...(priced ? {} : { baseFeePerGas: 0n }) }, this.chain.blockOpts);
    if (this.chain.rules) await this.rules.blockInfo(b, ctxBlock);
    const cap = this.rules.rpcGasCap();
    const gas = call.gas === undefined ? this.rules.gasCap(b) : call.gas > cap ? cap : call.gas;
    const from = new Address(call.from ?? ZERO_ADDRESS);
    return traceOneCall(
      this.#replay,
      b.eth.header.stateRoot,
      ctxBlock,
      async ({ sm }) => {
        if (overrides) await this.rules.applyOverrides(sm, overrides);
        const nonce = ((await sm.getAccount(from)) ?? new Account()).nonce;
        return callTx(call, { from, gas, nonce, chainId: this.chain.chainId, common: this.chain.common });
      },
      make,
      this.#bounds(req, signal),
    );
  }

  async rawHeader(ref: BlockRef): Promise<Uint8Array | undefined> {
    return (await this.#resolve(ref))?.eth.header.serialize();
  }

  async rawBlock(ref: BlockRef): Promise<Uint8Array | undefined> {
    return (await this.#resolve(ref))?.bytes;
  }

  async rawReceipts(ref: BlockRef): Promise<readonly Uint8Array[] | undefined> {
    const b = await this.#resolve(ref);
    if (!b) return undefined;
    const stored = b.execution?.receipts ?? [];
    return stored.map((r, i) => {
      const bloom = new Bloom(undefined, this.chain.common);
      for (const [address, topics] of r.logs) {
        bloom.add(address);
        for (const t of topics) bloom.add(t);
      }
      const receipt = { status: r.status, cumulativeBlockGasUsed: r.cumulativeGasUsed, bitvector: bloom.bitvector, logs: r.logs as never };
      return encodeReceipt(receipt as never, b.eth.transactions[i]!.type as never);
    });
  }
}
