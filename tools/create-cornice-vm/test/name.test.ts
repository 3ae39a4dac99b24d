import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ScaffoldError } from '../src/errors.js';
import { parseProjectName } from '../src/name.js';

function refused(name: string, reason: RegExp): void {
  try {
    parseProjectName(name);
  } catch (e) {
    assert.instance(e, ScaffoldError);
    assert.is((e as ScaffoldError).code, 'InvalidName');
    assert.match((e as Error).message, reason);
    return;
  }
  assert.unreachable(`"${name}" was accepted`);
}

test('valid npm package names: the VM name is the part after the scope', () => {
  assert.equal(parseProjectName('my-vm'), { packageName: 'my-vm', vmName: 'my-vm' });
  assert.equal(parseProjectName('@acme/kv.store'), { packageName: '@acme/kv.store', vmName: 'kv.store' });
  assert.equal(parseProjectName('a'), { packageName: 'a', vmName: 'a' });
  assert.equal(parseProjectName('x'.repeat(32)).vmName.length, 32);
  assert.equal(parseProjectName(`@${'s'.repeat(100)}/vm_1`).vmName, 'vm_1');
});

test('names npm refuses for a new package are refused, saying why', () => {
  refused('', /it is empty/);
  refused(' my-vm', /leading or trailing spaces/);
  refused('my-vm ', /leading or trailing spaces/);
  refused('My-VM', /lowercase/);
  refused('.hidden', /must not start with '\.' or '_'/);
  refused('_private', /must not start with '\.' or '_'/);
  refused('@acme/_x', /after the scope must not start/);
  refused('has space', /URL-safe/);
  refused('a/b', /URL-safe/);
  refused('@acme/', /URL-safe/);
  refused('@acme/b/c', /URL-safe/);
  refused('caf\u00e9', /URL-safe/);
  refused("it's", /~'!\(\)\*/);
  refused('a*b', /~'!\(\)\*/);
  refused('node_modules', /reserved name/);
  refused('favicon.ico', /reserved name/);
  refused('http', /Node\.js core module/);
  refused('x'.repeat(215), /at most 214 characters/);
});

test('a VM name longer than 32 bytes is refused: the vmID is the name padded to 32 bytes', () => {
  refused('x'.repeat(33), /VM name "x{33}" is 33 bytes; at most 32/);
  refused(`@acme/${'v'.repeat(40)}`, /is 40 bytes; at most 32/);
});

test('a refused name is quoted at most 64 characters long', () => {
  try {
    parseProjectName('X'.repeat(1000));
  } catch (e) {
    assert.ok((e as Error).message.length < 200, (e as Error).message);
    return;
  }
  assert.unreachable();
});

test.run();
