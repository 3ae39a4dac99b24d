import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { concatBytes, MemoryStore, NodeError } from '@cornice/sdk';
import { KdfLimiter, Keystore, KeystoreError } from '../../src/keystore/keystore.js';
import { decodeExport, MAX_EXPORT_BYTES, type ExportEntry } from '../../src/keystore/records.js';
import { bytes, chain, COUNT_AT, forge, reencode, contains, dump, FAST_KDF, fixture, rejects, STRONG, STRONG2, text } from './helpers.js';

const TOO_LONG = 'CreateUser call rejected due to username or password exceeding maximum length of 1024 chars';
const WEAK =
  'Failed to create user as the given password is too weak. A stronger password is one of 8 or more characters containing attributes of upper and lowercase letters, numbers, and/or special characters';

const test = suite('keystore');

test('createUser + listUsers: byte order, [] when none', async () => {
  const { ks } = fixture();
  assert.equal(await ks.listUsers(), []);
  await ks.createUser('bob', STRONG);
  await ks.createUser('Alice', STRONG);
  await ks.createUser('carol', STRONG2);
  await ks.createUser('é-user', STRONG);
  assert.equal(await ks.listUsers(), ['Alice', 'bob', 'carol', 'é-user']);
});

test('createUser: checks in the reference order with its texts', async () => {
  const { ks } = fixture();
  const long = 'a'.repeat(1025);
  // Length first, even for an empty username or a weak password.
  await rejects(ks.createUser(long, STRONG), 'TooLong', TOO_LONG);
  await rejects(ks.createUser('bob', 'A1!' + long), 'TooLong', TOO_LONG);
  await rejects(ks.createUser('', long), 'TooLong', TOO_LONG);
  // Exactly 1024 characters is allowed (counted in code points, not UTF-16 units).
  await ks.createUser('u'.repeat(1024), STRONG);
  await ks.createUser('😀'.repeat(1024), STRONG);
  await rejects(ks.createUser('😀'.repeat(1025), STRONG), 'TooLong', TOO_LONG);
  // Then the empty username, even with a weak password.
  await rejects(ks.createUser('', 'weak'), 'EmptyUsername', "username can't be the empty string");
  // Then existence, even with a weak password.
  await ks.createUser('bob', STRONG);
  await rejects(ks.createUser('bob', 'weak'), 'UserExists', 'user already exists: bob');
  await rejects(ks.createUser('bob', STRONG2), 'UserExists', 'user already exists: bob');
  // Then strength.
  await rejects(ks.createUser('dave', 'weak'), 'WeakPassword', WEAK);
  assert.equal((await ks.listUsers()).includes('dave'), false);
});

test('createUser: weak passwords refused, strong accepted', async () => {
  const { ks } = fixture();
  for (const pw of ['', 'abcdefgh', 'Password1', 'password', 'P@ssw0rd', 'Ab1!', 'ABCDEFG1!', 'abcdefg1!', 'Abcdefgh!']) {
    await rejects(ks.createUser('dave', pw), 'WeakPassword', WEAK);
  }
  // Passes the composition rule but is built from the username: zxcvbn scores it lower.
  await rejects(ks.createUser('Rumpelstiltskin', 'Rumpelstiltskin1!'), 'WeakPassword', WEAK);
  await ks.createUser('dave', STRONG);
  await ks.createUser('erin', 'Rumpelstiltskin1!');
  assert.equal(await ks.listUsers(), ['dave', 'erin']);
});

test('createUser: lone surrogates refused', async () => {
  const { ks } = fixture();
  await rejects(ks.createUser('bob\ud800', STRONG), 'InvalidInput', 'username is not valid Unicode');
  await rejects(ks.createUser('bob', STRONG + '\udc00'), 'InvalidInput', 'password is not valid Unicode');
});

