import { MemoryStore } from '@cornice/sdk';
import { EVMError, getActivePrecompiles, NobleBN254, type ExecResult, type PrecompileInput } from '@ethereumjs/evm';
import { Account, Address } from '@ethereumjs/util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EvmRpcError } from '../src/evm-backend.js';
import { CallGuard, DEFAULT_CALL_TIMEOUT_MS, SLICE_MS, SliceQueue, type CallGuardClock } from '../src/chain/call-guard.js';
import { makeVM, stateManagerAt, type ExecutionHooks } from '../src/chain/executor.js';
import { PAIRING_ADDRESS, withGuardedPrecompiles } from '../src/chain/precompiles/guarded.js';
import { PrecompileWorker, stopPrecompileWorker } from '../src/chain/precompiles/offload.js';
import { IN_PROCESS_PAIRS } from '../src/chain/precompiles/pairing.js';
import { StateDB } from '../src/chain/state/state-db.js';
import { buildAndAccept, common, EWOQ, hex, signedTx, startVM } from './helpers.js';

/** JUMPDEST PUSH1 0 JUMP: a loop that runs until its gas is gone. */
const LOOP = Uint8Array.from([0x5b, 0x60, 0x00, 0x56]);
const LOOP_AT = new Address(new Uint8Array(20).fill(0x42));

/** A clock whose time moves `step` ms each time it is read; turns are real (setImmediate), and counted. */
function steppingClock(step: number): CallGuardClock & { turns: number } {
  let t = 0;
  const clock = {
    turns: 0,
    now: () => (t += step),
    yieldTurn: () => {
      clock.turns += 1;
      return new Promise<void>((resolve) => setImmediate(resolve));
    },
  };
  return clock;
}

async function loopVM(guard?: CallGuard) {
  const sm = await stateManagerAt(common, new StateDB(new MemoryStore()), undefined, 100);
  await sm.putAccount(LOOP_AT, new Account());
  await sm.putCode(LOOP_AT, LOOP);
  const vm = await makeVM(common, sm, {} as ExecutionHooks, async () => undefined, guard);
  return vm;
}

const runLoop = (vm: Awaited<ReturnType<typeof loopVM>>, gasLimit = 30_000_000n) =>
  vm.evm.runCall({ to: LOOP_AT, caller: new Address(new Uint8Array(20)), gasLimit, data: new Uint8Array() });

test('a guarded call past its deadline halts with geth\'s text; the next call runs in full', async () => {
  const clock = steppingClock(1);
  const guard = new CallGuard(clock);
  const vm = await loopVM(guard);
  const r = await guard.run(200, () => runLoop(vm));
  assert.is(r.execResult.exceptionError?.error, 'execution aborted (timeout = 200ms)');
  assert.ok(guard.expired);
  assert.is(guard.message, 'execution aborted (timeout = 200ms)');
  // The next call starts a new bound: with none, the loop ends when its gas does.
  const full = await guard.run(0, () => runLoop(vm, 100_000n));
  assert.not.ok(guard.expired);
  assert.is(full.execResult.exceptionError?.error, EVMError.errorMessages.OUT_OF_GAS);
  const byDefault = new CallGuard();
  await byDefault.run(DEFAULT_CALL_TIMEOUT_MS, async () => undefined);
  assert.is(byDefault.message, 'execution aborted (timeout = 5s)', "geth's default --rpc.evmtimeout, in geth's words");
});

test('a guarded call gives the event loop a turn every slice; an unguarded VM runs the same code to the same end', async () => {
  const clock = steppingClock(SLICE_MS); // every look at the clock is a slice later
  const guard = new CallGuard(clock);
  const vm = await loopVM(guard);
  let ranDuringCall = false;
  setImmediate(() => (ranDuringCall = true));
  const r = await guard.run(0, () => runLoop(vm, 200_000n));
  assert.ok(ranDuringCall, 'a callback queued before the call ran before it ended');
  assert.ok(clock.turns > 0);
  const plain = await runLoop(await loopVM(), 200_000n);
  assert.is(r.execResult.exceptionError?.error, plain.execResult.exceptionError?.error);
  assert.is(r.execResult.executionGasUsed, plain.execResult.executionGasUsed);
});

