import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PrivateKey, ShortId, cb58Encode, fromHex, Reader } from '@cornice/sdk';
import { ADDRESS_LIST_KEY as ADDRESSES_KEY, MAX_KEYS_PER_USER, decodeAddressList as decodeAddresses, encodeAddressList as encodeAddresses } from '@cornice/sdk';
import { platformKeys } from '../../src/platform/keys.js';
import { contains, dump } from '../keystore/helpers.js';
import { PASSWORD, harness } from './fake-backend.js';
import { EWOQ_ADDRESS, EWOQ_KEY, shortId } from './samples.js';

const EWOQ_HEX = '56289e99c94b6912bfc12adc093c9b51124f0dc54ac7a766b2bc5ccf558d8027';

async function withUser(name = 'bob') {
  const h = harness();
  await h.backend.keystore.createUser(name, PASSWORD);
  return h;
}

test('createAccount with the ewoq key: its address; stored once in the reference layout, encrypted at rest', async () => {
  const h = await withUser();
  assert.equal(await h.client.createAccount({ username: 'bob', password: PASSWORD, privateKey: EWOQ_KEY }), { address: EWOQ_ADDRESS });
  // Adding a key the user holds changes nothing.
  assert.equal(await h.client.createAccount({ username: 'bob', password: PASSWORD, privateKey: EWOQ_KEY }), { address: EWOQ_ADDRESS });

  const db = await h.backend.openUser('bob', PASSWORD);
  const list = (await db.get(ADDRESSES_KEY))!;
  // codec []ShortID: u32 count, then 20 bytes each.
  assert.is(list.length, 4 + 20);
  assert.equal(new Reader(list).u32(), 1);
  assert.is(decodeAddresses(list)[0]!.toString(), EWOQ_ADDRESS);
  assert.equal(await db.get(ShortId.fromString(EWOQ_ADDRESS).bytes), fromHex(EWOQ_HEX));
  await db.close();
  // Neither the key nor the list is stored in the clear.
  for (const [, value] of await dump(h.backend.keystoreStore)) {
    assert.not.ok(contains(value, fromHex(EWOQ_HEX)));
    assert.not.ok(contains(value, ShortId.fromString(EWOQ_ADDRESS).bytes));
  }
});

test('createAccount without privateKey: a new key each time; listAccounts shows them with nonce and balance as strings', async () => {
  const h = await withUser();
  const a = (await h.client.createAccount({ username: 'bob', password: PASSWORD })).address;
  const b = (await h.client.createAccount({ username: 'bob', password: PASSWORD, privateKey: null as never })).address;
  assert.is.not(a, b);
  h.backend.acceptedState.accounts.set(ShortId.fromString(b).key, { address: ShortId.fromString(b), nonce: 3n, balance: 2n ** 64n - 1n });
  assert.equal(await h.client.listAccounts({ username: 'bob', password: PASSWORD }), {
    accounts: [
      { address: a, nonce: '0', balance: '0' },
      { address: b, nonce: '3', balance: '18446744073709551615' },
    ],
  });
  // The generated key is really stored: it signs for its address.
  const db = await h.backend.openUser('bob', PASSWORD);
  const key = await platformKeys(db).key(ShortId.fromString(a));
  assert.is(key!.address.toString(), a);
  await db.close();
});

test('concurrent createAccount calls for one user: every address is listed', async () => {
  const h = await withUser();
  const made = await Promise.all(Array.from({ length: 8 }, () => h.client.createAccount({ username: 'bob', password: PASSWORD })));
  const listed = (await h.client.listAccounts({ username: 'bob', password: PASSWORD })).accounts.map((x) => x.address);
  assert.equal([...listed].sort(), made.map((m) => m.address).sort());
});

test('listAccounts of a user without P-Chain keys: []; keys are per user', async () => {
  const h = await withUser();
  await h.backend.keystore.createUser('alice', PASSWORD);
  await h.client.createAccount({ username: 'alice', password: PASSWORD, privateKey: EWOQ_KEY });
  assert.equal(await h.client.listAccounts({ username: 'bob', password: PASSWORD }), { accounts: [] });
});

test('createAccount: a privateKey that is not a key gets -32602 "problem while parsing privateKey", never echoing it', async () => {
  const h = await withUser();
  const n = fromHex('fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141');
  const cases: unknown[] = [
    'not-cb58!',
    '',
    cb58Encode(new Uint8Array(31).fill(1)),
    cb58Encode(new Uint8Array(32)), // zero
    cb58Encode(n), // the curve order
    EWOQ_KEY.slice(0, -1),
    'z'.repeat(65),
    42,
    {},
  ];
  for (const privateKey of cases) {
    const e = await h.fails('createAccount', { username: 'bob', password: PASSWORD, privateKey }, -32602);
    assert.match(e.message, /^privateKey: problem while parsing privateKey/, String(privateKey));
    if (typeof privateKey === 'string' && privateKey.length > 4) assert.not.match(e.message, privateKey);
  }
  assert.equal(await h.client.listAccounts({ username: 'bob', password: PASSWORD }), { accounts: [] });
});

