/**
 * The tracers a debug_trace* request may name (`tracer`), by geth's names; none named: the struct
 * logger, configured by the request's top-level fields (geth's). A name not here, and any JavaScript
 * tracer (geth compiles a `tracer` it does not know as one), is refused with -32602 naming the
 * built-in ones. Test: tracing.test.ts "registry".
 */
import { EvmRpcError } from '../../evm-backend.js';
import { callTracer } from './call-tracer.js';
import { flatCallTracerOver } from './flat-call.js';
import { fourByteTracer } from './four-byte-tracer.js';
import { noopTracer } from './noop-tracer.js';
import { prestateTracer } from './prestate-tracer.js';
import { structLogger } from './struct-logger.js';
import { TracerConfigError, type EvmTracer, type TracerFactory } from './tracer.js';

/** The built-in tracers by name (the struct logger is the default, named by no `tracer`). */
export const TRACERS: ReadonlyMap<string, TracerFactory> = new Map<string, TracerFactory>([
  ['callTracer', callTracer],
  ['flatCallTracer', flatCallTracerOver(callTracer)],
  ['prestateTracer', prestateTracer],
  ['4byteTracer', fourByteTracer],
  ['noopTracer', noopTracer],
]);

/** What a request asks a trace to run: its tracer and the tracer's options. */
export interface TracerChoice {
  /** A tracer's name; undefined: the struct logger. */
  readonly tracer?: string;
  /** The named tracer's `tracerConfig` (an object; absent: {}). */
  readonly tracerConfig?: Readonly<Record<string, unknown>>;
  /** The request's top-level options: the struct logger's config. */
  readonly logger?: Readonly<Record<string, unknown>>;
}

function builtIns(): string {
  return [...TRACERS.keys()].join(', ');
}

/**
 * A maker of fresh tracers (one per traced tx) for `choice`; throws -32602 for an unknown tracer or a
 * malformed config (checked once here, by making the first). Each call answers a tracer no one
 * started yet (test: tracing.test.ts "registry").
 */
export function tracerMaker(choice: TracerChoice): () => EvmTracer {
  const name = choice.tracer;
  let factory: TracerFactory;
  let config: Readonly<Record<string, unknown>>;
  if (name === undefined || name === '') {
    factory = structLogger;
    config = choice.logger ?? {};
  } else {
    const found = TRACERS.get(name);
    if (!found) {
      const looksLikeCode = /[{}()\s;]/.test(name);
      throw new EvmRpcError(
        -32602,
        `${looksLikeCode ? 'JavaScript tracers are not supported' : `tracer ${JSON.stringify(name.slice(0, 64))} not found`}: the built-in tracers are ${builtIns()}, or none for the struct logger`,
      );
    }
    factory = found;
    config = choice.tracerConfig ?? {};
  }
  const make = (): EvmTracer => {
    try {
      return factory(config);
    } catch (e) {
      if (e instanceof TracerConfigError) throw new EvmRpcError(-32602, `invalid tracer config: ${e.message}`);
      throw e;
    }
  };
  // The tracer made to check the config serves the first traced tx: a trace of one tx makes one.
  let checked: EvmTracer | undefined = make();
  return () => {
    const t = checked ?? make();
    checked = undefined;
    return t;
  };
}
