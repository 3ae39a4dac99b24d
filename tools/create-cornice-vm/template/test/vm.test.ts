import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chainVMCompliance, rpcSweep, runVM, testChainContext } from '@cornice/core/testing';
import { hasErrorCode, utf8Encode, vmIdFromName, type ChainVM } from '@cornice/sdk';
import { api, Vm, vmFactory } from '../src/index.js';

/** Issues a tx through the VM's own service, as a client would. */
let n = 0;
async function issueTx(vm: ChainVM, key = `k${n++}`, value = 'v'): Promise<unknown> {
  const [handler] = await vm.createHandlers();
  return handler!.services![0]!.methods.get('__VM_NAME__.issueTx')!({ key, value });
}

// The ChainVM contract the engine relies on, checked on a bare VM over a memory store.
for (const check of chainVMCompliance(vmFactory, { makePending: (vm) => issueTx(vm).then(() => {}) })) test(check.name, check.run);

test('vmID is the name zero-padded to 32 bytes', () => {
  assert.is(vmFactory.vmId.toString(), vmIdFromName('__VM_NAME__').toString());
  assert.is(vmFactory.vmId.toString(), '__VM_ID__');
});

test('on a real one-node chain: issueTx, the block is accepted, get; the data survives a restart', async () => {
  let h = await runVM(vmFactory, { genesis: utf8Encode('{"hello":"world"}') });
  try {
    const client = h.client(api);
    assert.equal(await client.get({ key: 'hello' }), { key: 'hello', value: 'world', height: 0 });
    const { txID } = await client.issueTx({ key: 'colour', value: 'blue' });
    assert.type(txID, 'string');
    assert.is((await h.waitForAccepted(1)).height, 1);
    assert.equal(await client.get({ key: 'colour' }), { key: 'colour', value: 'blue', height: 1 });
    h = await h.restart();
    assert.equal(await h.client(api).get({ key: 'colour' }), { key: 'colour', value: 'blue', height: 1 });
    const missing = await h.call('__VM_NAME__.get', { key: 'nope' });
    assert.equal(missing.error, { code: -32000, message: 'key "nope" not found', data: { code: 'NotFound' } });
  } finally {
    await h.stop();
  }
});

test('every method answers malformed calls with a clear error (never -32603)', async () => {
  const h = await runVM(vmFactory);
  try {
    assert.equal(await rpcSweep(h.url, [api]), []);
  } finally {
    await h.stop();
  }
});

test('the txs of a rejected block go back to the mempool', async () => {
  const vm = new Vm();
  await vm.initialize(testChainContext(), { genesis: new Uint8Array() });
  await issueTx(vm, 'a', '1');
  const block = await vm.buildBlock();
  assert.is(vm.mempool.size, 0);
  await block.verify();
  await block.reject();
  assert.is(vm.mempool.size, 1);
  await vm.shutdown();
});

test('a block built here that fails verify is forgotten, and its txs go back to the mempool', async () => {
  let now = Date.now();
  const vm = new Vm();
  await vm.initialize(testChainContext({ clock: { now: () => now } }), { genesis: new Uint8Array() });
  await issueTx(vm, 'b', '2');
  now += 2 * 3600_000; // the block is built two hours ahead...
  const block = await vm.buildBlock();
  now -= 2 * 3600_000; // ...and verified with the clock back: "an hour or more ahead"
  try {
    await block.verify();
    assert.unreachable('verify passed');
  } catch (e) {
    assert.ok(hasErrorCode(e, 'InvalidBlock'), String(e));
  }
  assert.is(vm.mempool.size, 1, 'the tx is pending again');
  const again = await vm.buildBlock();
  await again.verify();
  assert.equal(again.txs.map((tx) => tx.key), ['b']);
  await vm.shutdown();
});

test('a bad genesis is refused, naming the problem', () => {
  const refused = (json: string, message: RegExp) => {
    try {
      vmFactory.checkGenesis!(utf8Encode(json));
    } catch (e) {
      assert.ok(hasErrorCode(e, 'InvalidGenesis'), String(e));
      assert.match((e as Error).message, message);
      return;
    }
    assert.unreachable(`genesis ${json} was accepted`);
  };
  refused('[1]', /must be a JSON object/);
  refused('{"a": 1}', /genesis key "a": the value must be a string/);
  refused('{"": "x"}', /key must be 1 to 64 characters/);
  refused('not json', /must be UTF-8 JSON/);
});

test.run();
