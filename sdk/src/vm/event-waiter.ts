/**
 * The waiting half of a VM's `waitForEvent`, without polling: the VM says when something changed
 * (`wake()`: a tx issued, a preference changed, a block decided), and `wait` re-checks then — or at
 * the time the check names (a locktime, a validator's start), or when the signal aborts. A wake that
 * comes while the check runs is not lost: the check runs again.
 */
import type { VMEvent } from './vm.js';

export interface WaiterTimers {
  setTimeout(fn: () => void, ms: number): { cancel(): void };
}

/** What a check answers: build now, or the unix second when it may be time (undefined: no time helps). */
export type BuildCheck = () => Promise<'now' | number | undefined>;

export interface EventWaiterOptions {
  timers: WaiterTimers;
  /** Milliseconds since the epoch (the chain's clock). */
  now(): number;
  /** Longest single sleep before checking again even without a wake. */
  maxSleepMs: number;
  /** Sleep this long when the check names no time (undefined: until a wake or the abort). */
  idleSleepMs?: number;
}

export class EventWaiter {
  #wakes = 0;
  readonly #wakers = new Set<() => void>();

  constructor(private readonly o: EventWaiterOptions) {}

  /** Something changed: every wait re-checks. */
  wake(): void {
    this.#wakes += 1;
    for (const w of [...this.#wakers]) w();
  }

  /**
   * Resolves 'pendingTxs' once `check` answers 'now'. `stop` throws to end the wait (shutdown, an
   * aborted signal); it is called before each check and again after it.
   */
  async wait(signal: AbortSignal, check: BuildCheck, stop: () => void): Promise<VMEvent> {
    for (;;) {
      stop();
      const wakes = this.#wakes;
      const next = await check();
      // From here to registering the waker all is synchronous, so an abort, a shutdown or a wake that
      // came while the check ran is seen now, not after the sleep.
      stop();
      if (next === 'now') return 'pendingTxs';
      if (this.#wakes !== wakes) continue;
      await this.#sleep(signal, next);
    }
  }

  #sleep(signal: AbortSignal, until: number | undefined): Promise<void> {
    const { timers, now, maxSleepMs, idleSleepMs } = this.o;
    const ms = until === undefined ? idleSleepMs : Math.min(maxSleepMs, Math.max(0, until * 1000 - now()));
    return new Promise<void>((resolve) => {
      const timer = ms === undefined ? undefined : timers.setTimeout(() => done(), ms);
      const done = () => {
        timer?.cancel();
        this.#wakers.delete(done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      this.#wakers.add(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }
}