test('length limit applies to every method', async () => {
  const { ks } = fixture();
  await ks.createUser('bob', STRONG);
  const long = 'x'.repeat(1025);
  const msg = (m: string) => `${m} call rejected due to username or password exceeding maximum length of 1024 chars`;
  await rejects(ks.deleteUser(long, STRONG), 'TooLong', msg('DeleteUser'));
  await rejects(ks.deleteUser('bob', long), 'TooLong', msg('DeleteUser'));
  await rejects(ks.exportUser(long, STRONG), 'TooLong', msg('ExportUser'));
  await rejects(ks.exportUser('bob', long), 'TooLong', msg('ExportUser'));
  await rejects(ks.importUser(long, STRONG, new Uint8Array(1)), 'TooLong', msg('ImportUser'));
  await rejects(ks.importUser('new', long, new Uint8Array(1)), 'TooLong', msg('ImportUser'));
  await rejects(ks.openUserStore(long, STRONG, chain(1)), 'TooLong', msg('OpenUserStore'));
  await rejects(ks.openUserStore('bob', long, chain(1)), 'TooLong', msg('OpenUserStore'));
  // A very long password does not pay for the KDF or for counting every character.
  const huge = 'y'.repeat(10_000_000);
  await rejects(ks.openUserStore('bob', huge, chain(1)), 'TooLong');
});

test('errors are NodeErrors with codes', async () => {
  const { ks } = fixture();
  const err = await rejects(ks.createUser('', STRONG), 'EmptyUsername');
  assert.instance(err, NodeError);
  assert.is(err.name, 'KeystoreError');
});

test('deleteUser: unknown, wrong password, success removes every key', async () => {
  const { ks, store } = fixture();
  await rejects(ks.deleteUser('bob', STRONG), 'UserNotFound', "user doesn't exist: bob");
  await rejects(ks.deleteUser('', STRONG), 'UserNotFound', "user doesn't exist: ");
  await ks.createUser('bob', STRONG);
  await ks.createUser('carol', STRONG2);
  for (const c of [1, 2]) {
    const s = await ks.openUserStore('bob', STRONG, chain(c));
    for (let i = 0; i < 5; i++) await s.put(bytes(`k${i}`), bytes(`v${i}`));
  }
  const carol = await ks.openUserStore('carol', STRONG2, chain(1));
  await carol.put(bytes('k'), bytes('carol-value'));
  const before = (await dump(store)).length;
  assert.is(before, 2 + 10 + 1);

  await rejects(ks.deleteUser('bob', STRONG2), 'IncorrectPassword', 'incorrect password for user "bob"');
  assert.is((await dump(store)).length, before);

  await ks.deleteUser('bob', STRONG);
  assert.equal(await ks.listUsers(), ['carol']);
  // Only carol's record and her one value are left.
  assert.is((await dump(store)).length, 2);
  assert.is(text(await carol.get(bytes('k'))), 'carol-value');
  await rejects(ks.deleteUser('bob', STRONG), 'UserNotFound', "user doesn't exist: bob");
  await rejects(ks.openUserStore('bob', STRONG, chain(1)), 'UserNotFound', 'not found');
  // The name can be used again, with no old data.
  await ks.createUser('bob', STRONG2);
  const s = await ks.openUserStore('bob', STRONG2, chain(1));
  assert.is(await s.get(bytes('k0')), undefined);
});

test('deleteUser revokes open user stores', async () => {
  const { ks, store } = fixture();
  await ks.createUser('bob', STRONG);
  const s = await ks.openUserStore('bob', STRONG, chain(1));
  await s.put(bytes('a'), bytes('1'));
  await ks.deleteUser('bob', STRONG);
  try {
    await s.put(bytes('b'), bytes('2'));
    assert.unreachable('put after delete');
  } catch (e) {
    assert.is((e as NodeError).code, 'Closed');
  }
  assert.is((await dump(store)).length, 0);
});

test('wrong-password texts use Go %q quoting', async () => {
  const { ks } = fixture();
  const name = 'we"ird\\na\u00adme é';
  await ks.createUser(name, STRONG);
  await rejects(ks.exportUser(name, STRONG2), 'IncorrectPassword', 'incorrect password for user "we\\"ird\\\\na\\u00adme é"');
});

