import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { fromHex, toHex } from '@cornice/sdk';
import {
  ALLOW_LIST_EVENT_GAS,
  canModify,
  contractDeployerAllowList as module,
  DEPLOYER_ALLOW_LIST_ADDRESS as AT,
  INVALIDATE_DELEGATE_UNIX,
  readRole,
  Role,
  ROLE_SET_TOPIC,
} from '../src/index.js';
import {
  activate,
  ADMIN,
  aword,
  block,
  calldata,
  callModule,
  chainView,
  DURANGO,
  ENABLED,
  expectConfigError,
  expectHalt,
  expectOk,
  MANAGER,
  NOBODY,
  PRE_DURANGO,
  word,
} from './precompile-helpers.js';

const roles = { adminAddresses: [toHex0x(ADMIN)], managerAddresses: [toHex0x(MANAGER)], enabledAddresses: [toHex0x(ENABLED)] };
function toHex0x(a: Uint8Array) {
  return `0x${toHex(a)}`;
}
const setup = (chain = DURANGO) => activate(module, { blockTimestamp: 0, ...(chain === DURANGO ? roles : { ...roles, managerAddresses: [] }) }, { chain });
const slot = (a: Uint8Array) => toHex(aword(a));

test('configure writes each role at the address left-padded to 32 bytes, in the precompile storage', async () => {
  const { state } = await setup();
  assert.equal(state.storageOf(AT), { [slot(ENABLED)]: toHex(word(1n)), [slot(ADMIN)]: toHex(word(2n)), [slot(MANAGER)]: toHex(word(3n)) });
  assert.is(await readRole(state, AT, ADMIN), Role.Admin);
  assert.is(await readRole(state, AT, NOBODY), Role.None);
});

test('readAllowList: 5,000 gas, open to anyone, in a static call too', async () => {
  const { state, config } = await setup();
  for (const [who, role] of [[ADMIN, 2n], [MANAGER, 3n], [ENABLED, 1n], [NOBODY, 0n]] as const) {
    const r = expectOk(await callModule(module, config, state, calldata('readAllowList(address)', aword(who)), { caller: NOBODY, isStatic: true }));
    assert.is(r.gasUsed, 5_000n);
    assert.is(toHex(r.output), toHex(word(role)));
    assert.equal(r.logs, []);
  }
});

test('admin sets every role: 20,000 + 2,131 gas after Durango and a RoleSet(role, account, sender; oldRole) log', async () => {
  const { state, config } = await setup();
  const cases = [
    ['setEnabled(address)', 1n],
    ['setManager(address)', 3n],
    ['setAdmin(address)', 2n],
    ['setNone(address)', 0n],
  ] as const;
  let old = 0n;
  for (const [sig, role] of cases) {
    const r = expectOk(await callModule(module, config, state, calldata(sig, aword(NOBODY))));
    assert.is(r.gasUsed, 20_000n + 2_131n);
    assert.is(ALLOW_LIST_EVENT_GAS, 2_131n);
    assert.is(r.output.length, 0);
    assert.is(r.logs!.length, 1);
    assert.equal(r.logs![0]!.topics.map(toHex), [toHex(ROLE_SET_TOPIC), toHex(word(role)), slot(NOBODY), slot(ADMIN)]);
    assert.is(toHex(r.logs![0]!.data), toHex(word(old)));
    assert.is(await readRole(state, AT, NOBODY), role);
    old = role;
  }
  assert.not.ok(slot(NOBODY) in state.storageOf(AT), 'setNone clears the slot');
});

test('before Durango: 20,000 gas, no event, setManager is not activated', async () => {
  const { state, config } = await setup(PRE_DURANGO);
  const r = expectOk(await callModule(module, config, state, calldata('setEnabled(address)', aword(NOBODY)), { chain: PRE_DURANGO }));
  assert.is(r.gasUsed, 20_000n);
  assert.equal(r.logs, []);
  assert.is(await readRole(state, AT, NOBODY), Role.Enabled);
  const m = await callModule(module, config, state, calldata('setManager(address)', aword(NOBODY)), { chain: PRE_DURANGO });
  expectHalt(m, 'invalid non-activated function selector 0xd0ebdbe7');
  assert.is(await readRole(state, AT, NOBODY), Role.Enabled);
});

test('non-admins cannot modify: the reference text names the caller and both roles; nothing stored', async () => {
  const { state, config } = await setup();
  const before = state.storageOf(AT);
  for (const caller of [ENABLED, NOBODY]) {
    const r = await callModule(module, config, state, calldata('setEnabled(address)', aword(NOBODY)), { caller });
    const name = caller === ENABLED ? '0x0000000000000000000000000000000000000011' : '0x0000000000000000000000000000000000000099';
    expectHalt(r, `cannot modify allow list: modify address: ${name}, from role: NoRole, to role: EnabledRole`);
  }
  assert.equal(state.storageOf(AT), before);
});

