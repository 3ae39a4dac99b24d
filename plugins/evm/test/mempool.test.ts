import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTx, createTxFromRLP, type TypedTransaction } from '@ethereumjs/tx';
import { RLP } from '@ethereumjs/rlp';
import { EvmRpcError, type EvmVM } from '../src/index.js';
import { EWOQ, GWEI, addr, buildAndAccept, common, hex, key, signedTx, startVM } from './helpers.js';

async function rejects(p: Promise<unknown>, text: RegExp): Promise<void> {
  try {
    await p;
  } catch (e) {
    assert.instance(e, EvmRpcError, String(e));
    assert.is((e as EvmRpcError).rpcCode, -32000);
    assert.match((e as Error).message, text);
    return;
  }
  assert.unreachable(`must fail with ${text}`);
}

/** Counts the reads of the store's tx index from now on. */
function countTxIndexReads(vm: EvmVM): () => number {
  const store = vm.chain.store;
  const txLocation = store.txLocation.bind(store);
  let reads = 0;
  store.txLocation = (h) => {
    reads++;
    return txLocation(h);
  };
  return () => reads;
}

test('admission errors use Ethereum texts', async () => {
  const vm = await startVM({ opts: { mempool: { maxNonceGap: 4, globalSlots: 8 } } });
  try {
    const be = vm.backend;
    const send = (tx: TypedTransaction) => be.sendRawTransaction(tx.serialize());
    await send(signedTx({ nonce: 0n, to: addr(1), value: 1n }));
    await buildAndAccept(vm);
    await rejects(send(signedTx({ nonce: 0n, to: addr(1), value: 1n })), /^nonce too low: next nonce 1, tx nonce 0$/);
    await rejects(send(signedTx({ nonce: 10n, to: addr(1) })), /^nonce too high/);
    await rejects(send(signedTx({ key: key(9), nonce: 0n, to: addr(1), value: 1n })), /^insufficient funds for gas \* price \+ value: balance 0, tx cost 1050000000000001, overshot 1050000000000001$/);
    await rejects(send(signedTx({ nonce: 1n, to: addr(1), gas: 20_000n })), /^intrinsic gas too low: gas 20000, minimum needed 21000$/);
    await rejects(send(signedTx({ nonce: 1n, to: addr(1), maxFee: GWEI })), /^max fee per gas less than block base fee/);
    await rejects(send(signedTx({ nonce: 1n, to: addr(1), gas: 200_000_000n })), /^exceeds block gas limit$/);
    await rejects(send(signedTx({ nonce: 1n, to: addr(1), chainId: 1n })), /^invalid chain id for signer: have 1 want 43110$/);
    await rejects(be.sendRawTransaction(new Uint8Array(200_000)), /^oversized data/);
    await rejects(be.sendRawTransaction(Uint8Array.of(3, 0xc0)), /^transaction type not supported$/);
    await rejects(be.sendRawTransaction(Uint8Array.of(4, 0xc0)), /^transaction type not supported$/);
    // Garbage RLP: geth's rlp texts (tx-rlp.test.ts has the rest).
    await rejects(be.sendRawTransaction(Uint8Array.of(0xc3, 1, 2, 3)), /^rlp: too few elements for types.LegacyTx$/);
    await rejects(be.sendRawTransaction(Uint8Array.of(0xc5, 0x83, 1, 2)), /^rlp: value size exceeds available input length$/);
    await rejects(be.sendRawTransaction(Uint8Array.of(2, 0xc5, 0x83, 1, 2)), /^rlp: value size exceeds available input length$/);
    await rejects(be.sendRawTransaction(Uint8Array.of(0x83, 1, 2, 3)), /^rlp: expected input list for types.LegacyTx$/);
    await rejects(be.sendRawTransaction(Uint8Array.of(2)), /^typed transaction too short$/);
    await rejects(be.sendRawTransaction(Uint8Array.of(0, 0xc0)), /^transaction type not supported$/);
    // A tip above the fee cap, refused before the signature is looked at.
    const overTip = RLP.decode(signedTx({ nonce: 1n, to: addr(1) }).serialize().subarray(1)) as Uint8Array[];
    overTip[2] = Uint8Array.of(2);
    overTip[3] = Uint8Array.of(1);
    await rejects(be.sendRawTransaction(Uint8Array.from([2, ...RLP.encode(overTip)])), /^max priority fee per gas higher than max fee per gas$/);
    // an unprotected legacy tx (v = 27/28)
    const legacy = createTx({ type: 0, nonce: 1n, to: addr(1), gasLimit: 21_000n, gasPrice: 30n * GWEI }, { common }).sign(key(1)) as TypedTransaction;
    const fields = RLP.decode(legacy.serialize()) as Uint8Array[];
    fields[6] = Uint8Array.of(27);
    await rejects(be.sendRawTransaction(RLP.encode(fields)), /^only replay-protected \(EIP-155\) transactions allowed over RPC$/);
    // a signature that recovers nobody
    const bad = RLP.decode(signedTx({ nonce: 1n, to: addr(1) }).serialize().subarray(1)) as Uint8Array[];
    bad[10] = new Uint8Array(0); // r = 0
    await rejects(be.sendRawTransaction(Uint8Array.from([2, ...RLP.encode(bad)])), /^invalid sender$/);
    bad[10] = new Uint8Array(32); // r = 0 with leading zeros: not canonical RLP
    await rejects(be.sendRawTransaction(Uint8Array.from([2, ...RLP.encode(bad)])), /^rlp: non-canonical integer \(leading zero bytes\) for \*big.Int, decoding into \(types.DynamicFeeTx\).R$/);

    // duplicates and replacement
    const t1 = signedTx({ nonce: 1n, to: addr(1), value: 1n, maxFee: 30n * GWEI, tip: GWEI });
    await send(t1);
    await rejects(send(t1), /^already known$/);
    await rejects(send(signedTx({ nonce: 1n, to: addr(1), value: 2n, maxFee: 31n * GWEI, tip: GWEI })), /^replacement transaction underpriced$/);
    await send(signedTx({ nonce: 1n, to: addr(1), value: 2n, maxFee: 33n * GWEI, tip: 2n * GWEI }));
    assert.is(vm.chain.mempool.size, 1, 'the replacement took the place of the first');
    assert.is(await be.nonce(EWOQ, 'pending'), 2n);
    // a future nonce is held but not pending-contiguous
    await send(signedTx({ nonce: 3n, to: addr(1), value: 1n }));
    assert.is(await be.nonce(EWOQ, 'pending'), 2n);
    await send(signedTx({ nonce: 2n, to: addr(1), value: 1n }));
    assert.is(await be.nonce(EWOQ, 'pending'), 4n);
    // the size bound
    for (let i = 4; i < 9; i++) await send(signedTx({ nonce: BigInt(i), to: addr(1), value: 1n }));
    await rejects(send(signedTx({ nonce: 9n, to: addr(1), value: 1n })), /^txpool is full$/);
    const b = await buildAndAccept(vm);
    assert.is(b.eth.transactions.length, 8);
    assert.is(vm.chain.mempool.size, 0);
    assert.is(await be.balance(addr(1), 'latest'), 1n + 2n + 7n);
  } finally {
    await vm.shutdown();
  }
});