/** `pairs` CALLER POP pairs: code with neither a jump nor a call. */
const straight = (pairs: number): number[] => Array.from({ length: pairs }, () => [0x33, 0x50]).flat();
/** Straight code, CALL to itself (all gas, no value, no data), straight code again, STOP: frames ~430 deep (as the gas lasts), none with a jump. */
const SELF_CALLER = Uint8Array.from([...straight(100), 0x60, 0, 0x60, 0, 0x60, 0, 0x60, 0, 0x60, 0, 0x30, 0x5a, 0xf1, 0x50, ...straight(100), 0x00]);

async function codeVM(code: Uint8Array, guard?: CallGuard) {
  const sm = await stateManagerAt(common, new StateDB(new MemoryStore()), undefined, 100);
  await sm.putAccount(LOOP_AT, new Account());
  await sm.putCode(LOOP_AT, code);
  return makeVM(common, sm, {} as ExecutionHooks, async () => undefined, guard);
}

test('code without a jump that calls itself hundreds deep: a look at each call and return gives turns and the deadline', async () => {
  const clock = steppingClock(SLICE_MS);
  const guard = new CallGuard(clock);
  const vm = await codeVM(SELF_CALLER, guard);
  let ranDuringCall = false;
  setImmediate(() => (ranDuringCall = true));
  const r = await guard.run(0, () => runLoop(vm));
  assert.ok(ranDuringCall, 'a callback queued before the call ran before it ended');
  assert.ok(clock.turns > 400, `a turn at each frame's call and return (${clock.turns})`);
  const plain = await runLoop(await codeVM(SELF_CALLER));
  assert.is(r.execResult.exceptionError, plain.execResult.exceptionError, 'the same end as unguarded');
  assert.is(r.execResult.executionGasUsed, plain.execResult.executionGasUsed);
  // With a deadline: the frames halt as the calls return.
  const bounded = new CallGuard(steppingClock(1));
  const vm2 = await codeVM(SELF_CALLER, bounded);
  const halted = await bounded.run(300, () => runLoop(vm2));
  assert.ok(bounded.expired);
  assert.is(halted.execResult.exceptionError?.error, 'execution aborted (timeout = 300ms)');
});

test('eth_call and eth_estimateGas stop at rpcEvmTimeoutMs with a -32000 error, and the VM answers after', async () => {
  const vm = await startVM({ opts: { rpcEvmTimeoutMs: 50 } });
  try {
    const be = vm.backend;
    const overrides = new Map([[hex(LOOP_AT.bytes), { code: LOOP }]]);
    for (const run of [() => be.call({ to: LOOP_AT.bytes }, 'latest', overrides), () => be.estimateGas({ to: LOOP_AT.bytes }, 'latest', overrides)]) {
      try {
        await run();
        assert.unreachable('a 50M-gas loop cannot end within 50 ms');
      } catch (e) {
        assert.instance(e, EvmRpcError);
        assert.is((e as EvmRpcError).rpcCode, -32000);
        assert.is((e as EvmRpcError).message, 'execution aborted (timeout = 50ms)');
      }
    }
    const after = await be.call({ to: LOOP_AT.bytes }, 'latest');
    assert.is(after.returnData.length, 0, 'no code stayed at the address: the override was reverted');
  } finally {
    await vm.shutdown();
  }
});

// EIP-197: e(P, Q) · e(−P, Q) = 1, with P and Q the generators.
const h32 = (n: bigint) => n.toString(16).padStart(64, '0');
const FIELD = 21888242871839275222246405745257275088696311157297823662689037894645226208583n;
const G2 = '198e9393920d483a7260bfb731fb5d25f1aa493335a9e71297e485b7aef312c2' + '1800deef121f1e76426a00665e5c4479674322d4f75edadd46debd5cd992f6ed' + '090689d0585ff075ec9e99ad690c3395bc4b313370b38ef355acdadcd122975b' + '12c85ea5db8c6deb4aab71808dcb408fe3d1e7690c43d37b4ce6cc0166fa7daa';
const bytesOf = (h: string) => Uint8Array.from(Buffer.from(h, 'hex'));
const PAIRS_ONE = bytesOf((h32(1n) + h32(2n) + G2 + h32(1n) + h32(FIELD - 2n) + G2).repeat(3)); // 6 pairs, product 1
const NOT_ON_CURVE = bytesOf((h32(1n) + h32(3n) + G2).repeat(6));