test('users stored before the username rules (control characters, not NFC) stay reachable', async () => {
  const { ks, store } = fixture();
  await ks.createUser('tmp', STRONG);
  const [[recKey, rec]] = (await dump(store)) as [[Uint8Array, Uint8Array]];
  const withControls = 'we\tird\n\x01';
  const decomposed = 'Rene\u0301';
  for (const name of [withControls, decomposed]) await store.put(concatBytes(recKey.subarray(0, 1), bytes(name)), rec);
  await store.delete(recKey);
  const ks2 = new Keystore({ store, kdf: FAST_KDF });
  assert.equal(await ks2.listUsers(), [decomposed, withControls]);
  await rejects(ks2.exportUser(withControls, STRONG2), 'IncorrectPassword', 'incorrect password for user "we\\tird\\n\\x01"');
  await ks2.exportUser(withControls, STRONG);
  // Found under its stored form and under its NFC form; a look-alike cannot be added.
  await ks2.exportUser(decomposed, STRONG);
  await ks2.exportUser('Ren\u00e9', STRONG);
  await rejects(ks2.createUser('Ren\u00e9', STRONG), 'UserExists');
  await ks2.deleteUser('Ren\u00e9', STRONG);
  await ks2.deleteUser(withControls, STRONG);
  assert.equal(await ks2.listUsers(), []);
  assert.is((await dump(store)).length, 0);
});

test('new usernames: control and bidi control characters refused, naming the character', async () => {
  const { ks } = fixture();
  const cases: Array<[string, string]> = [
    ['bob\0', 'username contains a control character (U+0000 at index 3)'],
    ['a\nb', 'username contains a control character (U+000A at index 1)'],
    ['\x7fdel', 'username contains a control character (U+007F at index 0)'],
    ['c1\u0085', 'username contains a control character (U+0085 at index 2)'],
    ['evil\u202egnp.exe', 'username contains a bidirectional control character (U+202E at index 4)'],
    ['x\u2066y', 'username contains a bidirectional control character (U+2066 at index 1)'],
    ['\u200fname', 'username contains a bidirectional control character (U+200F at index 0)'],
  ];
  for (const [name, message] of cases) {
    await rejects(ks.createUser(name, STRONG), 'InvalidInput', message);
  }
  await ks.createUser('src', STRONG);
  const blob = await ks.exportUser('src', STRONG);
  for (const [name, message] of cases) await rejects(ks.importUser(name, STRONG, blob), 'InvalidInput', message);
  assert.equal(await ks.listUsers(), ['src']);
  // Other non-ASCII names are fine.
  await ks.createUser('Zoë 東京 😀', STRONG);
});

test('usernames are NFC: precomposed and decomposed forms are one user', async () => {
  const { ks, store } = fixture();
  const composed = 'Jos\u00e9';
  const decomposed = 'Jose\u0301';
  await ks.createUser(decomposed, STRONG);
  assert.equal(await ks.listUsers(), [composed], 'stored in NFC');
  assert.ok(contains((await dump(store))[0]![0], bytes(composed)));
  await rejects(ks.createUser(composed, STRONG2), 'UserExists');
  const blob = await ks.exportUser(composed, STRONG);
  await rejects(ks.importUser(decomposed, STRONG, blob), 'UserExists');
  const s = await ks.openUserStore(decomposed, STRONG, chain(1));
  await s.put(bytes('k'), bytes('v'));
  assert.is(text(await (await ks.openUserStore(composed, STRONG, chain(1))).get(bytes('k'))), 'v');
  await ks.importUser('Ange\u0301lique', STRONG, blob);
  assert.equal(await ks.listUsers(), ['Ang\u00e9lique', composed]);
  await ks.deleteUser(composed, STRONG);
  assert.equal(await ks.listUsers(), ['Ang\u00e9lique']);
  // Concurrent creates of the two forms: one wins.
  const rs = await Promise.allSettled([ks.createUser(decomposed, STRONG), ks.createUser(composed, STRONG)]);
  assert.equal(rs.map((r) => r.status), ['fulfilled', 'rejected']);
});

