/**
 * Pending transactions by sender and nonce. A tx stays here until a block holding it is accepted
 * (so a rejected block loses none); what is "executable" is judged against the nonces the
 * preferred chain reached (`tip`), so a tx already in a processing block is not built twice.
 * State checks (nonce, balance, base fee) are the admitting VM's; this keeps the bounds: pool size,
 * the nonce gap past the pending nonce, and replacement by price bump.
 */
import type { TypedTransaction } from '@ethereumjs/tx';
import { EvmRpcError } from '../backend.js';

export interface PoolEntry {
  readonly tx: TypedTransaction;
  readonly hash: Uint8Array;
  readonly hashKey: string;
  readonly sender: Uint8Array;
  readonly senderKey: string;
  readonly nonce: bigint;
  readonly feeCap: bigint;
  readonly tip: bigint;
  /** Arrival order. */
  seq: number;
}

export interface MempoolOptions {
  /** Most txs held (default 16,384). */
  maxTxs?: number;
  /** How far past the sender's pending nonce a tx's nonce may be (default 256). */
  maxNonceGap?: number;
  /** A replacement must raise fee cap and tip by this percentage (default 10). */
  priceBumpPercent?: number;
}

interface SenderQueue {
  /** The sender's nonce in the last accepted state. */
  accNonce: bigint;
  readonly txs: Map<bigint, PoolEntry>;
}

/** Next nonce of a sender on the preferred chain, when processing blocks moved it past the accepted state. */
export type TipNonces = ReadonlyMap<string, bigint>;

export class Mempool {
  readonly #bySender = new Map<string, SenderQueue>();
  readonly #byHash = new Map<string, PoolEntry>();
  readonly #maxTxs: number;
  readonly #maxGap: bigint;
  readonly #bump: bigint;
  #seq = 0;

  constructor(o: MempoolOptions = {}) {
    this.#maxTxs = o.maxTxs ?? 16_384;
    this.#maxGap = BigInt(o.maxNonceGap ?? 256);
    this.#bump = BigInt(o.priceBumpPercent ?? 10);
  }

  get size(): number {
    return this.#byHash.size;
  }

  get(hashKey: string): PoolEntry | undefined {
    return this.#byHash.get(hashKey);
  }

  /** The next nonce after the sender's contiguous pending txs (at least `accNonce` and the tip's). */
  pendingNonce(senderKey: string, accNonce: bigint, tip?: bigint): bigint {
    const q = this.#bySender.get(senderKey);
    let n = accNonce;
    if (q) while (q.txs.has(n)) n++;
    return tip !== undefined && tip > n ? tip : n;
  }

  /**
   * Adds a tx whose sender's accepted nonce is `accNonce` (already checked: nonce >= accNonce).
   * EvmRpcError for a duplicate, a too-cheap replacement, a nonce too far ahead, a full pool.
   */
  add(e: Omit<PoolEntry, 'seq'>, accNonce: bigint): void {
    if (this.#byHash.has(e.hashKey)) throw new EvmRpcError(-32000, 'already known');
    let q = this.#bySender.get(e.senderKey);
    const pending = this.pendingNonce(e.senderKey, accNonce);
    if (e.nonce > pending + this.#maxGap) {
      throw new EvmRpcError(-32000, `nonce too high: address 0x${e.senderKey}, tx: ${e.nonce} state: ${accNonce}`);
    }
    const old = q?.txs.get(e.nonce);
    if (old) {
      const enough = (prev: bigint, next: bigint) => next * 100n >= prev * (100n + this.#bump);
      if (!enough(old.feeCap, e.feeCap) || !enough(old.tip, e.tip)) throw new EvmRpcError(-32000, 'replacement transaction underpriced');
      this.#byHash.delete(old.hashKey);
    } else if (this.#byHash.size >= this.#maxTxs) {
      throw new EvmRpcError(-32000, 'txpool is full');
    }
    if (!q) {
      q = { accNonce, txs: new Map() };
      this.#bySender.set(e.senderKey, q);
    }
    if (accNonce > q.accNonce) q.accNonce = accNonce;
    const entry: PoolEntry = { ...e, seq: this.#seq++ };
    q.txs.set(e.nonce, entry);
    this.#byHash.set(e.hashKey, entry);
  }

  /** True when some sender's next nonce on the preferred chain is pending. */
  hasExecutable(tip: TipNonces): boolean {
    for (const [key, q] of this.#bySender) {
      if (q.txs.has(tip.get(key) ?? q.accNonce)) return true;
    }
    return false;
  }

  /** Executable txs for a block on the preferred chain: each sender's contiguous run, senders by arrival. */
  candidates(tip: TipNonces, max: number): PoolEntry[] {
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

  /** Drops a tx (it failed when building). */
  remove(hashKey: string): void {
    const e = this.#byHash.get(hashKey);
    if (!e) return;
    this.#byHash.delete(hashKey);
    const q = this.#bySender.get(e.senderKey);
    if (!q) return;
    q.txs.delete(e.nonce);
    if (q.txs.size === 0) this.#bySender.delete(e.senderKey);
  }

  /** A block moved the sender's accepted nonce to `next`: drops its txs below it. */
  accepted(senderKey: string, next: bigint): void {
    const q = this.#bySender.get(senderKey);
    if (!q) return;
    if (next > q.accNonce) q.accNonce = next;
    for (const [nonce, e] of q.txs) {
      if (nonce < next) {
        q.txs.delete(nonce);
        this.#byHash.delete(e.hashKey);
      }
    }
    if (q.txs.size === 0) this.#bySender.delete(senderKey);
  }

  /** Every pending tx (for tests and shutdown). */
  entries(): IterableIterator<PoolEntry> {
    return this.#byHash.values();
  }
}
