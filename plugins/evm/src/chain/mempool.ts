/**
 * Pooled transactions by sender and nonce, in two parts as geth's pool keeps them:
 *
 * - **executable** (geth's "pending"): a sender's contiguous run of nonces from its nonce in the last
 *   accepted state. At most `globalSlots` slots in all. When full, a new executable tx gets in by
 *   evicting — first the highest-nonce tx of the other account holding the most executable txs beyond
 *   `accountSlots` (geth's fair share), else the cheapest executable tx of another account when the
 *   newcomer pays more (that account's later txs become future). So an executable tx that pays more
 *   than the cheapest one always gets in.
 * - **future** (geth's "queued"): txs after a nonce gap, which cannot run until it fills. At most
 *   `accountQueue` txs per account ("account limit exceeded") and `globalQueue` slots in all; when
 *   full, a new future tx evicts the cheapest future tx of another account if it pays more, else
 *   "txpool is full". A future tx never evicts an executable one. Each future tx leaves after
 *   `lifetimeMs` on the pool's clock (from when it became future); when its gap fills it is promoted.
 *
 * A slot is 32 KiB of encoded tx (geth's txSlotSize): a 128 KiB tx takes four. So the pool holds at most
 * (globalSlots + globalQueue) × 32 KiB of txs — 192 MiB with the defaults — whatever is sent.
 * "Cheaper" is geth's priced-list order: the effective tip at the current base fee, then the fee
 * cap, then the tip (a high fee cap with no tip pays only the base fee, so it is not "more").
 *
 * A tx stays here until a block holding it is accepted (so a rejected block loses none); what the
 * builder takes is judged against the nonces the preferred chain reached (`tip`), so a tx already in
 * a processing block is not built twice. State checks (nonce, balance, base fee) are the admitting
 * VM's; this keeps the bounds above, the nonce gap past the pending nonce, and replacement by price
 * bump. Tests: mempool.test.ts ("the 64×256 gapped flood", "future txs: per-account and global
 * limits", "executable txs evict the cheapest", "future txs expire", "a filled gap promotes").
 */
import type { TypedTransaction } from '@ethereumjs/tx';
import { checksumAddress } from '../checksum.js';
import { EvmRpcError } from '../evm-backend.js';

export interface PoolEntry {
  readonly tx: TypedTransaction;
  readonly hash: Uint8Array;
  readonly hashKey: string;
  readonly sender: Uint8Array;
  readonly senderKey: string;
  readonly nonce: bigint;
  readonly feeCap: bigint;
  readonly tip: bigint;
  /** Pool slots it takes: one per 32 KiB of its encoding. */
  readonly slots: number;
  /** Arrival order. */
  seq: number;
  /** When it became future (the pool's clock, ms); undefined while executable. */
  queuedAt: number | undefined;
}

/** What `add` is given: an entry without the pool's bookkeeping; `size` is its encoding's length (default: the tx's). */
export type NewPoolEntry = Omit<PoolEntry, 'seq' | 'slots' | 'queuedAt'> & { readonly size?: number };

export interface MempoolOptions {
  /** Executable txs an account keeps before it gives up its highest ones to others when the executable part is full (coreth's `tx-pool-account-slots`, default 16). */
  accountSlots?: number;
  /** Slots of executable txs in all (coreth's `tx-pool-global-slots`, default 5,120). */
  globalSlots?: number;
  /** Future txs an account may hold (coreth's `tx-pool-account-queue`, default 64). */
  accountQueue?: number;
  /** Slots of future txs in all (coreth's `tx-pool-global-queue`, default 1,024). */
  globalQueue?: number;
  /** How long a future tx waits for its gap to fill, ms (coreth's `tx-pool-lifetime`, default 10 min). */
  lifetimeMs?: number;
  /** How far past the sender's pending nonce a tx's nonce may be (default 256). */
  maxNonceGap?: number;
  /** A replacement must raise fee cap and tip by this percentage (coreth's `tx-pool-price-bump`, default 10). */
  priceBumpPercent?: number;
}

export const DEFAULT_MEMPOOL_OPTIONS: Required<MempoolOptions> = {
  accountSlots: 16,
  globalSlots: 5_120,
  accountQueue: 64,
  globalQueue: 1_024,
  lifetimeMs: 10 * 60_000,
  maxNonceGap: 256,
  priceBumpPercent: 10,
};