function pairingPrecompiles(guard: CallGuard, worker?: PrecompileWorker) {
  const off = withGuardedPrecompiles(common, undefined, guard, worker)!.find((p) => p.address.toString() === `0x${PAIRING_ADDRESS}`);
  const stock = getActivePrecompiles(common).get(PAIRING_ADDRESS)!;
  return { off: (off as unknown as { function: (i: PrecompileInput) => Promise<ExecResult> }).function, stock };
}

/** What the EVM hands a precompile (its BN254 implementation is the stock precompile's, used in process). */
const input = (data: Uint8Array, gasLimit = 10_000_000n) => ({ data, gasLimit, common, _EVM: { _bn254: new NobleBN254() } }) as unknown as PrecompileInput;

test('large pairing checks run off the event loop with the stock precompile\'s results and errors', async () => {
  const guard = new CallGuard();
  const { off, stock } = pairingPrecompiles(guard);
  assert.ok(PAIRS_ONE.length / 192 > IN_PROCESS_PAIRS, 'the vectors go to the worker');
  for (const [what, data] of [['a product of 1', PAIRS_ONE], ['a point off the curve', NOT_ON_CURVE]] as const) {
    let ranDuringCheck = false;
    setImmediate(() => (ranDuringCheck = true));
    const got = await guard.run(0, () => off(input(data)));
    const want = await stock(input(data));
    assert.is(hex(got.returnValue), hex(want.returnValue), what);
    assert.is(got.executionGasUsed, want.executionGasUsed, what);
    assert.is(got.exceptionError?.error, want.exceptionError?.error, what);
    // The main thread waits for the worker's answer (the check off the curve ends at its first point).
    if (data === PAIRS_ONE) assert.ok(ranDuringCheck, `${what}: the event loop turned while the worker checked`);
  }
  assert.is(hex((await guard.run(0, () => off(input(PAIRS_ONE)))).returnValue), `0x${h32(1n)}`);
  // Gas that does not cover the pairs: out of gas at once, as the stock precompile.
  const oog = await guard.run(0, () => off(input(PAIRS_ONE, 100_000n)));
  assert.is(oog.exceptionError?.error, EVMError.errorMessages.OUT_OF_GAS);
});

test('a worker lost mid-check: the check runs in process with the same result, and the next one gets a new worker', async () => {
  const guard = new CallGuard();
  const { off } = pairingPrecompiles(guard);
  const data = bytesOf((h32(1n) + h32(2n) + G2 + h32(1n) + h32(FIELD - 2n) + G2).repeat(30)); // 60 pairs, product 1
  const running = guard.run(0, () => off(input(data)));
  await stopPrecompileWorker();
  const r = await running;
  assert.is(r.exceptionError, undefined);
  assert.is(hex(r.returnValue), `0x${h32(1n)}`);
  const again = await guard.run(0, () => off(input(PAIRS_ONE)));
  assert.is(hex(again.returnValue), `0x${h32(1n)}`);
});

/** A pairing worker script that spins forever on an input starting with 0xff and answers 32 bytes of 7 to any other. */
const SCRIPTED_WORKER = new URL(
  `data:text/javascript,${encodeURIComponent(
    "import { parentPort } from 'node:worker_threads';" +
      "parentPort.on('message', ({ seq, input }) => { if (input[0] === 0xff) for (;;); parentPort.postMessage({ seq, output: new Uint8Array(32).fill(7) }); });",
  )}`,
);
const jobOf = (first: number) => Uint8Array.from({ length: 5 * 192 }, (_, i) => (i === 0 ? first : 1));

