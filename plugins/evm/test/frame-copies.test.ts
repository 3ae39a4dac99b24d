import { MemoryStore } from '@cornice/sdk';
import type { EVMResult } from '@ethereumjs/evm';
import { Account, Address } from '@ethereumjs/util';
import { createVM, type VM } from '@ethereumjs/vm';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { makeVM, stateManagerAt, type ExecutionHooks } from '../src/chain/executor.js';
import { StateDB } from '../src/chain/state/state-db.js';
import { common, hex } from './helpers.js';

const at = (n: number) => new Address(new Uint8Array(20).fill(n));
const bytes = (h: string) => Uint8Array.from(Buffer.from(h.replace(/\s/g, ''), 'hex'));
const A = at(0xa1);
const B = at(0xb2);
const C = at(0xc3);
const D = at(0xd4);
const E = at(0xe5);
const F = at(0xf6);
const G = at(0x17);
const SHA256 = new Address(Uint8Array.from({ length: 20 }, (_, i) => (i === 19 ? 2 : 0)));

/** Contracts whose frames end every way a frame ends: returned data, a revert, an inner call, a creation, a log. */
const CODE = new Map<Address, Uint8Array>([
  // slot 0 set then cleared (a refund), then RETURN 42 as a word
  [A, bytes('6001 6000 55 6000 6000 55 602a 6000 52 6020 6000 f3')],
  // REVERT with the word 7
  [B, bytes('6007 6000 52 6020 6000 fd')],
  // CALL A (all gas) and RETURN its word
  [C, bytes(`6020 6000 6000 6000 6000 73${Buffer.from(A.bytes).toString('hex')} 5a f1 50 6020 6000 f3`)],
  // CREATE a contract whose code is STOP (13 bytes of initcode at offset 19), RETURN its address
  [D, bytes('6c 6001600c60003960016000f300 6000 52 600d 6013 6000 f0 6000 52 6020 6000 f3')],
  // LOG1 with topic 0x99, then STOP
  [E, bytes('6099 6000 6000 a1 00')],
  // STATICCALL the identity precompile (0x04) on the word 0x55 and RETURN what it returned
  [F, bytes('6055 6000 52 6020 6020 6020 6000 6004 5a fa 50 6020 6020 f3')],
  // DELEGATECALL A (its slot writes land here) and RETURN its word
  [G, bytes(`6020 6000 6000 6000 73${Buffer.from(A.bytes).toString('hex')} 5a f4 50 6020 6000 f3`)],
]);

async function withCode(make: (sm: Awaited<ReturnType<typeof stateManagerAt>>) => Promise<VM>): Promise<VM> {
  const sm = await stateManagerAt(common, new StateDB(new MemoryStore()), undefined, 100);
  for (const [address, code] of CODE) {
    await sm.putAccount(address, new Account());
    await sm.putCode(address, code);
  }
  return make(sm);
}

const call = (vm: VM, to: Address, gasLimit = 1_000_000n) => vm.evm.runCall({ to, caller: at(0x01), gasLimit, data: new Uint8Array() });

/** What a caller can see of a frame's result. */
const seen = (r: EVMResult) => ({
  gasUsed: r.execResult.executionGasUsed,
  refund: r.execResult.gasRefund,
  gas: r.execResult.gas,
  returned: hex(r.execResult.returnValue),
  error: r.execResult.exceptionError?.error,
  logs: JSON.stringify((r.execResult.logs ?? []).map((l) => l.map((x) => (x instanceof Uint8Array ? hex(x) : (x as Uint8Array[]).map(hex))))),
  created: r.createdAddress?.toString(),
});

/** Records the keys of each object `_executeCall` hands `runInterpreter` (what its spread of the message copied). */
function spreadKeys(vm: VM): string[][] {
  const evm = vm.evm as unknown as { runInterpreter(m: object, o?: unknown): Promise<unknown> };
  const runInterpreter = evm.runInterpreter;
  const seenKeys: string[][] = [];
  evm.runInterpreter = function (message, opts) {
    seenKeys.push(Object.keys(message));
    return runInterpreter.call(this, message, opts);
  };
  return seenKeys;
}

test("our VMs' frames give what the stock VM's give, copying neither the message nor the run state", async () => {
  const ours = await withCode((sm) => makeVM(common, sm, {} as ExecutionHooks, async () => undefined));
  const stock = await withCode((sm) => createVM({ common, stateManager: sm }));
  const oursSpread = spreadKeys(ours);
  const stockSpread = spreadKeys(stock);
  const cases = [[A], [B], [C], [D], [E], [F], [G], [SHA256], [A, 5_000n], [C, 30_000n], [G, 30_000n]] as Array<[Address, bigint?]>;
  for (const [to, gasLimit] of cases) {
    const mine = await call(ours, to, gasLimit);
    const theirs = await call(stock, to, gasLimit);
    assert.equal(seen(mine), seen(theirs), `a call to ${to.toString()} with ${gasLimit ?? 1_000_000n} gas`);
    const runState = (r: EVMResult) => (r.execResult as unknown as { runState?: object }).runState ?? {};
    if (to === SHA256) continue; // a precompile: no frame
    assert.ok('stack' in runState(theirs), 'the stock result copies the run state');
    assert.not.ok('stack' in runState(mine), 'ours does not');
    assert.ok('executionGasUsed' in runState(mine), "the frame's result had the returned literal's keys before it was copied");
  }
  assert.is(oursSpread.length, stockSpread.length, 'as many frames ran code');
  assert.ok(stockSpread.every((keys) => keys.includes('caller') && keys.length >= 18), 'the stock spread copies every field of the message');
  // A creation's frame (D's CREATE) is handed `{ ...message, gasLimit, isCreate }`, which adds one field: left as it is.
  const calls = (spreads: string[][]) => spreads.filter((keys) => !keys.includes('isCreate'));
  assert.is(calls(oursSpread).length, 14, "a call frame per case but the precompile's (10), and the inner call of each C and G case (4)");
  assert.ok(calls(oursSpread).every((keys) => keys.join() === 'codeAddress,gasLimit'), `ours copies none: ${JSON.stringify(calls(oursSpread).find((keys) => keys.join() !== 'codeAddress,gasLimit'))}`);
  // The calls above were not reverted: both states moved alike.
  for (const address of [A, G]) {
    assert.is(hex(await ours.stateManager.getStorage(address, new Uint8Array(32))), hex(await stock.stateManager.getStorage(address, new Uint8Array(32))));
  }
});

test.run();
