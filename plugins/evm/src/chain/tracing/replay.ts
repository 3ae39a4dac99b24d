/**
 * Runs transactions under tracers (debug_traceTransaction, debug_traceBlock*, debug_traceCall) on a
 * trace VM (StateReader.trace), inside a journal checkpoint reverted at the end: tx i of a
 * block is traced on its parent's state after txs 0..i-1 ran untraced, each as the block ran it
 * (the block's header fields, the chain rules' beforeBlock and block info, base fees credited to the
 * coinbase where the rules say so). Nothing is stored.
 *
 * Bounds (each a test in tracing.test.ts "bounds"):
 * - time: the whole replay runs under the VM's CallGuard with the request's `timeout` (geth's
 *   duration, default 5 s): the event loop gets a turn every few ms and the run halts past it
 *   ("execution timeout", geth's text); the request's signal (client gone, request deadline) halts it too;
 * - output: the tracers count the JSON they keep (`grow`); past `maxChars` the run ends with -32003
 *   and a text naming the options that make a trace smaller, before the whole output exists.
 * A recent block's parent state is read from the state database's node cache (accepted blocks'
 * nodes stay there), so a trace right after a receipt walks no trie on disk.
 */
import { toHex } from '@cornice/sdk';
import { createBlock, type Block, type HeaderData } from '@ethereumjs/block';
import type { TypedTransaction } from '@ethereumjs/tx';
import { Account, Address } from '@ethereumjs/util';
import { runTx, type RunTxResult } from '@ethereumjs/vm';
import { EvmRpcError, type StopSignal } from '../../evm-backend.js';
import type { BlockOpts } from '../block-context.js';
import { shortReason } from '../eth-errors.js';
import { nextHeaderData } from '../executor.js';
import { hookState, withBlockInfo } from '../hooks.js';
import type { StateView } from '../reader.js';
import type { BlockInfo, ChainRules } from '../rules.js';
import { jsonTextOf } from './options.js';
import { TraceLimitError, type EvmTracer } from './tracer.js';

export interface ReplayChain {
  readonly blockOpts: BlockOpts;
  readonly rules: ChainRules | undefined;
  /** Base fees go to the coinbase instead of being burned. */
  readonly creditBaseFee: boolean;
  /**
   * Runs `fn` alone on a trace VM at `root` (StateReader.trace: kept from one trace to the next);
   * `fn` leaves the state as it found it: its writes inside a journal checkpoint it reverts.
   */
  replayAt<T>(root: Uint8Array, fn: (view: StateView) => Promise<T>): Promise<T>;
  /** The block contexts of the blocks traced last (BlockContexts: one per chain). */
  readonly contexts: BlockContexts;
}

/** The context a block's txs replay in: its header as the block ran it, and the chain rules' block info. */
interface BlockContext {
  readonly hdr: HeaderData;
  readonly block: Block;
  readonly info: BlockInfo | undefined;
}

/** Block contexts kept: a client traces the txs of the last few blocks over and over. */
const KEPT_CONTEXTS = 16;

/**
 * The block contexts of the blocks traced last, by block hash (the hash fixes the header, hence its
 * parent): made once per block, not per trace (making the context block was ~7% of tracing an ERC-20
 * transfer, bench/trace.mjs). Its Block is frozen; nothing a replay does changes it.
 * Test: tracing.test.ts "replay" (the same block traced twice answers the same).
 */
export class BlockContexts {
  readonly #kept = new Map<string, BlockContext>();

  of(parent: Block, block: Block, blockOpts: BlockOpts, withRules: boolean): BlockContext {
    const key = toHex(block.hash());
    const kept = this.#kept.get(key);
    if (kept) {
      this.#kept.delete(key);
      this.#kept.set(key, kept);
      return kept;
    }
    const h = block.header;
    const hdr = nextHeaderData(parent, h.timestamp, { baseFeePerGas: h.baseFeePerGas ?? 0n, gasLimit: h.gasLimit, coinbase: h.coinbase.bytes, extraData: h.extraData });
    const ctxBlock = createBlock({ header: hdr }, blockOpts);
    const made: BlockContext = { hdr, block: ctxBlock, info: withRules ? withBlockInfo(ctxBlock, parent.header.timestamp) : undefined };
    this.#kept.set(key, made);
    if (this.#kept.size > KEPT_CONTEXTS) this.#kept.delete(this.#kept.keys().next().value!);
    return made;
  }
}

export interface TraceBounds {
  /** 0: none. */
  readonly timeoutMs: number;
  /** Most characters of the traces' JSON together. */
  readonly maxChars: number;
  readonly signal?: StopSignal;
}

export interface TxTrace {
  readonly txHash: Uint8Array;
  /** The tracer's result as JSON text. */
  readonly json: string;
}

/** The characters a trace's output may still take; past them, a TraceLimitError. */
export class OutputBound {
  #used = 0;

  constructor(readonly max: number) {}

