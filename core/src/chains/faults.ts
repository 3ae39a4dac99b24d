/**
 * Process-level faults, pinned on the chain whose code raised them:
 * - a subscriber of a chain's `accepted$` that throws (IPC, metrics, a test's listener) is caught
 *   where it subscribed (`containedStream`), logged with its chain, and consensus keeps running;
 *   one that throws further down an rxjs pipe is caught by rxjs' `onUnhandledError`, logged (rxjs
 *   would otherwise rethrow it later as an uncaught exception and end the process);
 * - an uncaught exception or unhandled rejection whose stack runs through a VM plugin's code (its
 *   package directory or plugin file) halts the chains running that VM, and the node keeps serving;
 *   one that cannot be pinned on a plugin is the node's own bug: it is logged and the process stops
 *   (`onFatal`), as Node would have done, after a clean shutdown attempt.
 * Attribution reads stacks rather than tracking async context: AsyncLocalStorage would put a hook on
 * every promise of the node, a cost on every JSON-RPC request (bench/run.mjs's admin.getNodeID
 * round trips show it). Test: faults.test.ts "an uncaught exception or unhandled rejection whose
 * stack runs through a plugin's code".
 */
import { Observable, config as rxjsConfig, type Observer, type Subscription } from 'rxjs';
import type { Logger } from '@cornice/sdk';

/** A chain as fault handling sees it. */
export interface FaultTarget {
  /** The chain's primary alias, or its ID. */
  readonly name: string;
  /** Halts the chain (idempotent): a fault confined to it. */
  fault(reason: string): void;
}

export function describeFault(e: unknown): string {
  try {
    return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  } catch {
    return 'an unprintable value';
  }
}

function stackOf(e: unknown): string | undefined {
  try {
    const stack = (e as { stack?: unknown } | null)?.stack;
    return typeof stack === 'string' ? stack : undefined;
  } catch {
    return undefined;
  }
}

/** Routes rxjs' unhandled subscriber errors to the log (rxjs' config is process-wide: the last node started wins). */
export function containStreamErrors(log: Logger): void {
  rxjsConfig.onUnhandledError = (err: unknown) => {
    log.error('stream subscriber failed', { error: describeFault(err), stack: stackOf(err) });
  };
}

/**
 * `source` as an Observable whose direct subscribers cannot throw into rxjs: a callback that throws
 * is reported to `onError` and the stream goes on for everyone.
 */
export function containedStream<T>(source: Observable<T>, onError: (err: unknown) => void): Observable<T> {
  return new ContainedStream(source, onError);
}

type Callback<A extends unknown[]> = ((...args: A) => void) | null | undefined;

class ContainedStream<T> extends Observable<T> {
  constructor(
    private readonly inner: Observable<T>,
    private readonly onError: (err: unknown) => void,
  ) {
    super();
  }

  override subscribe(
    observerOrNext?: Partial<Observer<T>> | ((value: T) => void) | null,
    error?: ((e: unknown) => void) | null,
    complete?: (() => void) | null,
  ): Subscription {
    const o: Partial<Observer<T>> = typeof observerOrNext === 'function' || observerOrNext == null
      ? { ...(observerOrNext ? { next: observerOrNext } : {}), ...(error ? { error } : {}), ...(complete ? { complete } : {}) }
      : observerOrNext;
    const guarded = <A extends unknown[]>(fn: Callback<A>) => (...args: A) => {
      if (!fn) return;
      try {
        fn.apply(o, args);
      } catch (e) {
        this.onError(e);
      }
    };
    return this.inner.subscribe({ next: guarded(o.next), error: guarded(o.error), complete: guarded(o.complete) });
  }
}

export interface FaultHandlerOptions {
  log: Logger;
  /** The chains whose VM's code the fault's stack runs through (none: not a plugin's fault). */
  attribute(stack: string): readonly FaultTarget[];
  /** A fault outside any chain: the process must stop (after a clean stop attempt). */
  onFatal(kind: string, err: unknown): void;
}

/** Installs the process's uncaughtException/unhandledRejection handlers; returns their removal. */
export function installFaultHandlers(o: FaultHandlerOptions): () => void {
  const handle = (kind: 'uncaught exception' | 'unhandled rejection') => (err: unknown) => {
    const stack = stackOf(err);
    const chains = stack === undefined ? [] : o.attribute(stack);
    if (chains.length > 0) {
      for (const chain of chains) {
        o.log.error('fault in a chain; halting it', { chain: chain.name, kind, error: describeFault(err), stack });
        chain.fault(`${kind}: ${describeFault(err)}`);
      }
      return;
    }
    o.log.fatal('fault outside any chain; stopping the node', { kind, error: describeFault(err), stack });
    o.onFatal(kind, err);
  };
  const onException = handle('uncaught exception');
  const onRejection = handle('unhandled rejection');
  process.on('uncaughtException', onException);
  process.on('unhandledRejection', onRejection);
  return () => {
    process.off('uncaughtException', onException);
    process.off('unhandledRejection', onRejection);
  };
}
