/**
 * Which inbound connections the staking server takes on before they prove anything: a connection
 * costs a TLS handshake (a signature) and a slot until its Version arrives, so unauthenticated
 * connections are bounded three ways, so idle TCP connections or TLS connections that never send
 * Version do not lock new peers out (flood.test.ts, inbound.test.ts).
 *
 * - Per IP, a cooldown (avalanchego's inbound_conn_upgrade_throttler, made a bucket): an IP may open
 *   `perIpBurst` connections at once, then one more per `cooldownMs`; over that a new connection is
 *   closed before its TLS handshake. A connection whose handshake (TLS + Version) succeeds gives its
 *   token back, so established peers never use up their IP's allowance — five local nodes, all on
 *   127.0.0.1, connect however often they restart. IPv6 addresses count per /64.
 * - In all, at most `maxHandshaking` connections are in their handshake; a new one over that evicts
 *   the oldest, so a flood cannot hold every slot: a real peer finishes in milliseconds, long before
 *   `maxHandshaking` newer connections push it out.
 * - Each has a deadline (the Network's timer: TLS and Version within `handshakeTimeoutMs`).
 *
 * Tests: network/inbound.test.ts (the rules, on an injected clock) and network/flood.test.ts (a real
 * peer connects while hundreds of idle TCP or TLS connections are open).
 */
import { isIP } from 'node:net';

export interface InboundLimits {
  /** Connections from one IP (v6: one /64) allowed at once before the cooldown applies. */
  inboundPerIpBurst: number;
  /** After the burst, one more connection per this many ms from that IP. */
  inboundCooldownMs: number;
  /** Inbound connections in their handshake (TLS + Version) at once; more evict the oldest. */
  maxHandshaking: number;
}

export const DEFAULT_INBOUND_LIMITS: InboundLimits = {
  inboundPerIpBurst: 16,
  inboundCooldownMs: 1_000,
  maxHandshaking: 64,
};

/** IPs whose allowance is tracked; past it a new IP is let through (the handshake bound still holds). */
const MAX_TRACKED_IPS = 4_096;

/** One inbound connection in its handshake. */
export interface Handshake {
  readonly ip: string;
  readonly since: number;
  /** Ends the connection (the Network's): called when the handshake is evicted. */
  readonly close: (reason: string) => void;
}

interface Allowance {
  tokens: number;
  at: number;
}

/** The IP a limit counts: the address itself for v4, its /64 for v6. */
export function ipGroup(ip: string): string {
  if (isIP(ip) !== 6) return ip;
  const [head = '', tail] = ip.toLowerCase().split('::');
  const h = head ? head.split(':') : [];
  const t = tail === undefined ? [] : tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...new Array<string>(Math.max(0, 8 - h.length - t.length)).fill('0'), ...t];
  return `${groups.slice(0, 4).map((g) => (parseInt(g, 16) || 0).toString(16)).join(':')}::/64`;
}

export class InboundGate {
  readonly #limits: InboundLimits;
  readonly #now: () => number;
  readonly #ips = new Map<string, Allowance>();
  /** In their handshake, oldest first. */
  readonly #open = new Set<Handshake>();

  constructor(limits: InboundLimits, now: () => number) {
    this.#limits = limits;
    this.#now = now;
  }

  get handshaking(): number {
    return this.#open.size;
  }

  /**
   * A new connection from `ip`: its Handshake, or why it is refused. A connection over the
   * handshake bound evicts the oldest (its `close` is called, with the reason).
   */
  admit(ip: string, close: (reason: string) => void): Handshake | string {
    const group = ipGroup(ip);
    const a = this.#allowance(group);
    if (a && a.tokens < 1) return `more than ${this.#limits.inboundPerIpBurst} connections from ${group} that did not finish their handshake (one more every ${this.#limits.inboundCooldownMs} ms)`;
    if (a) a.tokens -= 1;
    while (this.#open.size >= this.#limits.maxHandshaking) {
      const oldest = this.#open.values().next().value as Handshake;
      this.#open.delete(oldest);
      oldest.close(`evicted: ${this.#limits.maxHandshaking} connections in their handshake`);
    }
    const h: Handshake = { ip: group, since: this.#now(), close };
    this.#open.add(h);
    return h;
  }

  /** The handshake ended: `ok` (a peer now) gives its IP's token back. Once per Handshake. */
  done(h: Handshake, ok: boolean): void {
    if (!this.#open.delete(h)) return;
    if (!ok) return;
    const a = this.#ips.get(h.ip);
    if (a) {
      this.#refill(a);
      a.tokens = Math.min(this.#limits.inboundPerIpBurst, a.tokens + 1);
    }
  }

  /** The group's allowance, refilled to now; undefined when too many IPs are tracked to add it. */
  #allowance(group: string): Allowance | undefined {
    let a = this.#ips.get(group);
    if (a) {
      this.#refill(a);
      return a;
    }
    if (this.#ips.size >= MAX_TRACKED_IPS) this.#prune();
    if (this.#ips.size >= MAX_TRACKED_IPS) return undefined;
    a = { tokens: this.#limits.inboundPerIpBurst, at: this.#now() };
    this.#ips.set(group, a);
    return a;
  }

  #refill(a: Allowance): void {
    const t = this.#now();
    if (t <= a.at) return;
    const cooldown = Math.max(1, this.#limits.inboundCooldownMs);
    const earned = Math.floor((t - a.at) / cooldown);
    if (earned > 0) {
      a.tokens = Math.min(this.#limits.inboundPerIpBurst, a.tokens + earned);
      a.at = a.tokens >= this.#limits.inboundPerIpBurst ? t : a.at + earned * cooldown;
    }
  }

  /** Forgets IPs whose allowance is whole again (they are as good as new). */
  #prune(): void {
    for (const [group, a] of this.#ips) {
      this.#refill(a);
      if (a.tokens >= this.#limits.inboundPerIpBurst) this.#ips.delete(group);
    }
  }
}
