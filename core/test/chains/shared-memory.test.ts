import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Id, MemoryStore, utf8Encode } from '@cornice/sdk';
import { sharedMemoryFor } from '../../src/chains/shared-memory.js';
import { PrefixedStore } from '@cornice/sdk';

const X = Id.fromBytes(new Uint8Array(32).fill(1));
const P = Id.fromBytes(new Uint8Array(32).fill(2));
const b = (s: string) => utf8Encode(s);
const all = async <T>(it: AsyncIterable<T>) => {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
};

test('exports join the exporting block batch: invisible until it is written, then readable by the peer only', async () => {
  const root = new MemoryStore();
  const shared = new PrefixedStore(root, 'shared');
  const chains = new PrefixedStore(root, 'chains');
  const xDb = new PrefixedStore(chains, X.bytes);
  const x = sharedMemoryFor(shared, X);
  const p = sharedMemoryFor(shared, P);

  const batch = xDb.batch().put(b('block'), b('bytes'));
  x.apply(P, { put: [[b('utxo1'), b('value1')]] }, batch);
  assert.equal(await p.get(X, [b('utxo1')]), [undefined], 'nothing before the batch is written');
  await batch.write();
  assert.equal((await p.get(X, [b('utxo1')]))[0], b('value1'));
  assert.equal((await all(p.list(X))).map(([k, v]) => [Buffer.from(k).toString(), Buffer.from(v).toString()]), [['utxo1', 'value1']]);
  assert.equal(await x.get(P, [b('utxo1')]), [undefined], 'the exporter does not see its own export as importable');
  assert.ok(await xDb.get(b('block')), 'the block write committed with it');

  // P imports it: the removal joins P's block batch.
  const pDb = new PrefixedStore(chains, P.bytes);
  const pBatch = pDb.batch().put(b('block'), b('p-bytes'));
  p.apply(X, { remove: [b('utxo1')] }, pBatch);
  await pBatch.write();
  assert.equal(await p.get(X, [b('utxo1')]), [undefined]);
});

test('a batch that is not a chain database batch is refused', () => {
  const shared = new PrefixedStore(new MemoryStore(), 'shared');
  const x = sharedMemoryFor(shared, X);
  assert.throws(() => x.apply(P, { put: [[b('k'), b('v')]] }, new MemoryStore().batch()), /must join a batch of the chain database/);
});

test.run();
