import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chainVMCompliance, rpcSweep, runVM } from '@cornice/core/testing';
import { vmIdFromName, type ChainVM } from '@cornice/sdk';
import { kvApi, vmFactory } from '../src/index.js';

// The ChainVM contract, on a bare VM: makePending queues a write through the VM's own service.
let n = 0;
const makePending = async (vm: ChainVM) => {
  const [handler] = await vm.createHandlers();
  await handler!.services![0]!.methods.get('kv.put')!({ key: `k${n++}`, value: 'v' });
};
for (const check of chainVMCompliance(vmFactory, { makePending })) test(check.name, check.run);
// The same checks with the VM in a worker thread (--vm-isolation).
for (const check of chainVMCompliance(vmFactory, { makePending, worker: { moduleUrl: import.meta.resolve('../src/index.js') } })) test(check.name, check.run);

test('vmId is "kvvm" padded to 32 bytes', () => {
  assert.ok(vmFactory.vmId.equals(vmIdFromName('kvvm')));
});

test('on a real one-node chain: put, wait for acceptance, get; data survives a restart', async () => {
  let h = await runVM(vmFactory, { genesis: new TextEncoder().encode('{"hello":"world"}') });
  try {
    const kv = h.client(kvApi);
    assert.equal(await kv.get({ key: 'hello' }), { key: 'hello', value: 'world', height: 0 });
    assert.equal(await kv.put({ key: 'a', value: '1' }), { success: true });
    const block = await h.waitForAccepted(1);
    assert.is(block.height, 1);
    assert.equal(await kv.get({ key: 'a' }), { key: 'a', value: '1', height: 1 });
    h = await h.restart();
    assert.equal(await h.client(kvApi).get({ key: 'a' }), { key: 'a', value: '1', height: 1 });
    const missing = await h.call('kv.get', { key: 'nope' });
    assert.is(missing.error?.code, -32000);
    assert.is(missing.error?.message, 'key "nope" not found');
  } finally {
    await h.stop();
  }
});

test('every kv method answers malformed calls with a clear error', async () => {
  const h = await runVM(vmFactory);
  try {
    assert.equal(await rpcSweep(h.url, [kvApi]), []);
  } finally {
    await h.stop();
  }
});

test.run();
