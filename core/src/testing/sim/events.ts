/**
 * A virtual-time event queue: events run in (time, insertion) order; `VirtualScheduler` implements the
 * engine's Scheduler on it. Nothing here touches real timers.
 */
import type { Scheduler } from '../../consensus/snowman/types.js';

interface QueuedEvent {
  time: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

export class EventQueue implements Scheduler {
  #now = 0;
  #seq = 0;
  #live = 0;
  readonly #heap: QueuedEvent[] = [];

  now(): number {
    return this.#now;
  }

  /** Events scheduled and not yet run or cancelled. */
  get pending(): number {
    return this.#live;
  }

  setTimeout(fn: () => void, ms: number): { cancel(): void } {
    const ev: QueuedEvent = { time: this.#now + Math.max(0, ms), seq: this.#seq++, fn, cancelled: false };
    this.#push(ev);
    this.#live += 1;
    return {
      cancel: () => {
        if (!ev.cancelled) {
          ev.cancelled = true;
          this.#live -= 1;
        }
      },
    };
  }

  /** Virtual time has no other work to let through. */
  yield(): Promise<void> {
    return Promise.resolve();
  }

  /** The time of the next live event, or undefined. */
  peekTime(): number | undefined {
    this.#skipCancelled();
    return this.#heap[0]?.time;
  }

  /** Runs the next live event (advancing the clock to it); false when none is left. */
  runNext(): boolean {
    this.#skipCancelled();
    const ev = this.#pop();
    if (!ev) return false;
    ev.cancelled = true;
    this.#live -= 1;
    this.#now = ev.time;
    ev.fn();
    return true;
  }

  /** Moves the clock forward (never back) without running anything. */
  advanceTo(t: number): void {
    if (t > this.#now) this.#now = t;
  }

  #skipCancelled(): void {
    while (this.#heap.length > 0 && (this.#heap[0] as QueuedEvent).cancelled) this.#pop();
  }

  #less(a: QueuedEvent, b: QueuedEvent): boolean {
    return a.time < b.time || (a.time === b.time && a.seq < b.seq);
  }

  #push(ev: QueuedEvent): void {
    const h = this.#heap;
    h.push(ev);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.#less(h[i] as QueuedEvent, h[p] as QueuedEvent)) break;
      [h[i], h[p]] = [h[p] as QueuedEvent, h[i] as QueuedEvent];
      i = p;
    }
  }

  #pop(): QueuedEvent | undefined {
    const h = this.#heap;
    if (h.length === 0) return undefined;
    const top = h[0] as QueuedEvent;
    const last = h.pop() as QueuedEvent;
    if (h.length > 0) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && this.#less(h[l] as QueuedEvent, h[m] as QueuedEvent)) m = l;
        if (r < h.length && this.#less(h[r] as QueuedEvent, h[m] as QueuedEvent)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m] as QueuedEvent, h[i] as QueuedEvent];
        i = m;
      }
    }
    return top;
  }
}

/**
 * Lets every pending promise reaction run, including reactions queued by those reactions. Node runs
 * a nextTick callback queued from a microtask only after the microtask queue is empty, so this
 * drains it without a turn of the event loop (which would cost more than the simulated work).
 */
export function drainMicrotasks(): Promise<void> {
  return new Promise((resolve) => process.nextTick(resolve));
}
