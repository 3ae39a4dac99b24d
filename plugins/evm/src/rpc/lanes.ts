/**
 * Fair, bounded queues for the front end's heavy methods. Before, every eth_call ran on one reading
 * VM in arrival order: a batch of 100 looping calls (5 s each) from one client queued every later
 * eth_call, eth_getBalance and transaction send behind minutes of work, which went on after its
 * client had left (bench/evm-abuse.mjs calls). A lane instead
 * - runs at most `concurrency` jobs at once, and at most one per connection;
 * - leaves a slot for other addresses: one address runs at most `concurrency - 1` (when above 1);
 * - picks the next job round-robin over addresses, then over that address's connections, so one
 *   connection's hundred calls wait behind each other, not in front of another client's one;
 * - bounds what waits: `perConnectionQueue` jobs per connection and `queue` in all (more: -32005
 *   "too many … requests waiting", at once);
 * - drops a waiting job whose request is aborted (its client went away, or its deadline passed): it
 *   never runs. A running job gets the same signal and stops at its next look (chain/call-guard.ts).
 * Tests: rpc-lanes.test.ts.
 */
import { EvmRpcError, type StopSignal } from '../evm-backend.js';
import type { RpcClient } from './request.js';

export interface LaneLimits {
  /** Jobs running at once, over all clients. */
  readonly concurrency: number;
  /** Jobs one connection may have waiting. */
  readonly perConnectionQueue: number;
  /** Jobs waiting, over all clients. */
  readonly queue: number;
}

interface Waiter {
  readonly client: RpcClient;
  readonly start: () => void;
  readonly signal: StopSignal;
  readonly onAbort: () => void;
}

/** Jobs waiting, by address then connection. */
interface AddressQueue {
  readonly connections: Map<string, Waiter[]>;
}

/**
 * Per address or connection: jobs running, and when it was last given a slot (kept while it has
 * jobs running or waiting). The next slot goes to the one served longest ago; a newcomer counts as
 * served just before the last one served.
 */
interface Usage {
  running: number;
  served: number;
}

export class Lane {
  #running = 0;
  readonly #connections = new Map<string, Usage>();
  readonly #addresses = new Map<string, Usage>();
  readonly #waiting = new Map<string, AddressQueue>();
  #queued = 0;
  /** Slots given so far. */
  #tick = 0;

  constructor(
    /** What the lane runs, for error texts ("eth_call"). */
    readonly name: string,
    readonly limits: LaneLimits,
  ) {}

  /** Jobs running now. */
  get running(): number {
    return this.#running;
  }

  /** Jobs waiting now. */
  get queued(): number {
    return this.#queued;
  }

