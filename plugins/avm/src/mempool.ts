/**
 * Checked txs waiting to be accepted, in arrival order, bounded in number and bytes. A tx stays here
 * until a block holding it is accepted (or it can never be: see `dependents`), so a rejected block
 * loses nothing. Txs that spend the same UTXO may both wait here: the builder never puts both in a
 * block, and once one is accepted the other is rejected.
 */
import type { Id } from '@cornice/sdk';
import { AvmError } from './errors.js';
import type { Utxo } from './model.js';
import type { TxEffect } from './rules.js';

export const DEFAULT_MEMPOOL_CAPACITY = 16_384;
export const DEFAULT_MEMPOOL_BYTES = 64 << 20;

/**
 * Keys of what a tx consumes, so both kinds share one index: a local UTXO by its ID's key (64 hex
 * digits, no copy: this is per tx), an imported one `i…` (65 chars).
 */
const localKey = (id: Id) => id.key;
const importKey = (id: Id) => `i${id.key}`;

export class Mempool {
  readonly #txs = new Map<string, TxEffect>();
  /**
   * What each pooled tx consumes -> the key of the pooled tx that consumes it, or a set of them when
   * several do. Most UTXOs have one consumer: a set each was one more object per input of every
   * pooled tx, kept as long as the tx waits.
   */
  readonly #consumers = new Map<string, string | Set<string>>();
  /** UTXOs the pooled txs make. */
  readonly #produced = new Map<string, Utxo>();
  #bytes = 0;
  #last: string | undefined;

  constructor(
    readonly capacity = DEFAULT_MEMPOOL_CAPACITY,
    readonly maxBytes = DEFAULT_MEMPOOL_BYTES,
  ) {}

  get size(): number {
    return this.#txs.size;
  }

  /** Bytes of the pooled txs. */
  get bytes(): number {
    return this.#bytes;
  }

  has(id: Id): boolean {
    return this.#txs.has(id.key);
  }

  get(id: Id): TxEffect | undefined {
    return this.#txs.get(id.key);
  }

  /** The tx added last, if still pooled. */
  last(): TxEffect | undefined {
    return this.#last === undefined ? undefined : this.#txs.get(this.#last);
  }

  /** The pooled txs, oldest first. */
  values(): IterableIterator<TxEffect> {
    return this.#txs.values();
  }

  /** Throws MempoolFull when a tx of `bytes` bytes does not fit. */
  checkRoom(bytes: number): void {
    if (this.#txs.size >= this.capacity || this.#bytes + bytes > this.maxBytes) {
      throw new AvmError('MempoolFull', `mempool is full (${this.#txs.size} pending txs, ${this.#bytes} bytes); try again later`, {
        capacity: this.capacity,
        maxBytes: this.maxBytes,
      });
    }
  }

  add(e: TxEffect): void {
    if (this.#txs.has(e.id.key)) return;
    this.checkRoom(e.bytes.length);
    this.#txs.set(e.id.key, e);
    this.#last = e.id.key;
    this.#bytes += e.bytes.length;
    for (const s of e.spends) this.#addConsumer(localKey(s.id), e.id.key);
    for (const id of e.imports) this.#addConsumer(importKey(id), e.id.key);
    for (const p of e.produced) this.#produced.set(p.id.key, p.utxo);
  }

  remove(id: Id): TxEffect | undefined {
    const e = this.#txs.get(id.key);
    if (!e) return undefined;
    this.#txs.delete(id.key);
    this.#bytes -= e.bytes.length;
    for (const s of e.spends) this.#removeConsumer(localKey(s.id), id.key);
    for (const i of e.imports) this.#removeConsumer(importKey(i), id.key);
    for (const p of e.produced) this.#produced.delete(p.id.key);
    return e;
  }

  #addConsumer(key: string, txKey: string): void {
    const had = this.#consumers.get(key);
    if (had === undefined) this.#consumers.set(key, txKey);
    else if (typeof had !== 'string') had.add(txKey);
    else if (had !== txKey) this.#consumers.set(key, new Set([had, txKey]));
  }

  #removeConsumer(key: string, txKey: string): void {
    const had = this.#consumers.get(key);
    if (had === txKey) this.#consumers.delete(key);
    else if (had !== undefined && typeof had !== 'string') {
      had.delete(txKey);
      if (had.size === 1) this.#consumers.set(key, had.values().next().value!);
    }
  }

  /** A UTXO a pooled tx makes. */
  produced(id: Id): Utxo | undefined {
    return this.#produced.get(id.key);
  }

  /**
   * The pooled txs that can never be accepted once `gone` txs are (accepted or rejected): those that
   * consume what the accepted ones consumed, and those that spend what a rejected one would have made,
   * transitively. `accepted` txs themselves are not in the answer.
   */
  conflicts(accepted: readonly TxEffect[], rejected: readonly TxEffect[] = []): TxEffect[] {
    const acceptedKeys = new Set(accepted.map((e) => e.id.key));
    const out = new Map<string, TxEffect>();
    const queue: TxEffect[] = [];
    const one = (txKey: string) => {
      if (acceptedKeys.has(txKey) || out.has(txKey)) return;
      const e = this.#txs.get(txKey)!;
      out.set(txKey, e);
      queue.push(e);
    };
    const visit = (key: string) => {
      const had = this.#consumers.get(key);
      if (typeof had === 'string') one(had);
      else if (had !== undefined) for (const txKey of had) one(txKey);
    };
    for (const e of accepted) {
      for (const s of e.spends) visit(localKey(s.id));
      for (const id of e.imports) visit(importKey(id));
    }
    queue.push(...rejected);
    while (queue.length > 0) {
      const dead = queue.pop()!;
      for (const p of dead.produced) visit(localKey(p.id));
    }
    return [...out.values()];
  }
}

