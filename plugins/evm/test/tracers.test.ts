import { MemoryStore } from '@cornice/sdk';
import { createBlock, type Block } from '@ethereumjs/block';
import type { TypedTransaction } from '@ethereumjs/tx';
import { Account, Address, createContractAddress, createContractAddress2, setLengthLeft } from '@ethereumjs/util';
import { runTx, type VM } from '@ethereumjs/vm';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { makeVM, stateManagerAt, type ExecutionHooks } from '../src/chain/executor.js';
import { StateDB } from '../src/chain/state/state-db.js';
import { fourByteTracer } from '../src/chain/tracing/four-byte-tracer.js';
import { noopTracer } from '../src/chain/tracing/noop-tracer.js';
import { prestateTracer } from '../src/chain/tracing/prestate-tracer.js';
import { TraceLimitError, TracerConfigError, type TracerFactory } from '../src/chain/tracing/tracer.js';
import { common, EWOQ, GWEI, hex, signedTx } from './helpers.js';

const bytes = (h: string) => Uint8Array.from(Buffer.from(h.replace(/\s/g, ''), 'hex'));
const at = (n: number) => new Address(new Uint8Array(20).fill(n));
const h20 = (a: Address) => Buffer.from(a.bytes).toString('hex');
const slot = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
const q = (n: bigint) => `0x${n.toString(16)}`;

const SENDER = new Address(EWOQ);
const SENDER_BALANCE = 10n ** 21n;
const COINBASE = at(0xc0);
const BASE_FEE = 25n * GWEI;
const TIP = 1n * GWEI;
const PRICE = BASE_FEE + TIP;

const A = at(0xa1);
const B = at(0xb2);
const C = at(0xcc);
const D = at(0xd4);
const E = at(0xe5);
const R = at(0xf7);
const WATCHED = at(0x77);
const BENEFICIARY = at(0x99);
const IDENTITY = new Address(bytes('0000000000000000000000000000000000000004'));

/**
 * A: reads slot 0 (3), sets slot 1 to 5, STATICCALLs the identity precompile with 4 bytes, CALLs C
 * with 1 wei it does not have (never started) and 4 bytes of input, then CALLs B with 36 bytes.
 */
const A_CODE = bytes(`
  5f 54 50
  6005 6001 55
  63 12345678 60e0 1b 5f 52
  5f 5f 6004 5f 73${h20(IDENTITY)} 5a fa 50
  5f 5f 6004 5f 6001 73${h20(C)} 5a f1 50
  5f 5f 6024 5f 5f 73${h20(B)} 5a f1 50
  00`);
/** B: sets slot 0 to 7 (from 2), reads WATCHED's balance, stops. */
const B_CODE = bytes(`6007 5f 55 73${h20(WATCHED)} 31 50 00`);
/** D: SELFDESTRUCT to BENEFICIARY (a contract made before the tx: only its balance moves, EIP-6780). */
const D_CODE = bytes(`73${h20(BENEFICIARY)} ff`);
/** E: SLOAD of slot 1 (the tx gives it too little gas for it). */
const E_CODE = bytes('6001 54 00');
/** R: sets slot 0 to 9 (from 4), then reverts. */
const R_CODE = bytes('6009 5f 55 5f 5f fd');

async function chainVM(): Promise<VM> {
  const sm = await stateManagerAt(common, new StateDB(new MemoryStore()), undefined, 100);
  await sm.putAccount(SENDER, new Account(0n, SENDER_BALANCE));
  const contracts: Array<[Address, Uint8Array, bigint, Array<[number, number]>]> = [
    [A, A_CODE, 0n, [[0, 3]]],
    [B, B_CODE, 0n, [[0, 2]]],
    [D, D_CODE, 100n, []],
    [E, E_CODE, 0n, []],
    [R, R_CODE, 0n, [[0, 4]]],
  ];
  for (const [address, code, balance, slots] of contracts) {
    await sm.putAccount(address, new Account(1n, balance));
    await sm.putCode(address, code);
    for (const [k, v] of slots) await sm.putStorage(address, setLengthLeft(Uint8Array.of(k), 32), Uint8Array.of(v));
  }
  await sm.putAccount(WATCHED, new Account(0n, 55n));
  return makeVM(common, sm, {} as ExecutionHooks, async () => undefined);
}