test('a hung worker is bounded: the check fails after its stall bound, and the precompile checks in process with the stock result', async () => {
  const worker = new PrecompileWorker({ url: SCRIPTED_WORKER, stallMs: () => 50 });
  const err = await worker.check('pairing', jobOf(0xff)).then(() => undefined, (e: Error) => e);
  assert.match(err?.message ?? 'no error', /precompile worker did not answer within 50 ms/);
  // A block's check (no deadline) on a worker that never answers: the stock result, in process.
  const guard = new CallGuard();
  const { off, stock } = pairingPrecompiles(guard, new PrecompileWorker({ url: new URL(`data:text/javascript,${encodeURIComponent('for (;;);')}`), stallMs: () => 50 }));
  const r = await guard.run(0, () => off(input(PAIRS_ONE)));
  assert.is(hex(r.returnValue), hex((await stock(input(PAIRS_ONE))).returnValue));
  assert.is(hex(r.returnValue), `0x${h32(1n)}`);
});

test('a check past its deadline leaves nothing behind it: the next check runs at once on a new worker', async () => {
  const worker = new PrecompileWorker({ url: SCRIPTED_WORKER });
  assert.is(await worker.check('pairing', jobOf(0xff), { deadlineMs: 30 }), 'late', 'running when its deadline passed');
  const queuedBehind = worker.check('pairing', jobOf(0xff), { deadlineMs: 30 });
  const next = worker.check('pairing', jobOf(1), { deadlineMs: 10_000 });
  assert.is(await queuedBehind, 'late');
  const r = await next;
  assert.ok(r !== 'late' && 'output' in r && r.output[0] === 7, 'answered, not left behind a spinning check');
  await worker.stop();
});

test('a worker that cannot start fails each job at once (its caller computes in process); none waits', async () => {
  const worker = new PrecompileWorker({ url: new URL('http://127.0.0.1/not-a-worker.js') });
  for (const deadlineMs of [undefined, 10_000]) {
    const err = await worker.check('pairing', jobOf(1), deadlineMs === undefined ? {} : { deadlineMs }).then(() => undefined, (e: Error) => e);
    assert.match(err?.message ?? 'no error', /^precompile worker could not start: /);
  }
  const guard = new CallGuard();
  const { off } = pairingPrecompiles(guard, worker);
  assert.is(hex((await guard.run(0, () => off(input(PAIRS_ONE)))).returnValue), `0x${h32(1n)}`, 'the stock result, in process');
});

test("a block's work (no deadline) is queued before calls' work", async () => {
  const worker = new PrecompileWorker({ url: SCRIPTED_WORKER });
  const order: string[] = [];
  const job = (name: string, deadlineMs?: number) => worker.check('pairing', jobOf(1), deadlineMs === undefined ? {} : { deadlineMs }).then(() => order.push(name));
  await Promise.all([job('running call', 10_000), job('queued call', 10_000), job('block'), job('second block'), job('last call', 10_000)]);
  assert.equal(order, ['running call', 'block', 'second block', 'queued call', 'last call']);
  await worker.stop();
});

test('a block whose tx runs a large pairing check: built while the event loop turns, replayed alike on another node', async () => {
  const a = await startVM();
  const b = await startVM();
  try {
    const gas = 1_000_000n;
    const hash = await a.backend.sendRawTransaction(signedTx({ nonce: 0n, to: bytesOf(PAIRING_ADDRESS), data: PAIRS_ONE, gas }).serialize());
    let turned = false;
    setImmediate(() => (turned = true));
    const built = await a.buildBlock();
    assert.ok(turned, 'the event loop turned while the block was built');
    await built.verify();
    await a.setPreference(built.id);
    await built.accept();
    const calldataGas = PAIRS_ONE.reduce((sum, byte) => sum + (byte === 0 ? 4n : 16n), 0n);
    const receipt = await a.backend.receipt(hash);
    assert.is(receipt?.status, 1, 'the check succeeded');
    assert.is(receipt?.gasUsed, 21_000n + calldataGas + 45_000n + 6n * 34_000n, "the stock precompile's gas, not all of it");
    const parsed = await b.parseBlock(built.bytes);
    await parsed.verify(); // replayed: same receipts root, state root and gas used
    await b.setPreference(parsed.id);
    await parsed.accept();
    assert.is(hex(b.chain.lastAccepted.eth.header.stateRoot), hex(a.chain.lastAccepted.eth.header.stateRoot));
  } finally {
    await a.shutdown();
    await b.shutdown();
  }
});