  readonly grow = (chars: number): void => {
    this.#used += chars;
    if (this.#used > this.max) {
      throw new TraceLimitError(
        `trace output larger than ${this.max} characters: ask for less (disableStack, disableStorage, no enableMemory, a limit on the logs, or a tracer such as callTracer)`,
      );
    }
  };
}

/** A run's failure as the client sees it: the request's own reason, geth's timeout text, the bound's error. */
function traceFailure(e: unknown, view: StateView, bounds: TraceBounds): unknown {
  if (bounds.signal?.aborted) return bounds.signal.reason;
  if (e instanceof TraceLimitError) return new EvmRpcError(-32003, e.message);
  if (view.guard.expired) return new EvmRpcError(-32000, 'execution timeout');
  if (e instanceof EvmRpcError) return e;
  return new EvmRpcError(-32000, `tracing failed: ${shortReason(e)}`);
}

/**
 * `fn` inside a journal checkpoint reverted after it, so the trace VM is left as found (the state
 * overrides of a debug_traceCall, the replayed txs' writes). A throw skips the revert: the frames it
 * escaped left theirs open, and StateReader.trace drops a view left with any checkpoint open.
 */
function inCheckpoint<T>(view: StateView, fn: () => Promise<T>): () => Promise<T> {
  return async () => {
    const { journal } = view.vm.evm;
    await journal.checkpoint();
    const out = await fn();
    await journal.revert();
    journal.cleanJournal();
    return out;
  };
}

/** Runs one tx under `tracer` (undefined: untraced); the tracer's JSON text. */
async function runTraced(view: StateView, tx: TypedTransaction, block: Block, blockGasUsed: bigint, tracer: EvmTracer | undefined, grow: (n: number) => void, txIndex?: number): Promise<{ r: RunTxResult; json?: string }> {
  const { vm } = view;
  if (tracer) await tracer.start({ vm, tx, block, grow, ...(txIndex !== undefined ? { txIndex } : {}) });
  let r: RunTxResult;
  try {
    r = await runTx(vm, { tx, block, blockGasUsed, skipHardForkValidation: true });
  } catch (e) {
    (tracer as { abort?: () => void } | undefined)?.abort?.();
    throw e;
  }
  if (view.guard.expired) throw view.guard.timeoutError();
  return { r, ...(tracer ? { json: jsonTextOf(await tracer.finish(r)) } : {}) };
}

/**
 * Traces the txs of `block` whose index `traced` accepts (with a fresh tracer from `make` each), on
 * `parent`'s state; txs after the last traced one are not run.
 */
export async function traceBlockTxs(chain: ReplayChain, parent: Block, block: Block, lastIndex: number, traced: (i: number) => boolean, make: () => EvmTracer, bounds: TraceBounds): Promise<TxTrace[]> {
  if (bounds.signal?.aborted) throw bounds.signal.reason;
  const out = new OutputBound(bounds.maxChars);
  const rules = chain.rules;
  const { hdr, block: ctxBlock, info } = chain.contexts.of(parent, block, chain.blockOpts, rules !== undefined);
  return chain.replayAt(parent.header.stateRoot, async (view) => {
    const { vm, sm, guard } = view;
    try {
      return await guard.run(
        bounds.timeoutMs,
        inCheckpoint(view, async () => {
          const traces: TxTrace[] = [];
          if (rules?.beforeBlock) {
            await rules.beforeBlock(info!, hookState(sm, vm.evm.journal));
            await vm.evm.journal.cleanup();
          }
          let gasUsed = 0n;
          for (const [i, tx] of block.transactions.entries()) {
            if (i > lastIndex) break;
            const tracer = traced(i) ? make() : undefined;
            const { r, json } = await runTraced(view, tx, ctxBlock, gasUsed, tracer, out.grow, i);
            gasUsed += r.totalGasSpent;
            if (chain.creditBaseFee && (hdr.baseFeePerGas as bigint) > 0n) {
              const coinbase = new Address(hdr.coinbase as Uint8Array);
              const acct = (await sm.getAccount(coinbase)) ?? new Account();
              acct.balance += (hdr.baseFeePerGas as bigint) * r.totalGasSpent;
              await sm.putAccount(coinbase, acct);
            }
            if (json !== undefined) traces.push({ txHash: tx.hash(), json });
          }
          return traces;
        }),
        bounds.signal,
      );
    } catch (e) {
      throw traceFailure(e, view, bounds);
    }
  });
}

/**
 * Traces one call (debug_traceCall) on the state at `root` in `block`: `prepare` applies the state
 * overrides on that state and makes the call's tx.
 */
export async function traceOneCall(chain: ReplayChain, root: Uint8Array, block: Block, prepare: (view: StateView) => Promise<TypedTransaction>, make: () => EvmTracer, bounds: TraceBounds): Promise<string> {
  if (bounds.signal?.aborted) throw bounds.signal.reason;
  const out = new OutputBound(bounds.maxChars);
  return chain.replayAt(root, async (view) => {
    try {
      return await view.guard.run(
        bounds.timeoutMs,
        inCheckpoint(view, async () => {
          const tx = await prepare(view);
          const { json } = await runTraced(view, tx, block, 0n, make(), out.grow);
          return json!;
        }),
        bounds.signal,
      );
    } catch (e) {
      throw traceFailure(e, view, bounds);
    }
  });
}
