import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryStore, PrivateKey, Reader, ShortId, cb58Encode, fromHex } from '@cornice/sdk';
import { ADDRESS_LIST_KEY, MAX_KEYS_PER_USER, UserKeys, decodeAddressList, encodeAddressList } from '@cornice/sdk';
import { EWOQ, EWOQ_ADDRESS, PASSWORD, rejection, served } from './fake-backend.js';

const EWOQ_HEX = '56289e99c94b6912bfc12adc093c9b51124f0dc54ac7a766b2bc5ccf558d8027';

function contains(hay: Uint8Array, needle: Uint8Array): boolean {
  outer: for (let i = 0; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

test('importKey with the ewoq key: X-6Y3k…; stored in the reference layout, encrypted at rest', served(async (h) => {
  const bob = await h.user('bob');
  assert.equal(await h.avm.importKey({ ...bob, privateKey: EWOQ.toCb58() }), { address: EWOQ_ADDRESS });
  // Importing it again lists it once.
  assert.equal(await h.avm.importKey({ ...bob, privateKey: EWOQ.toCb58() }), { address: EWOQ_ADDRESS });

  const db = await h.backend.openUser('bob', PASSWORD);
  const list = (await db.get(ADDRESS_LIST_KEY))!;
  assert.is(list.length, 4 + 20); // codec []ShortID: u32 count, then 20 bytes each
  assert.is(new Reader(list).u32(), 1);
  assert.ok(decodeAddressList(list)[0]!.equals(EWOQ.address));
  assert.equal(await db.get(EWOQ.address.bytes), fromHex(EWOQ_HEX));
  await db.close();
  for await (const [, value] of h.backend.keystoreStore.iterate()) {
    assert.not.ok(contains(value, fromHex(EWOQ_HEX)));
    assert.not.ok(contains(value, EWOQ.address.bytes));
  }
  assert.equal(await h.avm.exportKey({ ...bob, address: EWOQ_ADDRESS }), { privateKey: EWOQ.toCb58() });
}));

test('createAddress: a new key each time; listAddresses in the order added; exportKey gives keys that sign for them', served(async (h) => {
  const bob = await h.user('bob');
  assert.equal(await h.avm.listAddresses(bob), { addresses: [] });
  const a = (await h.avm.createAddress(bob)).address;
  const b = (await h.avm.createAddress(bob)).address;
  await h.avm.importKey({ ...bob, privateKey: EWOQ.toCb58() });
  assert.is.not(a, b);
  assert.match(a, /^X-/);
  assert.equal(await h.avm.listAddresses(bob), { addresses: [a, b, EWOQ_ADDRESS] });
  for (const address of [a, b]) {
    const { privateKey } = await h.avm.exportKey({ ...bob, address });
    assert.is(`X-${PrivateKey.fromString(privateKey).address}`, address);
  }
}));

test('concurrent createAddress calls for one user: every address is listed', served(async (h) => {
  const bob = await h.user('bob');
  const made = await Promise.all(Array.from({ length: 8 }, () => h.avm.createAddress(bob)));
  const listed = (await h.avm.listAddresses(bob)).addresses;
  assert.equal([...listed].sort(), made.map((m) => m.address).sort());
}));

test('keys are per user; the address of a key it lacks: problem retrieving private key: not found', served(async (h) => {
  const bob = await h.user('bob');
  const alice = await h.user('alice', [EWOQ]);
  assert.equal(await h.avm.listAddresses(bob), { addresses: [] });
  assert.equal(await h.avm.listAddresses(alice), { addresses: [EWOQ_ADDRESS] });
  const e = await rejection(h.avm.exportKey({ ...bob, address: EWOQ_ADDRESS }));
  assert.equal([e.rpcCode, e.message], [-32000, 'problem retrieving private key: not found']);
}));

test('unknown user and wrong password: -32000 problem retrieving user, for every user method', served(async (h) => {
  await h.user('bob');
  const cases: Array<[string, Record<string, unknown>]> = [
    ['createAddress', {}],
    ['listAddresses', {}],
    ['importKey', { privateKey: EWOQ.toCb58() }],
    ['exportKey', { address: EWOQ_ADDRESS }],
  ];
  for (const [method, params] of cases) {
    const call = (h.avm as unknown as Record<string, (p: unknown) => Promise<unknown>>)[method]!;
    const unknown = await rejection(call({ ...params, username: 'carol', password: PASSWORD }));
    assert.equal([unknown.rpcCode, unknown.message], [-32000, 'problem retrieving user: not found'], method);
    const wrong = await rejection(call({ ...params, username: 'bob', password: 'Wrong-password-1' }));
    assert.equal([wrong.rpcCode, wrong.message], [-32000, 'problem retrieving user: incorrect password for user "bob"'], method);
  }
}));

test('importKey: a privateKey that is not a key gets -32602 "problem parsing private key", never echoing it', served(async (h) => {
  const bob = await h.user('bob');
  const n = fromHex('fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141');
  for (const bad of ['not-cb58!', '', cb58Encode(new Uint8Array(31).fill(1)), cb58Encode(new Uint8Array(32)), cb58Encode(n), EWOQ.toCb58().slice(0, -1)]) {
    const e = await rejection(h.avm.importKey({ ...bob, privateKey: bad }));
    assert.is(e.rpcCode, -32602, bad);
    assert.match(e.message, /^privateKey: problem parsing private key \(/);
    if (bad.length > 4) assert.not.ok(e.message.includes(bad), 'echoes the key');
  }
  assert.equal(await h.avm.listAddresses(bob), { addresses: [] });
}));

test('addresses of another chain are refused before the user is opened: -32602 wrong blockchain ID', served(async (h) => {
  const bob = await h.user('bob', [EWOQ]);
  const e = await rejection(h.avm.exportKey({ ...bob, address: EWOQ_ADDRESS.replace('X-', 'P-') }));
  assert.equal([e.rpcCode, e.message], [-32602, 'address: wrong blockchain ID']);
}));

test('UserKeys: at most MAX_KEYS_PER_USER keys; a corrupt list or key is CorruptDatabase', async () => {
  const db = new MemoryStore();
  const keys = new UserKeys(db);
  const many = Array.from({ length: MAX_KEYS_PER_USER }, (_, i) => ShortId.fromBytes(Uint8Array.of(i >> 8, i & 0xff, ...new Uint8Array(18))));
  await db.put(ADDRESS_LIST_KEY, encodeAddressList(many));
  assert.is((await keys.addresses()).length, MAX_KEYS_PER_USER);
  try {
    await keys.add(PrivateKey.generate());
    assert.unreachable('added beyond the limit');
  } catch (e) {
    assert.is((e as { code: string }).code, 'Limit');
  }
  await db.put(ADDRESS_LIST_KEY, new Uint8Array([0, 0, 0, 9]));
  try {
    await keys.addresses();
    assert.unreachable('decoded a corrupt list');
  } catch (e) {
    assert.is((e as { code: string }).code, 'CorruptDatabase');
  }
  await db.put(EWOQ.address.bytes, PrivateKey.generate().toBytes());
  try {
    await keys.key(EWOQ.address);
    assert.unreachable('returned a key of another address');
  } catch (e) {
    assert.is((e as { code: string }).code, 'CorruptDatabase');
  }
});

test.run();