test('missing users cost a KDF: lookups of missing users cost what existing ones cost (issue 32, point 13)', async () => {
  // Counts the key derivations each answer needs (the costly part: ~180 ms at the default cost).
  class Counting extends KdfLimiter {
    runs = 0;
    override run<T>(derive: () => Promise<T>): Promise<T> {
      this.runs++;
      return super.run(derive);
    }
  }
  const kdfLimiter = new Counting();
  const { ks } = fixture({ kdfLimiter, throttle: { freeAttempts: 100, baseDelayMs: 0, maxDelayMs: 0 } });
  await ks.createUser('bob', STRONG);
  const cost = async (p: Promise<unknown>) => {
    const before = kdfLimiter.runs;
    await p.catch(() => undefined);
    return kdfLimiter.runs - before;
  };
  assert.is(await cost(ks.exportUser('bob', STRONG2)), 1, 'a wrong password: one KDF');
  assert.is(await cost(ks.exportUser('nobody', STRONG2)), 1, 'a missing user: one KDF too');
  assert.is(await cost(ks.deleteUser('nobody', STRONG2)), 1);
  assert.is(await cost(ks.openUserStore('nobody', STRONG2, chain(1))), 1);
  assert.is(await cost(ks.createUser('bob', STRONG2)), 1, 'createUser of an existing user: as costly as creating one');
  const blob = await ks.exportUser('bob', STRONG);
  assert.is(await cost(ks.importUser('bob', STRONG, blob)), 1, 'importUser onto an existing name too');
  await rejects(ks.createUser('bob', STRONG2), 'UserExists');
});

test('exportUser: unknown user, wrong password', async () => {
  const { ks } = fixture();
  await rejects(ks.exportUser('bob', STRONG), 'UserNotFound', 'not found');
  await ks.createUser('bob', STRONG);
  await rejects(ks.exportUser('bob', STRONG2), 'IncorrectPassword', 'incorrect password for user "bob"');
  await rejects(ks.exportUser('bob', ''), 'IncorrectPassword', 'incorrect password for user "bob"');
  const blob = await ks.exportUser('bob', STRONG);
  assert.ok(blob instanceof Uint8Array && blob.length > 0);
});

test('export -> import under another name on another keystore reads the same values', async () => {
  const a = fixture();
  await a.ks.createUser('bob', STRONG);
  const x = await a.ks.openUserStore('bob', STRONG, chain(1));
  const p = await a.ks.openUserStore('bob', STRONG, chain(2));
  await x.put(bytes('addr1'), bytes('secret-key-1'));
  await x.put(bytes('addr2'), bytes('secret-key-2'));
  await p.put(bytes('addr1'), bytes('p-chain-key'));
  await p.put(new Uint8Array(0), new Uint8Array(0)); // empty key and value survive too
  const blob = await a.ks.exportUser('bob', STRONG);

  // The exported blob keeps values encrypted.
  assert.not.ok(contains(blob, bytes('secret-key-1')));
  assert.not.ok(contains(blob, bytes(STRONG)));

  const b = fixture({ kdf: { N: 32, r: 2, p: 1 } }); // another default: the record's own parameters are used
  await b.ks.importUser('robert', STRONG, blob);
  assert.equal(await b.ks.listUsers(), ['robert']);
  const x2 = await b.ks.openUserStore('robert', STRONG, chain(1));
  const p2 = await b.ks.openUserStore('robert', STRONG, chain(2));
  assert.is(text(await x2.get(bytes('addr1'))), 'secret-key-1');
  assert.is(text(await x2.get(bytes('addr2'))), 'secret-key-2');
  assert.is(text(await p2.get(bytes('addr1'))), 'p-chain-key');
  assert.equal(await p2.get(new Uint8Array(0)), new Uint8Array(0));
  assert.is(await (await b.ks.openUserStore('robert', STRONG, chain(3))).get(bytes('addr1')), undefined);
  // Re-exported from the second node, it is the same user again.
  const blob2 = await b.ks.exportUser('robert', STRONG);
  await a.ks.importUser('bob2', STRONG, blob2);
  const x3 = await a.ks.openUserStore('bob2', STRONG, chain(1));
  assert.is(text(await x3.get(bytes('addr2'))), 'secret-key-2');
  // The same name on the same keystore is refused; an empty name too.
  await rejects(a.ks.importUser('bob', STRONG, blob), 'UserExists', 'user already exists: bob');
  await rejects(a.ks.importUser('', STRONG, blob), 'EmptyUsername', "username can't be the empty string");
});

