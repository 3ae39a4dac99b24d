import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { fromHex, toHex } from '@cornice/sdk';
import {
  contractNativeMinter as module,
  MINT_GAS,
  NATIVE_COIN_MINTED_EVENT_GAS,
  NATIVE_COIN_MINTED_TOPIC,
  NATIVE_MINTER_ADDRESS as AT,
} from '../src/index.js';
import { activate, ADMIN, aword, calldata, callModule, ENABLED, expectConfigError, expectHalt, expectOk, MANAGER, NOBODY, PRE_DURANGO, word } from './precompile-helpers.js';

const hex0x = (a: Uint8Array) => `0x${toHex(a)}`;
const RECIPIENT = fromHex('0x1000000000000000000000000000000000000abc');
const json = { blockTimestamp: 0, adminAddresses: [hex0x(ADMIN)], managerAddresses: [hex0x(MANAGER)], enabledAddresses: [hex0x(ENABLED)] };
const mint = (to: Uint8Array, amount: bigint) => calldata('mintNativeCoin(address,uint256)', aword(to), word(amount));

test('key and address of A.3', () => {
  assert.is(module.key, 'contractNativeMinterConfig');
  assert.is(hex0x(AT), '0x0200000000000000000000000000000000000001');
});

test('enabled, manager and admin mint: 30,000 + 1,756 gas, NativeCoinMinted(sender, recipient; amount), balance credited', async () => {
  const { state, config } = await activate(module, json);
  let total = 0n;
  for (const [caller, amount] of [[ADMIN, 10n ** 18n], [MANAGER, 5n], [ENABLED, 7n]] as const) {
    const r = expectOk(await callModule(module, config, state, mint(RECIPIENT, amount), { caller }));
    assert.is(r.gasUsed, 30_000n + 1_756n);
    assert.is(MINT_GAS + NATIVE_COIN_MINTED_EVENT_GAS, 31_756n);
    assert.is(r.output.length, 0);
    assert.equal(r.logs!.map((l) => l.topics.map(toHex)), [[toHex(NATIVE_COIN_MINTED_TOPIC), toHex(aword(caller)), toHex(aword(RECIPIENT))]]);
    assert.is(toHex(r.logs![0]!.data), toHex(word(amount)));
    total += amount;
    assert.is(state.balanceOf(RECIPIENT), total);
  }
});

test('before Durango: 30,000 gas, no event, exactly 64 bytes of input', async () => {
  const { state, config } = await activate(module, { ...json, managerAddresses: [] }, { chain: PRE_DURANGO });
  const r = expectOk(await callModule(module, config, state, mint(RECIPIENT, 3n), { chain: PRE_DURANGO }));
  assert.is(r.gasUsed, 30_000n);
  assert.equal(r.logs, []);
  assert.is(state.balanceOf(RECIPIENT), 3n);
  const padded = calldata('mintNativeCoin(address,uint256)', aword(RECIPIENT), word(3n), new Uint8Array(32));
  expectHalt(await callModule(module, config, state, padded, { chain: PRE_DURANGO }), 'invalid input length for minting: 96');
  expectHalt(await callModule(module, config, state, padded.subarray(0, 4 + 63), { chain: PRE_DURANGO }), 'invalid input length for minting: 63');
  assert.is(state.balanceOf(RECIPIENT), 3n);
});

test('after Durango extra input is ignored and a missing word fails as the ABI unpacker', async () => {
  const { state, config } = await activate(module, json);
  expectOk(await callModule(module, config, state, calldata('mintNativeCoin(address,uint256)', aword(RECIPIENT), word(4n), new Uint8Array(5))));
  assert.is(state.balanceOf(RECIPIENT), 4n);
  expectHalt(
    await callModule(module, config, state, calldata('mintNativeCoin(address,uint256)', aword(RECIPIENT))),
    'abi: cannot marshal in to go type: length insufficient 32 require 64',
  );
});

test('a non-enabled caller cannot mint (reference text, all gas, nothing credited)', async () => {
  const { state, config } = await activate(module, json);
  expectHalt(await callModule(module, config, state, mint(RECIPIENT, 1n), { caller: NOBODY }), 'non-enabled cannot mint: 0x0000000000000000000000000000000000000099');
  assert.is(state.balanceOf(RECIPIENT), 0n);
});

test('static call: write protection (checked before the input); out of gas below 30,000 and before the event', async () => {
  const { state, config } = await activate(module, json);
  expectHalt(await callModule(module, config, state, calldata('mintNativeCoin(address,uint256)'), { isStatic: true }), 'write protection');
  expectHalt(await callModule(module, config, state, mint(RECIPIENT, 1n), { gas: 29_999n }), 'out of gas', 29_999n);
  expectHalt(await callModule(module, config, state, mint(RECIPIENT, 1n), { gas: 31_755n }), 'out of gas', 31_755n);
  assert.is(state.balanceOf(RECIPIENT), 0n);
});

test('the allow list functions are there too, on the minter storage', async () => {
  const { state, config } = await activate(module, json);
  const r = expectOk(await callModule(module, config, state, calldata('readAllowList(address)', aword(MANAGER)), { caller: NOBODY }));
  assert.is(toHex(r.output), toHex(word(3n)));
  expectOk(await callModule(module, config, state, calldata('setEnabled(address)', aword(NOBODY))));
  expectOk(await callModule(module, config, state, mint(RECIPIENT, 2n), { caller: NOBODY }));
  assert.is(state.balanceOf(RECIPIENT), 2n);
});

test('initialMint: hex or decimal amounts credited on activation, JSON as hex, errors named', async () => {
  const a = '0x1000000000000000000000000000000000000001';
  const b = '0x1000000000000000000000000000000000000002';
  const { state, config } = await activate(module, { blockTimestamp: 0, initialMint: { [b]: '1000', [a]: '0xde0b6b3a7640000' } });
  assert.is(state.balanceOf(fromHex(a)), 10n ** 18n);
  assert.is(state.balanceOf(fromHex(b)), 1000n);
  assert.equal(module.configJson(config), { blockTimestamp: 0, initialMint: { [a]: '0xde0b6b3a7640000', [b]: '0x3e8' } });
  const fails = (initialMint: unknown, field: string, why: string) =>
    expectConfigError(module, { blockTimestamp: 0, initialMint }, `contractNativeMinterConfig.initialMint${field}`, why, PRE_DURANGO);
  fails({ [a]: null }, `.${a}`, 'initial mint cannot contain nil amount');
  fails({ [a]: '-1' }, `.${a}`, `initial mint cannot contain invalid amount -1 for address ${a}`);
  fails({ [a]: 'ten' }, `.${a}`, 'invalid hex or decimal integer "ten"');
  fails({ [a]: `0x1${'0'.repeat(64)}` }, `.${a}`, `invalid hex or decimal integer "0x1${'0'.repeat(64)}"`);
  fails({ '1000000000000000000000000000000000000001': '1' }, '.1000000000000000000000000000000000000001', 'must be a 0x-prefixed 20-byte hex address');
  fails([1], '', 'must be a JSON object, got an array');
});

test.run();
