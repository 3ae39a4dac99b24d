import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { fromHex, toHex } from '@cornice/sdk';
import {
  ConfigError,
  FEE_RECIPIENTS_ALLOWED_TOPIC,
  readRewardConfig,
  REWARD_ADDRESS_CHANGED_TOPIC,
  REWARD_MANAGER_ADDRESS as AT,
  rewardManager as module,
  REWARDS_DISABLED_TOPIC,
} from '../src/index.js';
import { activate, ADMIN, aword, calldata, callModule, chainView, DURANGO, ENABLED, expectHalt, expectOk, NOBODY, PRE_DURANGO, word } from './precompile-helpers.js';

const hex0x = (a: Uint8Array) => `0x${toHex(a)}`;
const json = { blockTimestamp: 0, adminAddresses: [hex0x(ADMIN)], enabledAddresses: [hex0x(ENABLED)] };
const REWARD = fromHex('0x2000000000000000000000000000000000000002');
const BLACKHOLE = fromHex('0x0100000000000000000000000000000000000000');
const RASK = `7261736b${'00'.repeat(28)}`;
const AFRAV = `6166726176${'00'.repeat(27)}`;

test('key and address of A.3', () => {
  assert.is(module.key, 'rewardManagerConfig');
  assert.is(hex0x(AT), '0x0200000000000000000000000000000000000004');
});

test('configure without initialRewardConfig follows allowFeeRecipients: "afrav" or the black hole in the "rask" slot', async () => {
  const burn = await activate(module, json);
  assert.is(burn.state.storageOf(AT)[RASK], toHex(aword(BLACKHOLE)));
  assert.equal(await readRewardConfig(burn.state), { kind: 'burn' });
  const allow = await activate(module, json, { chain: chainView({ durango: 0n, allowFeeRecipients: true }) });
  assert.is(allow.state.storageOf(AT)[RASK], AFRAV);
  assert.equal(await readRewardConfig(allow.state), { kind: 'allowFeeRecipients' });
});

test('configure with initialRewardConfig: allow fee recipients, a reward address, or neither (disabled)', async () => {
  const a = await activate(module, { ...json, initialRewardConfig: { allowFeeRecipients: true } });
  assert.equal(await readRewardConfig(a.state), { kind: 'allowFeeRecipients' });
  const b = await activate(module, { ...json, initialRewardConfig: { rewardAddress: hex0x(REWARD) } });
  assert.is(b.state.storageOf(AT)[RASK], toHex(aword(REWARD)));
  assert.equal(await readRewardConfig(b.state), { kind: 'address', address: REWARD });
  assert.equal(module.configJson(b.config).initialRewardConfig, { allowFeeRecipients: false, rewardAddress: hex0x(REWARD) });
  const c = await activate(module, { ...json, initialRewardConfig: { allowFeeRecipients: false } }, { chain: chainView({ durango: 0n, allowFeeRecipients: true }) });
  assert.equal(await readRewardConfig(c.state), { kind: 'burn' });
  assert.throws(
    () => module.parseConfig({ ...json, initialRewardConfig: { allowFeeRecipients: true, rewardAddress: hex0x(REWARD) } }, 'rewardManagerConfig', DURANGO),
    (e: Error) => e instanceof ConfigError && e.message === 'invalid chain config: rewardManagerConfig.initialRewardConfig: cannot enable both fee recipients and reward address at the same time',
  );
  assert.throws(
    () => module.parseConfig({ ...json, initialRewardConfig: { allowFeeRecipients: 'yes' } }, 'rewardManagerConfig', DURANGO),
    (e: Error) => e instanceof ConfigError && e.message === 'invalid chain config: rewardManagerConfig.initialRewardConfig.allowFeeRecipients: must be true or false, got a string',
  );
});

test('setRewardAddress: 25,000 + 6,875 gas, RewardAddressChanged(sender, old, new), stored; readers see it', async () => {
  const { state, config } = await activate(module, json);
  const r = expectOk(await callModule(module, config, state, calldata('setRewardAddress(address)', aword(REWARD)), { caller: ENABLED }));
  assert.is(r.gasUsed, 25_000n + 6_875n);
  assert.equal(r.logs!.map((l) => l.topics.map(toHex)), [[toHex(REWARD_ADDRESS_CHANGED_TOPIC), toHex(aword(ENABLED)), toHex(aword(BLACKHOLE)), toHex(aword(REWARD))]]);
  assert.is(r.logs![0]!.data.length, 0);
  assert.equal(await readRewardConfig(state), { kind: 'address', address: REWARD });
  const cur = expectOk(await callModule(module, config, state, calldata('currentRewardAddress()'), { caller: NOBODY, isStatic: true }));
  assert.is(cur.gasUsed, 5_000n);
  assert.is(toHex(cur.output), toHex(aword(REWARD)));
  const allowed = expectOk(await callModule(module, config, state, calldata('areFeeRecipientsAllowed()'), { caller: NOBODY, isStatic: true }));
  assert.is(allowed.gasUsed, 5_000n);
  assert.is(toHex(allowed.output), toHex(word(0n)));
});