/** The least each option may be (InvalidConfig below it; chain.ts checks). */
export const MEMPOOL_OPTION_MINIMUMS: Readonly<Record<keyof MempoolOptions, number>> = {
  accountSlots: 1,
  globalSlots: 1,
  accountQueue: 0,
  globalQueue: 0,
  lifetimeMs: 1,
  maxNonceGap: 0,
  priceBumpPercent: 0,
};

/** Bytes of encoded tx per slot (geth's txSlotSize). */
export const TX_SLOT_BYTES = 32 * 1024;

/** Why a tx left the pool: its nonce was used by an accepted block (by it or another tx), or the bounds, or a failure at build. */
export type LeaveReason = 'mined' | 'evicted' | 'expired' | 'dropped' | 'replaced';

/** The pool's clock and its listener. */
export interface MempoolHooks {
  /** Milliseconds (the chain's clock; tests inject theirs). */
  now?: () => number;
  /** A tx left the pool (any reason). */
  onLeave?: (e: PoolEntry, reason: LeaveReason) => void;
}

/** What `add` did beyond pooling the tx. */
export interface AddResult {
  /** The tx is executable (not future). */
  readonly executable: boolean;
  /** Future txs of the same sender it made executable (its nonce filled their gap), in nonce order. */
  readonly promoted: readonly PoolEntry[];
}

interface SenderQueue {
  readonly key: string;
  /** The sender's nonce in the last accepted state. */
  accNonce: bigint;
  readonly txs: Map<bigint, PoolEntry>;
  /** The first nonce at or after accNonce not pooled: [accNonce, pendingEnd) are executable, the others future. */
  pendingEnd: bigint;
  /** How many of `txs` are future. */
  queued: number;
}

/** Next nonce of a sender on the preferred chain, when processing blocks moved it past the accepted state. */
export type TipNonces = ReadonlyMap<string, bigint>;

const effectiveTip = (e: PoolEntry, baseFee: bigint): bigint => {
  const room = e.feeCap - baseFee;
  return e.tip < room ? e.tip : room;
};

/** geth's priced order: < 0 when `a` pays less than `b` at `baseFee`. */
export function comparePrice(a: Pick<PoolEntry, 'feeCap' | 'tip'>, b: Pick<PoolEntry, 'feeCap' | 'tip'>, baseFee: bigint): number {
  const ea = effectiveTip(a as PoolEntry, baseFee);
  const eb = effectiveTip(b as PoolEntry, baseFee);
  if (ea !== eb) return ea < eb ? -1 : 1;
  if (a.feeCap !== b.feeCap) return a.feeCap < b.feeCap ? -1 : 1;
  if (a.tip !== b.tip) return a.tip < b.tip ? -1 : 1;
  return 0;
}

const full = (): EvmRpcError => new EvmRpcError(-32000, 'txpool is full');

export class Mempool {
  readonly #bySender = new Map<string, SenderQueue>();
  readonly #byHash = new Map<string, PoolEntry>();
  /** Future txs in the order they became future (so oldest first: expiry walks from the front). */
  readonly #future = new Map<string, PoolEntry>();
  readonly #o: Required<MempoolOptions>;
  readonly #maxGap: bigint;
  readonly #bump: bigint;
  readonly #now: () => number;
  readonly #onLeave: ((e: PoolEntry, reason: LeaveReason) => void) | undefined;
  #pendingSlots = 0;
  #futureSlots = 0;
  /** The base fee the last admission was priced at (for eviction order). */
  #baseFee = 0n;
  /**
   * The cheapest tx of each part at #baseFee, when known (null: to be found). A newcomer that does not
   * pay more than it can evict nothing, so a flood of refused txs costs no scan of the part.
   */
  #cheapestOf: { executable: PoolEntry | undefined | null; future: PoolEntry | undefined | null } = { executable: null, future: null };
  #seq = 0;

  constructor(o: MempoolOptions = {}, hooks: MempoolHooks = {}) {
    this.#o = { ...DEFAULT_MEMPOOL_OPTIONS, ...definedOnly(o) };
    this.#maxGap = BigInt(this.#o.maxNonceGap);
    this.#bump = BigInt(this.#o.priceBumpPercent);
    this.#now = hooks.now ?? Date.now;
    this.#onLeave = hooks.onLeave;
  }

