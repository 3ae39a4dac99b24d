import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { genTransactionsTrieRoot } from '@ethereumjs/block';
import { MerklePatriciaTrie } from '@ethereumjs/mpt';
import { RLP } from '@ethereumjs/rlp';
import { Bloom, encodeReceipt } from '@ethereumjs/vm';
import { orderedTrieRoot } from '../src/chain/state/trie-root.js';
import { keccak256 } from '../src/chain/crypto.js';
import { INIT, addr, hex, signedTx, startVM } from './helpers.js';

/** The root @ethereumjs' trie gives for values[i] at RLP(i) (the reference). */
async function mptRoot(values: readonly Uint8Array[]): Promise<Uint8Array> {
  const trie = new MerklePatriciaTrie();
  for (const [i, v] of values.entries()) await trie.put(RLP.encode(i), v);
  return trie.root();
}

/** Deterministic bytes of length n (a tiny LCG). */
function bytes(n: number, seed: number): Uint8Array {
  let x = seed >>> 0;
  return new Uint8Array(n).map(() => ((x = (x * 1103515245 + 12345) >>> 0) >>> 16) & 255);
}

test('the one-pass root equals the @ethereumjs trie root for 0..1100 entries, short (embedded) and long values', async () => {
  for (const n of [0, 1, 2, 3, 15, 16, 17, 127, 128, 129, 255, 256, 257, 300, 1100]) {
    for (const len of [1, 5, 31, 32, 110]) {
      const values = Array.from({ length: n }, (_, i) => bytes(len + (i % 3), n * 7919 + i));
      assert.is(hex(orderedTrieRoot(values, keccak256)), hex(await mptRoot(values)), `n=${n} len=${len}`);
    }
  }
});

test('a built block carries the tx and receipt roots @ethereumjs computes for it', async () => {
  const vm = await startVM();
  try {
    await vm.backend.sendRawTransaction(signedTx({ nonce: 0n, data: INIT, gas: 200_000n }).serialize());
    for (let i = 1; i < 40; i++) await vm.backend.sendRawTransaction(signedTx({ nonce: BigInt(i), to: addr(i), value: BigInt(i) }).serialize());
    const built = await vm.buildBlock();
    const txs = built.eth.transactions;
    assert.is(txs.length, 40);
    assert.is(hex(built.eth.header.transactionsTrie), hex(await genTransactionsTrieRoot(txs, new MerklePatriciaTrie())));
    const receipts = built.execution!.receipts.map((r, i) => {
      const bloom = new Bloom();
      for (const [address, topics] of r.logs) {
        bloom.add(address);
        for (const t of topics) bloom.add(t);
      }
      return encodeReceipt({ status: r.status, cumulativeBlockGasUsed: r.cumulativeGasUsed, bitvector: bloom.bitvector, logs: r.logs } as never, txs[i]!.type);
    });
    assert.is(hex(built.eth.header.receiptTrie), hex(await mptRoot(receipts)));
  } finally {
    await vm.shutdown();
  }
});

test.run();
