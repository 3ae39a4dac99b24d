import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EWOQ, addr, buildAndAccept, signedTx, startVM, GWEI } from './helpers.js';

test('a transfer is admitted, built, verified, accepted; balances and receipt follow', async () => {
  const vm = await startVM();
  try {
    const be = vm.backend;
    const before = await be.balance(EWOQ, 'latest');
    assert.ok(before > 0n);
    const to = addr(1);
    const tx = signedTx({ nonce: 0n, to, value: 1000n });
    const hash = await be.sendRawTransaction(tx.serialize());
    assert.equal(await be.nonce(EWOQ, 'pending'), 1n);
    const b = await buildAndAccept(vm);
    assert.is(b.height, 1);
    assert.is(be.blockNumber(), 1n);
    assert.is(await be.balance(to, 'latest'), 1000n);
    const r = await be.receipt(hash);
    assert.ok(r);
    assert.is(r!.status, 1);
    assert.is(r!.gasUsed, 21_000n);
    assert.is(r!.effectiveGasPrice, 25n * GWEI);
    assert.is(await be.balance(EWOQ, 'latest'), before - 1000n - 21_000n * 25n * GWEI);
    assert.is(await be.nonce(EWOQ, 'latest'), 1n);
  } finally {
    await vm.shutdown();
  }
});

test.run();
