/**
 * Process-level faults, pinned on the chain whose code raised them (scope.ts):
 * - an rxjs subscriber that throws (IPC, metrics, a test's listener on `accepted$`) is logged with its
 *   chain; consensus keeps running (rxjs would otherwise rethrow it later as an uncaught exception);
 * - an uncaught exception or unhandled rejection raised in a chain's scope halts that chain and the
 *   node keeps serving; one raised outside any chain is the node's own bug: it is logged and the
 *   process stops (`onFatal`), as Node would have done, but after a clean shutdown attempt.
 */
import { config as rxjsConfig } from 'rxjs';
import type { Logger } from '@cornice/sdk';
import { currentChain } from './scope.js';

function describe(e: unknown): string {
  try {
    return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  } catch {
    return 'an unprintable value';
  }
}

/** Routes rxjs' unhandled subscriber errors to the log (rxjs' config is process-wide: the last node started wins). */
export function containStreamErrors(log: Logger): void {
  rxjsConfig.onUnhandledError = (err: unknown) => {
    const chain = currentChain();
    log.error('stream subscriber failed', { ...(chain ? { chain: chain.name } : {}), error: describe(err), stack: (err as Error | null)?.stack });
  };
}

export interface FaultHandlerOptions {
  log: Logger;
  /** A fault outside any chain: the process must stop (after a clean stop attempt). */
  onFatal(kind: string, err: unknown): void;
}

/** Installs the process's uncaughtException/unhandledRejection handlers; returns their removal. */
export function installFaultHandlers(o: FaultHandlerOptions): () => void {
  const handle = (kind: 'uncaught exception' | 'unhandled rejection') => (err: unknown) => {
    const chain = currentChain();
    if (chain) {
      o.log.error('fault in a chain; halting it', { chain: chain.name, kind, error: describe(err), stack: (err as Error | null)?.stack });
      chain.fault(`${kind}: ${describe(err)}`);
      return;
    }
    o.log.fatal('fault outside any chain; stopping the node', { kind, error: describe(err), stack: (err as Error | null)?.stack });
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
