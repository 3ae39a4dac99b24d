import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cb58Decode, cb58Encode } from '@cornice/sdk';
import { startTestNode, type TestNode } from '../helpers/node.js';

const STRONG = 'Tr0ub4dor&3-horse-battery';
const WEAK_TEXT =
  'Failed to create user as the given password is too weak. A stronger password is one of 8 or more characters containing attributes of upper and lowercase letters, numbers, and/or special characters';

let node: TestNode;
test.before(async () => {
  node = await startTestNode();
});
test.after(() => node.close());

const ks = (method: string, params?: unknown) => node.call('keystore', `keystore.${method}`, params);
const fails = async (method: string, params: unknown, code?: number) => {
  const r = await ks(method, params);
  assert.ok(r.error, `${method} ${JSON.stringify(params).slice(0, 80)} should fail`);
  assert.is.not(r.error!.code, -32603);
  if (code !== undefined) assert.is(r.error!.code, code);
  return r.error!.message;
};

test('createUser, listUsers', async () => {
  assert.equal((await ks('listUsers')).result, { users: [] });
  assert.equal((await ks('createUser', { username: 'bob', password: STRONG })).result, { success: true });
  assert.equal((await ks('createUser', { username: 'alice', password: STRONG })).result, { success: true });
  assert.equal((await ks('listUsers')).result, { users: ['alice', 'bob'] });
});

test('createUser: invalid inputs with the reference texts', async () => {
  assert.is(await fails('createUser', { username: 'bob', password: STRONG }), 'user already exists: bob');
  assert.is(await fails('createUser', { username: '', password: STRONG }), "username can't be the empty string");
  assert.is(
    await fails('createUser', { username: 'x'.repeat(1025), password: STRONG }),
    'CreateUser call rejected due to username or password exceeding maximum length of 1024 chars',
  );
  assert.is(
    await fails('createUser', { username: 'carol', password: `${STRONG}${'x'.repeat(1024)}` }),
    'CreateUser call rejected due to username or password exceeding maximum length of 1024 chars',
  );
  for (const weak of ['', 'abcdefgh', 'Password1', 'P@ssw0rd', 'Aa1!']) {
    assert.is(await fails('createUser', { username: 'carol', password: weak }, -32000), WEAK_TEXT, weak);
  }
  assert.match(await fails('createUser', { username: 'carol' }, -32602), /^password: missing required field/);
  assert.match(await fails('createUser', { username: 1, password: STRONG }, -32602), /^username: expected a string/);
  assert.match(await fails('createUser', { username: 'carol', password: STRONG, admin: true }, -32602), /^admin: unknown field/);
  assert.equal((await ks('listUsers')).result, { users: ['alice', 'bob'] });
});

test('wrong password refused with the reference text', async () => {
  assert.is(await fails('exportUser', { username: 'bob', password: 'Wrong-password-1' }), 'incorrect password for user "bob"');
  assert.is(await fails('deleteUser', { username: 'bob', password: 'Wrong-password-1' }), 'incorrect password for user "bob"');
});

test('exportUser / importUser round trip under another name', async () => {
  const exp = await ks('exportUser', { username: 'bob', password: STRONG });
  assert.type(exp.result.user, 'string');
  cb58Decode(exp.result.user);
  assert.not.match(exp.result.user, new RegExp(STRONG));
  assert.equal((await ks('importUser', { username: 'bob2', password: STRONG, user: exp.result.user })).result, { success: true });
  assert.equal((await ks('listUsers')).result, { users: ['alice', 'bob', 'bob2'] });
  assert.is(await fails('importUser', { username: 'bob2', password: STRONG, user: exp.result.user }), 'user already exists: bob2');
  assert.is(await fails('importUser', { username: 'bob3', password: 'Other-pass-99!', user: exp.result.user }), 'incorrect password for user "bob3"');
  assert.match(await fails('importUser', { username: 'bob3', password: STRONG, user: 'notcb58!' }, -32602), /^user: Invalid base58 digit/);
  assert.match(await fails('importUser', { username: 'bob3', password: STRONG, user: cb58Encode(new Uint8Array([1, 2, 3])) }), /invalid exported user/);
  assert.match(await fails('importUser', { username: 'bob3', password: STRONG }, -32602), /^user: missing required field/);
});

test('exportUser of an unknown user -> not found', async () => {
  assert.is(await fails('exportUser', { username: 'nobody', password: STRONG }), 'not found');
});

test('deleteUser', async () => {
  assert.is(await fails('deleteUser', { username: 'nobody', password: STRONG }), "user doesn't exist: nobody");
  assert.equal((await ks('deleteUser', { username: 'bob2', password: STRONG })).result, { success: true });
  assert.equal((await ks('listUsers')).result, { users: ['alice', 'bob'] });
  assert.match(await fails('deleteUser', { username: 'bob' }, -32602), /^password: missing/);
});

test('repeated wrong passwords are throttled', async () => {
  let last = '';
  for (let i = 0; i < 8; i++) last = await fails('exportUser', { username: 'alice', password: `Wrong-${i}-Pass!` });
  assert.match(last, /too many incorrect passwords for user "alice"/);
  // even the right password is refused while locked
  assert.match(await fails('exportUser', { username: 'alice', password: STRONG }), /too many incorrect passwords/);
});

test.run();
