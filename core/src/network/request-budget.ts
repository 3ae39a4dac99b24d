/**
 * What each peer's requests may cost this node (avalanchego's inbound byte/CPU throttlers and
 * outbound byte throttling, in the form that fits one event loop): a peer with a fresh self-signed
 * certificate sending GetAncestors back to back gets a bounded share of replies, memory and CPU
 * (request-budget.test.ts; bench/hostile-peer.mjs).
 *
 * A request (a query, Get, GetAncestors, a frontier or accepted-set question, VM gossip, a gossiped
 * block, a peer list) is handled only while its peer is within all of:
 * - requests per second (a token bucket with a burst);
 * - requests in progress at once (`maxInFlight`): bounds the memory its requests hold (a reply being
 *   gathered, a block being verified); a request counts as in progress for at most `maxRequestMs`;
 * - bytes sent in reply to its requests per second (charged when the reply leaves; a peer in debt
 *   gets nothing more until it refills);
 * - busy time: the share of wall time during which at least one of its requests is in progress
 *   (each request from its start to the end of its handler, overlapping ones counted once) — the
 *   measure of the CPU its requests take that one event loop allows. Measured on the injected clock.
 * Beyond any of these the request is dropped (the asker times out, as when a message is lost).
 *
 * Validators (the Network learns who they are through a callback) each get the `validator`
 * allocation; every other peer gets the `atLarge` allocation, and all of them together are also
 * held to the `atLargePool` one, so that many fresh certificates do not multiply the cost. A
 * validator's busy time is not bounded by default (`busyShare` 1): its queries wait in the engine's
 * queue behind other work, which a wall-clock measure would charge to it; its rate, requests in
 * progress and reply bytes are. Tests: network/request-budget.test.ts.
 */
import { TokenBucket } from './throttle.js';

/** What one peer (or all non-validators together) may cost. */
export interface Allocation {
  requestsPerSecond: number;
  requestsBurst: number;
  maxInFlight: number;
  replyBytesPerSecond: number;
  replyBytesBurst: number;
  /** Share of wall time (0-1) its requests may keep the node busy; 1 does not bound it. */
  busyShare: number;
  /** Busy time that may be used at once (ms) before the share applies. */
  busyBurstMs: number;
}

export interface RequestBudgetLimits {
  validator: Allocation;
  atLarge: Allocation;
  atLargePool: Allocation;
  /** A request counts as in progress at most this long (its handler may never finish). */
  maxRequestMs: number;
}

const MiB = 1024 * 1024;

export const DEFAULT_REQUEST_BUDGET: RequestBudgetLimits = {
  validator: {
    requestsPerSecond: 2_000,
    requestsBurst: 4_000,
    maxInFlight: 128,
    replyBytesPerSecond: 32 * MiB,
    replyBytesBurst: 64 * MiB,
    busyShare: 1,
    busyBurstMs: 10_000,
  },
  atLarge: {
    requestsPerSecond: 100,
    requestsBurst: 200,
    maxInFlight: 8,
    replyBytesPerSecond: 1 * MiB,
    replyBytesBurst: 4 * MiB,
    busyShare: 0.25,
    busyBurstMs: 2_000,
  },
  atLargePool: {
    requestsPerSecond: 1_000,
    requestsBurst: 2_000,
    maxInFlight: 32,
    replyBytesPerSecond: 2 * MiB,
    replyBytesBurst: 8 * MiB,
    busyShare: 0.5,
    busyBurstMs: 4_000,
  },
  maxRequestMs: 30_000,
};

/** The union of a set of intervals, charged to a bucket as it grows. */
class BusyMeter {
  #active = 0;
  #since = 0;
  readonly #bucket: TokenBucket | undefined;

  constructor(
    a: Allocation,
    private readonly now: () => number,
  ) {
    this.#bucket = a.busyShare >= 1 ? undefined : new TokenBucket(Math.max(1e-6, a.busyShare * 1000), a.busyBurstMs, now);
  }

  #charge(): void {
    const t = this.now();
    if (this.#active > 0 && t > this.#since) this.#bucket?.take(t - this.#since);
    this.#since = t;
  }

