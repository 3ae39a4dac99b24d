import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { toHex } from '@cornice/sdk';
import {
  createFeeManager,
  FEE_CONFIG_CHANGED_EVENT_GAS,
  FEE_CONFIG_CHANGED_TOPIC,
  FEE_CONFIG_FIELDS,
  FEE_MANAGER_ADDRESS as AT,
  feeManager as module,
  type FeeConfig,
  readFeeConfig,
  readLastChangedAt,
} from '../src/index.js';
import {
  activate,
  ADMIN,
  aword,
  block,
  calldata,
  callModule,
  chainView,
  DEFAULT_FEE_CONFIG,
  ENABLED,
  expectConfigError,
  expectHalt,
  expectOk,
  NOBODY,
  PRE_DURANGO,
  word,
} from './precompile-helpers.js';

const hex0x = (a: Uint8Array) => `0x${toHex(a)}`;
const SET = 'setFeeConfig(uint256,uint256,uint256,uint256,uint256,uint256,uint256,uint256)';
const json = { blockTimestamp: 0, adminAddresses: [hex0x(ADMIN)], enabledAddresses: [hex0x(ENABLED)] };
const NEW: FeeConfig = {
  gasLimit: 20_000_000n,
  targetBlockRate: 2n,
  minBaseFee: 1_000_000_000n,
  targetGas: 100_000_000n,
  baseFeeChangeDenominator: 48n,
  minBlockGasCost: 0n,
  maxBlockGasCost: 10_000_000n,
  blockGasCostStep: 500_000n,
};
const words = (c: FeeConfig) => FEE_CONFIG_FIELDS.map((f) => word(c[f]));
const set = (c: FeeConfig) => calldata(SET, ...words(c));
const hexWords = (c: FeeConfig) => words(c).map(toHex).join('');

test('key and address of A.3', () => {
  assert.is(module.key, 'feeManagerConfig');
  assert.is(hex0x(AT), '0x0200000000000000000000000000000000000003');
});

test('configure stores the genesis fee config (field i at slot 0x0i00…, block at "lca") when there is no initialFeeConfig', async () => {
  const { state } = await activate(module, json, { block: block({ number: 0n }) });
  assert.equal(await readFeeConfig(state), DEFAULT_FEE_CONFIG);
  assert.is(await readLastChangedAt(state), 0n);
  const storage = state.storageOf(AT);
  assert.is(storage[`01${'00'.repeat(31)}`], toHex(word(8_000_000n)));
  assert.is(storage[`08${'00'.repeat(31)}`], toHex(word(200_000n)));
  assert.not.ok(`6c6361${'00'.repeat(29)}` in storage, 'block 0 leaves the slot empty');
  assert.is(storage[toHex(aword(ADMIN))], toHex(word(2n)));
});

test('configure stores initialFeeConfig and the activation block', async () => {
  const initialFeeConfig = Object.fromEntries(FEE_CONFIG_FIELDS.map((f) => [f, Number(NEW[f])]));
  const { state, config } = await activate(module, { ...json, initialFeeConfig }, { block: block({ number: 12n }) });
  assert.equal(await readFeeConfig(state), NEW);
  assert.is(await readLastChangedAt(state), 12n);
  assert.is(state.storageOf(AT)[`6c6361${'00'.repeat(29)}`], toHex(word(12n)));
  assert.equal(module.configJson(config), { blockTimestamp: 0, adminAddresses: [hex0x(ADMIN)], enabledAddresses: [hex0x(ENABLED)], initialFeeConfig });
});

test('setFeeConfig: 180,000 + 45,221 gas after Durango, FeeConfigChanged(sender; old, new), storage and last-changed block', async () => {
  const { state, config } = await activate(module, json);
  const r = expectOk(await callModule(module, config, state, set(NEW), { caller: ENABLED, block: block({ number: 42n }) }));
  assert.is(r.gasUsed, 180_000n + 45_221n);
  assert.is(FEE_CONFIG_CHANGED_EVENT_GAS, 45_221n);
  assert.equal(r.logs!.map((l) => l.topics.map(toHex)), [[toHex(FEE_CONFIG_CHANGED_TOPIC), toHex(aword(ENABLED))]]);
  assert.is(toHex(r.logs![0]!.data), hexWords(DEFAULT_FEE_CONFIG) + hexWords(NEW));
  assert.equal(await readFeeConfig(state), NEW);
  assert.is(await readLastChangedAt(state), 42n);
});

test('getFeeConfig (40,000 gas) and getFeeConfigLastChangedAt (5,000 gas), open to anyone, in static calls', async () => {
  const { state, config } = await activate(module, json, { block: block({ number: 3n }) });
  const g = expectOk(await callModule(module, config, state, calldata('getFeeConfig()'), { caller: NOBODY, isStatic: true }));
  assert.is(g.gasUsed, 40_000n);
  assert.is(toHex(g.output), hexWords(DEFAULT_FEE_CONFIG));
  const l = expectOk(await callModule(module, config, state, calldata('getFeeConfigLastChangedAt()'), { caller: NOBODY, isStatic: true }));
  assert.is(l.gasUsed, 5_000n);
  assert.is(toHex(l.output), toHex(word(3n)));
});

