import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { jumpAnalysisStats } from '../src/chain/patches/jump-analysis.js';
import { INIT, buildAndAccept, signedTx, startVM, word } from './helpers.js';

test('a contract\'s code is analysed once, not on each call: calls answer as before', async () => {
  const vm = await startVM();
  try {
    const be = vm.backend;
    const h = await be.sendRawTransaction(signedTx({ nonce: 0n, data: INIT, gas: 200_000n }).serialize());
    await buildAndAccept(vm);
    const to = (await be.receipt(h))!.contractAddress!;
    const first = await be.call({ to, data: word(0n) }, 'latest');
    const misses = jumpAnalysisStats.misses;
    const hits = jumpAnalysisStats.hits;
    for (let i = 0; i < 5; i++) assert.equal(await be.call({ to, data: word(0n) }, 'latest'), first);
    assert.is(jumpAnalysisStats.misses, misses, 'no new analysis');
    assert.ok(jumpAnalysisStats.hits >= hits + 5, `reused (${jumpAnalysisStats.hits - hits})`);
  } finally {
    await vm.shutdown();
  }
});

test.run();
