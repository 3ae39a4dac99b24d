import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cb58Decode, cb58Encode, Id } from '@cornice/sdk';
import { keystoreApi } from '../../src/api/keystore/api.js';
import { pollHealth } from '../../src/testing/sweep.js';
import { MAX_EXPORT_BYTES } from '../../src/keystore/records.js';
import { oneConnection, startTestNode, type TestNode } from '../helpers/node.js';

const STRONG = 'Tr0ub4dor&3-horse-battery';
const WEAK_TEXT =
  'Failed to create user as the given password is too weak. A stronger password is one of 8 or more characters containing attributes of upper and lowercase letters, numbers, and/or special characters';

let node: TestNode;
test.before(async () => {
  node = await startTestNode(['--api-keystore-list-users-enabled']);
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

test('listUsers is off by default: usernames are not public (issue 32, point 13)', async () => {
  const other = await startTestNode();
  try {
    await other.call('keystore', 'keystore.createUser', { username: 'carol', password: STRONG });
    const r = await other.call('keystore', 'keystore.listUsers');
    assert.is(r.error?.code, -32000);
    assert.match(r.error!.message, /^keystore\.listUsers is disabled: usernames are not public .*--api-keystore-list-users-enabled/);
    assert.equal(r.error!.data, { code: 'Disabled' });
    assert.not.match(JSON.stringify(r), /carol/);
  } finally {
    await other.close();
  }
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
  assert.equal((await ks('listUsers')).result, { users: ['alice', 'bob'] });
  assert.equal((await ks('createUser', { username: 'carol', password: STRONG, admin: true })).result, { success: true }, 'an unknown field is ignored');
  assert.equal((await ks('listUsers', { bogus: 1 })).result, { users: ['alice', 'bob', 'carol'] });
  assert.equal((await ks('deleteUser', { username: 'carol', password: STRONG })).result, { success: true });
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

test("repeated wrong passwords are throttled for the client that sent them, never for the owner's other connection", async () => {
  const guesser = oneConnection(node.url);
  const owner = oneConnection(node.url);
  try {
    let last = '';
    for (let i = 0; i < 8; i++) {
      last = (await guesser.call('keystore', 'keystore.exportUser', { username: 'alice', password: `Wrong-${i}-Pass!` })).error!.message;
    }
    assert.match(last, /too many incorrect passwords for user "alice" from this client/);
    // even the right password is refused to that client while it is locked...
    const r = await guesser.call('keystore', 'keystore.exportUser', { username: 'alice', password: STRONG });
    assert.is(r.error?.code, -32000);
    assert.match(r.error!.message, /too many incorrect passwords/);
    // data.code like every other keystore error, and when to try again
    const data = r.error!.data as { code: string; retryAfterMs: number };
    assert.is(data.code, 'Throttled');
    assert.ok(data.retryAfterMs > 0);
    // ...while the owner, on another connection, is not locked out (issue 32, point 13).
    assert.type((await owner.call('keystore', 'keystore.exportUser', { username: 'alice', password: STRONG })).result?.user, 'string');
  } finally {
    guesser.close();
    owner.close();
  }
});

test('usernames: control and bidi characters refused with a clear error; NFC forms are one user', async () => {
  const r = await ks('createUser', { username: 'evil\u202egnp.exe', password: STRONG });
  assert.equal(r.error, {
    code: -32000,
    message: 'username contains a bidirectional control character (U+202E at index 4)',
    data: { code: 'InvalidInput' },
  });
  assert.match(await fails('createUser', { username: 'nul\u0000', password: STRONG }, -32000), /control character \(U\+0000 at index 3\)/);
  assert.equal((await ks('createUser', { username: 'Jose\u0301', password: STRONG })).result, { success: true });
  assert.is(await fails('createUser', { username: 'Jos\u00e9', password: STRONG }), 'user already exists: Jos\u00e9');
  assert.ok((await ks('listUsers')).result.users.includes('Jos\u00e9'));
  assert.equal((await ks('deleteUser', { username: 'Jos\u00e9', password: STRONG })).result, { success: true });
});

test('the largest export goes through exportUser and importUser; a bigger user cannot be exported', async () => {
  await ks('createUser', { username: 'big', password: STRONG });
  const store = await node.keystore.openUserStore('big', STRONG, Id.fromBytes(new Uint8Array(32).fill(9)));
  const value = new Uint8Array(1000).fill(7);
  let n = 0;
  let last: { user?: string } | undefined;
  for (;;) {
    await store.put(Uint8Array.of(n >> 8, n & 255), value);
    const r = await ks('exportUser', { username: 'big', password: STRONG });
    if (r.error) {
      assert.is(r.error.message, `user data is too large to export (limit ${MAX_EXPORT_BYTES} bytes)`);
      break;
    }
    last = r.result;
    n++;
  }
  assert.ok(n > 50, `${n} entries of 1000 bytes fit`);
  const user = last!.user!;
  const maxChars = keystoreApi.methods.importUser.params.fields!.user!.max!;
  assert.ok(user.length <= maxChars);
  assert.ok(cb58Decode(user).length > MAX_EXPORT_BYTES - 1100);
  // The whole import (decode, scrypt, every entry) runs while /ext/health keeps answering.
  const health = pollHealth(`${node.url}/ext/health`);
  const imported = await ks('importUser', { username: 'big2', password: STRONG, user });
  const polls = await health.stop();
  assert.equal(imported.result, { success: true });
  assert.ok(Math.max(...polls) < 100, `health took ${Math.max(...polls).toFixed(0)} ms during the import`);
  const copy = await node.keystore.openUserStore('big2', STRONG, Id.fromBytes(new Uint8Array(32).fill(9)));
  assert.equal(await copy.get(Uint8Array.of(0, 0)), value);
  // One character more than the bound: refused by length, before decoding.
  assert.match(await fails('importUser', { username: 'big3', password: STRONG, user: user + 'z'.repeat(maxChars + 1 - user.length) }, -32602), /^user: must be at most \d+ characters/);
});

test.run();