  begin(): void {
    this.#charge();
    this.#active += 1;
  }

  end(): void {
    this.#charge();
    this.#active = Math.max(0, this.#active - 1);
  }

  get exhausted(): boolean {
    if (!this.#bucket) return false;
    this.#charge();
    return this.#bucket.available < 0;
  }

  get idle(): boolean {
    return this.#active === 0;
  }
}

/** One peer's (or the pool's) meters. */
class Account {
  readonly requests: TokenBucket;
  readonly bytes: TokenBucket;
  readonly busy: BusyMeter;
  readonly inFlight = new Set<Ticket>();

  constructor(
    readonly allocation: Allocation,
    now: () => number,
  ) {
    this.requests = new TokenBucket(allocation.requestsPerSecond, allocation.requestsBurst, now);
    this.bytes = new TokenBucket(allocation.replyBytesPerSecond, allocation.replyBytesBurst, now);
    this.busy = new BusyMeter(allocation, now);
  }
}

/** A request admitted and in progress: `finish` it once its handling is over (a second call does nothing). */
export interface Ticket {
  readonly started: number;
  finish(): void;
}

/** Why a request was dropped. */
export type Refusal = 'request rate' | 'requests in progress' | 'reply bytes' | 'busy time';

export class RequestBudget {
  readonly #limits: RequestBudgetLimits;
  readonly #now: () => number;
  readonly #peers = new Map<string, Account>();
  readonly #pool: Account;

  constructor(limits: RequestBudgetLimits, now: () => number) {
    this.#limits = limits;
    this.#now = now;
    this.#pool = new Account(limits.atLargePool, now);
  }

  /** A request of peer `key` (a validator or not): its Ticket, or why it is dropped. */
  admit(key: string, validator: boolean): Ticket | { refused: Refusal; pool: boolean } {
    const own = this.#account(key, validator);
    const accounts = validator ? [own] : [own, this.#pool];
    for (const a of accounts) {
      const refused = this.#refusal(a);
      if (refused) return { refused, pool: a === this.#pool };
    }
    for (const a of accounts) a.requests.take(1);
    let done = false;
    const ticket: Ticket = {
      started: this.#now(),
      finish: () => {
        if (done) return;
        done = true;
        for (const a of accounts) {
          if (a.inFlight.delete(ticket)) a.busy.end();
        }
      },
    };
    for (const a of accounts) {
      a.inFlight.add(ticket);
      a.busy.begin();
    }
    return ticket;
  }

  /** Bytes sent to peer `key` in reply to its requests. */
  replied(key: string, validator: boolean, bytes: number): void {
    this.#account(key, validator).bytes.take(bytes);
    if (!validator) this.#pool.bytes.take(bytes);
  }

  /** The peer is gone: its meters are dropped (its requests still in progress stay counted in the pool until they finish). */
  forget(key: string): void {
    this.#peers.delete(key);
  }

  #account(key: string, validator: boolean): Account {
    const allocation = validator ? this.#limits.validator : this.#limits.atLarge;
    let a = this.#peers.get(key);
    // A peer that became (or stopped being) a validator starts over with the other allocation.
    if (!a || a.allocation !== allocation) {
      a = new Account(allocation, this.#now);
      this.#peers.set(key, a);
    }
    return a;
  }

  #refusal(a: Account): Refusal | undefined {
    if (a.requests.available < 1) return 'request rate';
    if (a.inFlight.size >= a.allocation.maxInFlight) {
      this.#expire(a);
      if (a.inFlight.size >= a.allocation.maxInFlight) return 'requests in progress';
    }
    if (a.bytes.available < 0) return 'reply bytes';
    if (a.busy.exhausted) return 'busy time';
    return undefined;
  }

  /** Requests in progress longer than maxRequestMs stop counting (their handler may never end). */
  #expire(a: Account): void {
    const oldest = this.#now() - this.#limits.maxRequestMs;
    for (const t of [...a.inFlight]) if (t.started <= oldest) t.finish();
  }
}