test('importUser: wrong password refused, nothing written; weak passwords are not checked', async () => {
  const a = fixture();
  await a.ks.createUser('bob', STRONG);
  const blob = await a.ks.exportUser('bob', STRONG);
  const b = fixture();
  await rejects(b.ks.importUser('bob', STRONG2, blob), 'IncorrectPassword', 'incorrect password for user "bob"');
  await rejects(b.ks.importUser('rob"', 'x', blob), 'IncorrectPassword', 'incorrect password for user "rob\\""');
  assert.equal(await b.ks.listUsers(), []);
  assert.is((await dump(b.store)).length, 0);
  await b.ks.importUser('bob', STRONG, blob);
  assert.equal(await b.ks.listUsers(), ['bob']);
});

test('importUser: malformed blobs give BadExport', async () => {
  const a = fixture();
  await a.ks.createUser('bob', STRONG);
  const s = await a.ks.openUserStore('bob', STRONG, chain(7));
  await s.put(bytes('k'), bytes('v'));
  const blob = await a.ks.exportUser('bob', STRONG);
  const b = fixture();
  const bad = (x: Uint8Array, message: RegExp | string = /^invalid exported user: /) => rejects(b.ks.importUser('new', STRONG, x), 'BadExport', message);
  await bad(new Uint8Array(0));
  await bad(blob.subarray(0, blob.length - 1)); // truncated
  await bad(Uint8Array.from([...blob, 0])); // trailing byte
  const v3 = blob.slice();
  v3[0] = 3;
  await bad(v3, 'invalid exported user: unknown version 3');
  const v1 = blob.slice();
  v1[0] = 1;
  await bad(v1, 'invalid exported user: version 1 exports are not authenticated and are no longer accepted; export the user again');
  // Huge count: refused before allocating anything.
  const huge = blob.slice();
  new DataView(huge.buffer).setUint32(COUNT_AT, 0xffffffff);
  await bad(huge);
  // Absurd KDF cost in the record: refused before running it.
  const costly = blob.slice();
  new DataView(costly.buffer).setUint32(1, 2 ** 30);
  await bad(costly);
  const notPow2 = blob.slice();
  new DataView(notPow2.buffer).setUint32(1, 1000);
  await bad(notPow2);
  // A bigger blob than any export can be.
  await bad(new Uint8Array(MAX_EXPORT_BYTES + 1));
  // Deeper checks, behind a valid mac (made here with the password, as only its owner could):
  // a value that fails authentication, a repeated key.
  const [entry] = decodeExport(blob).entries as [ExportEntry];
  const tampered = { ...entry, value: entry.value.slice() };
  tampered.value[tampered.value.length - 1]! ^= 1;
  await bad(await forge(blob, STRONG, () => [tampered]), 'invalid exported user: entry 0 fails authentication');
  await bad(await forge(blob, STRONG, (es) => [...es, ...es]), 'invalid exported user: entry 1 repeats a key');
  assert.equal(await b.ks.listUsers(), []);
  assert.is((await dump(b.store)).length, 0);
  await b.ks.importUser('new', STRONG, blob);
});

