import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Id, sha256 } from '@cornice/sdk';
import { AliasError, ChainAliases } from '../../src/chains/aliases.js';

const chain = (s: string) => Id.fromBytes(sha256(new TextEncoder().encode(s)));
const isCode = (code: string) => (e: unknown) => e instanceof AliasError && e.code === code;

test('admin.aliasChain aliases are bounded and removable; a chain\'s own aliases are not (issue 32, points 3 and 13)', () => {
  const a = new ChainAliases({ maxAdminAliases: 2 });
  const x = chain('x');
  a.register(x, ['X', 'avm']);
  a.alias('X', 'one');
  a.alias(x.toString(), 'two');
  assert.is(a.adminAliasCount, 2);
  assert.throws(
    () => a.alias('X', 'three'),
    (e: unknown) => isCode('TooManyAliases')(e) && /at most 2 chain aliases .*admin\.removeChainAlias/.test((e as Error).message),
  );
  a.removeAlias('one');
  assert.is(a.resolve('one'), undefined);
  assert.equal(a.aliases(x), ['X', 'avm', 'two']);
  a.alias('X', 'three');
  assert.throws(() => a.removeAlias('avm'), (e: unknown) => isCode('UnknownAlias')(e) && /was not added with admin\.aliasChain/.test((e as Error).message));
  assert.throws(() => a.removeAlias(x.toString()), isCode('UnknownAlias'));
  assert.throws(() => a.removeAlias('nope'), (e: unknown) => isCode('UnknownAlias')(e) && /is not a chain alias/.test((e as Error).message));
});

test('a chain registered later wins over an admin alias of its name or ID: creation never fails on one', () => {
  const a = new ChainAliases();
  const x = chain('x');
  const later = chain('later');
  a.register(x, ['X']);
  a.alias('X', 'C');
  a.alias('X', later.toString());
  a.register(later, ['C']);
  assert.is(a.resolve('C'), later.toString());
  assert.is(a.resolve(later.toString()), later.toString());
  assert.equal(a.aliases(x), ['X']);
  assert.is(a.adminAliasCount, 0);
  a.unregister(x);
  assert.is(a.resolve(later.toString()), later.toString(), 'unregistering the other chain does not take its ID away');
});

test.run();
