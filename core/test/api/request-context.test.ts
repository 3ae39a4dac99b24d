import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { clientKey, currentClient, withClient } from '../../src/api/request-context.js';

test('the client is set for the synchronous part of a dispatch, nested ones restore it, and it is gone after', async () => {
  assert.is(currentClient(), undefined);
  let seenAfterAwait: string | undefined = 'unset';
  const p = withClient('10.0.0.1', async () => {
    assert.is(currentClient(), '10.0.0.1', 'seen when a call enters (the keystore reads it there)');
    withClient('10.0.0.2', () => assert.is(currentClient(), '10.0.0.2'));
    assert.is(currentClient(), '10.0.0.1');
    await Promise.resolve();
    seenAfterAwait = currentClient();
  });
  assert.is(currentClient(), undefined, 'cleared once the synchronous part returned');
  await p;
  assert.is(seenAfterAwait, undefined, 'not carried across an await (no promise hook: see the file comment)');
  assert.is(clientKey('127.0.0.1', 5000), '127.0.0.1:5000');
  assert.is(clientKey('10.1.2.3', 5000), '10.1.2.3');
});

test.run();
