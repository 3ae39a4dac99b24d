/**
 * eth_call's block overrides, eth_createAccessList and eth_simulateV1 on a real chain.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EvmRpcError, type StateOverrides } from '../src/index.js';
import { CHAIN_ID, EWOQ, RUNTIME, STORED_TOPIC, hex, startVM, word } from './helpers.js';
import { MemoryStore } from '@cornice/sdk';
import { OverlayDB } from '../src/chain/state/overlay-db.js';
import { StateDB } from '../src/chain/state/state-db.js';
import { TRANSFER_TOPIC } from '../src/chain/transfer-logs.js';
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

const D = new Uint8Array(20).fill(0xdd);
const withRuntime: StateOverrides = new Map([[hex(D), { code: RUNTIME }]]);

async function expectCode(p: Promise<unknown>, code: number, message: string | RegExp): Promise<void> {
  try {
    await p;
    assert.unreachable(`expected ${code}`);
  } catch (e) {
    assert.instance(e, EvmRpcError);
    assert.is((e as EvmRpcError).rpcCode, code, (e as Error).message);
    if (typeof message === 'string') assert.is((e as Error).message, message);
    else assert.match((e as Error).message, message);
  }
}

test('eth_simulateV1: blocks chain on each other (state carries over, numbers +1, times +12 s), logs and hashes are the block\'s, base fee 0', async () => {
  const vm = await startVM();
  try {
    const be = vm.backend;
    const base = (await be.block('latest'))!.header;
    const blocks = await be.simulate(
      {
        blocks: [
          { stateOverrides: withRuntime, calls: [{ from: EWOQ, to: D, data: word(42n) }] },
          { calls: [{ from: EWOQ, to: D }, { from: EWOQ, to: D, data: Uint8Array.from([0xff, ...new Uint8Array(31)]) }] },
        ],
        traceTransfers: false,
        validation: false,
      },
      'latest',
    );
    assert.is(blocks.length, 2);
    const [b1, b2] = blocks as [(typeof blocks)[0], (typeof blocks)[0]];
    assert.is(b1.block.header.number, base.number + 1n);
    assert.is(b2.block.header.number, base.number + 2n);
    assert.is(b1.block.header.timestamp, base.timestamp + 12n);
    assert.is(b2.block.header.timestamp, base.timestamp + 24n);
    assert.equal(b1.block.header.parentHash, base.hash);
    assert.equal(b2.block.header.parentHash, b1.block.header.hash);
    assert.is(b1.block.header.baseFeePerGas, 0n);
    assert.is(b1.block.header.gasLimit, base.gasLimit);
    assert.equal(b1.block.header.miner, base.miner);
    assert.not.equal(b1.block.header.stateRoot, base.stateRoot);
    // Block 1: the store, with its log.
    const set = b1.calls[0]!;
    assert.is(set.status, 1);
    assert.is(set.error, undefined);
    assert.is(set.logs.length, 1);
    const log = set.logs[0]!;
    assert.equal(log.address, D);
    assert.is(hex(log.topics[0]!), STORED_TOPIC);
    assert.equal(log.data, word(42n));
    assert.equal(log.blockHash, b1.block.header.hash);
    assert.is(log.blockNumber, b1.block.header.number);
    assert.equal(log.transactionHash, b1.block.transactions[0]!.hash);
    assert.is(log.transactionIndex, 0);
    assert.is(log.logIndex, 0);
    assert.is(b1.block.header.gasUsed, set.gasUsed);
    assert.equal(b1.block.transactions[0]!.from, EWOQ);
    assert.is(b1.block.transactions[0]!.nonce, 0n);
    // An unsigned call as a tx object: EIP-1559, the chain's ID, a zero signature, gasPrice the fee it paid.
    const t0 = b1.block.transactions[0]!;
    assert.equal([t0.type, t0.chainId, t0.v, t0.r, t0.s, t0.yParity, t0.accessList], [2, CHAIN_ID, 0n, 0n, 0n, 0, []]);
    assert.is(t0.gasPrice, (t0.maxFeePerGas! < b1.block.header.baseFeePerGas + t0.maxPriorityFeePerGas! ? t0.maxFeePerGas! : b1.block.header.baseFeePerGas + t0.maxPriorityFeePerGas!));
    // Block 2: the value stored in block 1, then a revert with its data; the sender's nonce went on.
    assert.equal(b2.calls[0]!.returnData, word(42n));
    assert.is(b2.block.transactions[0]!.nonce, 1n);
    assert.is(b2.block.transactions[1]!.nonce, 2n);
    const bad = b2.calls[1]!;
    assert.is(bad.status, 0);
    assert.is(bad.error!.code, 3);
    assert.is(bad.error!.message, 'execution reverted');
    assert.equal(bad.error!.data, bad.returnData);
    assert.is(bad.logs.length, 0);
    assert.is(b2.block.header.gasUsed, b2.calls[0]!.gasUsed + bad.gasUsed);
    // Nothing stayed: the chain did not move and the contract is not there.
    assert.is((await be.block('latest'))!.header.number, base.number);
    assert.is((await be.code(D, 'latest')).length, 0);
  } finally {
    await vm.shutdown();
  }
});

test('eth_simulateV1: block overrides, gaps filled with empty blocks, and the order errors geth answers', async () => {
  const vm = await startVM();
  try {
    const be = vm.backend;
    const sim = (blocks: Parameters<typeof be.simulate>[0]['blocks'], validation = false) => be.simulate({ blocks, traceTransfers: false, validation }, 'latest');
    const coinbase = new Uint8Array(20).fill(0xcb);
    const out = await sim([{ blockOverrides: { number: 3n, time: 1_000n, feeRecipient: coinbase, gasLimit: 1_000_000n, baseFeePerGas: 5n }, calls: [] }, { calls: [] }]);
    assert.equal(out.map((b) => b.block.header.number), [1n, 2n, 3n, 4n]);
    assert.equal(out.map((b) => b.block.header.timestamp), [12n, 24n, 1_000n, 1_012n]);
    assert.equal(out[2]!.block.header.miner, coinbase);
    assert.is(out[2]!.block.header.gasLimit, 1_000_000n);
    assert.is(out[2]!.block.header.baseFeePerGas, 5n);
    // The next block keeps the coinbase and gas limit (geth's), not the base fee.
    assert.equal(out[3]!.block.header.miner, coinbase);
    assert.is(out[3]!.block.header.gasLimit, 1_000_000n);
    assert.is(out[3]!.block.header.baseFeePerGas, 0n);
    await expectCode(sim([{ blockOverrides: { number: 2n } }, { blockOverrides: { number: 2n } }].map((b) => ({ ...b, calls: [] }))), -38020, 'block numbers must be in order: 2 <= 2');
    await expectCode(sim([{ blockOverrides: { time: 0n }, calls: [] }]), -38021, 'block timestamps must be in order: 0 <= 0');
    await expectCode(sim([{ blockOverrides: { number: 257n }, calls: [] }]), -38026, 'too many blocks');
    assert.is((await sim([{ blockOverrides: { number: 256n }, calls: [] }])).length, 256);
    await expectCode(sim([{ blockOverrides: { time: 2n ** 64n - 1n }, calls: [] }, { calls: [] }]), -32602, `block timestamp ${2n ** 64n + 11n} does not fit 64 bits`);
    // A call past the block's gas limit.
    await expectCode(sim([{ blockOverrides: { gasLimit: 50_000n }, calls: [{ to: D, gas: 60_000n }] }]), -38015, 'block gas limit reached: 0 >= 50000');
  } finally {
    await vm.shutdown();
  }
});

test('eth_simulateV1 with validation: nonce, funds and base fee checked with geth\'s codes; without it only funds', async () => {
  const vm = await startVM();
  try {
    const be = vm.backend;
    const sim = (calls: Parameters<typeof be.simulate>[0]['blocks'][0]['calls'], validation: boolean) => be.simulate({ blocks: [{ calls }], traceTransfers: false, validation }, 'latest');
    await expectCode(sim([{ from: EWOQ, to: D, nonce: 5n, maxFeePerGas: 100n * 10n ** 9n }], true), -38011, `nonce too high: address ${hex(EWOQ)}, tx: 5 state: 0`);
    await expectCode(sim([{ from: EWOQ, to: D, maxFeePerGas: 1n }], true), -32602, /^max fee per gas less than block base fee: address 0x8db97c7cece249c2b98bdc0226cc4c2a57bf52fc, maxFeePerGas: 1, baseFee: \d+$/);
    await expectCode(sim([{ from: X, to: D, value: 1n }], false), -38014, `insufficient funds for gas * price + value: address ${hex(X)} have 0 want 1`);
    await expectCode(sim([{ from: EWOQ, to: D, gas: 20_000n }], false), -38013, 'intrinsic gas too low: have 20000, want 21000');
    const ok = await sim([{ from: EWOQ, to: D, nonce: 5n }], false);
    assert.is(ok[0]!.calls[0]!.status, 1);
    const valid = await sim([{ from: EWOQ, to: D, maxFeePerGas: 100n * 10n ** 9n }], true);
    assert.ok(valid[0]!.block.header.baseFeePerGas > 0n, 'the chain\'s base fee');
  } finally {
    await vm.shutdown();
  }
});

test('eth_simulateV1 traceTransfers: ETH transfers as Transfer logs of 0xeeee…eeee in order, those of a failed inner call dropped', async () => {
  const vm = await startVM();
  try {
    // Forwards 3 wei to X (CALL), then 4 wei to the reverting C (its transfer is dropped), then logs LOG0 of nothing.
    // CALL(gas, to, value, 0, 0, 0, 0): push retSize, retOffset, argsSize, argsOffset, value, to, gas.
    const fwd = bytes(`5f5f5f5f 6003 73${hex(X).slice(2)} 5a f1 50  5f5f5f5f 6004 73${hex(C).slice(2)} 5a f1 50  5f5f a0 00`);
    const code: StateOverrides = new Map([
      [hex(A), { code: fwd }],
      [hex(C), { code: bytes('5f5ffd') }],
    ]);
    const [b] = await vm.backend.simulate({ blocks: [{ stateOverrides: code, calls: [{ from: EWOQ, to: A, value: 10n }] }], traceTransfers: true, validation: false }, 'latest');
    const logs = b!.calls[0]!.logs;
    const pad = (a: Uint8Array) => hex(new Uint8Array([...new Uint8Array(12), ...a]));
    assert.equal(
      logs.map((l) => [hex(l.address), l.topics.map(hex), hex(l.data)]),
      [
        [`0x${'ee'.repeat(20)}`, [hex(TRANSFER_TOPIC), pad(EWOQ), pad(A)], hex(word(10n))],
        [`0x${'ee'.repeat(20)}`, [hex(TRANSFER_TOPIC), pad(A), pad(X)], hex(word(3n))],
        [hex(A), [], '0x'],
      ],
    );
    assert.equal(logs.map((l) => l.logIndex), [0, 1, 2]);
  } finally {
    await vm.shutdown();
  }
});

test('eth_simulateV1: BLOCKHASH of an earlier simulated block is its hash; of the base block, the chain\'s', async () => {
  const vm = await startVM();
  try {
    // BLOCKHASH(CALLDATALOAD(0)) returned.
    const code: StateOverrides = new Map([[hex(C), { code: bytes('5f35 40 5f52 6020 5ff3') }]]);
    const base = (await vm.backend.block('latest'))!.header;
    const out = await vm.backend.simulate(
      { blocks: [{ stateOverrides: code, calls: [] }, { calls: [{ to: C, data: word(1n) }, { to: C, data: word(0n) }] }], traceTransfers: false, validation: false },
      'latest',
    );
    assert.equal(out[1]!.calls[0]!.returnData, out[0]!.block.header.hash);
    assert.equal(out[1]!.calls[1]!.returnData, base.hash);
  } finally {
    await vm.shutdown();
  }
});

test('eth_simulateV1 and eth_createAccessList stop at rpcEvmTimeoutMs (geth\'s text) and with the request\'s signal', async () => {
  const vm = await startVM({ opts: { rpcEvmTimeoutMs: 50 } });
  try {
    const be = vm.backend;
    const loop: StateOverrides = new Map([[hex(C), { code: bytes('5b5f56') }]]);
    const blocks = [{ stateOverrides: loop, calls: [{ to: C }] }];
    await expectCode(be.simulate({ blocks, traceTransfers: false, validation: false }, 'latest'), -32000, 'execution aborted (timeout = 50ms)');
    await expectCode(be.createAccessList({ to: C }, 'latest', loop), -32000, 'execution aborted (timeout = 50ms)');
    const gone = AbortSignal.abort(new EvmRpcError(-32002, 'gone'));
    await expectCode(be.simulate({ blocks, traceTransfers: false, validation: false }, 'latest', gone), -32002, 'gone');
    await expectCode(be.createAccessList({ to: C }, 'latest', loop, gone), -32002, 'gone');
  } finally {
    await vm.shutdown();
  }
});

test('eth_simulateV1 halts at its next look once its client leaves, not at the deadline', async () => {
  const vm = await startVM(); // rpcEvmTimeoutMs: 5 s
  try {
    const loop: StateOverrides = new Map([[hex(C), { code: bytes('5b5f56') }]]);
    const ac = new AbortController();
    const t0 = performance.now();
    const run = vm.backend.simulate({ blocks: [{ stateOverrides: loop, calls: [{ to: C }] }], traceTransfers: true, validation: false }, 'latest', ac.signal);
    setTimeout(() => ac.abort(new EvmRpcError(-32002, 'request cancelled: the client went away')), 50);
    await expectCode(run, -32002, 'request cancelled: the client went away');
    const ms = performance.now() - t0;
    assert.ok(ms < 1_000, `stopped ${ms.toFixed(0)} ms after it began (the deadline is 5 s)`);
  } finally {
    await vm.shutdown();
  }
});

test('eth_simulateV1 writes nothing to the chain\'s state: its trie nodes stay in the overlay', async () => {
  const db = new StateDB(new MemoryStore(), 0);
  const overlay = new OverlayDB(db);
  await overlay.put('ab', Uint8Array.of(1));
  assert.equal(await overlay.get('ab'), Uint8Array.of(1));
  assert.is(db.pendingCount, 0);
  assert.is(await db.get('ab'), undefined);
  await overlay.del('ab');
  assert.is(await overlay.get('ab'), undefined);
});

test.run();