test('user errors: wrong password and unknown user (-32000, the keystore and reference texts); credentials required', async () => {
  const h = await withUser();
  const wrong = await h.fails('createAccount', { username: 'bob', password: 'Wrong-password-1' }, -32000);
  assert.is(wrong.message, 'incorrect password for user "bob"');
  assert.is((await h.fails('listAccounts', { username: 'bob', password: 'Wrong-password-1' }, -32000)).message, 'incorrect password for user "bob"');
  assert.is(
    (await h.fails('listAccounts', { username: 'nobody', password: PASSWORD }, -32000)).message,
    "couldn't get data for user 'nobody'. Does user exist?",
  );
  assert.match((await h.fails('createAccount', { password: PASSWORD }, -32602)).message, /^username: missing required field/);
  assert.match((await h.fails('listAccounts', { username: 'bob' }, -32602)).message, /^password: missing required field/);
  assert.match((await h.fails('listAccounts', { username: 7, password: PASSWORD }, -32602)).message, /^username: expected a string/);
  assert.match((await h.fails('listAccounts', { username: 'x'.repeat(4097), password: PASSWORD }, -32602)).message, /^username: must be at most 4096/);
  const long = await h.fails('listAccounts', { username: 'x'.repeat(1025), password: PASSWORD }, -32000);
  assert.match(long.message, /exceeding maximum length of 1024 chars/);
});

test('getAccount: the accepted account, zeros when it never received anything; address must be a short ID', async () => {
  const h = harness();
  const addr = ShortId.fromString(EWOQ_ADDRESS);
  h.backend.acceptedState.accounts.set(addr.key, { address: addr, nonce: 1n, balance: 20_000_000_000_000n });
  assert.equal(await h.client.getAccount({ address: EWOQ_ADDRESS }), { address: EWOQ_ADDRESS, nonce: '1', balance: '20000000000000' });
  const other = shortId('nobody').toString();
  assert.equal(await h.client.getAccount({ address: other }), { address: other, nonce: '0', balance: '0' });
  assert.match((await h.fails('getAccount', {}, -32602)).message, /^address: missing required field/);
  assert.match((await h.fails('getAccount', { address: cb58Encode(new Uint8Array(32)) }, -32602)).message, /^address: expected 20 bytes/);
  assert.match((await h.fails('getAccount', { address: 'z'.repeat(65) }, -32602)).message, /^address: must be at most 64/);
});

test('keys.ts: the address list encoding, a corrupt store is a clear error, and the per-user bound', async () => {
  const addrs = [shortId('a'), shortId('b')];
  assert.equal(decodeAddresses(encodeAddresses(addrs)).map(String), addrs.map(String));
  assert.equal(decodeAddresses(encodeAddresses([])), []);

  const h = await withUser();
  const db = await h.backend.openUser('bob', PASSWORD);
  const keys = platformKeys(db);
  await db.put(ADDRESSES_KEY, new Uint8Array([0, 0, 0, 2, 1]));
  try {
    await keys.addresses();
    assert.unreachable();
  } catch (e) {
    assert.is((e as { code?: string }).code, 'CorruptDatabase');
  }
  const addr = shortId('a');
  await db.put(addr.bytes, new Uint8Array(32)); // not a key
  try {
    await keys.key(addr);
    assert.unreachable();
  } catch (e) {
    assert.is((e as { code?: string }).code, 'CorruptDatabase');
  }
  // A key stored under another address.
  await db.put(addr.bytes, PrivateKey.fromString(EWOQ_KEY).toBytes());
  try {
    await keys.key(addr);
    assert.unreachable();
  } catch (e) {
    assert.match((e as Error).message, 'belongs to another address');
  }
  // The bound: a full list refuses one more key.
  await db.put(ADDRESSES_KEY, encodeAddresses(Array.from({ length: MAX_KEYS_PER_USER }, (_, i) => shortId(`k${i}`))));
  const e = await h.fails('createAccount', { username: 'bob', password: PASSWORD }, -32000);
  assert.is(e.message, `the user already holds the most P-Chain keys allowed (${MAX_KEYS_PER_USER})`);
  await db.close();
});

test.run();
