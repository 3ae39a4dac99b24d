import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EvmRpcError } from '../src/index.js';
import { EWOQ, EWOQ_KEY, INIT, RUNTIME, STORED_TOPIC, addr, buildAndAccept, hex, signedTx, startVM, word } from './helpers.js';

test('estimateGas of a plain transfer is exactly 21,000 (as geth), with or without a value', async () => {
  const vm = await startVM();
  try {
    const to = new Uint8Array(20).fill(0x42);
    assert.is(await vm.backend.estimateGas({ from: EWOQ, to, value: 1n }, 'latest'), 21_000n);
    assert.is(await vm.backend.estimateGas({ to }, 'latest'), 21_000n);
  } finally {
    await vm.shutdown();
  }
});

test('deploy, call, transact, logs, estimateGas, revert with reason', async () => {
  const vm = await startVM();
  try {
    const be = vm.backend;
    const deployGas = await be.estimateGas({ from: EWOQ, data: INIT }, 'latest');
    assert.ok(deployGas > 53_000n && deployGas < 200_000n, `deploy estimate ${deployGas}`);
    const h = await be.sendRawTransaction(signedTx({ nonce: 0n, data: INIT, gas: deployGas }).serialize());
    await buildAndAccept(vm);
    const r = await be.receipt(h);
    assert.is(r!.status, 1);
    const ca = r!.contractAddress!;
    assert.ok(ca);
    assert.is(hex(await be.code(ca, 'latest')), hex(RUNTIME));

    // call reads slot 0 (0 at first)
    const c0 = await be.call({ to: ca }, 'latest');
    assert.is(hex(c0.returnData), hex(word(0n)));

    // transact: store 42 with a log
    const setData = word(42n);
    const g = await be.estimateGas({ from: EWOQ, to: ca, data: setData }, 'latest');
    assert.ok(g >= 21_000n + 20_000n, `estimate ${g}`);
    const h2 = await be.sendRawTransaction(signedTx({ nonce: 1n, to: ca, data: setData, gas: g }).serialize());
    await buildAndAccept(vm);
    const r2 = await be.receipt(h2);
    assert.is(r2!.status, 1, 'the estimate is enough');
    assert.is(r2!.logs.length, 1);
    assert.is(hex(r2!.logs[0]!.topics[0]!), STORED_TOPIC);
    assert.is(hex((await be.call({ to: ca }, 'latest')).returnData), hex(word(42n)));
    assert.is(hex(await be.storageAt(ca, word(0n), 'latest')), hex(word(42n)));
    // history: at block 1 the slot was still 0
    assert.is(hex((await be.call({ to: ca }, 1n)).returnData), hex(word(0n)));

    // logs with filters
    const topic = Uint8Array.from(Buffer.from(STORED_TOPIC.slice(2), 'hex'));
    assert.is((await be.logs({ fromBlock: 0n, addresses: [ca], topics: [[topic]] })).length, 1);
    assert.is((await be.logs({ fromBlock: 0n, addresses: [EWOQ], topics: [] })).length, 0);
    assert.is((await be.logs({ fromBlock: 0n, addresses: [], topics: [[word(7n)]] })).length, 0);

    // revert: call returns the revert data, estimateGas throws code 3 with the reason
    const bad = Uint8Array.from([0xff, ...new Uint8Array(31)]);
    const rc = await be.call({ to: ca, data: bad }, 'latest');
    assert.is(rc.error?.kind, 'revert');
    try {
      await be.estimateGas({ from: EWOQ, to: ca, data: bad }, 'latest');
      assert.unreachable('estimateGas of a reverting call must throw');
    } catch (e) {
      assert.instance(e, EvmRpcError);
      assert.is((e as EvmRpcError).rpcCode, 3);
      assert.is((e as EvmRpcError).message, 'execution reverted: nope');
      assert.ok(String((e as EvmRpcError).rpcData).startsWith('0x08c379a0'));
    }

    // state overrides: a different slot value and a balance
    const overridden = await be.call({ to: ca }, 'latest', new Map([[hex(ca), { stateDiff: new Map([[hex(word(0n)), word(9n)]]) }]]));
    assert.is(hex(overridden.returnData), hex(word(9n)));
    assert.is(hex((await be.call({ to: ca }, 'latest')).returnData), hex(word(42n)), 'an override does not stay');
    // `state` replaces the whole storage: slot 0 reads as 0
    const replaced = await be.call({ to: ca }, 'latest', new Map([[hex(ca), { state: new Map([[hex(word(1n)), word(5n)]]) }]]));
    assert.is(hex(replaced.returnData), hex(word(0n)));
    assert.is(hex((await be.call({ to: ca }, 'latest')).returnData), hex(word(42n)));
  } finally {
    await vm.shutdown();
  }
});

