// The timestamp VM on a real one-node chain (real Snowman engine, real HTTP), through the test kit
// a third party would use: the ChainVM compliance checks, runVM, and the RPC sweep.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chainVMCompliance, rpcSweep, runVM } from '@cornice/core/testing';
import { cb58Encode, sha256, type ChainVM } from '@cornice/sdk';
import { type TimestampVM, timestampApi, vmFactory } from '../src/index.js';

let n = 0;
const payload = () => sha256(new TextEncoder().encode(`payload ${n++}`));
const makePending = async (vm: ChainVM) => (vm as TimestampVM).proposeBlock(payload());
for (const check of chainVMCompliance(vmFactory, { makePending })) test(check.name, check.run);
// The same checks with the VM in a worker thread (--vm-isolation): reached through its service.
const proposeThroughService = async (vm: ChainVM) => {
  const [handler] = await vm.createHandlers();
  await handler!.services![0]!.methods.get('timestamp.proposeBlock')!({ data: cb58Encode(payload()) });
};
const worker = { moduleUrl: import.meta.resolve('../src/index.js') };
for (const check of chainVMCompliance(vmFactory, { makePending: proposeThroughService, worker })) test(check.name, check.run);

test('proposeBlock -> accepted -> getBlock over HTTP; blocks survive a restart', async () => {
  let h = await runVM(vmFactory);
  try {
    const ts = h.client(timestampApi);
    const genesis = await ts.getBlock({});
    assert.is(genesis.id, 'zpeWnFqmbnoSw1DSNzJE22SfMBBXa6tqwHdniD6cYSsSEwDro');
    const data = cb58Encode(payload());
    assert.equal(await ts.proposeBlock({ data }), { Success: true });
    const accepted = await h.waitForAccepted(1);
    const block = await ts.getBlock({});
    assert.is(block.id, accepted.id.toString());
    assert.is(block.data, data);
    assert.is(block.parentID, genesis.id);
    assert.equal(await ts.getBlock({ id: block.id }), block);
    h = await h.restart();
    assert.equal(await h.client(timestampApi).getBlock({}), block);
  } finally {
    await h.stop();
  }
});

test('blocks are accepted in proposal order, each on the previous', async () => {
  const h = await runVM(vmFactory);
  try {
    const ts = h.client(timestampApi);
    const sent = Array.from({ length: 5 }, () => cb58Encode(payload()));
    for (const data of sent) await ts.proposeBlock({ data });
    await h.waitForAccepted(5);
    assert.equal(h.accepted.map((b) => b.height), [1, 2, 3, 4, 5]);
    const datas = await Promise.all(h.accepted.map(async (b) => (await ts.getBlock({ id: b.id.toString() })).data));
    assert.equal(datas, sent);
  } finally {
    await h.stop();
  }
});

test('every timestamp method answers malformed calls with a clear error', async () => {
  const h = await runVM(vmFactory);
  try {
    assert.equal(await rpcSweep(h.url, [timestampApi]), []);
  } finally {
    await h.stop();
  }
});

test.run();