test('a tx that fails at build is dropped, the others go in', async () => {
  const vm = await startVM();
  try {
    const be = vm.backend;
    const k = key(7);
    const { addressOfKey } = await import('../src/chain/crypto.js');
    const who = addressOfKey(k);
    const fee = 21_000n * 25n * GWEI;
    const funds = 2n * fee + 1000n;
    await be.sendRawTransaction(signedTx({ nonce: 0n, to: who, value: funds }).serialize());
    await buildAndAccept(vm);
    // Each is affordable alone (admission checks one tx against the accepted state); after the
    // first, the second cannot pay.
    const spendAll = signedTx({ key: k, nonce: 0n, to: addr(1), value: funds - fee - 5n, maxFee: 25n * GWEI });
    const cannotPay = signedTx({ key: k, nonce: 1n, to: addr(1), value: 1n, maxFee: 25n * GWEI });
    await be.sendRawTransaction(spendAll.serialize());
    await be.sendRawTransaction(cannotPay.serialize());
    await be.sendRawTransaction(signedTx({ nonce: 1n, to: addr(2), value: 1n }).serialize());
    const b = await buildAndAccept(vm);
    assert.equal(
      b.eth.transactions.map((t) => hex(t.hash())),
      [hex(spendAll.hash()), hex(signedTx({ nonce: 1n, to: addr(2), value: 1n }).hash())],
    );
    assert.is(vm.chain.mempool.size, 0, 'the failed tx was dropped');
    assert.is(await be.balance(who, 'latest'), 5n);
  } finally {
    await vm.shutdown();
  }
});