test('importUser: any change to an export is refused and nothing is imported', async () => {
  const a = fixture();
  await a.ks.createUser('bob', STRONG);
  const x = await a.ks.openUserStore('bob', STRONG, chain(1));
  for (const k of ['addr1', 'addr2', 'addr3']) await x.put(bytes(k), bytes(`key-of-${k}`));
  const older = await a.ks.exportUser('bob', STRONG);
  await x.put(bytes('addr2'), bytes('rotated-key'));
  const blob = await a.ks.exportUser('bob', STRONG);
  const olderAddr2 = decodeExport(older).entries[1]!;
  const MODIFIED = 'invalid exported user: the export was modified (its authentication code does not match); nothing was imported';
  const edits: Array<[string, (es: ExportEntry[]) => ExportEntry[]]> = [
    ['an entry removed', (es) => es.filter((_, i) => i !== 1)],
    ['the last entry removed', (es) => es.slice(0, -1)],
    ['all entries removed', () => []],
    ['entries reordered', (es) => [es[1]!, es[0]!, es[2]!]],
    ['an older sealed value replayed', (es) => es.map((e, i) => (i === 1 ? olderAddr2 : e))],
    ['an entry moved to another chain', (es) => es.map((e, i) => (i === 0 ? { ...e, chainId: chain(2).bytes } : e))],
  ];
  const b = fixture();
  for (const [what, edit] of edits) {
    // Each forged entry still opens alone: only the whole-blob mac catches these.
    await rejects(b.ks.importUser('rob', STRONG, await reencode(blob, edit)), 'BadExport', MODIFIED).catch((e) => {
      throw new Error(`${what}: ${String(e)}`);
    });
  }
  // The mac itself flipped, or the count changed.
  const flipped = blob.slice();
  flipped[flipped.length - 1]! ^= 1;
  await rejects(b.ks.importUser('rob', STRONG, flipped), 'BadExport', MODIFIED);
  // A changed record field changes the derived keys: indistinguishable from a wrong password.
  const salted = blob.slice();
  salted[1 + 12]! ^= 1;
  await rejects(b.ks.importUser('rob', STRONG, salted), 'IncorrectPassword');
  assert.equal(await b.ks.listUsers(), []);
  assert.is((await dump(b.store)).length, 0);
  await b.ks.importUser('rob', STRONG, blob);
  assert.is(text(await (await b.ks.openUserStore('rob', STRONG, chain(1))).get(bytes('addr2'))), 'rotated-key');
});

test("importUser: scrypt parameters above this node's own are refused before scrypt runs", async () => {
  const a = fixture({ kdf: { N: 64, r: 2, p: 2 } });
  await a.ks.createUser('bob', STRONG);
  const blob = await a.ks.exportUser('bob', STRONG);
  const message = (own: string) => `invalid exported user: its scrypt parameters (N=64, r=2, p=2) exceed this node's (${own})`;
  for (const kdf of [{ N: 32, r: 2, p: 2 }, { N: 64, r: 1, p: 2 }, { N: 64, r: 2, p: 1 }]) {
    const b = fixture({ kdf });
    // A wrong password would otherwise cost a KDF run: the refusal comes first.
    await rejects(b.ks.importUser('rob', STRONG2, blob), 'BadExport', message(`N=${kdf.N}, r=${kdf.r}, p=${kdf.p}`));
  }
  for (const kdf of [{ N: 64, r: 2, p: 2 }, { N: 128, r: 8, p: 4 }]) await fixture({ kdf }).ks.importUser('rob', STRONG, blob);
});

test('openUserStore: unknown user, wrong password, per-chain and per-user separation', async () => {
  const { ks } = fixture();
  await rejects(ks.openUserStore('bob', STRONG, chain(1)), 'UserNotFound', 'not found');
  await ks.createUser('bob', STRONG);
  await ks.createUser('carol', STRONG);
  await rejects(ks.openUserStore('bob', STRONG2, chain(1)), 'IncorrectPassword', 'incorrect password for user "bob"');
  const b1 = await ks.openUserStore('bob', STRONG, chain(1));
  const b2 = await ks.openUserStore('bob', STRONG, chain(2));
  const c1 = await ks.openUserStore('carol', STRONG, chain(1));
  await b1.put(bytes('k'), bytes('bob-1'));
  await b2.put(bytes('k'), bytes('bob-2'));
  await c1.put(bytes('k'), bytes('carol-1'));
  assert.is(text(await b1.get(bytes('k'))), 'bob-1');
  assert.is(text(await b2.get(bytes('k'))), 'bob-2');
  assert.is(text(await c1.get(bytes('k'))), 'carol-1');
  // A second store for the same user and chain sees the same data.
  const again = await ks.openUserStore('bob', STRONG, chain(1));
  assert.is(text(await again.get(bytes('k'))), 'bob-1');
});

