/**
 * The contract between a tracer (geth's struct logger, callTracer, prestateTracer, 4byteTracer,
 * noopTracer, flatCallTracer) and the replay that runs a transaction under it (debug_trace*).
 *
 * A tracer watches one transaction (or one traced call) on a VM the replay made for it: `start`
 * subscribes to the VM's EVM events (`beforeMessage`, `afterMessage`, `step`, `newContract`), `finish`
 * unsubscribes and returns geth's JSON result. Listeners may be async (the EVM awaits them), so a tracer
 * can read the state at the moment of an event (prestateTracer's pre-values). A tracer never changes
 * the state. Each call to `start` comes with a fresh tracer.
 */
import type { Block } from '@ethereumjs/block';
import type { TypedTransaction } from '@ethereumjs/tx';
import type { RunTxResult, VM } from '@ethereumjs/vm';

export interface TraceContext {
  /** The VM the transaction runs on, at the state just before it (its earlier txs of the block applied). */
  readonly vm: VM;
  readonly tx: TypedTransaction;
  /** The block (or the call's block context, overrides applied) it runs in. */
  readonly block: Block;
  /** The tx's index in its block; undefined for debug_traceCall. */
  readonly txIndex?: number;
  /**
   * Called by the tracer as its output grows, with the bytes added; throws a TraceLimitError once the
   * trace passes the output bound, which ends the run (the struct logger counts every log it keeps).
   */
  readonly grow: (bytes: number) => void;
}

export interface EvmTracer {
  start(ctx: TraceContext): void | Promise<void>;
  /** Unsubscribes; the JSON result as geth answers it. */
  finish(result: RunTxResult): unknown | Promise<unknown>;
}

/**
 * Makes a tracer from the request's `tracerConfig` (and, for the struct logger, the top-level
 * options), throwing TracerConfigError naming the bad field.
 */
export type TracerFactory = (config: Readonly<Record<string, unknown>>) => EvmTracer;

export class TracerConfigError extends Error {
  override readonly name = 'TracerConfigError';
}

/** A trace past its output bound: the message says which bound and what to ask instead. */
export class TraceLimitError extends Error {
  override readonly name = 'TraceLimitError';
}