test("eth_call, eth_estimateGas and personal_sendTransaction refuse what geth refuses before running, with geth's texts (an initcode over 49,152 bytes, a fee cap under the tip) and the tx rules' as invalid transaction", async () => {
  const vm = await startVM();
  try {
    const be = vm.backend;
    const to = addr(5);
    for (const run of [(r: Parameters<typeof be.call>[0]) => be.call(r, 'latest'), (r: Parameters<typeof be.call>[0]) => be.estimateGas(r, 'latest')]) {
      await rejectsWith(run({ data: new Uint8Array(49_153) }), -32000, /^max initcode size exceeded: code size 49153 limit 49152$/);
      await rejectsWith(run({ to, maxFeePerGas: 1n, maxPriorityFeePerGas: 2n }), -32000, /^maxFeePerGas \(1\) < maxPriorityFeePerGas \(2\)$/);
    }
    await rejectsWith(be.estimateGas({ to, maxFeePerGas: 2n ** 250n }, 'latest'), -32000, /^invalid transaction: gasLimit \* maxFeePerGas cannot exceed MAX_INTEGER$/);
    await rejectsWith(be.estimateGas({ to, gasPrice: 2n ** 250n }, 'latest'), -32000, /^invalid transaction: gasLimit \* gasPrice cannot exceed MAX_INTEGER$/);
    assert.is(await be.estimateGas({ data: new Uint8Array(49_152) }, 'latest') > 21_000n, true, 'an initcode of the largest size is estimated');
    // personal_sendTransaction's path (the node signs): the same refusals, also with the gas given (nothing estimated).
    const send = (r: Omit<Parameters<typeof be.sendTransaction>[0], 'from'>) => be.sendTransaction({ from: EWOQ, ...r }, EWOQ_KEY);
    await rejectsWith(send({ data: new Uint8Array(49_153), gas: 3_000_000n }), -32000, /^max initcode size exceeded: code size 49153 limit 49152$/);
    await rejectsWith(send({ to, gas: 21_000n, maxFeePerGas: 1n, maxPriorityFeePerGas: 2n }), -32000, /^maxFeePerGas \(1\) < maxPriorityFeePerGas \(2\)$/);
    // geth's bound on the fee of a tx sent through the RPC (coreth's rpc-tx-fee-cap, 100) comes first; @ethereumjs's overflow text no more.
    await rejectsWith(send({ to, gas: 21_000n, gasPrice: 2n ** 250n }), -32000, /^tx fee \(3799427928\d+\.00 ether\) exceeds the configured cap \(100\.00 ether\)$/);
  } finally {
    await vm.shutdown();
  }
});

async function rejectsWith(p: Promise<unknown>, code: number, message: RegExp) {
  const err = await p.then(() => undefined, (e: unknown) => e);
  assert.ok(err instanceof EvmRpcError, `an EvmRpcError, not ${String(err)}`);
  assert.is((err as EvmRpcError).rpcCode, code);
  assert.match((err as EvmRpcError).message, message);
}

test.run();
