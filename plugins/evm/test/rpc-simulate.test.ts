/**
 * The RPC layer of eth_call's and eth_estimateGas's block overrides, eth_createAccessList and
 * eth_simulateV1 over the fake backend: parameter parsing, invalid input, result shapes.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BOB, TOKEN, filled, hex, serve, type Served } from './rpc-fake-backend.js';

let s: Served;
test.before(async () => {
  s = await serve();
});
test.after(async () => {
  await s.close();
});

test('block overrides: every field geth knows, passed to eth_call and eth_estimateGas', async () => {
  const overrides = {
    number: '0x3e8',
    difficulty: '0x2',
    time: '0x64',
    gasLimit: '0x1c9c380',
    feeRecipient: hex(BOB),
    prevRandao: '0x' + '11'.repeat(32),
    baseFeePerGas: '0x7',
    blobBaseFee: '0x63',
  };
  const want = {
    number: 1000n,
    difficulty: 2n,
    time: 100n,
    gasLimit: 30_000_000n,
    feeRecipient: BOB,
    prevRandao: filled(0x11),
    baseFeePerGas: 7n,
    blobBaseFee: 99n,
  };
  await s.ok('eth_call', [{ to: hex(TOKEN) }, 'latest', null, overrides]);
  assert.equal(s.backend.calls.at(-1)!.args[3], want);
  await s.ok('eth_estimateGas', [{ to: hex(TOKEN) }, 'latest', {}, overrides]);
  assert.equal(s.backend.calls.at(-1)!.args[3], want);
});

test('block overrides: keys as geth decodes them (any case; an unknown key is ignored; null is absent)', async () => {
  await s.ok('eth_call', [{ to: hex(TOKEN) }, 'latest', null, { NUMBER: '0x5', BaseFeePerGas: '0x1', timestamp: '0x9', time: null }]);
  assert.equal(s.backend.calls.at(-1)!.args[3], { number: 5n, baseFeePerGas: 1n });
});

test('block overrides: invalid input is -32602 naming the field; beaconRoot and withdrawals are refused for one call, as geth', async () => {
  const bad = async (o: unknown, message: string, method = 'eth_call') => {
    const r = await s.call(method, [{ to: hex(TOKEN) }, 'latest', null, o]);
    assert.equal(r.error, { code: -32602, message }, JSON.stringify(o));
  };
  await bad('0x1', 'invalid argument 3: cannot unmarshal string into block overrides');
  await bad([], 'invalid argument 3: cannot unmarshal array into block overrides');
  await bad({ number: 5 }, 'invalid argument 3: number: cannot unmarshal number into a hex quantity');
  await bad({ time: '0x' + '1'.repeat(17) }, 'invalid argument 3: time: hex number > 64 bits');
  await bad({ gasLimit: '0x01' }, 'invalid argument 3: gasLimit: hex number with leading zero digits', 'eth_estimateGas');
  await bad({ feeRecipient: '0x1234' }, 'invalid argument 3: feeRecipient: hex string has length 4, want 40 for address');
  await bad({ prevRandao: '0x12' }, 'invalid argument 3: prevRandao: hex string has length 2, want 64 for hash');
  await bad({ baseFeePerGas: '0x' + '1'.repeat(65) }, 'invalid argument 3: baseFeePerGas: hex number > 256 bits');
  await bad({ blobBaseFee: 'x' }, 'invalid argument 3: blobBaseFee: hex string without 0x prefix');
  await bad({ withdrawals: {} }, 'invalid argument 3: withdrawals: cannot unmarshal object into withdrawals');
  await bad({ withdrawals: new Array(17).fill({}) }, 'invalid argument 3: withdrawals: more than 16 withdrawals');
  const beacon = await s.call('eth_call', [{ to: hex(TOKEN) }, 'latest', null, { beaconRoot: '0x' + '00'.repeat(32) }]);
  assert.equal(beacon.error, { code: -32000, message: 'block override "beaconRoot" is not supported for this RPC method' });
  const w = await s.call('eth_estimateGas', [{ to: hex(TOKEN) }, 'latest', null, { withdrawals: [] }]);
  assert.equal(w.error, { code: -32000, message: 'block override "withdrawals" is not supported for this RPC method' });
  const five = await s.call('eth_call', [{ to: hex(TOKEN) }, 'latest', null, {}, 1]);
  assert.is(five.error?.code, -32602);
});

test('eth_createAccessList: {accessList, gasUsed} (error only when the call failed); block and state overrides passed through', async () => {
  const r = await s.ok('eth_createAccessList', [{ from: hex(BOB), to: hex(TOKEN), data: '0x01' }]);
  assert.equal(r, { accessList: [{ address: hex(TOKEN), storageKeys: ['0x' + '01'.repeat(32)] }], gasUsed: '0x62d4' });
  assert.equal(Object.keys(r), ['accessList', 'gasUsed']);
  const [req, ref, overrides] = s.backend.calls.at(-1)!.args as any[];
  assert.equal(req, { from: BOB, to: TOKEN, data: Uint8Array.of(1) });
  assert.is(ref, 'latest');
  assert.is(overrides, undefined);
  await s.ok('eth_createAccessList', [{ to: hex(TOKEN) }, '0x0', { [hex(BOB)]: { balance: '0x1' } }]);
  const args = s.backend.calls.at(-1)!.args as any[];
  assert.is(args[1], 0n);
  assert.is(args[2].get(hex(BOB)).balance, 1n);
  s.backend.accessListResult = { accessList: [], gasUsed: 21_000n, error: 'execution reverted' };
  assert.equal(await s.ok('eth_createAccessList', [{ to: hex(TOKEN) }]), { accessList: [], error: 'execution reverted', gasUsed: '0x5208' });
});

test('eth_createAccessList: invalid input is -32602 naming the argument', async () => {
  const bad = async (params: unknown, message: string) => {
    const r = await s.call('eth_createAccessList', params);
    assert.equal(r.error, { code: -32602, message }, JSON.stringify(params));
  };
  await bad([], 'missing value for required argument 0');
  await bad(['0x1'], 'invalid argument 0: cannot unmarshal string into transaction object');
  await bad([{ to: '0x12' }], 'invalid argument 0: to: hex string has length 2, want 40 for address');
  await bad([{ gas: '0x' + 'f'.repeat(17) }], 'invalid argument 0: gas: hex number > 64 bits');
  await bad([{ accessList: {} }], 'invalid argument 0: accessList: cannot unmarshal object into access list');
  await bad([{}, 'newest'], 'invalid argument 1: hex string without 0x prefix');
  await bad([{}, 'latest', []], 'invalid argument 2: cannot unmarshal array into state override set');
  await bad([{}, 'latest', {}, {}], 'too many arguments, want at most 3');
});

test.run();
