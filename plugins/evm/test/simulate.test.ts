/**
 * eth_call's block overrides, eth_createAccessList and eth_simulateV1 on a real chain.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EvmRpcError, type StateOverrides } from '../src/index.js';
import { EWOQ, hex, startVM, word } from './helpers.js';
import { createContractAddress, Address } from '@ethereumjs/util';

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

const A = new Uint8Array(20).fill(0xaa);
const B = new Uint8Array(20).fill(0xbb);
const C = new Uint8Array(20).fill(0xcc);
const X = new Uint8Array(20).fill(0x77);
const slot = (n: bigint) => word(n);

test('eth_createAccessList: a contract reading 2 slots of another: exactly that list, and the gas of the tx with it', async () => {
  const vm = await startVM();
  try {
    const code: StateOverrides = new Map([
      // STATICCALL(gas, B, 0, 0, 0, 0x20) POP STOP
      [hex(A), { code: bytes(`6020 5f 5f 5f 73${hex(B).slice(2)} 5a fa 50 00`) }],
      // SLOAD(0) + SLOAD(1), returned
      [hex(B), { code: bytes('5f54 600154 01 5f52 6020 5ff3') }],
    ]);
    const r = await vm.backend.createAccessList({ from: EWOQ, to: A }, 'latest', code);
    assert.equal(r.accessList, [{ address: B, storageKeys: [slot(0n), slot(1n)] }]);
    // 21,000 + 2,400 (B) + 2 x 1,900 (its slots) = 27,200 intrinsic; A: PUSH1 3, 3 x PUSH0 6, PUSH20 3, GAS 2,
    // STATICCALL 100 (warm) + 3 (one word of memory), POP 2 = 119; B: PUSH0 2, SLOAD 100, PUSH1 3,
    // SLOAD 100, ADD 3, PUSH0 2, MSTORE 3 + 3, PUSH1 3, PUSH0 2, RETURN 0 = 221.
    assert.is(r.gasUsed, 27_200n + 119n + 221n);
    assert.is(r.error, undefined);
    // The list it was given, completed: the same answer.
    const again = await vm.backend.createAccessList({ from: EWOQ, to: A, accessList: [{ address: B, storageKeys: [slot(1n)] }] }, 'latest', code);
    assert.equal(again.accessList, [{ address: B, storageKeys: [slot(1n), slot(0n)] }]);
    assert.is(again.gasUsed, r.gasUsed);
  } finally {
    await vm.shutdown();
  }
});

test("eth_createAccessList: the sender, the recipient and precompiles are left out as addresses, as geth's tracer; a slot of the recipient is in", async () => {
  const vm = await startVM();
  try {
    // CALLER BALANCE POP, ADDRESS BALANCE POP, BALANCE(0x01) POP, BALANCE(X) POP, SLOAD(5) POP, STOP
    const code: StateOverrides = new Map([[hex(C), { code: bytes(`33 31 50 30 31 50 6001 31 50 73${hex(X).slice(2)} 31 50 6005 54 50 00`) }]]);
    const r = await vm.backend.createAccessList({ from: EWOQ, to: C }, 'latest', code);
    assert.equal(r.accessList, [
      { address: X, storageKeys: [] },
      { address: C, storageKeys: [slot(5n)] },
    ]);
    // 21,000 + 2 x 2,400 + 1,900 = 27,700; 4 warm BALANCEs and a warm SLOAD 500, 2 PUSH1 + PUSH20 9, 5 POP 10, CALLER 2, ADDRESS 2.
    assert.is(r.gasUsed, 27_700n + 500n + 9n + 10n + 4n);
  } finally {
    await vm.shutdown();
  }
});

test('eth_createAccessList: a creation leaves the created address out, but not its slots', async () => {
  const vm = await startVM();
  try {
    // SLOAD(7) POP, ADDRESS BALANCE POP, STOP (deploys nothing)
    const init = bytes('6007 54 50 30 31 50 00');
    const r = await vm.backend.createAccessList({ from: EWOQ, data: init }, 'latest');
    const created = createContractAddress(new Address(EWOQ), 0n).bytes;
    assert.equal(r.accessList, [{ address: created, storageKeys: [slot(7n)] }]);
    // 21,000 + 32,000 + 7 x 16 + 4 (data) + 2 (one initcode word) + 2,400 + 1,900 = 57,418; PUSH1 3, SLOAD 100, POP 2, ADDRESS 2, BALANCE 100, POP 2.
    assert.is(r.gasUsed, 57_418n + 209n);
  } finally {
    await vm.shutdown();
  }
});

test('eth_createAccessList: a revert is an answer with the list and error "execution reverted"', async () => {
  const vm = await startVM();
  try {
    const code: StateOverrides = new Map([[hex(C), { code: bytes('6003 54 50 5f5ffd') }]]);
    const r = await vm.backend.createAccessList({ from: EWOQ, to: C }, 'latest', code);
    assert.equal(r, { accessList: [{ address: C, storageKeys: [slot(3n)] }], gasUsed: 25_300n + 109n, error: 'execution reverted' });
    // A value the sender cannot pay: geth's text, as an error.
    try {
      await vm.backend.createAccessList({ from: X, to: C, value: 1n }, 'latest', code);
      assert.unreachable('no funds');
    } catch (e) {
      assert.instance(e, EvmRpcError);
      assert.is((e as EvmRpcError).message, `insufficient funds for gas * price + value: address ${hex(X)} have 0 want 1`);
    }
  } finally {
    await vm.shutdown();
  }
});

test.run();
