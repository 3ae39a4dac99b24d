/**
 * Txs waiting for a block, by kind (decision, atomic, timed), in arrival order, deduplicated by tx
 * ID and bounded in number. Listeners are told when something is added.
 */
import type { Id, ShortId } from '@cornice/sdk';
import { PlatformError } from './errors.js';
import { payerOf } from './executor.js';
import type { AtomicTx, DecisionTx, IssuableTx, TimedTx } from './model.js';

export const DEFAULT_MEMPOOL_CAPACITY = 4096;

export interface PooledTx<T extends IssuableTx = IssuableTx> {
  id: Id;
  tx: T;
}

export class Mempool {
  readonly decision = new Map<string, PooledTx<DecisionTx>>();
  readonly atomic = new Map<string, PooledTx<AtomicTx>>();
  readonly timed = new Map<string, PooledTx<TimedTx>>();

  constructor(
    private readonly onAdd: () => void,
    readonly capacity = DEFAULT_MEMPOOL_CAPACITY,
  ) {}

  get size(): number {
    return this.decision.size + this.atomic.size + this.timed.size;
  }

  has(id: Id): boolean {
    return this.decision.has(id.key) || this.atomic.has(id.key) || this.timed.has(id.key);
  }

  /** Throws MempoolFull when no tx can be added. */
  checkRoom(): void {
    if (this.size >= this.capacity) {
      throw new PlatformError('MempoolFull', `mempool is full (${this.capacity} pending txs); try again later`, { capacity: this.capacity });
    }
  }

  /** The pooled txs of one kind, oldest first. */
  ofKind(kind: PoolKind): PooledTx[] {
    return [...(kind === 'decision' ? this.decision : kind === 'atomic' ? this.atomic : this.timed).values()];
  }

  /** Whether a pooled tx (but those in `skip`, by ID key) is `payer`'s with nonce `nonce`. */
  holds(payer: ShortId, nonce: bigint, skip: ReadonlySet<string>): boolean {
    for (const pooled of [...this.decision.values(), ...this.atomic.values(), ...this.timed.values()]) {
      if (pooled.tx.nonce !== nonce || skip.has(pooled.id.key)) continue;
      try {
        if (payerOf(pooled.tx).equals(payer)) return true;
      } catch {
        // unsigned: not anyone's
      }
    }
    return false;
  }

  add(id: Id, tx: IssuableTx): void {
    if (this.has(id)) return;
    this.checkRoom();
    const kind = kindOf(tx);
    if (kind === 'decision') this.decision.set(id.key, { id, tx: tx as DecisionTx });
    else if (kind === 'atomic') this.atomic.set(id.key, { id, tx: tx as AtomicTx });
    else this.timed.set(id.key, { id, tx: tx as TimedTx });
    this.onAdd();
  }

  remove(id: Id): void {
    this.decision.delete(id.key);
    this.atomic.delete(id.key);
    this.timed.delete(id.key);
  }
}

export type PoolKind = 'decision' | 'atomic' | 'timed';

/** The order a build takes pooled txs in: decision txs first, then atomic, then timed. */
export const KIND_ORDER: readonly PoolKind[] = ['decision', 'atomic', 'timed'];

export function kindOf(tx: IssuableTx): PoolKind {
  switch (tx.kind) {
    case 'createSubnet':
    case 'createChain':
      return 'decision';
    case 'import':
    case 'export':
      return 'atomic';
    default:
      return 'timed';
  }
}
