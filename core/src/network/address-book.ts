/**
 * The addresses this node dials, one per node ID: the bootstrap nodes (from flags; never forgotten),
 * the addresses peers signed and others relayed (peer-list.ts; newer claims replace older ones), and
 * the listen addresses of inbound peers that went away. Nothing else is dialled: an address no node
 * signed for itself never gets here, so a PeerList of made-up addresses dials nothing (network.test.ts
 * 'a PeerList of addresses not signed by the nodes claiming them is never dialled').
 *
 * A failed dial is tried again after a backoff (first `dialBackoffMs`, doubling up to
 * `maxDialBackoffMs`); a learned address is forgotten after `maxDialFailures` failures in a row. A
 * newer claim with another address starts over at once. Tests: network/network.test.ts 'signed addresses: a newer claim replaces an older one…',
 * 'peer lists: C knows only A…'.
 */
import { isIP } from 'node:net';
import type { Logger, ShortId } from '@cornice/sdk';

export interface AddressBookLimits {
  dialBackoffMs: number;
  maxDialBackoffMs: number;
  /** A learned (non-bootstrap) address is forgotten after this many failed dials in a row. */
  maxDialFailures: number;
  /** Most addresses kept (bootstrap nodes beyond it are kept all the same). */
  maxKnown: number;
}

/** An address worth dialling, and its dialling state. */
export interface Known {
  nodeId: ShortId;
  ip: string;
  port: number;
  /** When the node signed this address (unix seconds); 0 for a bootstrap address from the flags. */
  time: bigint;
  bootstrap: boolean;
  failures: number;
  timer: ReturnType<typeof setTimeout> | undefined;
  dialling: boolean;
}

export interface AddressBookHost {
  readonly selfId: ShortId;
  isConnected(nodeId: ShortId): boolean;
  /** Starts a dial of `k` (sets `k.dialling`, and calls `failed` or nothing when done). */
  dial(k: Known): void;
  readonly log: Logger;
}

const UNSPECIFIED = new Set(['0.0.0.0', '::', '']);
const addrKey = (ip: string, port: number) => `${ip}|${port}`;

export class AddressBook {
  readonly #limits: AddressBookLimits;
  readonly #host: AddressBookHost;
  readonly #known = new Map<string, Known>();
  /** Addresses that turned out to be this node. */
  readonly #selfAddrs = new Set<string>();
  #stopped = false;

  constructor(limits: AddressBookLimits, host: AddressBookHost) {
    this.#limits = limits;
    this.#host = host;
  }

  get size(): number {
    return this.#known.size;
  }

  get(nodeId: ShortId): Known | undefined {
    return this.#known.get(nodeId.key);
  }

  /** Whether a claim of `nodeId` signed at `time` would tell anything new (no address known, or an older one). */
  isNewer(nodeId: ShortId, time: bigint): boolean {
    const k = this.#known.get(nodeId.key);
    return !k || time > k.time;
  }

  /**
   * Remembers where `nodeId` listens (a newer claim replaces an older one; an equal or older one
   * changes nothing) and dials it unless connected or dialling already.
   */
  learn(a: { nodeId: ShortId; ip: string; port: number; time: bigint }, bootstrap: boolean): void {
    if (this.#stopped || !isIP(a.ip) || UNSPECIFIED.has(a.ip) || a.port <= 0 || a.port > 0xffff) return;
    if (a.nodeId.equals(this.#host.selfId) || this.#selfAddrs.has(addrKey(a.ip, a.port))) return;
    let k = this.#known.get(a.nodeId.key);
    if (!k) {
      if (!bootstrap && this.#known.size >= this.#limits.maxKnown) return;
      k = { nodeId: a.nodeId, ip: a.ip, port: a.port, time: a.time, bootstrap, failures: 0, timer: undefined, dialling: false };
      this.#known.set(a.nodeId.key, k);
    } else if (bootstrap || a.time > k.time) {
      const moved = k.ip !== a.ip || k.port !== a.port;
      k.time = a.time > k.time ? a.time : k.time;
      k.bootstrap ||= bootstrap;
      if (moved) {
        k.ip = a.ip;
        k.port = a.port;
        k.failures = 0;
        clearTimeout(k.timer);
        k.timer = undefined;
      }
    }
    if (!this.#host.isConnected(k.nodeId) && !k.timer && !k.dialling) this.#host.dial(k);
  }

  /** A dial of `k` failed (or its connection was lost): dial again after the backoff, or forget it. */
  failed(k: Known, reason: string): void {
    if (this.#stopped || k.timer || this.#known.get(k.nodeId.key) !== k) return;
    k.failures += 1;
    if (!k.bootstrap && k.failures > this.#limits.maxDialFailures) {
      this.#known.delete(k.nodeId.key);
      this.#host.log.debug('forgetting peer address', { nodeId: k.nodeId.toString(), ip: `${k.ip}:${k.port}`, reason });
      return;
    }
    const delay = Math.min(this.#limits.maxDialBackoffMs, this.#limits.dialBackoffMs * 2 ** Math.min(16, k.failures - 1));
    this.#host.log.debug('will dial again', { nodeId: k.nodeId.toString(), ip: `${k.ip}:${k.port}`, inMs: delay, reason });
    k.timer = setTimeout(() => {
      k.timer = undefined;
      if (!this.#stopped && !this.#host.isConnected(k.nodeId) && !k.dialling) this.#host.dial(k);
    }, delay);
    k.timer.unref?.();
  }

  /** Connected to `nodeId`: its failures start over. */
  connected(nodeId: ShortId): void {
    const k = this.#known.get(nodeId.key);
    if (k) k.failures = 0;
  }

  /** Drops `k` (its address is another node's, say); a bootstrap address is kept. */
  forget(k: Known, reason: string): void {
    if (k.bootstrap || this.#known.get(k.nodeId.key) !== k) return;
    clearTimeout(k.timer);
    this.#known.delete(k.nodeId.key);
    this.#host.log.debug('forgetting peer address', { nodeId: k.nodeId.toString(), ip: `${k.ip}:${k.port}`, reason });
  }

  /** `k`'s address is this node's own: never dialled again, whoever claims it. */
  isSelf(k: Pick<Known, 'ip' | 'port' | 'nodeId'>): void {
    this.#selfAddrs.add(addrKey(k.ip, k.port));
    const known = this.#known.get(k.nodeId.key);
    if (known && known.ip === k.ip && known.port === k.port) {
      clearTimeout(known.timer);
      this.#known.delete(k.nodeId.key);
    }
  }

  stop(): void {
    this.#stopped = true;
    for (const k of this.#known.values()) clearTimeout(k.timer);
  }
}
