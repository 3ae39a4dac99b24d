/**
 * trace_transaction and trace_block, the parity `trace_` methods as anvil serves them, answered from
 * flatCallTracer (geth's flat form of callTracer): trace_transaction is the tx's flat call list,
 * trace_block every tx's lists of the block joined in order. Parity's conventions where
 * flatCallTracer has an option for them: its error texts ("Reverted", "Out of gas":
 * `convertParityErrors`) and calls to precompiles kept (`includePrecompiles`, as anvil lists them).
 * An unknown or pending tx and an unknown block answer `[]`, as anvil; the genesis block `[]` (it has
 * no txs). They run in the debug_trace lane within geth's default trace timeout and the output bound.
 * Served behind the debug API switch with the debug_ methods (rpc/debug.ts). Tests: rpc-trace.test.ts,
 * e2e evm-trace.test.ts.
 */
import type { BlockRef, EvmBackend, TraceRequest } from '../evm-backend.js';
import { required, type MethodSpec } from './dispatch.js';
import { parseBlockRef, parseHash } from './hex.js';
import { RawJson, type CallContext } from './request.js';

/** What the debug_ front end lends these methods: its lane and the trace request of its bounds. */
export interface TraceRunner {
  inLane<T>(ctx: CallContext, fn: () => Promise<T>): Promise<T>;
  /** A trace request under the default timeout and the request's output bound. */
  request(choice: Pick<TraceRequest, 'tracer' | 'tracerConfig'>, ctx: CallContext): TraceRequest;
}

/** flatCallTracer with parity's conventions (the module comment). */
export const PARITY_FLAT_TRACE = { tracer: 'flatCallTracer', tracerConfig: { convertParityErrors: true, includePrecompiles: true } } as const;

/** The JSON texts of flat call lists (`[…]` each) as one list, without parsing them. */
export function joinLists(lists: readonly string[]): string {
  const items = lists.map((l) => l.trim().slice(1, -1).trim()).filter((l) => l !== '');
  return `[${items.join(',')}]`;
}

export function parityTraceMethods(backend: EvmBackend, runner: TraceRunner): Array<[string, MethodSpec]> {
  return [
    [
      'trace_transaction',
      {
        args: [required(parseHash)],
        async run(a, ctx) {
          const hash = a[0] as Uint8Array;
          const loc = await backend.transaction(hash);
          if (!loc || loc.blockNumber === undefined || loc.blockNumber === 0n) return new RawJson('[]');
          return new RawJson(await runner.inLane(ctx, () => backend.traceTransaction(hash, runner.request(PARITY_FLAT_TRACE, ctx), ctx.signal)));
        },
      },
    ],
    [
      'trace_block',
      {
        args: [required(parseBlockRef)],
        async run(a, ctx) {
          const block = await backend.block(a[0] as BlockRef);
          if (!block || block.header.number === 0n || block.transactions.length === 0) return new RawJson('[]');
          const traces = await runner.inLane(ctx, () => backend.traceBlock({ hash: block.header.hash }, runner.request(PARITY_FLAT_TRACE, ctx), ctx.signal));
          return new RawJson(joinLists(traces.map((t) => t.json)));
        },
      },
    ],
  ];
}
