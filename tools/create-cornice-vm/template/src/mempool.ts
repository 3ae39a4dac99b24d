/**
 * Transactions waiting for a block, oldest first, bounded, without duplicates. `waitForTxs` is the
 * waiting half of the VM's waitForEvent: it resolves as soon as a tx is pending and rejects when its
 * signal aborts or the pool closes (one listener per wait, no polling).
 */
import { VmError } from './errors.js';
import type { SetTx } from './tx.js';

export const DEFAULT_MEMPOOL_CAPACITY = 4096;

export class Mempool {
  /** By `tx.id.key`; a Map keeps insertion order, so iteration is oldest first. */
  #txs = new Map<string, SetTx>();
  readonly #wakers = new Set<() => void>();
  #closed = false;

  constructor(readonly capacity = DEFAULT_MEMPOOL_CAPACITY) {}

  get size(): number {
    return this.#txs.size;
  }

  /** Queues a tx; VmError DuplicateTx when it is pending already, MempoolFull at capacity. */
  add(tx: SetTx): void {
    if (this.#closed) throw new VmError('Aborted', 'the VM is shut down');
    if (this.#txs.has(tx.id.key)) throw new VmError('DuplicateTx', `tx ${tx.id} is pending already`);
    if (this.#txs.size >= this.capacity) throw new VmError('MempoolFull', `the mempool is full (${this.capacity} txs); try again later`);
    this.#txs.set(tx.id.key, tx);
    this.#wake();
  }

  /** Removes and returns up to `max` txs, oldest first. */
  take(max: number): SetTx[] {
    const out: SetTx[] = [];
    for (const [key, tx] of this.#txs) {
      if (out.length >= max) break;
      out.push(tx);
      this.#txs.delete(key);
    }
    return out;
  }

  /** Puts txs taken for a block that will not be accepted back in front, ahead of newer ones. */
  putBack(txs: readonly SetTx[]): void {
    if (this.#closed || txs.length === 0) return;
    const newer = this.#txs;
    this.#txs = new Map(txs.map((tx) => [tx.id.key, tx]));
    for (const [key, tx] of newer) this.#txs.set(key, tx);
    this.#wake();
  }

  /** Drops txs that another node's accepted block already applied. */
  remove(txs: readonly SetTx[]): void {
    for (const tx of txs) this.#txs.delete(tx.id.key);
  }

  /** Resolves when a tx is pending (at once if one is); rejects with VmError('Aborted') on abort or close. */
  waitForTxs(signal: AbortSignal): Promise<void> {
    if (this.#closed || signal.aborted) return Promise.reject(new VmError('Aborted', 'waiting for txs was aborted'));
    if (this.#txs.size > 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const done = (): void => {
        this.#wakers.delete(waker);
        signal.removeEventListener('abort', onAbort);
      };
      const waker = (): void => {
        done();
        if (this.#closed) reject(new VmError('Aborted', 'the VM is shut down'));
        else resolve();
      };
      const onAbort = (): void => {
        done();
        reject(new VmError('Aborted', 'waiting for txs was aborted'));
      };
      this.#wakers.add(waker);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Drops every tx and ends every wait (shutdown). */
  close(): void {
    this.#closed = true;
    this.#txs.clear();
    this.#wake();
  }

  #wake(): void {
    for (const w of [...this.#wakers]) w();
  }
}