const block: Block = createBlock({ header: { number: 1n, timestamp: 1n, coinbase: COINBASE.bytes, gasLimit: 30_000_000n, baseFeePerGas: BASE_FEE } }, { common });

/** Runs `tx` under the tracer as the replay does (start, runTx, finish). */
async function trace(vm: VM, tx: TypedTransaction, factory: TracerFactory, config: Record<string, unknown> = {}, grow: (n: number) => void = () => {}) {
  const tracer = factory(config);
  await tracer.start({ vm, tx, block, txIndex: 0, grow });
  const result = await runTx(vm, { tx, block, skipHardForkValidation: true, skipBlockGasLimitValidation: true });
  return { json: JSON.parse(JSON.stringify(await tracer.finish(result))), result };
}

const tx = (o: { to?: Address; value?: bigint; data?: Uint8Array; gas?: bigint; nonce?: bigint }) =>
  signedTx({ nonce: o.nonce ?? 0n, ...(o.to ? { to: o.to.bytes } : {}), value: o.value ?? 0n, data: o.data ?? new Uint8Array(), gas: o.gas ?? 300_000n, maxFee: PRICE, tip: TIP });

const addr = (a: Address) => a.toString();

test('prestateTracer: a value transfer to a new account (sender, recipient and coinbase as before it)', async () => {
  const vm = await chainVM();
  const to = at(0x42);
  const { json } = await trace(vm, tx({ to, value: 1000n, gas: 21_000n }), prestateTracer);
  assert.equal(json, {
    [addr(SENDER)]: { balance: q(SENDER_BALANCE) },
    [addr(to)]: { balance: '0x0' },
    [addr(COINBASE)]: { balance: '0x0' },
  });
  assert.equal(Object.keys(json), [addr(to), addr(SENDER), addr(COINBASE)], 'addresses sorted as geth sorts them');
});

test('prestateTracer diffMode: a value transfer (post holds only what changed; pre keeps the zero balance of a changed account)', async () => {
  const vm = await chainVM();
  const to = at(0x42);
  const { json } = await trace(vm, tx({ to, value: 1000n, gas: 21_000n }), prestateTracer, { diffMode: true });
  assert.equal(Object.keys(json), ['post', 'pre']);
  assert.equal(json, {
    post: {
      [addr(to)]: { balance: '0x3e8' },
      [addr(SENDER)]: { balance: q(SENDER_BALANCE - 1000n - 21_000n * PRICE), nonce: 1 },
      [addr(COINBASE)]: { balance: q(21_000n * TIP) },
    },
    pre: {
      [addr(to)]: { balance: '0x0' },
      [addr(SENDER)]: { balance: q(SENDER_BALANCE) },
      [addr(COINBASE)]: { balance: '0x0' },
    },
  });
});

test('prestateTracer: a call chain with SLOAD/SSTORE, BALANCE, a precompile and a call never started', async () => {
  const vm = await chainVM();
  const data = bytes('deadbeef' + '00'.repeat(32));
  const { json, result } = await trace(vm, tx({ to: A, data }), prestateTracer);
  assert.is(result.execResult.exceptionError, undefined);
  assert.equal(json, {
    [addr(SENDER)]: { balance: q(SENDER_BALANCE) },
    [addr(A)]: { balance: '0x0', code: hex(A_CODE), nonce: 1, storage: { [slot(0)]: slot(3), [slot(1)]: slot(0) } },
    [addr(B)]: { balance: '0x0', code: hex(B_CODE), nonce: 1, storage: { [slot(0)]: slot(2) } },
    [addr(C)]: { balance: '0x0' },
    [addr(IDENTITY)]: { balance: '0x0' },
    [addr(WATCHED)]: { balance: '0x37' },
    [addr(COINBASE)]: { balance: '0x0' },
  });
  const { json: diff } = await trace(await chainVM(), tx({ to: A, data }), prestateTracer, { diffMode: true });
  const gasUsed = result.totalGasSpent;
  assert.equal(diff, {
    post: {
      [addr(SENDER)]: { balance: q(SENDER_BALANCE - gasUsed * PRICE), nonce: 1 },
      [addr(A)]: { storage: { [slot(1)]: slot(5) } },
      [addr(B)]: { storage: { [slot(0)]: slot(7) } },
      [addr(COINBASE)]: { balance: q(gasUsed * TIP) },
    },
    pre: {
      [addr(SENDER)]: { balance: q(SENDER_BALANCE) },
      [addr(A)]: { balance: '0x0', code: hex(A_CODE), nonce: 1 },
      [addr(B)]: { balance: '0x0', code: hex(B_CODE), nonce: 1, storage: { [slot(0)]: slot(2) } },
      [addr(COINBASE)]: { balance: '0x0' },
    },
  });
});

