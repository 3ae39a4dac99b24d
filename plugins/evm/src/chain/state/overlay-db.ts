/**
 * A trie database that reads through to the chain's state database and keeps its own writes in
 * memory, dropped with it: eth_simulateV1 computes the state roots of blocks it never stores, and
 * the chain's database queues every write for the next accepted block's batch (state-db.ts), where
 * a simulation's nodes would be stored for nothing. Test: simulate.test.ts "eth_simulateV1 writes
 * nothing to the chain's state".
 */
import { toHex } from '@cornice/sdk';
import type { BatchDBOp, DB, EncodingOpts } from '@ethereumjs/util';
import type { StateDB } from './state-db.js';

type Value = Uint8Array | string;

function memKey(key: string | Uint8Array): string {
  return typeof key === 'string' ? `s${key}` : `b${toHex(key)}`;
}

export class OverlayDB implements DB<string, Value> {
  readonly #writes = new Map<string, Value | undefined>();

  constructor(private readonly base: StateDB) {}

  async get(key: string, opts?: EncodingOpts): Promise<Value | undefined> {
    const k = memKey(key);
    if (this.#writes.has(k)) return this.#writes.get(k);
    return this.base.get(key, opts);
  }

  async put(key: string, value: Value): Promise<void> {
    this.#writes.set(memKey(key), value);
  }

  async del(key: string): Promise<void> {
    this.#writes.set(memKey(key), undefined);
  }

  async batch(ops: BatchDBOp<string, Value>[]): Promise<void> {
    for (const op of ops) {
      if (op.type === 'put') await this.put(op.key, op.value as Value);
      else await this.del(op.key);
    }
  }

  /** The same overlay: a storage trie's writes must be seen by the account trie's reads. */
  shallowCopy(): OverlayDB {
    return this;
  }

  async open(): Promise<void> {}

  /** Writes held (tests). */
  get size(): number {
    return this.#writes.size;
  }
}
