import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { hasErrorCode, utf8Encode } from '@cornice/sdk';
import { parseGenesis } from '../src/index.js';
import { EWOQ, GENESIS, genesisJson, hex, startVM } from './helpers.js';

test('the local C-Chain genesis: chain ID 43110, net_version 1, ewoq funded, gas limit from the JSON', async () => {
  const g = parseGenesis(GENESIS);
  assert.is(g.chainId, 43110n);
  assert.is(g.gasLimit, 100_000_000n);
  const vm = await startVM();
  try {
    assert.is(vm.backend.chainId, 43110n);
    assert.is(vm.backend.networkId, 1n);
    assert.is(await vm.backend.balance(EWOQ, 'latest'), 0x33b2e3c9fd0803ce8000000n);
    const b0 = await vm.backend.block(0n);
    assert.is(b0!.header.number, 0n);
    assert.is(b0!.header.gasLimit, 100_000_000n);
    assert.is(hex((await vm.backend.block('earliest'))!.header.hash), hex(b0!.header.hash));
  } finally {
    await vm.shutdown();
  }
});

const cases: Array<[string, unknown, RegExp]> = [
  ['not JSON', '{', /not valid JSON/],
  ['no config', { alloc: {} }, /config: must be an object/],
  ['chainId missing', { config: {} }, /config\.chainId/],
  ['chainId a word', { config: { chainId: 'x' } }, /config\.chainId/],
  ['gasLimit too low', { ...genesisJson(), gasLimit: '0x10' }, /gasLimit: must be at least 21000/],
  ['alloc key not an address', { ...genesisJson(), alloc: { zz: { balance: '0x1' } } }, /alloc\.zz: must be a 20-byte hex address/],
  ['alloc balance bad', { ...genesisJson(), alloc: { ['11'.repeat(20)]: { balance: 'lots' } } }, /alloc\.1{40}\.balance/],
  ['code not hex', { ...genesisJson(), alloc: { ['11'.repeat(20)]: { code: '0xz' } } }, /alloc\.1{40}\.code/],
  ['extraData too long', { ...genesisJson(), extraData: '0x' + '00'.repeat(33) }, /extraData/],
];
for (const [name, json, why] of cases) {
  test(`invalid genesis (${name}): InvalidGenesis naming the field, at initialize`, async () => {
    const bytes = utf8Encode(typeof json === 'string' ? json : JSON.stringify(json));
    try {
      await startVM({ genesis: bytes });
      assert.unreachable('initialize must fail');
    } catch (e) {
      assert.ok(hasErrorCode(e, 'InvalidGenesis'), String(e));
      assert.match((e as Error).message, why);
    }
  });
}

test.run();
