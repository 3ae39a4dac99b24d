import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Common, Hardfork, Mainnet } from '@ethereumjs/common';
import { getActivePrecompiles, paramsEVM, type ExecResult, type PrecompileInput } from '@ethereumjs/evm';
import { CallGuard } from '../src/chain/call-guard.js';
import { MODEXP_ADDRESS } from '../src/chain/precompiles/guarded.js';
import { fastModexp, IN_PROCESS_GAS, modexp, modexpGas } from '../src/chain/precompiles/modexp.js';
import { PrecompileWorker } from '../src/chain/precompiles/offload.js';
import { hex } from './helpers.js';

type Run = (opts: PrecompileInput) => Promise<ExecResult> | ExecResult;

/** What the EVM hands a precompile: a Common with the EVM's params (the chains run Cancun). */
const common = new Common({ chain: Mainnet, hardfork: Hardfork.Cancun, params: paramsEVM });
const osaka = new Common({ chain: Mainnet, hardfork: Hardfork.Osaka, params: paramsEVM });
const istanbul = new Common({ chain: Mainnet, hardfork: Hardfork.Istanbul, params: paramsEVM });
const stockOf = (c: Common) => getActivePrecompiles(c).get(MODEXP_ADDRESS) as unknown as Run;
const input = (data: Uint8Array, c: Common = common, gasLimit = 50_000_000n) => ({ data, gasLimit, common: c }) as unknown as PrecompileInput;
const h32 = (n: number | bigint) => BigInt(n).toString(16).padStart(64, '0');
const bytes = (h: string) => Uint8Array.from(Buffer.from(h, 'hex'));

/** A deterministic byte stream (xorshift), so that failures reproduce. */
function rng(seed: number) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

async function same(what: string, data: Uint8Array, c: Common, gasLimit: bigint) {
  const want = await stockOf(c)(input(data, c, gasLimit));
  const got = await fastModexp()(input(data, c, gasLimit));
  assert.is(got.exceptionError?.error, want.exceptionError?.error, `${what}: error`);
  assert.is(got.executionGasUsed, want.executionGasUsed, `${what}: gas`);
  assert.is(hex(got.returnValue), hex(want.returnValue), `${what}: output`);
}

test("gas, errors and outputs are the stock precompile's, input by input (Istanbul, Cancun and Osaka rules)", async () => {
  const next = rng(7);
  const pick = (xs: number[]) => xs[Math.floor(next() * xs.length)]!;
  const lengths = [0, 1, 2, 8, 31, 32, 33, 40, 64, 65, 100, 200];
  for (const c of [common, osaka, istanbul]) {
    for (let i = 0; i < 300; i++) {
      const [bLen, eLen, mLen] = [pick(lengths), pick(lengths), pick(lengths)];
      const body = Uint8Array.from({ length: bLen + eLen + mLen }, () => (next() < 0.15 ? 0 : Math.floor(next() * 256)));
      // Inputs cut short (read as zeros past their end) and inputs with bytes to spare.
      const cut = next() < 0.3 ? Math.floor(next() * (96 + body.length)) : 96 + body.length + (next() < 0.2 ? 5 : 0);
      const full = new Uint8Array(96 + body.length + 5);
      full.set(bytes(h32(bLen) + h32(eLen) + h32(mLen)));
      full.set(body, 96);
      const data = full.subarray(0, cut);
      const gas = modexpGas(data, c);
      for (const gasLimit of [gas, gas - 1n, 50_000_000n]) await same(`${c.hardfork()} #${i} b${bLen} e${eLen} m${mLen} cut ${cut} gas ${gasLimit}`, data, c, gasLimit);
    }
  }
});

test('edge inputs match the stock precompile: EIP-198 vectors, huge lengths, a zero or unit modulus', async () => {
  const P = 'fffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2f';
  const cases: [string, string][] = [
    ['EIP-198: 3^(p-1) mod p = 1', h32(1) + h32(32) + h32(32) + '03' + P.replace(/2f$/, '2e') + P],
    ['EIP-198: a zero modulus', h32(1) + h32(32) + h32(32) + '03' + P.replace(/2f$/, '2e')],
    ['a modulus of 1', h32(2) + h32(2) + h32(1) + 'ffff' + 'ffff' + '01'],
    ['an exponent of 0', h32(1) + h32(3) + h32(1) + '05' + '000000' + '07'],
    ['lengths of 2^256-1', 'ff'.repeat(96)],
    ['a base length past 2^53', h32(2n ** 60n) + h32(1) + h32(1)],
    ['b and m of length 0', h32(0) + h32(5) + h32(0) + 'ffffffffff'],
    ['an empty input', ''],
    ['an input shorter than its header', h32(1) + '00ff'],
    ['an operand over 1024 bytes', h32(1025) + h32(1) + h32(1) + '02'.repeat(1025) + '03' + '05'],
    ['a 1 MB exponent declared in a short input', h32(1) + h32(1_000_000) + h32(1) + '02ffff'],
  ];
  for (const c of [common, osaka, istanbul]) for (const [what, data] of cases) await same(`${c.hardfork()}: ${what}`, bytes(data), c, 50_000_000n);
});

test('a long exponent costs what its bits cost (the stock loop shifts the whole exponent each step)', () => {
  const exp = new Uint8Array(200_000).fill(0xff);
  exp[0] = 0x7f;
  const mod = (1n << 255n) - 19n;
  // Against plain square-and-multiply over the exponent as one number, on a prefix.
  const small = exp.subarray(0, 64);
  let want = 1n;
  let b = 5n;
  for (let e = BigInt(`0x${Buffer.from(small).toString('hex')}`); e > 0n; e >>= 1n) {
    if (e & 1n) want = (want * b) % mod;
    b = (b * b) % mod;
  }
  assert.is(modexp(5n, small, mod), want);
  assert.is(typeof modexp(5n, exp, mod), 'bigint'); // 1.6M steps: well under a second here, where the stock loop ran for minutes
});

test('a guarded VM exponentiates a priced-over-the-limit input off the event loop, with the stock result; a deadline halts it', async () => {
  const data = bytes(h32(64) + h32(3000) + h32(64) + 'fd'.repeat(64) + 'ff'.repeat(3000) + 'f7'.repeat(64));
  assert.ok(modexpGas(data, common) > IN_PROCESS_GAS, 'priced over the in-process limit');
  const worker = new PrecompileWorker();
  const guard = new CallGuard();
  let turned = false;
  setImmediate(() => (turned = true));
  const got = await guard.run(0, async () => fastModexp(guard, worker)(input(data)));
  assert.ok(turned, 'the event loop turned while the worker computed');
  const want = await stockOf(common)(input(data));
  assert.is(hex(got.returnValue), hex(want.returnValue));
  assert.is(got.executionGasUsed, want.executionGasUsed);
  const slow = bytes(h32(8) + h32(1_000_000) + h32(8) + 'fd'.repeat(8) + 'ff'.repeat(1_000_000) + 'f7'.repeat(8));
  const late = await guard.run(20, async () => fastModexp(guard, worker)(input(slow)));
  assert.is(late.exceptionError?.error, 'execution aborted (timeout = 20ms)');
  await worker.stop();
});

test.run();
