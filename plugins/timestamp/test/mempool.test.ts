import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { TimestampError } from '../src/index.js';
import { payload, rejection, setup } from './helpers.js';

const isCode = (e: unknown, code: string) => e instanceof TimestampError && e.code === code;

test('waitForEvent resolves pendingTxs when something is proposed', async () => {
  const { vm } = await setup();
  const ac = new AbortController();
  let resolved = false;
  const waiting = vm.waitForEvent(ac.signal).then((ev) => ((resolved = true), ev));
  await new Promise((r) => setImmediate(r));
  assert.is(resolved, false);
  vm.proposeBlock(payload(1));
  assert.is(await waiting, 'pendingTxs');
});

test('waitForEvent resolves at once while the mempool is not empty', async () => {
  const { vm } = await setup();
  vm.proposeBlock(payload(1));
  assert.is(await vm.waitForEvent(new AbortController().signal), 'pendingTxs');
  assert.is(await vm.waitForEvent(new AbortController().signal), 'pendingTxs');
  await vm.buildBlock();
  // Empty again: it waits.
  const ac = new AbortController();
  const waiting = rejection(vm.waitForEvent(ac.signal));
  ac.abort();
  assert.ok(isCode(await waiting, 'Aborted'));
});

test('waitForEvent rejects promptly on abort (and when already aborted)', async () => {
  const { vm } = await setup();
  const ac = new AbortController();
  const waiting = rejection(vm.waitForEvent(ac.signal));
  ac.abort();
  const e = await waiting;
  assert.ok(isCode(e, 'Aborted'));
  assert.ok(isCode(await rejection(vm.waitForEvent(ac.signal)), 'Aborted'));
});

test('several waiters all wake; an aborted one does not block the others', async () => {
  const { vm } = await setup();
  const a = new AbortController();
  const b = new AbortController();
  const wa = rejection(vm.waitForEvent(a.signal));
  const wb = vm.waitForEvent(b.signal);
  const wc = vm.waitForEvent(new AbortController().signal);
  a.abort();
  assert.ok(isCode(await wa, 'Aborted'));
  vm.proposeBlock(payload(1));
  assert.equal(await Promise.all([wb, wc]), ['pendingTxs', 'pendingTxs']);
  b.abort(); // after resolution: no effect, no unhandled rejection
});

test('shutdown rejects pending waits', async () => {
  const { vm } = await setup();
  const waiting = rejection(vm.waitForEvent(new AbortController().signal));
  await vm.shutdown();
  assert.ok(isCode(await waiting, 'ShutDown'));
});

test('the mempool is bounded: a clear error when full', async () => {
  const { vm } = await setup({ vm: { mempoolCapacity: 3 } });
  for (let i = 0; i < 3; i++) vm.proposeBlock(payload(i));
  let err: unknown;
  try {
    vm.proposeBlock(payload(9));
  } catch (e) {
    err = e;
  }
  assert.ok(isCode(err, 'MempoolFull'));
  assert.match((err as Error).message, 'mempool is full');
  await vm.buildBlock();
  vm.proposeBlock(payload(9)); // room again
  assert.is(vm.pendingCount, 3);
});

test('the default capacity is 4096', async () => {
  const { vm } = await setup();
  for (let i = 0; i < 4096; i++) vm.proposeBlock(payload(i & 0xff));
  assert.throws(() => vm.proposeBlock(payload(0)), (e: unknown) => isCode(e, 'MempoolFull'));
});

test('a proposed payload is copied', async () => {
  const { vm } = await setup();
  const data = payload(1);
  vm.proposeBlock(data);
  data.fill(2);
  assert.equal((await vm.buildBlock()).data, payload(1));
});

test.run();
