import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startNodeProcess } from '../src/process.js';

const PASSWORD = 'Corn1ce-e2e-Pass!';
let dir: string;
test.before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cornice-e2e-ks-'));
});
test.after(() => rm(dir, { recursive: true, force: true }));

test('users survive a restart (LevelDB), node ID is stable, SIGTERM stops cleanly', async () => {
  const args = [`--data-dir=${dir}/a`, '--api-keystore-list-users-enabled'];
  const a = await startNodeProcess(args);
  assert.equal((await a.call('keystore', 'keystore.createUser', { username: 'bob', password: PASSWORD })).result, { success: true });
  const nodeId = a.nodeId;
  assert.is(await a.stop('SIGTERM'), 0);
  assert.ok(a.logs.some((l) => l.msg === 'node stopped'));
  const again = await startNodeProcess(args);
  try {
    assert.is(again.nodeId, nodeId);
    assert.equal((await again.call('keystore', 'keystore.listUsers')).result, { users: ['bob'] });
    assert.ok((await again.call('keystore', 'keystore.exportUser', { username: 'bob', password: PASSWORD })).result.user);
  } finally {
    assert.is(await again.stop('SIGINT'), 0);
  }
});

test('a user exported on one node process imports on another (different name, same password)', async () => {
  const [a, b] = await Promise.all([startNodeProcess([`--data-dir=${dir}/x`]), startNodeProcess([`--data-dir=${dir}/y`, '--api-keystore-list-users-enabled'])]);
  try {
    assert.is.not(a.nodeId, b.nodeId);
    await a.call('keystore', 'keystore.createUser', { username: 'alice', password: PASSWORD });
    const { user } = (await a.call('keystore', 'keystore.exportUser', { username: 'alice', password: PASSWORD })).result;
    const wrong = await b.call('keystore', 'keystore.importUser', { username: 'al', password: 'Not-the-Pass-1!', user });
    assert.is(wrong.error?.message, 'incorrect password for user "al"');
    assert.equal((await b.call('keystore', 'keystore.importUser', { username: 'al', password: PASSWORD, user })).result, { success: true });
    assert.equal((await b.call('keystore', 'keystore.listUsers')).result, { users: ['al'] });
    // the imported user's password works for everything on the new node
    assert.ok((await b.call('keystore', 'keystore.exportUser', { username: 'al', password: PASSWORD })).result.user);
    assert.equal((await b.call('keystore', 'keystore.deleteUser', { username: 'al', password: PASSWORD })).result, { success: true });
  } finally {
    await Promise.all([a.stop(), b.stop()]);
  }
});

test('weak and wrong passwords are refused with the reference texts', async () => {
  const a = await startNodeProcess([`--data-dir=${dir}/w`, '--db-type=memory']);
  try {
    const weak = await a.call('keystore', 'keystore.createUser', { username: 'w', password: 'password' });
    assert.match(weak.error!.message, /^Failed to create user as the given password is too weak/);
    await a.call('keystore', 'keystore.createUser', { username: 'w', password: PASSWORD });
    const wrong = await a.call('keystore', 'keystore.deleteUser', { username: 'w', password: 'Wrong-Pass-123!' });
    assert.is(wrong.error!.message, 'incorrect password for user "w"');
  } finally {
    await a.stop();
  }
});

test.run();