test('prestateTracer disableCode / disableStorage', async () => {
  const data = bytes('deadbeef');
  const { json } = await trace(await chainVM(), tx({ to: A, data }), prestateTracer, { disableCode: true, disableStorage: true });
  assert.equal(json[addr(A)], { balance: '0x0', nonce: 1 });
  assert.equal(json[addr(B)], { balance: '0x0', nonce: 1 });
  const { json: diff } = await trace(await chainVM(), tx({ to: A, data }), prestateTracer, { diffMode: true, disableStorage: true });
  assert.equal(Object.keys(diff.post), [addr(SENDER), addr(COINBASE)], 'storage changes alone no longer count');
});

test('prestateTracer: a contract creation (the created account left out of pre; post has its code, nonce and slots)', async () => {
  // init: slot 0 = 1, then returns the one-byte runtime STOP
  const init = bytes('6001 5f 55 5f 5f 53 6001 5f f3');
  const created = createContractAddress(SENDER, 0n);
  const { json } = await trace(await chainVM(), tx({ data: init }), prestateTracer);
  assert.equal(Object.keys(json).sort(), [addr(SENDER), addr(COINBASE)].sort());
  const { json: diff, result } = await trace(await chainVM(), tx({ data: init }), prestateTracer, { diffMode: true });
  assert.equal(diff.post[addr(created)], { code: '0x00', nonce: 1, storage: { [slot(0)]: slot(1) } });
  assert.is(diff.pre[addr(created)], undefined);
  assert.equal(diff.post[addr(SENDER)], { balance: q(SENDER_BALANCE - result.totalGasSpent * PRICE), nonce: 1 });
});

test('prestateTracer diffMode: SELFDESTRUCT of an older contract keeps it in post; of one made in the tx drops it from both', async () => {
  const { json } = await trace(await chainVM(), tx({ to: D }), prestateTracer, { diffMode: true });
  assert.equal(json.pre[addr(D)], { balance: '0x64', code: hex(D_CODE), nonce: 1 });
  assert.equal(json.post[addr(D)], { balance: '0x0' });
  assert.equal(json.pre[addr(BENEFICIARY)], { balance: '0x0' });
  assert.equal(json.post[addr(BENEFICIARY)], { balance: '0x64' });
  // init code that self-destructs at once, sending its 5 wei to BENEFICIARY
  const created = createContractAddress(SENDER, 0n);
  const { json: made } = await trace(await chainVM(), tx({ data: D_CODE, value: 5n }), prestateTracer, { diffMode: true });
  assert.is(made.pre[addr(created)], undefined);
  assert.is(made.post[addr(created)], undefined);
  assert.equal(made.post[addr(BENEFICIARY)], { balance: '0x5' });
});

test('prestateTracer: a reverted write (pre has the slot; diffMode sees no change to it)', async () => {
  const { json, result } = await trace(await chainVM(), tx({ to: R }), prestateTracer);
  assert.is(result.execResult.exceptionError?.error, 'revert');
  assert.equal(json[addr(R)], { balance: '0x0', code: hex(R_CODE), nonce: 1, storage: { [slot(0)]: slot(4) } });
  const { json: diff } = await trace(await chainVM(), tx({ to: R }), prestateTracer, { diffMode: true });
  assert.equal(Object.keys(diff.post).sort(), [addr(SENDER), addr(COINBASE)].sort());
});

test('prestateTracer: out of gas at the SLOAD (the slot is not touched, as geth reports no opcode that failed on its gas)', async () => {
  const { json, result } = await trace(await chainVM(), tx({ to: E, gas: 21_000n + 3n + 100n }), prestateTracer);
  assert.is(result.execResult.exceptionError?.error, 'out of gas');
  assert.equal(json[addr(E)], { balance: '0x0', code: hex(E_CODE), nonce: 1 });
});

