import type { Scheduler } from './types.js';

/** The real clock and timers (what a running node uses; tests and simulations use virtual time). */
export const systemScheduler: Scheduler = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    const t = setTimeout(fn, ms);
    t.unref?.();
    return { cancel: () => clearTimeout(t) };
  },
  yield: () => new Promise((resolve) => setImmediate(resolve)),
};