test('the raw store never holds a password or a value in clear', async () => {
  const { ks, store } = fixture();
  const pw = 'Unique-Pa55word!zq';
  await ks.createUser('bob', pw);
  const s = await ks.openUserStore('bob', pw, chain(1));
  const secret = 'VERY-SECRET-PRIVATE-KEY-MATERIAL';
  await s.put(bytes('key'), bytes(secret));
  await s.batch().put(bytes('key2'), bytes(secret + '2')).write();
  for (const [k, v] of await dump(store)) {
    for (const needle of [bytes(pw), bytes(secret)]) {
      assert.not.ok(contains(k, needle));
      assert.not.ok(contains(v, needle));
    }
  }
  // Two writes of the same value differ (random nonce).
  await s.put(bytes('key3'), bytes(secret));
  const raw = (await dump(store)).map(([, v]) => Buffer.from(v).toString('hex'));
  assert.is(new Set(raw).size, raw.length);
});

test('concurrent createUser of one name: exactly one succeeds', async () => {
  const { ks } = fixture();
  const results = await Promise.allSettled([
    ks.createUser('bob', STRONG),
    ks.createUser('bob', STRONG2),
    ks.createUser('bob', STRONG),
    ks.createUser('bob', 'Another-Strong-Pw-42'),
  ]);
  const ok = results.filter((r) => r.status === 'fulfilled');
  assert.is(ok.length, 1);
  for (const r of results) {
    if (r.status === 'rejected') {
      assert.instance(r.reason, KeystoreError);
      assert.is((r.reason as KeystoreError).message, 'user already exists: bob');
    }
  }
  // The first call won.
  await ks.exportUser('bob', STRONG);
  // Concurrent import and create of one name: one succeeds.
  const a = fixture();
  await a.ks.createUser('x', STRONG2);
  const blob = await a.ks.exportUser('x', STRONG2);
  const rs = await Promise.allSettled([ks.importUser('carol', STRONG2, blob), ks.createUser('carol', STRONG)]);
  assert.equal(rs.map((r) => r.status), ['fulfilled', 'rejected']);
});

test('a failed operation does not block later ones on the same user', async () => {
  const { ks } = fixture();
  await rejects(ks.exportUser('bob', STRONG), 'UserNotFound');
  await ks.createUser('bob', STRONG);
  await ks.exportUser('bob', STRONG);
});

test('constructor validates options', () => {
  const store = new MemoryStore();
  for (const kdf of [{ N: 1000, r: 8, p: 1 }, { N: 2 ** 21, r: 8, p: 1 }, { N: 16, r: 0, p: 1 }, { N: 16, r: 1, p: 0 }]) {
    try {
      new Keystore({ store, kdf });
      assert.unreachable(JSON.stringify(kdf));
    } catch (e) {
      assert.is((e as KeystoreError).code, 'InvalidOptions');
    }
  }
  try {
    new Keystore({ store, kdf: FAST_KDF, throttle: { freeAttempts: 0, baseDelayMs: 1, maxDelayMs: 1 } });
    assert.unreachable();
  } catch (e) {
    assert.is((e as KeystoreError).code, 'InvalidOptions');
  }
});

test('a corrupt user record gives a typed error', async () => {
  const { ks, store } = fixture();
  await ks.createUser('bob', STRONG);
  const [[k]] = (await dump(store)) as [[Uint8Array, Uint8Array]];
  await store.put(k, Uint8Array.of(1, 2, 3));
  await rejects(ks.openUserStore('bob', STRONG, chain(1)), 'Corrupt', 'corrupt user record');
});

test.run();