test('prestateTracer: CREATE2 is looked up at the address it makes', async () => {
  // F: CREATE2 (salt 7) of the 1-byte init code STOP held in memory at 31
  const F = at(0xf1);
  const vm = await chainVM();
  await vm.stateManager.putAccount(F, new Account(1n, 0n));
  await vm.stateManager.putCode(F, bytes('5f 5f 53 6007 6001 601f 5f f5 50 00'));
  const { json } = await trace(vm, tx({ to: F }), prestateTracer, { diffMode: true });
  const made = createContractAddress2(F, setLengthLeft(Uint8Array.of(7), 32), Uint8Array.of(0));
  assert.equal(json.post[addr(made)], { nonce: 1 });
  assert.equal(json.post[addr(F)], { nonce: 2 });
  assert.is(json.pre[addr(made)], undefined);
});

test('prestateTracer: the output bound ends the trace', async () => {
  const tracer = prestateTracer({});
  const vm = await chainVM();
  let added = 0;
  const grow = (n: number) => {
    added += n;
    if (added > 600) throw new TraceLimitError('trace output past its bound');
  };
  const t = tx({ to: A });
  await tracer.start({ vm, tx: t, block, txIndex: 0, grow });
  assert.ok(added > 0 && added <= 600, 'the accounts read before the run fit');
  const failed = await runTx(vm, { tx: t, block, skipHardForkValidation: true }).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(failed instanceof TraceLimitError, `the run ends with the limit error: ${String(failed)}`);
});

test('4byteTracer: the top call and inner calls with 4+ bytes, a call never started too, no precompile', async () => {
  const data = bytes('deadbeef' + '00'.repeat(32));
  const { json } = await trace(await chainVM(), tx({ to: A, data }), fourByteTracer);
  assert.equal(json, { '0x12345678-0': 1, '0x12345678-32': 1, '0xdeadbeef-32': 1 });
  assert.equal(Object.keys(json), ['0x12345678-0', '0x12345678-32', '0xdeadbeef-32']);
  const short = await trace(await chainVM(), tx({ to: B, data: bytes('aabbcc') }), fourByteTracer);
  assert.equal(short.json, {});
  const create = await trace(await chainVM(), tx({ data: bytes('6001 5f 55 5f 5f 53 6001 5f f3') }), fourByteTracer);
  assert.equal(create.json, {});
  const precompile = await trace(await chainVM(), tx({ to: IDENTITY, data: bytes('aabbccdd') }), fourByteTracer);
  assert.equal(precompile.json, {});
});

test('noopTracer answers {}', async () => {
  const { json } = await trace(await chainVM(), tx({ to: A }), noopTracer, { anything: 1 });
  assert.equal(json, {});
});

test('tracerConfig: a wrong type names the field in geth text; unknown keys and null ignored; any letter case', async () => {
  assert.throws(() => prestateTracer({ diffMode: 'yes' }), (e: Error) => e instanceof TracerConfigError && e.message === 'json: cannot unmarshal string into Go struct field prestateTracerConfig.diffMode of type bool');
  assert.throws(() => prestateTracer({ disableCode: 1 }), (e: Error) => e instanceof TracerConfigError && e.message === 'json: cannot unmarshal number into Go struct field prestateTracerConfig.disableCode of type bool');
  assert.throws(() => prestateTracer({ disableStorage: [] }), /cannot unmarshal array into Go struct field prestateTracerConfig.disableStorage of type bool/);
  assert.throws(() => prestateTracer({ DIFFMODE: {} }), /cannot unmarshal object into Go struct field prestateTracerConfig.diffMode/);
  assert.throws(() => prestateTracer('x' as never), /cannot unmarshal string into Go value of type native.prestateTracerConfig/);
  const { json } = await trace(await chainVM(), tx({ to: at(0x42), value: 1n, gas: 21_000n }), prestateTracer, { DiffMode: true, unknown: 'x', disableCode: null });
  assert.equal(Object.keys(json), ['post', 'pre']);
});

test.run();
