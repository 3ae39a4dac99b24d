import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DEFAULT_FEE_CONFIG, feeConfigEqual, feeConfigJson, feeConfigProblem, parseFeeConfig, verifyFeeConfig } from '../src/config/fee-config.js';
import type { FeeConfig } from '../src/types.js';
import { DEFAULT_FEE_JSON as DEFAULT_JSON, throwsConfig } from './config-helpers.js';


test('DEFAULT_FEE_CONFIG is subnet-evm DefaultFeeConfig; its JSON is eth_feeConfig numbers', () => {
  assert.equal(feeConfigJson(DEFAULT_FEE_CONFIG), DEFAULT_JSON);
  assert.is(feeConfigProblem(DEFAULT_FEE_CONFIG), undefined);
});

test('parseFeeConfig round-trips the JSON; decimal and 0x strings are accepted', () => {
  const c = parseFeeConfig(DEFAULT_JSON, 'config.feeConfig');
  assert.ok(feeConfigEqual(c, DEFAULT_FEE_CONFIG));
  const s = parseFeeConfig({ ...DEFAULT_JSON, minBaseFee: '25000000000', gasLimit: '0x7a1200' }, 'f');
  assert.ok(feeConfigEqual(s, DEFAULT_FEE_CONFIG));
});

test('values beyond 2^53: exact from strings, shown as decimal strings; an imprecise JSON number is refused', () => {
  const big = (1n << 200n) + 1n;
  const c = parseFeeConfig({ ...DEFAULT_JSON, minBaseFee: big.toString() }, 'f');
  assert.is(c.minBaseFee, big);
  assert.is(feeConfigJson(c)['minBaseFee'], big.toString());
  throwsConfig(() => parseFeeConfig({ ...DEFAULT_JSON, minBaseFee: 2 ** 60 }, 'f'), 'f.minBaseFee', /too large for a JSON number.*decimal string/);
});

test('a missing field is nil and Verify names it (in Verify order); null counts as missing', () => {
  const { gasLimit: _g, ...noGas } = DEFAULT_JSON;
  throwsConfig(() => parseFeeConfig(noGas, 'config.feeConfig'), 'config.feeConfig.gasLimit', /gasLimit cannot be nil/);
  throwsConfig(() => parseFeeConfig({ ...DEFAULT_JSON, targetGas: null }, 'config.feeConfig'), 'config.feeConfig.targetGas', /targetGas cannot be nil/);
  const { blockGasCostStep: _s, maxBlockGasCost: _m, ...twoMissing } = DEFAULT_JSON;
  throwsConfig(() => parseFeeConfig(twoMissing, 'c'), 'c.maxBlockGasCost', /maxBlockGasCost cannot be nil/);
  // targetBlockRate is a uint64 in Go: missing reads as 0.
  const { targetBlockRate: _t, ...noRate } = DEFAULT_JSON;
  throwsConfig(() => parseFeeConfig(noRate, 'c'), 'c.targetBlockRate', /targetBlockRate cannot be less than or equal to 0: targetBlockRate = 0/);
  throwsConfig(() => parseFeeConfig({}, 'c'), 'c.gasLimit', /cannot be nil/);
});

const VERIFY_CASES: Array<[string, Partial<Record<keyof FeeConfig, number | string>>, string, RegExp]> = [
  ['gasLimit 0', { gasLimit: 0 }, 'gasLimit', /^invalid chain config: c\.gasLimit: gasLimit cannot be less than or equal to 0: gasLimit = 0$/],
  ['targetBlockRate 0', { targetBlockRate: 0 }, 'targetBlockRate', /targetBlockRate cannot be less than or equal to 0/],
  ['minBaseFee negative', { minBaseFee: -1 }, 'minBaseFee', /minBaseFee cannot be less than 0: minBaseFee = -1/],
  ['targetGas 0', { targetGas: 0 }, 'targetGas', /targetGas cannot be less than or equal to 0/],
  ['denominator 0', { baseFeeChangeDenominator: 0 }, 'baseFeeChangeDenominator', /baseFeeChangeDenominator cannot be less than or equal to 0/],
  ['minBlockGasCost negative', { minBlockGasCost: -5 }, 'minBlockGasCost', /minBlockGasCost cannot be less than 0/],
  ['min above max', { minBlockGasCost: 10, maxBlockGasCost: 9 }, 'minBlockGasCost', /minBlockGasCost cannot be greater than maxBlockGasCost: minBlockGasCost = 10, maxBlockGasCost = 9/],
  ['step negative', { blockGasCostStep: -1 }, 'blockGasCostStep', /blockGasCostStep cannot be less than 0/],
  ['max above uint64', { maxBlockGasCost: (1n << 64n).toString() }, 'maxBlockGasCost', /maxBlockGasCost is not a valid uint64/],
  ['gasLimit above 32 bytes', { gasLimit: (1n << 256n).toString() }, 'gasLimit', /gasLimit exceeds hash length: 32 bytes/],
];
for (const [name, patch, field, why] of VERIFY_CASES) {
  test(`Verify: ${name} is refused naming ${field}`, () => {
    throwsConfig(() => parseFeeConfig({ ...DEFAULT_JSON, ...patch }, 'c'), `c.${field}`, why);
  });
}

test('min == max block gas cost and zero step / zero minBaseFee are valid', () => {
  const c = parseFeeConfig({ ...DEFAULT_JSON, minBlockGasCost: 7, maxBlockGasCost: 7, blockGasCostStep: 0, minBaseFee: 0 }, 'c');
  assert.is(c.maxBlockGasCost, 7n);
});

const TYPE_CASES: Array<[string, unknown, string, RegExp]> = [
  ['not an object', [1, 2], 'c', /must be a JSON object, got an array/],
  ['null root', null, 'c', /must be a JSON object, got null/],
  ['a word', { ...DEFAULT_JSON, gasLimit: 'lots' }, 'c.gasLimit', /must be an integer/],
  ['a fraction', { ...DEFAULT_JSON, gasLimit: 1.5 }, 'c.gasLimit', /must be an integer, got 1.5/],
  ['a bool', { ...DEFAULT_JSON, targetGas: true }, 'c.targetGas', /must be an integer .*got a boolean/],
  ['an object', { ...DEFAULT_JSON, targetGas: {} }, 'c.targetGas', /got an object/],
  ['too long a string', { ...DEFAULT_JSON, gasLimit: '9'.repeat(500) }, 'c.gasLimit', /must be an integer/],
  ['an unknown key (a typo)', { ...DEFAULT_JSON, gaslimit: 5 }, 'c.gaslimit', /unknown fee config field/],
];
for (const [name, json, field, why] of TYPE_CASES) {
  test(`parseFeeConfig refuses ${name}`, () => throwsConfig(() => parseFeeConfig(json, 'c'), field, why));
}

test('verifyFeeConfig returns a copy; feeConfigEqual compares every field', () => {
  const c = verifyFeeConfig(DEFAULT_FEE_CONFIG, 'x');
  assert.is.not(c, DEFAULT_FEE_CONFIG);
  assert.ok(feeConfigEqual(c, DEFAULT_FEE_CONFIG));
  assert.not.ok(feeConfigEqual({ ...c, blockGasCostStep: 1n }, DEFAULT_FEE_CONFIG));
});

test.run();
