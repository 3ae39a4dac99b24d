import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Common, Hardfork, Mainnet } from '@ethereumjs/common';
import { getActivePrecompiles, paramsEVM, type ExecResult, type PrecompileInput } from '@ethereumjs/evm';
import { CallGuard } from '../src/chain/call-guard.js';
import { IN_PROCESS_ROUNDS } from '../src/chain/precompiles/blake2f.js';
import { BLAKE2F_ADDRESS, withGuardedPrecompiles } from '../src/chain/precompiles/guarded.js';
import { PrecompileWorker } from '../src/chain/precompiles/offload.js';
import { hex } from './helpers.js';

type Run = (opts: PrecompileInput) => Promise<ExecResult> | ExecResult;

/** What the EVM hands a precompile: a Common with the EVM's params. */
const common = new Common({ chain: Mainnet, hardfork: Hardfork.Cancun, params: paramsEVM });
const stock = getActivePrecompiles(common).get(BLAKE2F_ADDRESS) as unknown as Run;
const input = (data: Uint8Array, gasLimit = 50_000_000n) => ({ data, gasLimit, common }) as unknown as PrecompileInput;

// EIP-152 test vector 5 (12 rounds), with its rounds replaced.
const H = '48c9bdf267e6096a3ba7ca8485ae67bb2bf894fe72f36e3cf1361d5f3af54fa5d182e6ad7f520e511f6c3e2b8c68059b6bbd41fbabd9831f79217e1319cde05b';
const M = '6162630000000000000000000000000000000000000000000000000000000000' + '00'.repeat(96);
const T = '03000000000000000000000000000000';
const vector = (rounds: number, final = '01') => Uint8Array.from(Buffer.from(rounds.toString(16).padStart(8, '0') + H + M + T + final, 'hex'));

function guarded(guard: CallGuard, worker: PrecompileWorker): Run {
  const p = withGuardedPrecompiles(common, undefined, guard, worker)!.find((x) => x.address.toString() === `0x${BLAKE2F_ADDRESS}`)!;
  return (p as unknown as { function: Run }).function;
}

test('BLAKE2F of many rounds runs off the event loop with the stock output; small and bad inputs are the stock\'s', async () => {
  const worker = new PrecompileWorker();
  const guard = new CallGuard();
  const off = guarded(guard, worker);
  const many = vector(IN_PROCESS_ROUNDS * 2);
  let turned = false;
  setImmediate(() => (turned = true));
  const got = await guard.run(0, async () => off(input(many)));
  assert.ok(turned, 'the event loop turned while the worker computed');
  const want = await stock(input(many));
  assert.is(hex(got.returnValue), hex(want.returnValue));
  assert.is(got.executionGasUsed, want.executionGasUsed);
  assert.is(got.exceptionError, undefined);
  const twelve = await guard.run(0, async () => off(input(vector(12))));
  assert.is(hex(twelve.returnValue), '0xba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d17d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923', 'EIP-152 vector 5');
  for (const [what, data, gas] of [
    ['a final flag of 2', vector(IN_PROCESS_ROUNDS * 2, '02'), 50_000_000n],
    ['212 bytes', vector(IN_PROCESS_ROUNDS * 2).subarray(0, 212), 50_000_000n],
    ['gas short of the rounds', vector(IN_PROCESS_ROUNDS * 2), BigInt(IN_PROCESS_ROUNDS * 2 - 1)],
  ] as const) {
    const g = await guard.run(0, async () => off(input(data, gas)));
    const w = await stock(input(data, gas));
    assert.is(g.exceptionError?.error, w.exceptionError?.error, what);
    assert.is(g.executionGasUsed, w.executionGasUsed, what);
  }
  const late = await guard.run(20, async () => off(input(vector(40_000_000))));
  assert.is(late.exceptionError?.error, 'execution aborted (timeout = 20ms)');
  await worker.stop();
});

test.run();
