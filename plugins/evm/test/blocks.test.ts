import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryStore, hasErrorCode } from '@cornice/sdk';
import { LevelStore } from '@cornice/core';
import { EWOQ, INIT, addr, buildAndAccept, hex, signedTx, startVM, word } from './helpers.js';

test('a block built on one node is parsed, verified and accepted on another: same state root', async () => {
  const a = await startVM();
  const b = await startVM();
  try {
    await a.backend.sendRawTransaction(signedTx({ nonce: 0n, data: INIT, gas: 200_000n }).serialize());
    await a.backend.sendRawTransaction(signedTx({ nonce: 1n, to: addr(3), value: 5n }).serialize());
    const built = await a.buildBlock();
    assert.is(built.eth.transactions.length, 2);
    await built.verify();
    await a.setPreference(built.id);
    await built.accept();

    const parsed = await b.parseBlock(built.bytes);
    assert.ok(parsed.id.equals(built.id));
    assert.is(parsed.height, 1);
    await parsed.verify();
    await b.setPreference(parsed.id);
    await parsed.accept();
    assert.ok((await b.lastAccepted()).equals(built.id));
    assert.is(hex(b.chain.lastAccepted.eth.header.stateRoot), hex(a.chain.lastAccepted.eth.header.stateRoot));
    assert.is(await b.backend.balance(addr(3), 'latest'), 5n);
    const txHash = built.eth.transactions[0]!.hash();
    assert.is((await b.backend.receipt(txHash))!.status, 1);
  } finally {
    await a.shutdown();
    await b.shutdown();
  }
});

test('built and parsed blocks share one Common with their txs (no per-header or per-tx copy), which has the block and tx params', async () => {
  const a = await startVM();
  const b = await startVM();
  try {
    await a.backend.sendRawTransaction(signedTx({ nonce: 0n, to: addr(3), value: 5n }).serialize());
    const built = await a.buildBlock();
    assert.is(built.eth.header.common, a.chain.txCommon);
    assert.is(built.eth.transactions[0]!.common, a.chain.txCommon);
    const parsed = await b.parseBlock(built.bytes);
    assert.is(parsed.eth.header.common, b.chain.txCommon);
    assert.is(parsed.eth.transactions[0]!.common, b.chain.txCommon);
    assert.is(parsed.eth.transactions[0]!.getIntrinsicGas(), 21_000n, 'tx params');
    assert.is(parsed.eth.header.calcNextBaseFee() > 0n, true, 'block params');
    await parsed.verify();
    assert.is(hex(parsed.eth.header.stateRoot), hex(built.eth.header.stateRoot));
  } finally {
    await a.shutdown();
    await b.shutdown();
  }
});

test('a foreign block whose state root was tampered with fails verify', async () => {
  const a = await startVM();
  const b = await startVM();
  try {
    await a.backend.sendRawTransaction(signedTx({ nonce: 0n, to: addr(3), value: 5n }).serialize());
    const built = await a.buildBlock();
    // Re-encode the same block with another state root: a different hash, same txs.
    const { createBlock } = await import('@ethereumjs/block');
    const forged = createBlock(
      { header: { ...built.eth.header.toJSON(), stateRoot: word(1n) }, transactions: built.eth.transactions.map((t) => t.toJSON()) },
      { common: a.chain.common },
    );
    const parsed = await b.parseBlock(forged.serialize());
    try {
      await parsed.verify();
      assert.unreachable('verify must fail');
    } catch (e) {
      assert.ok(hasErrorCode(e, 'InvalidBlock'), String(e));
      assert.match((e as Error).message, /state root/);
    }
  } finally {
    await a.shutdown();
    await b.shutdown();
  }
});

test('a rejected block is dropped; its txs stay pending and go in the next block', async () => {
  const vm = await startVM();
  try {
    await vm.backend.sendRawTransaction(signedTx({ nonce: 0n, to: addr(4), value: 7n }).serialize());
    const b1 = await vm.buildBlock();
    await b1.verify();
    await b1.reject();
    assert.is(b1.status, 'rejected');
    assert.ok((await vm.lastAccepted()).equals(vm.chain.lastAccepted.id));
    assert.is(vm.backend.blockNumber(), 0n);
    assert.is(await vm.backend.balance(addr(4), 'latest'), 0n);
    const ac = new AbortController();
    assert.is(await vm.waitForEvent(ac.signal), 'pendingTxs', 'the tx is executable again');
    const b2 = await buildAndAccept(vm);
    assert.is(b2.height, 1);
    assert.is(await vm.backend.balance(addr(4), 'latest'), 7n);
  } finally {
    await vm.shutdown();
  }
});

test('accepting the first of several processing blocks keeps the preference on their tip: the next block builds on it', async () => {
  const vm = await startVM();
  try {
    const build = async (nonce: bigint) => {
      await vm.backend.sendRawTransaction(signedTx({ nonce, to: addr(4), value: 1n }).serialize());
      const b = await vm.buildBlock();
      await b.verify();
      await vm.setPreference(b.id);
      return b;
    };
    const b1 = await build(0n);
    const b2 = await build(1n);
    const b3 = await build(2n);
    await b1.accept();
    const b4 = await build(3n);
    assert.ok(b4.parentId.equals(b3.id), `built on ${b4.parentId}, not on the preferred tip ${b3.id}`);
    assert.is(b4.height, 4);
    assert.is(b4.eth.transactions.length, 1, 'only the new tx: the processing blocks hold the others');
    await b2.accept();
    await b3.accept();
    await b4.accept();
    assert.is(await vm.backend.balance(addr(4), 'latest'), 4n);
  } finally {
    await vm.shutdown();
  }
});