test('a manager moves addresses only between None and Enabled (CanModify)', async () => {
  const { state, config } = await setup();
  const m = { caller: MANAGER };
  expectOk(await callModule(module, config, state, calldata('setEnabled(address)', aword(NOBODY)), m));
  assert.is(await readRole(state, AT, NOBODY), Role.Enabled);
  expectOk(await callModule(module, config, state, calldata('setNone(address)', aword(NOBODY)), m));
  assert.is(await readRole(state, AT, NOBODY), Role.None);
  const mgr = '0x0000000000000000000000000000000000000033';
  expectHalt(
    await callModule(module, config, state, calldata('setAdmin(address)', aword(NOBODY)), m),
    `cannot modify allow list: modify address: ${mgr}, from role: NoRole, to role: AdminRole`,
  );
  expectHalt(
    await callModule(module, config, state, calldata('setManager(address)', aword(ENABLED)), m),
    `cannot modify allow list: modify address: ${mgr}, from role: EnabledRole, to role: ManagerRole`,
  );
  expectHalt(
    await callModule(module, config, state, calldata('setNone(address)', aword(ADMIN)), m),
    `cannot modify allow list: modify address: ${mgr}, from role: AdminRole, to role: NoRole`,
  );
  assert.is(await readRole(state, AT, ADMIN), Role.Admin);
  // The table of Role.CanModify.
  assert.ok(canModify(Role.Admin, Role.Admin, Role.None));
  assert.not.ok(canModify(Role.Manager, Role.Manager, Role.None));
  assert.not.ok(canModify(Role.Enabled, Role.None, Role.Enabled));
  assert.not.ok(canModify(7n, Role.None, Role.Enabled));
});

test('a setter in a static call fails with "write protection" and stores nothing', async () => {
  const { state, config } = await setup();
  expectHalt(await callModule(module, config, state, calldata('setAdmin(address)', aword(NOBODY)), { isStatic: true }), 'write protection');
  assert.is(await readRole(state, AT, NOBODY), Role.None);
});

test('out of gas: below 20,000, and after Durango below 20,000 + 2,131 (the event); below 5,000 for a read', async () => {
  const { state, config } = await setup();
  const set = calldata('setEnabled(address)', aword(NOBODY));
  expectHalt(await callModule(module, config, state, set, { gas: 19_999n }), 'out of gas', 19_999n);
  expectHalt(await callModule(module, config, state, set, { gas: 22_130n }), 'out of gas', 22_130n);
  assert.is(await readRole(state, AT, NOBODY), Role.None);
  expectOk(await callModule(module, config, state, set, { gas: 22_131n }));
  expectHalt(await callModule(module, config, state, calldata('readAllowList(address)', aword(NOBODY)), { gas: 4_999n }), 'out of gas', 4_999n);
});

test('short or unknown input: missing selector, invalid selector', async () => {
  const { state, config } = await setup();
  expectHalt(await callModule(module, config, state, new Uint8Array(0)), 'missing function selector to precompile - input length (0)');
  expectHalt(await callModule(module, config, state, fromHex('704b6c')), 'missing function selector to precompile - input length (3)');
  expectHalt(await callModule(module, config, state, fromHex('deadbeef')), 'invalid function selector 0xdeadbeef');
  // A selector of another module's function is unknown here.
  expectHalt(await callModule(module, config, state, calldata('mintNativeCoin(address,uint256)', aword(NOBODY), word(1n))), 'invalid function selector 0x4f5aaaba');
});

test('input length: exact 32 bytes before Durango; after it extra bytes pass and short ones fail as the ABI unpacker', async () => {
  const pre = await setup(PRE_DURANGO);
  const padded = calldata('setEnabled(address)', aword(NOBODY), new Uint8Array(1));
  expectHalt(await callModule(module, pre.config, pre.state, padded, { chain: PRE_DURANGO }), 'invalid input length for modifying allow list: 33');
  expectHalt(
    await callModule(module, pre.config, pre.state, calldata('readAllowList(address)', new Uint8Array(31)), { chain: PRE_DURANGO }),
    'invalid input length for read allow list: 31',
  );
  const post = await setup();
  expectOk(await callModule(module, post.config, post.state, padded));
  assert.is(await readRole(post.state, AT, NOBODY), Role.Enabled);
  expectHalt(
    await callModule(module, post.config, post.state, calldata('setNone(address)', new Uint8Array(31))),
    'abi: cannot marshal in to go type: length insufficient 31 require 32',
  );
  expectHalt(
    await callModule(module, post.config, post.state, calldata('readAllowList(address)')),
    'abi: attempting to unmarshall an empty string while arguments are expected',
  );
  // The upper 12 bytes of an address word are not checked, as go-ethereum.
  const dirty = aword(NOBODY);
  dirty[0] = 0xff;
  const r = expectOk(await callModule(module, post.config, post.state, calldata('readAllowList(address)', dirty)));
  assert.is(toHex(r.output), toHex(word(1n)));
});

