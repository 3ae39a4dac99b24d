import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { fromHex, toHex } from '@cornice/sdk';
import {
  canDeploy,
  canTransact,
  checkDeploy,
  checkTransact,
  contractDeployerAllowList,
  readRole,
  Role,
  TX_ALLOW_LIST_ADDRESS,
  txAllowList,
} from '../src/index.js';
import { activate, ADMIN, aword, calldata, callModule, ENABLED, expectOk, MANAGER, NOBODY } from './precompile-helpers.js';

const hex0x = (a: Uint8Array) => `0x${toHex(a)}`;
const json = { blockTimestamp: 0, adminAddresses: [hex0x(ADMIN)], managerAddresses: [hex0x(MANAGER)], enabledAddresses: [hex0x(ENABLED)] };

test('deployer allow list: keys, addresses; admin, manager and enabled may deploy, others get the reference text', async () => {
  assert.is(contractDeployerAllowList.key, 'contractDeployerAllowListConfig');
  assert.is(hex0x(contractDeployerAllowList.address), '0x0200000000000000000000000000000000000000');
  const { state } = await activate(contractDeployerAllowList, json);
  for (const a of [ADMIN, MANAGER, ENABLED]) {
    assert.ok(await canDeploy(state, a));
    assert.is(await checkDeploy(state, a), undefined);
  }
  assert.not.ok(await canDeploy(state, NOBODY));
  // Go prints the address with its EIP-55 checksum.
  const vector = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
  assert.is(await checkDeploy(state, fromHex(vector)), `tx.origin ${vector} is not authorized to deploy a contract`);
  assert.is(await checkDeploy(state, NOBODY), 'tx.origin 0x0000000000000000000000000000000000000099 is not authorized to deploy a contract');
});

test('deployer allow list: an admin enables an address, which then may deploy', async () => {
  const { state, config } = await activate(contractDeployerAllowList, json);
  expectOk(await callModule(contractDeployerAllowList, config, state, calldata('setEnabled(address)', aword(NOBODY))));
  assert.ok(await canDeploy(state, NOBODY));
});

test('tx allow list: keys, address, its own storage; non-listed senders refused with the reference text', async () => {
  assert.is(txAllowList.key, 'txAllowListConfig');
  assert.is(hex0x(TX_ALLOW_LIST_ADDRESS), '0x0200000000000000000000000000000000000002');
  const { state, config } = await activate(txAllowList, json);
  assert.is(await readRole(state, TX_ALLOW_LIST_ADDRESS, ADMIN), Role.Admin);
  for (const a of [ADMIN, MANAGER, ENABLED]) assert.ok(await canTransact(state, a));
  assert.is(await checkTransact(state, NOBODY), 'cannot issue transaction from non-allow listed address: 0x0000000000000000000000000000000000000099');
  // The deployer list is a different precompile: roles there do not count here.
  const other = await activate(contractDeployerAllowList, { blockTimestamp: 0, enabledAddresses: [hex0x(NOBODY)] }, { state });
  assert.ok(await canDeploy(other.state, NOBODY));
  assert.not.ok(await canTransact(state, NOBODY));
  expectOk(await callModule(txAllowList, config, state, calldata('setEnabled(address)', aword(NOBODY))));
  assert.ok(await canTransact(state, NOBODY));
});

test.run();
