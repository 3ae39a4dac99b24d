// The mempool's index of what pooled txs consume: one consumer per UTXO is the common case, several
// (conflicting txs) must all be found until each is removed.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Id } from '@cornice/sdk';
import { Mempool } from '../src/mempool.js';
import type { TxEffect } from '../src/rules.js';

const id = (n: number) => Id.fromBytes(new Uint8Array(32).fill(n));

/** A pooled tx `n` spending local UTXOs `spends`, importing `imports` and making UTXO 100 + n. */
function effect(n: number, spends: number[], imports: number[] = []): TxEffect {
  const utxo = { txId: id(n), outputIndex: 0, assetId: id(200), out: { kind: 'transfer', amount: 1n, locktime: 0n, threshold: 1, addresses: [] } } as never;
  return {
    id: id(n),
    bytes: new Uint8Array(10),
    tx: {} as never,
    spends: spends.map((s) => ({ id: id(s), utxo })),
    imports: imports.map(id),
    produced: [{ id: id(100 + n), utxo }],
    exports: [],
    asset: undefined,
    locktime: 0n,
  };
}

const keys = (es: TxEffect[]) => es.map((e) => e.id.key).sort();

test('txs spending the same UTXO conflict with the one accepted, however many there are', () => {
  const pool = new Mempool();
  const [a, b, c, d] = [effect(1, [50]), effect(2, [50, 51]), effect(3, [50]), effect(4, [52], [60])];
  for (const e of [a, b, c, d]) pool.add(e);
  assert.equal(keys(pool.conflicts([a])), keys([b, c]));
  assert.equal(keys(pool.conflicts([b])), keys([a, c]));
  pool.remove(a.id);
  assert.equal(keys(pool.conflicts([b])), keys([c]));
  pool.remove(c.id);
  // b alone consumes UTXO 50 now: a tx accepted elsewhere that spends it conflicts with b only.
  assert.equal(keys(pool.conflicts([effect(9, [50])])), keys([b]));
  assert.equal(keys(pool.conflicts([effect(9, [51])])), keys([b]));
  pool.remove(b.id);
  assert.equal(pool.conflicts([effect(9, [50, 51])]), []);
  // Imports are indexed apart from local UTXOs with the same ID.
  assert.equal(keys(pool.conflicts([effect(9, [], [60])])), keys([d]));
  assert.equal(pool.conflicts([effect(9, [60])]), []);
});

test('removing a tx twice, or one never added, leaves the index as it was', () => {
  const pool = new Mempool();
  const [a, b] = [effect(1, [50]), effect(2, [50])];
  pool.add(a);
  pool.add(a);
  pool.add(b);
  assert.is(pool.remove(id(7)), undefined);
  pool.remove(b.id);
  assert.is(pool.remove(b.id), undefined);
  assert.equal(keys(pool.conflicts([effect(9, [50])])), keys([a]));
  assert.is(pool.size, 1);
});

test('txs spending what a rejected tx would have made are dropped with it, transitively', () => {
  const pool = new Mempool();
  const [a, b, c] = [effect(1, [50]), effect(2, [101]), effect(3, [102])];
  for (const e of [a, b, c]) pool.add(e);
  assert.equal(keys(pool.conflicts([], [a])), keys([b, c]));
});

test.run();
