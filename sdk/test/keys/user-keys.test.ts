import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ADDRESS_LIST_KEY, MemoryStore, PrivateKey, UserKeys, decodeAddressList, hasErrorCode } from '../../src/index.js';

test('keys are stored under their address and listed once, in the order added (the reference layout)', async () => {
  const db = new MemoryStore();
  const keys = new UserKeys(db, { chain: 'X-Chain' });
  const a = PrivateKey.generate();
  const b = PrivateKey.generate();
  await keys.add(a);
  await keys.add(b);
  await keys.add(a);
  assert.equal((await keys.addresses()).map(String), [a.address.toString(), b.address.toString()]);
  assert.equal(decodeAddressList((await db.get(ADDRESS_LIST_KEY))!).map(String), [a.address.toString(), b.address.toString()]);
  assert.ok((await keys.key(b.address))!.equals(b));
  assert.is(await keys.key(PrivateKey.generate().address), undefined);
  assert.equal((await keys.keys()).map((k) => k.address.toString()), [a.address.toString(), b.address.toString()]);
});

test('at most maxKeys keys (Limit, naming the chain); a corrupt list or key is CorruptDatabase', async () => {
  const db = new MemoryStore();
  const keys = new UserKeys(db, { chain: 'P-Chain', maxKeys: 2 });
  await keys.add(PrivateKey.generate());
  await keys.add(PrivateKey.generate());
  try {
    await keys.add(PrivateKey.generate());
    assert.unreachable();
  } catch (e) {
    assert.ok(hasErrorCode(e, 'Limit'));
    assert.match((e as Error).message, /most P-Chain keys allowed \(2\)/);
  }
  const victim = (await keys.addresses())[0]!;
  await db.put(victim.bytes, new Uint8Array(32).fill(1));
  await keys.key(victim).then(() => assert.unreachable(), (e) => assert.ok(hasErrorCode(e, 'CorruptDatabase')));
  await db.put(ADDRESS_LIST_KEY, Uint8Array.of(0, 0, 0, 9));
  await keys.addresses().then(() => assert.unreachable(), (e) => assert.ok(hasErrorCode(e, 'CorruptDatabase')));
});

test.run();