  /**
   * Runs `fn` when the lane gives `client` a slot. Rejects with `signal`'s reason when it aborts
   * first (the job never runs), or with -32005 when too many wait.
   */
  async run<T>(client: RpcClient, signal: StopSignal, fn: () => Promise<T>): Promise<T> {
    if (signal.aborted) throw signal.reason;
    // Nobody waiting and a slot free for this client: it runs now (no queue, no promise).
    if (this.#queued === 0 && this.#running < this.limits.concurrency && this.#free(client)) this.#start(client);
    else await this.#slot(client, signal);
    try {
      return await fn();
    } finally {
      this.#running--;
      this.#usage(this.#connections, client.connection).running--;
      this.#usage(this.#addresses, client.address).running--;
      this.#forget(client);
      this.#pump();
    }
  }

  #usage(m: Map<string, Usage>, key: string): Usage {
    let u = m.get(key);
    if (!u) m.set(key, (u = { running: 0, served: this.#tick - 0.5 }));
    return u;
  }

  /** Drops the usage of a connection and an address with nothing running or waiting. */
  #forget(client: RpcClient): void {
    const address = this.#waiting.get(client.address);
    if (this.#connections.get(client.connection)?.running === 0 && !address?.connections.has(client.connection)) this.#connections.delete(client.connection);
    if (this.#addresses.get(client.address)?.running === 0 && !address) this.#addresses.delete(client.address);
  }

  #slot(client: RpcClient, signal: StopSignal): Promise<void> {
    const mine = this.#waiting.get(client.address)?.connections.get(client.connection);
    if ((mine?.length ?? 0) >= this.limits.perConnectionQueue) {
      throw new EvmRpcError(-32005, `too many ${this.name} requests waiting on this connection (at most ${this.limits.perConnectionQueue}): try again later`);
    }
    if (this.#queued >= this.limits.queue) {
      throw new EvmRpcError(-32005, `too many ${this.name} requests waiting (at most ${this.limits.queue}): try again later`);
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        client,
        signal,
        start: () => {
          signal.removeEventListener('abort', waiter.onAbort);
          resolve();
        },
        onAbort: () => {
          if (!this.#remove(waiter)) return;
          this.#forget(client);
          reject(signal.reason);
        },
      };
      signal.addEventListener('abort', waiter.onAbort, { once: true });
      this.#usage(this.#connections, client.connection);
      this.#usage(this.#addresses, client.address);
      let address = this.#waiting.get(client.address);
      if (!address) this.#waiting.set(client.address, (address = { connections: new Map() }));
      let jobs = address.connections.get(client.connection);
      if (!jobs) address.connections.set(client.connection, (jobs = []));
      jobs.push(waiter);
      this.#queued++;
      this.#pump();
    });
  }

  /** Takes `w` out of the queue; false when it is not there (it started). */
  #remove(w: Waiter): boolean {
    const address = this.#waiting.get(w.client.address);
    const jobs = address?.connections.get(w.client.connection);
    const i = jobs?.indexOf(w) ?? -1;
    if (i < 0) return false;
    jobs!.splice(i, 1);
    if (jobs!.length === 0) address!.connections.delete(w.client.connection);
    if (address!.connections.size === 0) this.#waiting.delete(w.client.address);
    this.#queued--;
    return true;
  }

  /** Most jobs one address may run: all but one slot when there is more than one. */
  get #perAddress(): number {
    return this.limits.concurrency > 1 ? this.limits.concurrency - 1 : 1;
  }

  /** Starts waiting jobs while there are free slots. */
  #pump(): void {
    while (this.#running < this.limits.concurrency && this.#queued > 0) {
      const next = this.#pick();
      if (!next) return;
      this.#remove(next);
      this.#start(next.client);
      next.start();
    }
  }

  /** Whether `client` may run one more job: its connection runs none, its address fewer than its share. */
  #free(client: RpcClient): boolean {
    return (this.#connections.get(client.connection)?.running ?? 0) < 1 && (this.#addresses.get(client.address)?.running ?? 0) < this.#perAddress;
  }

  /** Counts a job of `client` as running. */
  #start(client: RpcClient): void {
    this.#running++;
    const tick = ++this.#tick;
    const c = this.#usage(this.#connections, client.connection);
    const a = this.#usage(this.#addresses, client.address);
    c.running++;
    a.running++;
    c.served = a.served = tick;
  }

  /** The next job: of the address served longest ago that may run one, of its connection served longest ago that may. */
  #pick(): Waiter | undefined {
    let best: { served: number; jobs: Waiter[] } | undefined;
    for (const [key, address] of this.#waiting) {
      const a = this.#addresses.get(key)!;
      if (best && a.served >= best.served) continue;
      if (a.running >= this.#perAddress) continue;
      let pick: { served: number; jobs: Waiter[] } | undefined;
      for (const [ckey, jobs] of address.connections) {
        const c = this.#connections.get(ckey)!;
        if (c.running >= 1) continue;
        if (!pick || c.served < pick.served) pick = { served: c.served, jobs };
      }
      if (pick) best = { served: a.served, jobs: pick.jobs };
    }
    return best?.jobs[0];
  }
}

export interface LanesLimits {
  /** eth_call and eth_estimateGas (EVM execution). */
  readonly callLane: LaneLimits;
  /** eth_getLogs, eth_getFilterLogs, eth_getFilterChanges of log filters, eth_feeHistory (block scans). */
  readonly scanLane: LaneLimits;
}

export const DEFAULT_LANES_LIMITS: LanesLimits = {
  callLane: { concurrency: 3, perConnectionQueue: 64, queue: 1_024 },
  scanLane: { concurrency: 2, perConnectionQueue: 64, queue: 1_024 },
};