test('DELEGATECALL/CALLCODE: runs as a call before 2025-08-02, fails from then, reverts from Granite', async () => {
  const { state, config } = await setup();
  const read = calldata('readAllowList(address)', aword(ADMIN));
  const early = expectOk(await callModule(module, config, state, read, { isDelegate: true, block: block({ timestamp: INVALIDATE_DELEGATE_UNIX - 1n }) }));
  assert.is(toHex(early.output), toHex(word(2n)));
  expectHalt(
    await callModule(module, config, state, read, { isDelegate: true, block: block({ timestamp: INVALIDATE_DELEGATE_UNIX }) }),
    'precompile cannot be called with DELEGATECALL',
  );
  const granite = chainView({ durango: 0n, granite: 1_800_000_000n });
  const r = await callModule(module, config, state, read, { isDelegate: true, chain: granite, block: block({ timestamp: 1_800_000_000n }) });
  assert.equal(r, { ok: false, error: 'execution reverted', revert: true, output: new Uint8Array(0), gasUsed: 1_000_000n });
  // A plain call is unaffected by Granite.
  expectOk(await callModule(module, config, state, read, { chain: granite, block: block({ timestamp: 1_800_000_000n }) }));
});

test('config: the lists are checked as AllowListConfig.Verify, with the field named', () => {
  const a = '0x0000000000000000000000000000000000000011';
  const fails = (json: unknown, field: string, why: string, chain = DURANGO) => expectConfigError(module, json, field, why, chain);
  const k = 'contractDeployerAllowListConfig';
  fails({ blockTimestamp: 0, enabledAddresses: [a, a] }, `${k}.enabledAddresses[1]`, `duplicate address in enabled list: ${a}`);
  fails({ blockTimestamp: 0, adminAddresses: [a, a] }, `${k}.adminAddresses[1]`, `duplicate address in admin list: ${a}`);
  fails({ blockTimestamp: 0, enabledAddresses: [a], adminAddresses: [a] }, `${k}.adminAddresses[0]`, `cannot set address as both admin and enabled: ${a}`);
  fails({ blockTimestamp: 0, adminAddresses: [a], managerAddresses: [a] }, `${k}.managerAddresses[0]`, `cannot set address as both admin and manager: ${a}`);
  fails({ blockTimestamp: 0, enabledAddresses: [a], managerAddresses: [a] }, `${k}.managerAddresses[0]`, `cannot set address as both enabled and manager: ${a}`);
  fails({ blockTimestamp: 0, managerAddresses: [a, a] }, `${k}.managerAddresses[1]`, `duplicate address in manager list: ${a}`);
  fails({ blockTimestamp: 5, managerAddresses: [a] }, `${k}.managerAddresses`, 'cannot add managers before Durango', chainView({ durango: 6n }));
  fails({ adminAddresses: [a] }, `${k}.blockTimestamp`, 'block timestamp cannot be nil');
  fails({ blockTimestamp: -1 }, `${k}.blockTimestamp`, 'must not be negative, got -1');
  fails({ blockTimestamp: 1.5 }, `${k}.blockTimestamp`, 'must be an integer, got 1.5');
  fails({ blockTimestamp: 0, disable: 'yes' }, `${k}.disable`, 'must be true or false, got a string');
  fails({ blockTimestamp: 0, adminAddresses: ['11'] }, `${k}.adminAddresses[0]`, 'must be a 0x-prefixed 20-byte hex address');
  fails({ blockTimestamp: 0, adminAddresses: 'x' }, `${k}.adminAddresses`, 'must be an array of addresses');
  fails([], k, 'must be a JSON object, got an array');
});

test('config JSON: numbers, lower-case addresses, empty lists and a false disable left out', () => {
  const config = module.parseConfig(
    { blockTimestamp: 10, adminAddresses: ['0x8db97C7cEcE249c2b98bDC0226Cc4C2A57BF52FC'], enabledAddresses: null, managerAddresses: [] },
    'k',
    DURANGO,
  );
  assert.equal(module.configJson(config), { blockTimestamp: 10, adminAddresses: ['0x8db97c7cece249c2b98bdc0226cc4c2a57bf52fc'] });
  assert.equal(module.configJson(module.parseConfig({ blockTimestamp: 20, disable: true }, 'k', DURANGO)), { blockTimestamp: 20, disable: true });
  // Beyond 2^53 (upgrade.json's lossless parse gives a decimal string): read and shown exactly.
  const late = module.parseConfig({ blockTimestamp: '1152921504606846977' }, 'k', DURANGO);
  assert.is(late.blockTimestamp, 1152921504606846977n);
  assert.equal(module.configJson(late), { blockTimestamp: '1152921504606846977' });
});

test.run();
