/**
 * eth_call's block overrides, eth_createAccessList and eth_simulateV1 on a real chain.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EvmRpcError, type StateOverrides } from '../src/index.js';
import { hex, startVM, word } from './helpers.js';

const bytes = (h: string): Uint8Array => Uint8Array.from(Buffer.from(h.replace(/^0x/, '').replace(/\s+/g, ''), 'hex'));

/** Returns NUMBER, TIMESTAMP, COINBASE, GASLIMIT, BASEFEE, PREVRANDAO, BLOBBASEFEE as 7 words. */
const BLOCK_ENV = bytes('435f52 4260205241604052 4560605248608052 4460a052 4a60c052 60e05ff3');
const ENV_AT = new Uint8Array(20).fill(0xe0);
const envCode: StateOverrides = new Map([[hex(ENV_AT), { code: BLOCK_ENV }]]);

function words(data: Uint8Array): bigint[] {
  const out: bigint[] = [];
  for (let i = 0; i + 32 <= data.length; i += 32) out.push(BigInt(hex(data.subarray(i, i + 32))));
  return out;
}

test('eth_call with block overrides: the EVM sees the overridden number, time, coinbase, gas limit, base fee, prevRandao, blob base fee; the stored block does not change', async () => {
  const vm = await startVM();
  try {
    const be = vm.backend;
    const plain = words((await be.call({ to: ENV_AT }, 'latest', envCode)).returnData);
    assert.is(plain[0], 0n, 'number of the genesis');
    const coinbase = new Uint8Array(20).fill(0xcb);
    const randao = word(0x1234n);
    const r = await be.call({ to: ENV_AT }, 'latest', envCode, undefined, {
      number: 1000n,
      time: 1_700_000_000n,
      feeRecipient: coinbase,
      gasLimit: 30_000_000n,
      baseFeePerGas: 7n,
      prevRandao: randao,
      blobBaseFee: 99n,
    });
    assert.equal(words(r.returnData), [1000n, 1_700_000_000n, BigInt(hex(coinbase)), 30_000_000n, 7n, 0x1234n, 99n]);
    // Only some fields: the others stay the block's.
    const some = words((await be.call({ to: ENV_AT }, 'latest', envCode, undefined, { number: 5n })).returnData);
    assert.equal(some, [5n, ...plain.slice(1)]);
    // The stored block is untouched.
    const b = await be.block('latest');
    assert.is(b!.header.number, 0n);
    assert.equal(words((await be.call({ to: ENV_AT }, 'latest', envCode)).returnData), plain);
  } finally {
    await vm.shutdown();
  }
});

test('eth_call with a block gas limit override: a call without gas gets the overridden limit', async () => {
  const vm = await startVM();
  try {
    // GAS PUSH0 MSTORE 0x20 PUSH0 RETURN: the gas left at the first opcode.
    const at = new Uint8Array(20).fill(0x9a);
    const code: StateOverrides = new Map([[hex(at), { code: bytes('5a5f5260205ff3') }]]);
    const r = await vm.backend.call({ to: at }, 'latest', code, undefined, { gasLimit: 100_000n });
    // eth_call runs the message without the intrinsic cost (GAS itself costs 2).
    assert.is(BigInt(hex(r.returnData)), 100_000n - 2n);
  } finally {
    await vm.shutdown();
  }
});

test('eth_estimateGas with block overrides runs in the overridden block (a contract that reverts below a block number)', async () => {
  const vm = await startVM();
  try {
    // NUMBER 0x64 GT: number > 100 -> stop; else revert.  43 6064 11? (GT: a > b with a = top)
    // PUSH1 0x64 NUMBER GT PUSH1 @ok JUMPI PUSH0 PUSH0 REVERT ok: JUMPDEST STOP
    const at = new Uint8Array(20).fill(0x9b);
    const code: StateOverrides = new Map([[hex(at), { code: bytes('6064 43 11 600a 57 5f5ffd 5b 00') }]]);
    try {
      await vm.backend.estimateGas({ to: at }, 'latest', code);
      assert.unreachable('reverts at block 1');
    } catch (e) {
      assert.instance(e, EvmRpcError);
      assert.is((e as EvmRpcError).rpcCode, 3);
    }
    const g = await vm.backend.estimateGas({ to: at }, 'latest', code, undefined, { number: 101n });
    assert.ok(g > 21_000n && g < 22_000n, `estimate ${g}`);
  } finally {
    await vm.shutdown();
  }
});

test.run();
