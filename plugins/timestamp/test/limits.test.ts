// The bound on free txs (limits.ts, issue 32 point 13): every proposeBlock becomes a block this node
// stores, so it takes at most `free-txs-per-minute` a minute (default 6,000), on the chain's clock,
// and refuses the rest with the seconds to wait; the chain config sets it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { InvalidParamsError, cb58Encode, hasErrorCode, utf8Encode, type BoundMethod } from '@cornice/sdk';
import { timestampService } from '../src/index.js';
import { DEFAULT_FREE_TXS_PER_MINUTE, parseTimestampConfig } from '../src/limits.js';
import { payload, rejection, setup } from './helpers.js';

test('proposeBlock past free-txs-per-minute is refused (RateLimited, -32000) with the seconds to wait; nothing is queued; the budget refills with the clock', async () => {
  const s = await setup({ vm: { freeTxsPerMinute: 30 } });
  const propose = timestampService(s.vm).methods.get('timestamp.proposeBlock')! as BoundMethod;
  for (let i = 0; i < 30; i++) await propose({ data: cb58Encode(payload(i)) });
  const e = await rejection(propose({ data: cb58Encode(payload(99)) }));
  assert.not.instance(e, InvalidParamsError);
  assert.ok(hasErrorCode(e, 'RateLimited'));
  assert.is((e as Error).message, 'free transactions on this chain are limited to 30 per minute; try again in 2 s');
  assert.equal((e as { data?: unknown }).data, { code: 'RateLimited', limitPerMinute: 30, retryAfterSeconds: 2 });
  assert.is(s.vm.pendingCount, 30);
  s.clock.advance(2);
  await propose({ data: cb58Encode(payload(99)) });
  assert.is(s.vm.pendingCount, 31);
  await rejection(propose({ data: cb58Encode(payload(100)) }));
  s.clock.advance(60);
  for (let i = 0; i < 30; i++) s.vm.proposeBlock(payload(i));
  assert.ok(hasErrorCode(await rejection(Promise.resolve().then(() => s.vm.proposeBlock(payload(1)))), 'RateLimited'));
});

test('a full mempool refuses without using up the budget', async () => {
  const s = await setup({ vm: { freeTxsPerMinute: 5, mempoolCapacity: 2 } });
  s.vm.proposeBlock(payload(1));
  s.vm.proposeBlock(payload(2));
  for (let i = 0; i < 5; i++) assert.ok(hasErrorCode(await rejection(Promise.resolve().then(() => s.vm.proposeBlock(payload(3)))), 'MempoolFull'));
  await s.vm.buildBlock();
  await s.vm.buildBlock();
  s.vm.proposeBlock(payload(3));
  s.vm.proposeBlock(payload(4));
});

test('the chain config sets free-txs-per-minute (over the option); other keys ignored; a bad value fails initialize naming the key; the default is 6,000', async () => {
  assert.is(DEFAULT_FREE_TXS_PER_MINUTE, 6000);
  assert.equal(parseTimestampConfig(utf8Encode('{"free-txs-per-minute": 12, "other": 1}')), { options: { freeTxsPerMinute: 12 }, ignored: ['other'] });
  const s = await setup({ vm: { freeTxsPerMinute: 1000 }, config: utf8Encode('{"free-txs-per-minute": 2}') });
  s.vm.proposeBlock(payload(1));
  s.vm.proposeBlock(payload(2));
  assert.ok(hasErrorCode(await rejection(Promise.resolve().then(() => s.vm.proposeBlock(payload(3)))), 'RateLimited'));
  for (const [json, message] of [
    ['{"free-txs-per-minute": 0}', 'invalid chain config file: free-txs-per-minute: must be a whole number >= 1'],
    ['{"free-txs-per-minute": "6000"}', 'invalid chain config file: free-txs-per-minute: must be a whole number >= 1'],
    ['"x"', 'invalid chain config file: must be a JSON object'],
    ['{', 'invalid chain config file: not valid JSON'],
  ] as const) {
    const e = await rejection(setup({ config: utf8Encode(json) }));
    assert.ok(hasErrorCode(e, 'InvalidConfig'), json);
    assert.is((e as Error).message, message);
  }
  // The default: 6,000 at once, not one more in the same instant.
  const d = await setup({ vm: { mempoolCapacity: 10_000 } });
  for (let i = 0; i < 6000; i++) d.vm.proposeBlock(payload(i & 0xff));
  assert.ok(hasErrorCode(await rejection(Promise.resolve().then(() => d.vm.proposeBlock(payload(1)))), 'RateLimited'));
});

test.run();
