/**
 * The connections' outboxes of subscription notifications (notifier.ts makes them): written at most
 * `notifyBytesPerTurn` characters in all per turn of the event loop, round-robin over connections
 * (while that lasts a notification goes out at once); an outbox holding more than
 * `maxQueuedNotifications` (geth's 20,000) closes its connection with 1008 "subscription queue
 * overflow" (geth's errSubscriptionQueueOverflow), and when all together hold more than
 * `maxQueuedNotificationsTotal`, the connection with the most waiting is closed the same way. A
 * client that does not keep up is dropped, not buffered forever (the node also closes one whose
 * socket holds more than 4 MiB unread). Tests: rpc-subscriptions.test.ts.
 */
import type { Logger, WebSocketConnection } from '@cornice/sdk';

export interface NotifyLimits {
  /** Notifications one connection may have waiting to be written (geth: 20,000). */
  readonly maxQueuedNotifications: number;
  /** Notifications waiting over all connections. */
  readonly maxQueuedNotificationsTotal: number;
  /** Characters of notifications written per turn of the event loop, over all connections. */
  readonly notifyBytesPerTurn: number;
}

export const DEFAULT_NOTIFY_LIMITS: NotifyLimits = {
  maxQueuedNotifications: 20_000,
  maxQueuedNotificationsTotal: 200_000,
  notifyBytesPerTurn: 1 << 20,
};

/** RFC 6455 policy violation. */
const POLICY_VIOLATION = 1008;
/** geth's errSubscriptionQueueOverflow. */
export const QUEUE_OVERFLOW = 'subscription queue overflow';

const turn = (fn: () => void): void => void setImmediate(fn);

/** One connection's notifications waiting to be written, in order. */
export class Outbox {
  #queue: string[] = [];
  #head = 0;
  closed = false;

  constructor(
    readonly conn: WebSocketConnection,
    private readonly owner: Outboxes,
  ) {}

  get waiting(): number {
    return this.#queue.length - this.#head;
  }

  /** Queues `text` (written at once while this turn's allowance lasts). */
  push(text: string): void {
    if (this.closed) return;
    if (this.waiting === 0 && this.owner.take(text.length)) {
      this.conn.send(text);
      return;
    }
    this.#queue.push(text);
    this.owner.queued(this);
  }

  /** Writes what waits within `allowance` characters; the characters written. */
  write(allowance: number): number {
    let written = 0;
    while (this.#head < this.#queue.length && written < allowance && !this.closed) {
      const text = this.#queue[this.#head]!;
      this.#queue[this.#head++] = '';
      this.conn.send(text);
      written += text.length;
    }
    if (this.#head === this.#queue.length || this.#head > 4096) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
    return written;
  }

  /** Drops what waits and closes the connection with `reason`. */
  overflow(): void {
    if (this.closed) return;
    this.discard();
    this.conn.close(POLICY_VIOLATION, QUEUE_OVERFLOW);
  }

  discard(): void {
    this.closed = true;
    this.owner.dequeued(this.waiting);
    this.#queue = [];
    this.#head = 0;
  }
}

/** Every outbox's pacing and bounds. */
export class Outboxes {
  /** Outboxes with notifications waiting, in round-robin order. */
  readonly #waiting = new Set<Outbox>();
  #totalQueued = 0;
  /** Characters written in this turn of the event loop, and whether its end is scheduled. */
  #turnWritten = 0;
  #turnScheduled = false;
  /** Connections closed for falling too far behind (tests, metrics). */
  dropped = 0;

  constructor(
    readonly limits: NotifyLimits,
    private readonly log: Logger,
  ) {}

  /** Notifications waiting over all connections. */
  get totalQueued(): number {
    return this.#totalQueued;
  }

  /** Takes `chars` of this turn's allowance; false when it is spent. */
  take(chars: number): boolean {
    this.#endOfTurn();
    if (this.#turnWritten >= this.limits.notifyBytesPerTurn) return false;
    this.#turnWritten += chars;
    return true;
  }

  /** `box` queued one more notification: bounds checked, writing scheduled. */
  queued(box: Outbox): void {
    this.#waiting.add(box);
    this.#totalQueued++;
    this.#endOfTurn();
    if (box.waiting > this.limits.maxQueuedNotifications) return this.#drop(box);
    if (this.#totalQueued > this.limits.maxQueuedNotificationsTotal) {
      let worst = box;
      for (const b of this.#waiting) if (b.waiting > worst.waiting) worst = b;
      this.#drop(worst);
    }
  }

  dequeued(n: number): void {
    this.#totalQueued -= n;
  }

  #drop(box: Outbox): void {
    this.log.debug('eth subscriber dropped: notifications not read', { waiting: box.waiting, limit: this.limits.maxQueuedNotifications });
    this.dropped++;
    this.#waiting.delete(box);
    box.overflow();
  }

  #endOfTurn(): void {
    if (this.#turnScheduled) return;
    this.#turnScheduled = true;
    turn(() => {
      this.#turnScheduled = false;
      this.#turnWritten = 0;
      this.#writeWaiting();
    });
  }

  /** Writes waiting notifications within this turn's allowance, round-robin over outboxes. */
  #writeWaiting(): void {
    const per = Math.max(1, Math.floor(this.limits.notifyBytesPerTurn / Math.max(1, this.#waiting.size)));
    for (const box of [...this.#waiting]) {
      if (this.#turnWritten >= this.limits.notifyBytesPerTurn) break;
      const before = box.waiting;
      this.#turnWritten += box.write(per);
      this.#totalQueued -= before - box.waiting;
      this.#waiting.delete(box);
      if (box.waiting > 0 && !box.closed) this.#waiting.add(box);
    }
    if (this.#waiting.size > 0) this.#endOfTurn();
  }

}