test('a pairing check that outlasts the call\'s deadline halts the call with the timeout', async () => {
  const guard = new CallGuard();
  const { off } = pairingPrecompiles(guard);
  const big = bytesOf((h32(1n) + h32(2n) + G2).repeat(300)); // ~1-2 s of work
  const r = await guard.run(20, () => off(input(big, 50_000_000n)));
  assert.is(r.exceptionError?.error, 'execution aborted (timeout = 20ms)');
  assert.ok(guard.expired);
});

test('an aborted call halts at its next look: eth_call and eth_estimateGas end with the signal\'s reason, not at the deadline', async () => {
  const vm = await startVM(); // rpcEvmTimeoutMs: 5 s
  try {
    const be = vm.backend;
    const overrides = new Map([[hex(LOOP_AT.bytes), { code: LOOP }]]);
    for (const run of [(s: AbortSignal) => be.call({ to: LOOP_AT.bytes }, 'latest', overrides, s), (s: AbortSignal) => be.estimateGas({ to: LOOP_AT.bytes }, 'latest', overrides, s)]) {
      const ac = new AbortController();
      const t0 = performance.now();
      setTimeout(() => ac.abort(new EvmRpcError(-32002, 'request cancelled: the client went away')), 50);
      const err = (await run(ac.signal).catch((e: unknown) => e)) as EvmRpcError;
      const ms = performance.now() - t0;
      assert.is(err.message, 'request cancelled: the client went away');
      assert.ok(ms < 1_000, `stopped ${ms.toFixed(0)} ms after it began (the deadline is 5 s)`);
    }
    // Aborted before it runs: it does not run.
    const gone = AbortSignal.abort(new EvmRpcError(-32002, 'gone'));
    assert.is(((await be.call({ to: LOOP_AT.bytes }, 'latest', overrides, gone).catch((e: unknown) => e)) as Error).message, 'gone');
    assert.is((await be.call({ to: LOOP_AT.bytes }, 'latest')).returnData.length, 0, 'the VM answers after');
  } finally {
    await vm.shutdown();
  }
});

test('reads, admission and block building are not queued behind eth_calls (calls run on VMs of their own)', async () => {
  const vm = await startVM(); // rpcEvmTimeoutMs: 5 s
  try {
    const be = vm.backend;
    const overrides = new Map([[hex(LOOP_AT.bytes), { code: LOOP }]]);
    // Three looping calls (as many as there are call VMs) and one more waiting behind them.
    const calls = Array.from({ length: 4 }, () => be.call({ to: LOOP_AT.bytes }, 'latest', overrides).catch((e: unknown) => e));
    await new Promise((r) => setTimeout(r, 50));
    const t0 = performance.now();
    const balance = await be.balance(EWOQ, 'latest');
    const hash = await be.sendRawTransaction(signedTx({ nonce: 0n, to: LOOP_AT.bytes, value: 1n }).serialize());
    const block = await buildAndAccept(vm);
    const ms = performance.now() - t0;
    assert.ok(balance > 0n);
    assert.is(hex(block.eth.transactions[0]!.hash()), hex(hash));
    assert.ok(ms < 2_000, `a read, a send and a block took ${ms.toFixed(0)} ms beside the looping calls`);
    // Each call ran to its own end meanwhile: its gas gone (~1.3 s alone here) or its deadline.
    for (const r of await Promise.all(calls)) assert.match(JSON.stringify((r as { error?: unknown }).error ?? (r as Error).message), /out of gas|timeout = 5s/);
  } finally {
    await vm.shutdown();
  }
});

test('guarded runs in flight share one slice per turn of the event loop', async () => {
  const q = new SliceQueue();
  let turn = 0;
  let on = true;
  const ticker = (async () => {
    while (on) {
      await new Promise((r) => setImmediate(r));
      turn += 1;
    }
  })();
  const resumedAt: number[] = [];
  // Three calls (the three call VMs) each at the end of a slice, waiting for their next one.
  await Promise.all([0, 1, 2].map(async () => {
    await q.next();
    resumedAt.push(turn);
  }));
  on = false;
  await ticker;
  assert.is(new Set(resumedAt).size, 3, `each resumed in a turn of its own: ${JSON.stringify(resumedAt)}`);
});

test.run();
