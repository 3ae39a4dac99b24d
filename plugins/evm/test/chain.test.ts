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

test('a receipt asked while the tx is pooled waits for its block (ethers tx.wait on an idle chain), bounded', async () => {
  const vm = await startVM({ opts: { receiptWaitMs: 60_000 } });
  try {
    const be = vm.backend;
    const hash = await be.sendRawTransaction(signedTx({ nonce: 0n, to: addr(1), value: 1n }).serialize());
    let answered: unknown = 'not yet';
    const asked = be.receipt(hash).then((r) => (answered = r));
    await new Promise((r) => setImmediate(r));
    assert.is(answered, 'not yet', 'the receipt waits while the tx is pooled');
    await buildAndAccept(vm);
    await asked;
    assert.is((answered as { status: number }).status, 1, 'answered with the receipt once accepted');
  } finally {
    await vm.shutdown();
  }
  // The bound: a tx that is never built is answered null after receiptWaitMs.
  const vm2 = await startVM({ opts: { receiptWaitMs: 20 } });
  try {
    const hash = await vm2.backend.sendRawTransaction(signedTx({ nonce: 0n, to: addr(1), value: 1n }).serialize());
    assert.is(await vm2.backend.receipt(hash), undefined);
  } finally {
    await vm2.shutdown();
  }
  // Shutdown releases a waiting request.
  const vm3 = await startVM({ opts: { receiptWaitMs: 60_000 } });
  const hash3 = await vm3.backend.sendRawTransaction(signedTx({ nonce: 0n, to: addr(1), value: 1n }).serialize());
  const waiting = vm3.backend.receipt(hash3);
  await vm3.shutdown();
  assert.is(await waiting, undefined);
});

test.run();
