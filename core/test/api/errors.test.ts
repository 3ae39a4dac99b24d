import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { InvalidParamsError, NotFoundError, cb58Encode } from '@cornice/sdk';
import { ERROR_LIMITS, toRpcError } from '../../src/api/errors.js';
import { captureLog } from '../helpers/log.js';

/**
 * The sdk's errors module loaded under another URL: other classes, as in a plugin that brings its
 * own copy of @cornice/sdk. (The module imports nothing, so this is a complete second copy.)
 */
type ErrorsModule = typeof import('@cornice/sdk');
const copy = (await import(new URL('./errors/errors.js?plugin-copy', import.meta.resolve('@cornice/sdk')).href)) as Pick<
  ErrorsModule,
  'NodeError' | 'InvalidParamsError' | 'NotFoundError'
>;


test("a plugin copy's typed errors map like ours: -32602 naming the field, -32000 with the message", () => {
  assert.not.instance(new copy.InvalidParamsError('key', 'x'), InvalidParamsError);
  class KvError extends copy.NodeError<'QueueFull'> {}
  for (const m of [{ InvalidParamsError, NotFoundError }, copy]) {
    const log = captureLog();
    assert.equal(toRpcError(new m.InvalidParamsError('key', 'expected a string but got number'), log, 'kv.put'), {
      code: -32602,
      message: 'key: expected a string but got number',
      data: { field: 'key' },
    });
    assert.equal(toRpcError(new m.NotFoundError('key "a" not found'), log, 'kv.get'), {
      code: -32000,
      message: 'key "a" not found',
      data: { code: 'NotFound' },
    });
    assert.equal(log.lines, [], 'typed errors are not logged as unexpected');
  }
  assert.equal(toRpcError(new KvError('QueueFull', 'the write queue is full', { max: 1000n }), captureLog(), 'kv.put'), {
    code: -32000,
    message: 'the write queue is full',
    data: { max: '1000' },
  });
});

test('hostile throws are contained: -32603 logged, never a crash', () => {
  const brand = Symbol.for('cornice.NodeError');
  const proxy = new Proxy(
    {},
    {
      get() {
        throw new Error('trap');
      },
    },
  );
  const throwingMessage = Object.defineProperties(Object.create(null), {
    [brand]: { value: true },
    code: { value: 'Oops' },
    message: {
      get() {
        throw new Error('getter');
      },
    },
  });
  for (const thrown of ['a string', 42, null, undefined, new Error('plain'), { code: 'NotFound', message: 'duck' }, proxy, throwingMessage]) {
    const log = captureLog();
    assert.equal(toRpcError(thrown, log, 'evil.m'), { code: -32603, message: 'internal error' });
    assert.equal(log.lines.map((l) => [l.level, l.msg, l.fields?.method]), [['error', 'unexpected error in method', 'evil.m']]);
  }
});

test('what an error puts in a reply is bounded: message, code, field and data', () => {
  const huge = 'x'.repeat(1_000_000);
  const e1 = toRpcError(new copy.NodeError(huge.slice(0, 500), huge), captureLog(), 'm');
  assert.is(e1.message.length, ERROR_LIMITS.message);
  assert.ok(e1.message.endsWith('…'));
  assert.equal(e1.data, { code: `${'x'.repeat(ERROR_LIMITS.code - 1)}…` });

  const e2 = toRpcError(new copy.InvalidParamsError(huge, 'bad'), captureLog(), 'm');
  assert.is(e2.code, -32602);
  assert.is(e2.message.length, ERROR_LIMITS.message);
  assert.is((e2.data as { field: string }).field.length, ERROR_LIMITS.code);

  // data too large, cyclic, or throwing while serialised: replaced by the code
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  const throwing = {
    toJSON() {
      throw new Error('no');
    },
  };
  for (const data of [{ blob: huge }, cyclic, throwing, [1n, cyclic]]) {
    assert.equal(toRpcError(new copy.NodeError('Big', 'too much', data), captureLog(), 'm'), { code: -32000, message: 'too much', data: { code: 'Big' } });
  }
  // data within bounds is sent as plain JSON
  assert.equal(toRpcError(new copy.NodeError('Small', 'ok', { n: 1n, bytes: new Uint8Array([1]) }), captureLog(), 'm').data, { n: '1', bytes: cb58Encode(new Uint8Array([1])) });
});

test.run();