test('receipts and blocks by number of recent blocks are served without reading the height index; older ones from it', async () => {
  const vm = await startVM({ opts: { blockCacheSize: 2 } });
  try {
    const blocks = [];
    for (let nonce = 0n; nonce < 5n; nonce++) {
      await vm.backend.sendRawTransaction(signedTx({ nonce, to: addr(4), value: 1n }).serialize());
      blocks.push(await buildAndAccept(vm));
    }
    const store = vm.chain.store;
    const hashAt = store.hashAt.bind(store);
    let reads = 0;
    store.hashAt = (n: bigint) => {
      reads += 1;
      return hashAt(n);
    };
    // Height 4 is recent (the last accepted block is 5): no index read.
    const tx4 = blocks[3]!.eth.transactions[0]!.hash();
    assert.is((await vm.backend.receipt(tx4))?.blockNumber, 4n);
    assert.is(hex((await vm.chain.acceptedAt(4n))!.eth.hash()), hex(blocks[3]!.eth.hash()));
    assert.is(reads, 0);
    // Height 1 left the cache of 2 blocks: read from the index, and still the right block.
    assert.is(hex((await vm.chain.acceptedAt(1n))!.eth.hash()), hex(blocks[0]!.eth.hash()));
    assert.is(reads, 1);
  } finally {
    await vm.shutdown();
  }
});

test('waitForEvent resolves at once when a tx is admitted (no idle timer)', async () => {
  const vm = await startVM();
  try {
    const ac = new AbortController();
    let resolvedAt = 0;
    const p = vm.waitForEvent(ac.signal).then((e) => ((resolvedAt = performance.now()), e));
    await new Promise((r) => setTimeout(r, 20));
    assert.is(resolvedAt, 0, 'nothing pending: it waits');
    const sentAt = performance.now();
    await vm.backend.sendRawTransaction(signedTx({ nonce: 0n, to: addr(4), value: 1n }).serialize());
    assert.is(await p, 'pendingTxs');
    assert.ok(resolvedAt - sentAt < 50, `resolved ${resolvedAt - sentAt} ms after the tx`);
  } finally {
    await vm.shutdown();
  }
});

test('restart on LevelDB resumes: state root, balances, code, receipts, block hashes, tx index', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'evm-restart-'));
  try {
    let db = await LevelStore.open(dir);
    let vm = await startVM({ db });
    await vm.backend.sendRawTransaction(signedTx({ nonce: 0n, data: INIT, gas: 200_000n }).serialize());
    const b1 = await buildAndAccept(vm);
    const deployHash = b1.eth.transactions[0]!.hash();
    const ca = (await vm.backend.receipt(deployHash))!.contractAddress!;
    await vm.backend.sendRawTransaction(signedTx({ nonce: 1n, to: ca, data: word(77n), gas: 100_000n }).serialize());
    await vm.backend.sendRawTransaction(signedTx({ nonce: 2n, to: addr(5), value: 123n }).serialize());
    const b2 = await buildAndAccept(vm);
    const root = hex(vm.chain.lastAccepted.eth.header.stateRoot);
    const ewoqBalance = await vm.backend.balance(EWOQ, 'latest');
    const code = hex(await vm.backend.code(ca, 'latest'));
    await vm.shutdown();
    await db.close();

    db = await LevelStore.open(dir);
    vm = await startVM({ db });
    try {
      assert.ok((await vm.lastAccepted()).equals(b2.id));
      assert.is(vm.backend.blockNumber(), 2n);
      assert.is(hex(vm.chain.lastAccepted.eth.header.stateRoot), root);
      assert.is(await vm.backend.balance(EWOQ, 'latest'), ewoqBalance);
      assert.is(await vm.backend.balance(addr(5), 'latest'), 123n);
      assert.is(hex(await vm.backend.code(ca, 'latest')), code);
      assert.is(hex((await vm.backend.call({ to: ca }, 'latest')).returnData), hex(word(77n)));
      assert.ok((await vm.getBlockIdAtHeight(1)).equals(b1.id));
      assert.is(hex((await vm.backend.block(1n))!.header.hash), hex(b1.eth.hash()));
      const loc = await vm.backend.transaction(deployHash);
      assert.is(loc?.blockNumber, 1n);
      assert.is((await vm.backend.receipt(deployHash))!.status, 1);
      assert.is((await vm.backend.logs({ fromBlock: 0n, addresses: [ca], topics: [] })).length, 1);
      assert.is(await vm.backend.nonce(EWOQ, 'pending'), 3n);
      // and it goes on
      await vm.backend.sendRawTransaction(signedTx({ nonce: 3n, to: addr(5), value: 1n }).serialize());
      await buildAndAccept(vm);
      assert.is(await vm.backend.balance(addr(5), 'latest'), 124n);
    } finally {
      await vm.shutdown();
      await db.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a database from another genesis is refused', async () => {
  const db = new MemoryStore();
  const vm = await startVM({ db });
  await vm.shutdown();
  const { utf8Encode } = await import('@cornice/sdk');
  const { genesisJson } = await import('./helpers.js');
  try {
    await startVM({ db, genesis: utf8Encode(JSON.stringify(genesisJson({ ['11'.repeat(20)]: { balance: '0x1' } }))) });
    assert.unreachable('must refuse');
  } catch (e) {
    assert.ok(hasErrorCode(e, 'GenesisMismatch'), String(e));
  }
});

test.run();
