/**
 * Warn lines about peers — drops, refusals, throttling — that a flood cannot turn into a flood of
 * the log: a node started by the local network runner logs at warn, so these must be warn to be
 * seen at all, and then each must be bounded.
 *
 * `limitWarnings(log)` is a Logger whose warn lines are limited per message text: at most `burst`
 * lines of one message per `intervalMs` (on an injected clock); the lines left out are counted, and
 * the next line of that message that is written carries `suppressed: <n>`. Other levels pass as they
 * are. The count of distinct messages kept is bounded (they are the code's own strings; a message
 * built from peer input would still not grow it past MAX_KEYS). Test: network/inbound.test.ts 'limitWarnings: …'.
 */
import type { LogFields, Logger } from '@cornice/sdk';

export interface WarnLimits {
  /** Lines of one message written per interval. */
  burst: number;
  intervalMs: number;
}

export const DEFAULT_WARN_LIMITS: WarnLimits = { burst: 5, intervalMs: 10_000 };

/** Distinct messages tracked; past it the oldest window is forgotten. */
const MAX_KEYS = 256;

interface Window {
  start: number;
  written: number;
  suppressed: number;
}

export function limitWarnings(log: Logger, now: () => number = Date.now, limits: WarnLimits = DEFAULT_WARN_LIMITS): Logger {
  const windows = new Map<string, Window>();
  const warn = (msg: string, fields?: LogFields): void => {
    const t = now();
    let w = windows.get(msg);
    if (!w || t - w.start >= limits.intervalMs) {
      const suppressed = w?.suppressed ?? 0;
      windows.delete(msg);
      if (windows.size >= MAX_KEYS) windows.delete(windows.keys().next().value as string);
      w = { start: t, written: 0, suppressed };
      windows.set(msg, w);
    }
    if (w.written >= limits.burst) {
      w.suppressed += 1;
      return;
    }
    w.written += 1;
    const suppressed = w.suppressed;
    w.suppressed = 0;
    log.warn(msg, suppressed > 0 ? { ...fields, suppressed } : fields);
  };
  return {
    trace: (m, f) => log.trace(m, f),
    debug: (m, f) => log.debug(m, f),
    info: (m, f) => log.info(m, f),
    warn,
    error: (m, f) => log.error(m, f),
    fatal: (m, f) => log.fatal(m, f),
    child: (fields) => limitWarnings(log.child(fields), now, limits),
  };
}
