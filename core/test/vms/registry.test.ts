import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Id, defineVM, vmIdFromName, type ChainVM, type VMFactory } from '@cornice/sdk';
import { VMRegistry } from '../../src/vms/registry.js';
import { VMRegistryError } from '../../src/vms/errors.js';

const vm = (name: string, vmId?: Id): VMFactory =>
  defineVM({ name, version: '1.0.0', ...(vmId ? { vmId } : {}), create: () => ({}) as ChainVM });

const throwsMsg = (fn: () => unknown, re: RegExp, code?: string) => {
  try {
    fn();
  } catch (e) {
    assert.instance(e, VMRegistryError);
    assert.match((e as Error).message, re);
    if (code) assert.is((e as VMRegistryError).code, code);
    return;
  }
  assert.unreachable(`expected an error matching ${re}`);
};

test('resolve by Id, cb58, name and alias', () => {
  const r = new VMRegistry();
  const avm = vm('avm');
  r.register(avm, 'builtin');
  r.alias('avm', 'X-VM');
  assert.is(r.resolve(vmIdFromName('avm')), avm);
  assert.is(r.resolve('jvYyfQTxGMJLuGWa55kdP2p2zSUYsQ5Raupu4TW34ZAUBAbtq'), avm);
  assert.is(r.resolve('avm'), avm);
  assert.is(r.resolve('X-VM'), avm);
  assert.ok(r.has('X-VM'));
  assert.not.ok(r.has('nope'));
  assert.equal(
    r.list().map((v) => ({ ...v, vmId: v.vmId.toString() })),
    [{ vmId: 'jvYyfQTxGMJLuGWa55kdP2p2zSUYsQ5Raupu4TW34ZAUBAbtq', name: 'avm', version: '1.0.0', aliases: ['avm', 'X-VM'], source: 'builtin' }],
  );
});

test('unknown vmID', () => {
  const r = new VMRegistry();
  throwsMsg(() => r.resolve('nope'), /^unknown vmID nope$/, 'UnknownVM');
  throwsMsg(() => r.resolve(vmIdFromName('x')), new RegExp(`^unknown vmID ${vmIdFromName('x')}$`), 'UnknownVM');
  throwsMsg(() => r.alias('nope', 'a'), /^unknown vmID nope$/);
});

test('duplicate vmID names both sources', () => {
  const r = new VMRegistry();
  r.register(vm('timestamp'), '@cornice/timestamp');
  throwsMsg(() => r.register(vm('timestamp'), '/plugins/x.js'), /duplicate vmID .*timestamp from @cornice\/timestamp and timestamp from \/plugins\/x\.js/, 'DuplicateVM');
  // same name, different vmID: the name (an alias) is taken
  throwsMsg(() => r.register(vm('timestamp', vmIdFromName('other')), '/p/y.js'), /VM name timestamp .*\/p\/y\.js is already used by .*@cornice\/timestamp/, 'AliasTaken');
});

test('aliases: taken, idempotent, validated', () => {
  const r = new VMRegistry();
  r.register(vm('a'), 'builtin');
  r.register(vm('b'), 'builtin');
  r.alias('a', 'first');
  r.alias('a', 'first');
  assert.equal(r.list()[0]!.aliases, ['a', 'first']);
  throwsMsg(() => r.alias('b', 'first'), /VM alias first is already used by a/, 'AliasTaken');
  throwsMsg(() => r.alias('b', 'a'), /already used by a/, 'AliasTaken');
  throwsMsg(() => r.alias('b', vmIdFromName('a').toString()), /already used by a/, 'AliasTaken');
  throwsMsg(() => r.alias('b', 'has space'), /VM alias must be/, 'BadAlias');
  throwsMsg(() => r.alias('b', ''), /VM alias must be/, 'BadAlias');
});

test('a factory whose vmId is not our Id gets a real Id (plugins built by hand or with another sdk copy)', () => {
  const bytes = vmIdFromName('hand').bytes;
  let created = 0;
  const hand = { name: 'hand', version: '0.1.0', vmId: { bytes, toString: () => 'whatever' }, create: () => (created++, {} as ChainVM) };
  const r = new VMRegistry();
  r.register(hand as unknown as VMFactory, 'hand.js');
  const f = r.resolve('hand');
  assert.instance(f.vmId, Id);
  assert.ok(f.vmId.equals(vmIdFromName('hand')));
  f.create();
  assert.is(created, 1);
  throwsMsg(() => r.register({ name: 'x' } as unknown as VMFactory, 'x.js'), /x\.js: not a VMFactory/, 'InvalidFactory');
});

test.run();
