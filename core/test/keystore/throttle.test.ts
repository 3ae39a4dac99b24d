import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Throttle } from '../../src/keystore/throttle.js';
import { chain, fixture, rejects, STRONG, STRONG2 } from './helpers.js';

const test = suite('keystore throttling');
const WRONG = 'incorrect password for user "bob"';

test('refused while locked, allowed after, delays double up to the cap, reset on success', async () => {
  const { ks, clock } = fixture(); // defaults: 5 free, 1000 ms doubling, 60000 ms cap
  await ks.createUser('bob', STRONG);
  for (let i = 0; i < 4; i++) await rejects(ks.exportUser('bob', STRONG2), 'IncorrectPassword', WRONG);
  // The 5th failure locks for 1 s.
  await rejects(ks.exportUser('bob', STRONG2), 'IncorrectPassword', WRONG);
  // Even the right password is refused while locked (without running the KDF).
  const err = await rejects(
    ks.exportUser('bob', STRONG),
    'Throttled',
    'too many incorrect passwords for user "bob" from this client; try again in 1 s',
  );
  // data.code like every other keystore error, and when to come back.
  assert.equal(err.data, { code: 'Throttled', retryAfterMs: 1000 });
  await rejects(ks.openUserStore('bob', STRONG, chain(1)), 'Throttled');
  await rejects(ks.deleteUser('bob', STRONG), 'Throttled');
  clock.t += 999;
  await rejects(ks.exportUser('bob', STRONG), 'Throttled', 'too many incorrect passwords for user "bob" from this client; try again in 1 s');
  clock.t += 1;
  // 6th failure: 2 s; 7th: 4 s.
  await rejects(ks.exportUser('bob', STRONG2), 'IncorrectPassword', WRONG);
  await rejects(ks.exportUser('bob', STRONG2), 'Throttled', /try again in 2 s$/);
  clock.t += 2000;
  await rejects(ks.exportUser('bob', STRONG2), 'IncorrectPassword', WRONG);
  await rejects(ks.exportUser('bob', STRONG2), 'Throttled', 'too many incorrect passwords for user "bob" from this client; try again in 4 s');
  clock.t += 1500;
  await rejects(ks.exportUser('bob', STRONG2), 'Throttled', /try again in 3 s$/);
  clock.t += 2500;
  // Keep failing: the delay is capped at 60 s.
  for (let i = 0; i < 10; i++) {
    await rejects(ks.exportUser('bob', STRONG2), 'IncorrectPassword', WRONG);
    const e = await rejects(ks.exportUser('bob', STRONG2), 'Throttled');
    const wait = (e.data as { retryAfterMs: number }).retryAfterMs;
    assert.ok(wait <= 60_000);
    clock.t += wait;
  }
  await rejects(ks.exportUser('bob', STRONG2), 'IncorrectPassword', WRONG);
  await rejects(ks.exportUser('bob', STRONG2), 'Throttled', /try again in 60 s$/);
  clock.t += 60_000;
  // A correct password works once unlocked and resets the count: 4 more failures are free again.
  await ks.exportUser('bob', STRONG);
  for (let i = 0; i < 4; i++) await rejects(ks.openUserStore('bob', STRONG2, chain(1)), 'IncorrectPassword', WRONG);
  await ks.openUserStore('bob', STRONG, chain(1));
});

test('throttling is per username', async () => {
  const { ks } = fixture({ throttle: { freeAttempts: 2, baseDelayMs: 10_000, maxDelayMs: 60_000 } });
  await ks.createUser('bob', STRONG);
  await ks.createUser('carol', STRONG);
  await rejects(ks.exportUser('bob', STRONG2), 'IncorrectPassword');
  await rejects(ks.exportUser('bob', STRONG2), 'IncorrectPassword');
  await rejects(ks.exportUser('bob', STRONG), 'Throttled', 'too many incorrect passwords for user "bob" from this client; try again in 10 s');
  await ks.exportUser('carol', STRONG);
});

