import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { fromHex, hasErrorCode, toHex } from '@cornice/sdk';
import {
  builtinPrecompiles,
  isReservedPrecompileAddress,
  parsePrecompileConfigBase,
  precompileDispatcher,
  precompileModuleByKey,
  precompileModules,
  registerPrecompile,
  type PrecompileModule,
} from '../src/index.js';

const module = (key: string, address: string): PrecompileModule => ({
  key,
  address: fromHex(address),
  parseConfig: (json, field) => parsePrecompileConfigBase(json, field),
  configJson: (c) => ({ blockTimestamp: Number(c.blockTimestamp) }),
  configure: async () => {},
  run: precompileDispatcher([]),
});

test('the five built-ins, in address order, with the keys of A.3', () => {
  assert.equal(
    builtinPrecompiles().map((m) => [m.key, `0x${toHex(m.address)}`]),
    [
      ['contractDeployerAllowListConfig', '0x0200000000000000000000000000000000000000'],
      ['contractNativeMinterConfig', '0x0200000000000000000000000000000000000001'],
      ['txAllowListConfig', '0x0200000000000000000000000000000000000002'],
      ['feeManagerConfig', '0x0200000000000000000000000000000000000003'],
      ['rewardManagerConfig', '0x0200000000000000000000000000000000000004'],
    ],
  );
});

test('reserved ranges: 0x01/0x02/0x03 then 18 zero bytes, any last byte, not the black hole', () => {
  for (const a of ['0x0100000000000000000000000000000000000001', '0x02000000000000000000000000000000000000ff', '0x0300000000000000000000000000000000000000']) {
    assert.ok(isReservedPrecompileAddress(fromHex(a)), a);
  }
  for (const a of ['0x0100000000000000000000000000000000000000', '0x0400000000000000000000000000000000000000', '0x0300000000000000000000000000000000000100', '0x0000000000000000000000000000000000000001']) {
    assert.not.ok(isReservedPrecompileAddress(fromHex(a)), a);
  }
});

test('a third party registers a module: listed after the built-ins, found by key', () => {
  const hello = module('helloWorldConfig', '0x0300000000000000000000000000000000000000');
  registerPrecompile(hello);
  assert.is(precompileModules().length, 6);
  assert.is(precompileModules()[5], hello);
  assert.is(precompileModuleByKey('helloWorldConfig'), hello);
  assert.is(precompileModuleByKey('nope'), undefined);
});

test('registerPrecompile refuses a bad module with a clear typed error; nothing is added', () => {
  const refuses = (m: unknown, code: string, text: string) => {
    const before = precompileModules().length;
    try {
      registerPrecompile(m as PrecompileModule);
      assert.unreachable('accepted');
    } catch (e) {
      assert.ok(hasErrorCode(e, code), String(e));
      assert.is((e as Error).message, text);
    }
    assert.is(precompileModules().length, before);
  };
  refuses(
    module('outside', '0x0400000000000000000000000000000000000000'),
    'ReservedAddress',
    'address 0x0400000000000000000000000000000000000000 of precompile module outside is not in a reserved range (0x0100…00–ff, 0x0200…00–ff, 0x0300…00–ff, not the black-hole address)',
  );
  refuses(
    module('blackHole', '0x0100000000000000000000000000000000000000'),
    'ReservedAddress',
    'address 0x0100000000000000000000000000000000000000 of precompile module blackHole is not in a reserved range (0x0100…00–ff, 0x0200…00–ff, 0x0300…00–ff, not the black-hole address)',
  );
  refuses(module('feeManagerConfig', '0x0300000000000000000000000000000000000009'), 'DuplicateKey', 'precompile config key feeManagerConfig is already registered');
  refuses(
    module('myMinterConfig', '0x0200000000000000000000000000000000000001'),
    'DuplicateAddress',
    'address 0x0200000000000000000000000000000000000001 of precompile module myMinterConfig is already used by contractNativeMinterConfig',
  );
  refuses({ ...module('noRun', '0x0300000000000000000000000000000000000009'), run: undefined }, 'InvalidModule', 'precompile module noRun: run must be a function');
  refuses(module('', '0x0300000000000000000000000000000000000009'), 'InvalidModule', 'precompile module key must be a non-empty identifier, got ""');
  refuses({ ...module('short', '0x0300000000000000000000000000000000000009'), address: new Uint8Array(19) }, 'InvalidModule', 'precompile module short: address must be 20 bytes');
  refuses(null, 'InvalidModule', 'precompile module must be an object');
});

test.run();