test('allowFeeRecipients and disableRewards: 25,000 + 1,125 gas and their events', async () => {
  const { state, config } = await activate(module, json);
  const a = expectOk(await callModule(module, config, state, calldata('allowFeeRecipients()')));
  assert.is(a.gasUsed, 26_125n);
  assert.equal(a.logs!.map((l) => l.topics.map(toHex)), [[toHex(FEE_RECIPIENTS_ALLOWED_TOPIC), toHex(aword(ADMIN))]]);
  assert.is(state.storageOf(AT)[RASK], AFRAV);
  const yes = expectOk(await callModule(module, config, state, calldata('areFeeRecipientsAllowed()')));
  assert.is(toHex(yes.output), toHex(word(1n)));
  // "afrav" sits in the high bytes: as an address it is zero.
  const cur = expectOk(await callModule(module, config, state, calldata('currentRewardAddress()')));
  assert.is(toHex(cur.output), toHex(word(0n)));
  const d = expectOk(await callModule(module, config, state, calldata('disableRewards()')));
  assert.is(d.gasUsed, 26_125n);
  assert.equal(d.logs!.map((l) => l.topics.map(toHex)), [[toHex(REWARDS_DISABLED_TOPIC), toHex(aword(ADMIN))]]);
  assert.equal(await readRewardConfig(state), { kind: 'burn' });
});

test('before Durango: 25,000 gas and no events; setRewardAddress needs a multiple of 32 bytes', async () => {
  const { state, config } = await activate(module, json, { chain: PRE_DURANGO });
  const o = { chain: PRE_DURANGO };
  for (const input of [calldata('allowFeeRecipients()'), calldata('disableRewards()'), calldata('setRewardAddress(address)', aword(REWARD))]) {
    const r = expectOk(await callModule(module, config, state, input, o));
    assert.is(r.gasUsed, 25_000n);
    assert.equal(r.logs, []);
  }
  expectOk(await callModule(module, config, state, calldata('setRewardAddress(address)', aword(REWARD), word(9n)), o));
  expectHalt(await callModule(module, config, state, calldata('setRewardAddress(address)', aword(REWARD), new Uint8Array(1)), o), 'invalid input length for setting reward address: 33');
  expectHalt(await callModule(module, config, state, calldata('setRewardAddress(address)'), o), 'abi: attempting to unmarshall an empty string while arguments are expected');
});

test('refusals: non-enabled callers (each setter its own text), the empty address, static calls, out of gas', async () => {
  const { state, config } = await activate(module, json);
  const nobody = '0x0000000000000000000000000000000000000099';
  expectHalt(await callModule(module, config, state, calldata('allowFeeRecipients()'), { caller: NOBODY }), `non-enabled cannot call allowFeeRecipients: ${nobody}`);
  expectHalt(await callModule(module, config, state, calldata('disableRewards()'), { caller: NOBODY }), `non-enabled cannot call disableRewards: ${nobody}`);
  expectHalt(await callModule(module, config, state, calldata('setRewardAddress(address)', aword(REWARD)), { caller: NOBODY }), `non-enabled cannot call setRewardAddress: ${nobody}`);
  expectHalt(await callModule(module, config, state, calldata('setRewardAddress(address)', word(0n))), 'reward address cannot be empty');
  expectHalt(await callModule(module, config, state, calldata('allowFeeRecipients()'), { isStatic: true }), 'write protection');
  expectHalt(await callModule(module, config, state, calldata('setRewardAddress(address)', aword(REWARD)), { gas: 31_874n }), 'out of gas', 31_874n);
  expectHalt(await callModule(module, config, state, calldata('currentRewardAddress()'), { gas: 4_999n }), 'out of gas', 4_999n);
  assert.equal(await readRewardConfig(state), { kind: 'burn' });
});

test.run();