test('before Durango: 180,000 gas, no event, exactly 256 bytes', async () => {
  const { state, config } = await activate(module, json, { chain: PRE_DURANGO });
  const r = expectOk(await callModule(module, config, state, set(NEW), { chain: PRE_DURANGO }));
  assert.is(r.gasUsed, 180_000n);
  assert.equal(r.logs, []);
  expectHalt(await callModule(module, config, state, calldata(SET, ...words(NEW), word(0n)), { chain: PRE_DURANGO }), 'invalid input length for fee config Input: 288');
  // After Durango the extra word passes; a missing one fails as the ABI unpacker.
  const post = await activate(module, json);
  expectOk(await callModule(module, post.config, post.state, calldata(SET, ...words(NEW), word(0n))));
  expectHalt(
    await callModule(module, post.config, post.state, calldata(SET, ...words(NEW).slice(0, 7))),
    'abi: cannot marshal in to go type: length insufficient 224 require 256',
  );
});

test('a non-enabled caller cannot change it; static call; out of gas; nothing stored', async () => {
  const { state, config } = await activate(module, json);
  expectHalt(await callModule(module, config, state, set(NEW), { caller: NOBODY }), 'non-enabled cannot change fee config: 0x0000000000000000000000000000000000000099');
  expectHalt(await callModule(module, config, state, set(NEW), { isStatic: true }), 'write protection');
  expectHalt(await callModule(module, config, state, set(NEW), { gas: 179_999n }), 'out of gas', 179_999n);
  expectHalt(await callModule(module, config, state, set(NEW), { gas: 225_220n }), 'out of gas', 225_220n);
  assert.equal(await readFeeConfig(state), DEFAULT_FEE_CONFIG);
});

test('an invalid config is refused with FeeConfig.Verify text; targetBlockRate is read as a uint64', async () => {
  const { state, config } = await activate(module, json);
  const bad = (over: Partial<FeeConfig>) => callModule(module, config, state, set({ ...NEW, ...over }));
  expectHalt(await bad({ gasLimit: 0n }), 'cannot verify fee config: gasLimit cannot be less than or equal to 0: gasLimit = 0');
  expectHalt(await bad({ targetGas: 0n }), 'cannot verify fee config: targetGas cannot be less than or equal to 0: targetGas = 0');
  expectHalt(
    await bad({ baseFeeChangeDenominator: 0n }),
    'cannot verify fee config: baseFeeChangeDenominator cannot be less than or equal to 0: baseFeeChangeDenominator = 0',
  );
  expectHalt(
    await bad({ minBlockGasCost: 2n, maxBlockGasCost: 1n }),
    'cannot verify fee config: minBlockGasCost cannot be greater than maxBlockGasCost: minBlockGasCost = 2, maxBlockGasCost = 1',
  );
  expectHalt(await bad({ maxBlockGasCost: 1n << 64n }), `cannot verify fee config: maxBlockGasCost is not a valid uint64: maxBlockGasCost = ${1n << 64n}`);
  // 2^64 keeps its low 64 bits: 0.
  expectHalt(await bad({ targetBlockRate: 1n << 64n }), 'cannot verify fee config: targetBlockRate cannot be less than or equal to 0: targetBlockRate = 0');
  assert.equal(await readFeeConfig(state), DEFAULT_FEE_CONFIG);
  expectOk(await bad({ targetBlockRate: (1n << 64n) + 5n }));
  assert.is((await readFeeConfig(state)).targetBlockRate, 5n);
});

test('an injected verify is the one used, in calls and in configs', async () => {
  const strict = createFeeManager({ verify: (c) => (c.gasLimit > 10_000_000n ? 'gasLimit too high for this chain' : undefined) });
  const { state, config } = await activate(strict, json);
  expectHalt(await callModule(strict, config, state, set(NEW)), 'cannot verify fee config: gasLimit too high for this chain');
  const initialFeeConfig = Object.fromEntries(FEE_CONFIG_FIELDS.map((f) => [f, Number(NEW[f])]));
  assert.throws(() => strict.parseConfig({ blockTimestamp: 0, initialFeeConfig }, 'feeManagerConfig', chainView()), /gasLimit too high/);
});

test('initialFeeConfig errors name the field', () => {
  const fails = (initialFeeConfig: unknown, field: string, why: string) =>
    expectConfigError(module, { blockTimestamp: 0, initialFeeConfig }, `feeManagerConfig.initialFeeConfig${field}`, why, PRE_DURANGO);
  const full = Object.fromEntries(FEE_CONFIG_FIELDS.map((f) => [f, Number(NEW[f])]));
  fails({ ...full, gasLimit: undefined }, '.gasLimit', 'gasLimit cannot be nil');
  fails({ ...full, targetBlockRate: undefined }, '.targetBlockRate', 'targetBlockRate cannot be less than or equal to 0: targetBlockRate = 0');
  fails({ ...full, minBaseFee: -1 }, '.minBaseFee', 'minBaseFee cannot be less than 0: minBaseFee = -1');
  fails({ ...full, targetGas: 'ten' }, '.targetGas', 'must be an integer (a JSON number, or a decimal or 0x string), got "ten"');
  fails({ ...full, gasLimit: 1.5 }, '.gasLimit', 'must be an integer, got 1.5');
  fails({ ...full, gasPrice: 1 }, '.gasPrice', `unknown fee config field (known: ${FEE_CONFIG_FIELDS.join(', ')})`);
  fails('x', '', 'must be a JSON object, got a string');
});

test.run();