test("another client's failures never lock the owner out (issue 32, point 13)", async () => {
  let client = 'attacker';
  const { ks } = fixture({ clientOf: () => client, throttle: { freeAttempts: 2, baseDelayMs: 10_000, maxDelayMs: 60_000 } });
  await ks.createUser('bob', STRONG);
  for (let i = 0; i < 3; i++) await rejects(ks.exportUser('bob', STRONG2), /* 3rd: */ i < 2 ? 'IncorrectPassword' : 'Throttled');
  // The attacker stays locked, even with the right password...
  await rejects(ks.exportUser('bob', STRONG), 'Throttled', /from this client; try again in 10 s$/);
  // ...while the owner, another client, gets in at once, and a slip of theirs is theirs alone.
  client = 'owner';
  await ks.exportUser('bob', STRONG);
  await ks.openUserStore('bob', STRONG, chain(1));
  await rejects(ks.exportUser('bob', STRONG2), 'IncorrectPassword');
  await ks.exportUser('bob', STRONG);
  client = 'attacker';
  await rejects(ks.deleteUser('bob', STRONG), 'Throttled');
});

test('a missing user counts as a wrong password for the throttle (probing names is throttled too)', async () => {
  const { ks } = fixture({ clientOf: () => 'prober', throttle: { freeAttempts: 2, baseDelayMs: 10_000, maxDelayMs: 60_000 } });
  await rejects(ks.exportUser('nobody', STRONG), 'UserNotFound', 'not found');
  await rejects(ks.exportUser('nobody', STRONG), 'UserNotFound', 'not found');
  await rejects(ks.exportUser('nobody', STRONG), 'Throttled', /^too many incorrect passwords for user "nobody"/);
});

test('importUser: wrong passwords count against the target name and against the blob', async () => {
  const { ks, clock } = fixture({ throttle: { freeAttempts: 2, baseDelayMs: 10_000, maxDelayMs: 60_000 } });
  await ks.createUser('bob', STRONG);
  const blob = await ks.exportUser('bob', STRONG);
  await rejects(ks.importUser('rob', STRONG2, blob), 'IncorrectPassword');
  await rejects(ks.importUser('rob', STRONG2, blob), 'IncorrectPassword');
  // The target name is locked, even for the right password...
  const err = await rejects(ks.importUser('rob', STRONG, blob), 'Throttled', 'too many incorrect passwords for user "rob" from this client; try again in 10 s');
  assert.equal(err.data, { code: 'Throttled', retryAfterMs: 10_000 });
  // ...and so is the blob under another target name.
  await rejects(ks.importUser('robin', STRONG2, blob), 'Throttled', /^too many incorrect passwords for user "robin"/);
  clock.t += 10_000;
  await ks.importUser('rob', STRONG, blob);
  await ks.exportUser('rob', STRONG);
  // The success reset both counts.
  await rejects(ks.importUser('robin', STRONG2, blob), 'IncorrectPassword');
  await ks.importUser('robin', STRONG, blob);
});

test('Throttle: the table is bounded, oldest dropped first', () => {
  let now = 0;
  const t = new Throttle({ freeAttempts: 1, baseDelayMs: 1000, maxDelayMs: 5000 }, () => now, 3);
  for (const u of ['a', 'b', 'c']) t.fail(u);
  assert.is(t.size, 3);
  t.fail('a'); // refreshes a: b is now the oldest
  t.fail('d');
  assert.is(t.size, 3);
  assert.is(t.lockedFor('b'), 0);
  assert.is(t.lockedFor('a'), 2000);
  assert.is(t.lockedFor('d'), 1000);
  now = 2000;
  assert.is(t.lockedFor('a'), 0);
  t.reset('a');
  assert.is(t.size, 2);
});

test('Throttle: huge failure counts stay at the cap', () => {
  const t = new Throttle({ freeAttempts: 1, baseDelayMs: 1000, maxDelayMs: 5000 }, () => 0);
  for (let i = 0; i < 2000; i++) t.fail('x');
  assert.is(t.lockedFor('x'), 5000);
});

test.run();