  get size(): number {
    this.#expire();
    return this.#byHash.size;
  }

  /** Counts of the two parts, in txs and slots (tests, metrics). */
  stats(): { executable: number; future: number; executableSlots: number; futureSlots: number } {
    this.#expire();
    return { executable: this.#byHash.size - this.#future.size, future: this.#future.size, executableSlots: this.#pendingSlots, futureSlots: this.#futureSlots };
  }

  get(hashKey: string): PoolEntry | undefined {
    this.#expire();
    return this.#byHash.get(hashKey);
  }

  /** The next nonce after the sender's contiguous pending txs (at least `accNonce` and the tip's). */
  pendingNonce(senderKey: string, accNonce: bigint, tip?: bigint): bigint {
    const q = this.#bySender.get(senderKey);
    let n = accNonce;
    if (q && accNonce <= q.accNonce) n = q.pendingEnd;
    else if (q) while (q.txs.has(n)) n++;
    return tip !== undefined && tip > n ? tip : n;
  }

  /**
   * Adds a tx whose sender's accepted nonce is `accNonce` (already checked: nonce >= accNonce), priced
   * at `baseFee` (the next block's). EvmRpcError for a duplicate, a too-cheap replacement, a nonce too
   * far ahead, a sender's future txs at their bound, a full part with nothing cheaper to evict.
   */
  add(e: NewPoolEntry, accNonce: bigint, baseFee = this.#baseFee): AddResult {
    this.#expire();
    if (baseFee !== this.#baseFee) {
      this.#baseFee = baseFee;
      this.#cheapestOf = { executable: null, future: null };
    }
    if (this.#byHash.has(e.hashKey)) throw new EvmRpcError(-32000, 'already known');
    let q = this.#bySender.get(e.senderKey);
    if (q) {
      this.#advance(q, accNonce);
      q = this.#bySender.get(e.senderKey); // gone when nothing of it was left
    }
    // The admitting VM read `accNonce` before an await; a block accepted meanwhile may have used the nonce.
    if (q && e.nonce < q.accNonce) throw new EvmRpcError(-32000, `nonce too low: next nonce ${q.accNonce}, tx nonce ${e.nonce}`);
    const pending = q ? q.pendingEnd : accNonce;
    if (e.nonce > pending + this.#maxGap) {
      // geth's words and its checksummed address (mempool.test.ts "nonce too high names the checksummed sender").
      throw new EvmRpcError(-32000, `nonce too high: address ${checksumAddress(e.sender)}, tx: ${e.nonce} state: ${accNonce}`);
    }
    const { size, ...fields } = e;
    const bytes = size ?? e.tx.serialize().length;
    const slots = Math.max(1, Math.ceil(bytes / TX_SLOT_BYTES));
    const old = q?.txs.get(e.nonce);
    if (old) {
      const enough = (prev: bigint, next: bigint) => next * 100n >= prev * (100n + this.#bump);
      if (!enough(old.feeCap, e.feeCap) || !enough(old.tip, e.tip)) throw new EvmRpcError(-32000, 'replacement transaction underpriced');
      // A replacement keeps its part; more slots than the tx it replaces need room there.
      const part = old.queuedAt === undefined ? 'executable' : 'future';
      if (slots > old.slots && !this.#makeRoom(part, slots - old.slots, e, e.senderKey)) throw full();
      const entry: PoolEntry = { ...fields, slots, seq: this.#seq++, queuedAt: part === 'future' ? this.#now() : undefined };
      this.#unlink(old);
      q!.txs.set(e.nonce, entry);
      this.#link(entry);
      this.#onLeave?.(old, 'replaced');
      return { executable: part === 'executable', promoted: [] };
    }
    const executable = e.nonce === pending;
    if (executable) {
      if (!this.#makeRoom('executable', slots, e, e.senderKey)) throw full();
    } else {
      if ((q?.queued ?? 0) >= this.#o.accountQueue) {
        throw new EvmRpcError(-32000, `account limit exceeded: address 0x${e.senderKey} has ${q?.queued ?? 0} future (gapped) txs pooled, the most an account may (tx-pool-account-queue)`);
      }
      if (!this.#makeRoom('future', slots, e, e.senderKey)) throw full();
    }
    if (!q) {
      q = { key: e.senderKey, accNonce, txs: new Map(), pendingEnd: accNonce, queued: 0 };
      this.#bySender.set(e.senderKey, q);
    }
    const entry: PoolEntry = { ...fields, slots, seq: this.#seq++, queuedAt: executable ? undefined : this.#now() };
    q.txs.set(e.nonce, entry);
    this.#link(entry);
    if (!executable) return { executable, promoted: [] };
    q.pendingEnd = e.nonce + 1n;
    const promoted = this.#promote(q);
    if (promoted.length > 0) this.#trimExecutable();
    return { executable, promoted };
  }

  /** True when some sender's next nonce on the preferred chain is pooled. */
  hasExecutable(tip: TipNonces): boolean {
    this.#expire();
    for (const [key, q] of this.#bySender) {
      if (q.txs.has(tip.get(key) ?? q.accNonce)) return true;
    }
    return false;
  }

  /** Executable txs for a block on the preferred chain: each sender's contiguous run, senders by arrival. */
  candidates(tip: TipNonces, max: number): PoolEntry[] {
    this.#expire();
    const runs: PoolEntry[][] = [];
    for (const [key, q] of this.#bySender) {
      let n = tip.get(key) ?? q.accNonce;
      let e = q.txs.get(n);
      if (!e) continue;
      const run: PoolEntry[] = [];
      while (e && run.length < max) {
        run.push(e);
        e = q.txs.get(++n);
      }
      runs.push(run);
    }
    runs.sort((a, b) => a[0]!.seq - b[0]!.seq);
    const out: PoolEntry[] = [];
    for (const run of runs) {
      for (const e of run) {
        if (out.length >= max) return out;
        out.push(e);
      }
    }
    return out;
  }

  /** Drops a tx (it failed when building); its sender's later executable txs become future. */
  remove(hashKey: string): void {
    const e = this.#byHash.get(hashKey);
    if (!e) return;
    const q = this.#bySender.get(e.senderKey)!;
    if (e.queuedAt === undefined) this.#demoteFrom(q, e.nonce);
    this.#drop(e, 'dropped');
  }

  /**
   * A block moved the sender's accepted nonce to `next`: drops its txs below it, promotes what became
   * executable, and returns the promoted txs still pooled (to be announced, as geth does).
   */
  accepted(senderKey: string, next: bigint): PoolEntry[] {
    this.#expire();
    const q = this.#bySender.get(senderKey);
    if (!q) return [];
    const promoted = this.#advance(q, next);
    if (q.txs.size === 0) this.#bySender.delete(senderKey);
    this.#trimExecutable();
    return promoted.filter((e) => this.#byHash.get(e.hashKey) === e);
  }

  /**
   * The pooled txs as geth's txpool_content splits them: `pending` the executable ones, `queued` the
   * future ones; each by sender (lower-case hex key) then nonce. Only `senderKey`'s when given. As
   * large as the pool's bounds let it be (globalSlots + globalQueue txs at most).
   */
  content(senderKey?: string): { pending: PoolEntry[]; queued: PoolEntry[] } {
    this.#expire();
    const pending: PoolEntry[] = [];
    const queued: PoolEntry[] = [];
    const senders = senderKey === undefined ? [...this.#bySender.keys()].sort() : this.#bySender.has(senderKey) ? [senderKey] : [];
    for (const key of senders) {
      const txs = [...this.#bySender.get(key)!.txs.values()].sort((a, b) => (a.nonce < b.nonce ? -1 : 1));
      for (const e of txs) (e.queuedAt === undefined ? pending : queued).push(e);
    }
    return { pending, queued };
  }

  /** Every pooled tx (for tests and shutdown). */
  entries(): IterableIterator<PoolEntry> {
    return this.#byHash.values();
  }

  // ------------------------------------------------------------------ bookkeeping

  #link(e: PoolEntry): void {
    const part = e.queuedAt === undefined ? 'executable' : 'future';
    const known = this.#cheapestOf[part];
    if (known !== null && (known === undefined || comparePrice(e, known, this.#baseFee) < 0)) this.#cheapestOf[part] = e;
    this.#byHash.set(e.hashKey, e);
    const q = this.#bySender.get(e.senderKey)!;
    if (e.queuedAt === undefined) this.#pendingSlots += e.slots;
    else {
      this.#futureSlots += e.slots;
      this.#future.set(e.hashKey, e);
      q.queued++;
    }
  }

  /** Forgets `e` everywhere but in its sender's nonce map. */
  #unlink(e: PoolEntry): void {
    const part = e.queuedAt === undefined ? 'executable' : 'future';
    if (this.#cheapestOf[part] === e) this.#cheapestOf[part] = null;
    this.#byHash.delete(e.hashKey);
    if (e.queuedAt === undefined) this.#pendingSlots -= e.slots;
    else {
      this.#futureSlots -= e.slots;
      this.#future.delete(e.hashKey);
      const q = this.#bySender.get(e.senderKey);
      if (q) q.queued--;
    }
  }

  /** Removes `e` from the pool (its sender's run must already be adjusted when it was executable). */
  #drop(e: PoolEntry, reason: LeaveReason): void {
    this.#unlink(e);
    const q = this.#bySender.get(e.senderKey);
    if (q) {
      q.txs.delete(e.nonce);
      if (q.txs.size === 0) this.#bySender.delete(e.senderKey);
    }
    this.#onLeave?.(e, reason);
  }

  /** Future txs from the sender's run end on that are now contiguous become executable. */
  #promote(q: SenderQueue): PoolEntry[] {
    const promoted: PoolEntry[] = [];
    for (let e = q.txs.get(q.pendingEnd); e; e = q.txs.get(q.pendingEnd)) {
      if (e.queuedAt !== undefined) {
        this.#unlink(e);
        e.queuedAt = undefined;
        this.#link(e);
        promoted.push(e);
      }
      q.pendingEnd++;
    }
    return promoted;
  }

  /**
   * The executable txs of `q` from `nonce` on become future (the tx at `nonce` is leaving); then the
   * sender's future txs past its bounds go, highest nonce first (its own, not others').
   */
  #demoteFrom(q: SenderQueue, nonce: bigint): void {
    const now = this.#now();
    for (let n = nonce + 1n; n < q.pendingEnd; n++) {
      const d = q.txs.get(n)!;
      this.#unlink(d);
      d.queuedAt = now;
      this.#link(d);
    }
    if (nonce < q.pendingEnd) q.pendingEnd = nonce;
    while (q.queued > this.#o.accountQueue || (this.#futureSlots > this.#o.globalQueue && q.queued > 0)) {
      this.#drop(this.#highestFuture(q)!, 'dropped');
    }
  }

  #highestFuture(q: SenderQueue): PoolEntry | undefined {
    let top: PoolEntry | undefined;
    for (const e of q.txs.values()) if (e.queuedAt !== undefined && (!top || e.nonce > top.nonce)) top = e;
    return top;
  }

  /** The sender's accepted nonce moved to `next`: its txs below go, the rest are reclassified. */
  #advance(q: SenderQueue, next: bigint): PoolEntry[] {
    if (next <= q.accNonce) return [];
    const span = next - q.accNonce;
    if (span < BigInt(q.txs.size)) {
      for (let n = q.accNonce; n < next; n++) {
        const e = q.txs.get(n);
        if (e) this.#drop(e, 'mined');
      }
    } else {
      for (const [n, e] of q.txs) if (n < next) this.#drop(e, 'mined');
    }
    q.accNonce = next;
    if (q.pendingEnd < next) q.pendingEnd = next;
    return this.#promote(q);
  }

  /**
   * After promotions the executable part may be over its bound: accounts beyond their fair share
   * (`accountSlots`) give up their highest-nonce txs, the largest first (geth's truncatePending).
   */
  #trimExecutable(): void {
    while (this.#pendingSlots > this.#o.globalSlots) {
      const victim = this.#overShareTail(undefined, new Map());
      if (!victim) return;
      const q = this.#bySender.get(victim.senderKey)!;
      q.pendingEnd = victim.nonce;
      this.#drop(victim, 'evicted');
    }
  }

  /** The highest-nonce executable tx of the account (other than `exclude`) holding the most beyond its share. */
  #overShareTail(exclude: string | undefined, taken: ReadonlyMap<string, number>): PoolEntry | undefined {
    let best: SenderQueue | undefined;
    let bestCount = BigInt(this.#o.accountSlots);
    for (const [key, q] of this.#bySender) {
      if (key === exclude) continue;
      const count = q.pendingEnd - q.accNonce - BigInt(taken.get(key) ?? 0);
      if (count > bestCount) {
        best = q;
        bestCount = count;
      }
    }
    if (!best) return undefined;
    return best.txs.get(best.pendingEnd - 1n - BigInt(taken.get(best.key) ?? 0));
  }

  /**
   * Makes room for `slots` more in a part for `newcomer` of `sender`, evicting others' txs as the header
   * says; false (nothing evicted) when there is not enough it may evict.
   */
  #makeRoom(part: 'executable' | 'future', slots: number, newcomer: Pick<PoolEntry, 'feeCap' | 'tip'>, sender: string): boolean {
    const bound = part === 'executable' ? this.#o.globalSlots : this.#o.globalQueue;
    let over = (part === 'executable' ? this.#pendingSlots : this.#futureSlots) + slots - bound;
    // Promotions may take the executable part past its bound (by at most what the future part held):
    // a future tx then also needs the total under both bounds, so the pool never holds more than
    // globalSlots + globalQueue slots.
    if (part === 'future') over = Math.max(over, this.#pendingSlots + this.#futureSlots + slots - this.#o.globalSlots - this.#o.globalQueue);
    if (over <= 0) return true;
    if (slots > bound) return false;
    // Choose first, evict after: a refusal evicts nothing.
    const victims: PoolEntry[] = [];
    const chosen = new Set<PoolEntry>();
    const taken = new Map<string, number>();
    while (over > 0) {
      let v: PoolEntry | undefined;
      if (part === 'executable') {
        v = this.#overShareTail(sender, taken);
        if (v) taken.set(v.senderKey, (taken.get(v.senderKey) ?? 0) + 1);
        else v = this.#cheapest(false, sender, chosen, newcomer);
      } else v = this.#cheapest(true, sender, chosen, newcomer);
      if (!v) return false;
      victims.push(v);
      chosen.add(v);
      over -= v.slots;
      if (part === 'executable' && !taken.has(v.senderKey)) {
        // An executable victim takes its account's later executable txs out of the part with it.
        const q = this.#bySender.get(v.senderKey)!;
        for (let n = v.nonce + 1n; n < q.pendingEnd; n++) {
          const later = q.txs.get(n)!;
          if (!chosen.has(later)) over -= later.slots;
          chosen.add(later);
        }
      }
    }
    for (const v of victims) {
      if (v.queuedAt === undefined) this.#demoteFrom(this.#bySender.get(v.senderKey)!, v.nonce);
      // The demotion may already have dropped it (a later tx of an account chosen twice).
      if (this.#byHash.get(v.hashKey) === v) this.#drop(v, 'evicted');
    }
    return true;
  }

  /** The cheapest tx of a part, of an account other than `exclude`, not in `chosen`, paying less than `than`. */
  #cheapest(future: boolean, exclude: string, chosen: ReadonlySet<PoolEntry>, than: Pick<PoolEntry, 'feeCap' | 'tip'>): PoolEntry | undefined {
    const part = future ? 'future' : 'executable';
    const known = this.#cheapestOf[part];
    if (known === undefined || (known !== null && comparePrice(known, than, this.#baseFee) >= 0)) return undefined;
    let best: PoolEntry | undefined;
    let overall: PoolEntry | undefined;
    const consider = (e: PoolEntry) => {
      if (!overall || comparePrice(e, overall, this.#baseFee) < 0) overall = e;
      if (e.senderKey === exclude || chosen.has(e)) return;
      if (!best || comparePrice(e, best, this.#baseFee) < 0) best = e;
    };
    if (future) for (const e of this.#future.values()) consider(e);
    else for (const e of this.#byHash.values()) if (e.queuedAt === undefined) consider(e);
    this.#cheapestOf[part] = overall;
    return best && comparePrice(best, than, this.#baseFee) < 0 ? best : undefined;
  }

  /** Future txs past their lifetime leave (oldest first; nothing to do costs one look at the oldest). */
  #expire(): void {
    if (this.#future.size === 0) return;
    const before = this.#now() - this.#o.lifetimeMs;
    for (const e of this.#future.values()) {
      if (e.queuedAt! > before) return;
      this.#drop(e, 'expired');
    }
  }
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
