import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Id, InvalidParamsError, NotFoundError, cb58Encode, type BoundMethod } from '@cornice/sdk';
import { timestampApi, timestampService, type BlockReply } from '../src/index.js';
import { payload, rejection, setup } from './helpers.js';

const GENESIS_ID = 'zpeWnFqmbnoSw1DSNzJE22SfMBBXa6tqwHdniD6cYSsSEwDro';

async function methods() {
  const s = await setup();
  const bound = timestampService(s.vm);
  return {
    ...s,
    getBlock: bound.methods.get('timestamp.getBlock')! as (p: unknown) => Promise<BlockReply>,
    proposeBlock: bound.methods.get('timestamp.proposeBlock')! as BoundMethod,
  };
}

test('the declaration: service timestamp with getBlock and proposeBlock', () => {
  assert.is(timestampApi.name, 'timestamp');
  assert.equal(Object.keys(timestampApi.methods).sort(), ['getBlock', 'proposeBlock']);
});

test('getBlock without id: the last accepted block (genesis)', async () => {
  const { getBlock } = await methods();
  const expected = { id: GENESIS_ID, data: cb58Encode(new Uint8Array(32)), timestamp: '0', parentID: Id.empty.toString() };
  assert.equal(await getBlock({}), expected);
  assert.equal(await getBlock(undefined), expected);
  assert.equal(await getBlock({ id: null }), expected);
  assert.equal(await getBlock([{}]), expected);
});

test('proposeBlock -> build -> accept -> getBlock by id and as latest', async () => {
  const { vm, clock, getBlock, proposeBlock } = await methods();
  const data = payload(0x5a);
  assert.equal(await proposeBlock({ data: cb58Encode(data) }), { Success: true });
  assert.is(await vm.waitForEvent(new AbortController().signal), 'pendingTxs');
  const b = await vm.buildBlock();
  await b.verify();

  // Processing blocks are found by ID.
  const byId = await getBlock({ id: b.id.toString() });
  assert.equal(byId, { id: b.id.toString(), data: cb58Encode(data), timestamp: String(clock.seconds), parentID: GENESIS_ID });
  assert.is((await getBlock({})).id, GENESIS_ID);

  await b.accept();
  assert.equal(await getBlock({}), byId);
  assert.equal(await getBlock({ ID: b.id.toString() }), byId); // field names match case-insensitively
});

test('getBlock of an unknown ID: NotFoundError naming it', async () => {
  const { getBlock } = await methods();
  const unknown = Id.fromBytes(new Uint8Array(32).fill(1)).toString();
  const e = await rejection(getBlock({ id: unknown }));
  assert.instance(e, NotFoundError);
  assert.is((e as Error).message, `block ${unknown} not found`);
});

test('getBlock with a malformed id: InvalidParamsError on id; an unknown field is ignored', async () => {
  const { getBlock } = await methods();
  for (const id of ['not-cb58!', 42, '', cb58Encode(new Uint8Array(20))]) {
    const e = await rejection(getBlock({ id }));
    assert.instance(e, InvalidParamsError);
    assert.is((e as InvalidParamsError).field, 'id');
  }
  // An unknown field is ignored, as the reference's decoder did: the call is getBlock without id.
  assert.equal(await getBlock({ bogus: 1 }), await getBlock({}));
});

test('proposeBlock refuses anything but cb58 of exactly 32 bytes', async () => {
  const { vm, proposeBlock } = await methods();
  const cases: unknown[] = [cb58Encode(new Uint8Array(31)), cb58Encode(new Uint8Array(33)), 'not-cb58!', '', 42, null, 'x'.repeat(65)];
  for (const data of cases) {
    const e = await rejection(proposeBlock({ data }));
    assert.instance(e, InvalidParamsError, `data = ${JSON.stringify(data)}`);
    assert.is((e as InvalidParamsError).field, 'data');
    assert.match((e as Error).message, 'data: must be base 58 repr. of 32 bytes');
  }
  const missing = await rejection(proposeBlock({}));
  assert.instance(missing, InvalidParamsError);
  assert.is((missing as InvalidParamsError).field, 'data');
  assert.is(vm.pendingCount, 0);
});

test('proposeBlock when the mempool is full: a domain error, not invalid params', async () => {
  const { proposeBlock } = await methods();
  for (let i = 0; i < 4096; i++) await proposeBlock({ data: cb58Encode(payload(i & 0xff)) });
  const e = await rejection(proposeBlock({ data: cb58Encode(payload(1)) }));
  assert.not.instance(e, InvalidParamsError);
  assert.match((e as Error).message, 'mempool is full');
});

test.run();