test('an admitted tx is frozen with its sender remembered; a pooled tx has no receipt, and no store read is made for it', async () => {
  const vm = await startVM();
  try {
    const be = vm.backend;
    const tx = signedTx({ nonce: 0n, to: addr(1), value: 1n });
    const hash = await be.sendRawTransaction(tx.serialize());
    const pooled = vm.chain.mempool.get(hex(hash).slice(2))!.tx;
    assert.ok(Object.isFrozen(pooled), 'frozen once its sender is known');
    assert.is(pooled.getSenderAddress(), pooled.getSenderAddress(), 'the same Address, not hashed again');
    assert.is(hex(pooled.getSenderAddress().bytes), hex(EWOQ));
    assert.is(pooled.hash(), pooled.hash(), 'its hash is cached as a frozen tx\'s');
    const reads = countTxIndexReads(vm);
    assert.is(await be.receipt(hash), undefined);
    assert.is(reads(), 0, 'pooled: not looked up');
    await buildAndAccept(vm);
    assert.is((await be.receipt(hash))!.status, 1);
    assert.is(reads(), 0, 'just accepted: located from memory');
  } finally {
    await vm.shutdown();
  }
});

test('past the in-memory tx index, a receipt is located through the store', async () => {
  const vm = await startVM({ opts: { recentTxIndexSize: 1 } });
  try {
    const be = vm.backend;
    const first = await be.sendRawTransaction(signedTx({ nonce: 0n, to: addr(1), value: 1n }).serialize());
    await buildAndAccept(vm);
    const second = await be.sendRawTransaction(signedTx({ nonce: 1n, to: addr(2), value: 2n }).serialize());
    await buildAndAccept(vm);
    const reads = countTxIndexReads(vm);
    assert.is((await be.receipt(second))!.blockNumber, 2n);
    assert.is(reads(), 0);
    const r = (await be.receipt(first))!;
    assert.is(r.blockNumber, 1n);
    assert.is(r.transactionIndex, 0);
    assert.is(reads(), 1);
    assert.is((await be.transaction(first))!.blockNumber, 1n);
  } finally {
    await vm.shutdown();
  }
});

test('a pooled tx serializes to the very bytes it was sent as; every tx type re-encodes to its bytes, and non-canonical bytes do not decode', async () => {
  // What the shortcut relies on: decoding takes canonical bytes only, so they are the encoding.
  const txs = [
    signedTx({ nonce: 0n, to: addr(1), value: 1n }),
    signedTx({ nonce: 2n ** 64n - 2n, data: new Uint8Array(300).fill(7), value: 10n ** 30n, tip: GWEI }),
    createTx({ type: 0, nonce: 5n, to: addr(2), gasLimit: 21_000n, gasPrice: 30n * GWEI, value: 0n }, { common }).sign(key(1)) as TypedTransaction,
    createTx({ type: 1, nonce: 0n, to: addr(3), gasLimit: 50_000n, gasPrice: 30n * GWEI, accessList: [{ address: `0x${hex(addr(4)).slice(2)}`, storageKeys: [`0x${'11'.repeat(32)}`] }] }, { common }).sign(key(2)) as TypedTransaction,
  ];
  for (const tx of txs) {
    const raw = tx.serialize();
    assert.is(hex(createTxFromRLP(raw, { common }).serialize()), hex(raw));
  }
  const legacy = RLP.decode(txs[2]!.serialize()) as Uint8Array[];
  const withZero = [...legacy];
  withZero[0] = Uint8Array.of(0, 5); // nonce with a leading zero
  assert.throws(() => createTxFromRLP(RLP.encode(withZero), { common }));
  assert.throws(() => createTxFromRLP(Uint8Array.from([...txs[0]!.serialize(), 0]), { common }), 'a byte after the list');
  const long = txs[0]!.serialize();
  // the list's length in a longer form than needed (0xf8 0x6f... as 0xf9 0x00 0x6f...)
  assert.is(long[1], 0xf8);
  assert.throws(() => createTxFromRLP(Uint8Array.from([long[0]!, 0xf9, 0, ...long.subarray(2)]), { common }));

  const vm = await startVM({});
  try {
    const raw = signedTx({ nonce: 0n, to: addr(1), value: 1n }).serialize();
    const hash = await vm.backend.sendRawTransaction(raw);
    const pooled = vm.chain.mempool.get(hex(hash).slice(2))!.tx;
    assert.ok(pooled.serialize() === raw, 'the bytes it was sent as, not a new encoding');
    assert.is(hex(pooled.hash()), hex(hash));
    await buildAndAccept(vm);
    const receipt = await vm.backend.receipt(hash);
    assert.is(receipt?.status, 1);
  } finally {
    await vm.shutdown();
  }
});

test.run();
