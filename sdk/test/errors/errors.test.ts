import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  EncodingError,
  InvalidParamsError,
  NodeError,
  NotFoundError,
  hasErrorCode,
  isInvalidParamsError,
  isNodeError,
  isNotFoundError,
} from '../../src/index.js';

/**
 * The errors module loaded a second time under another URL: new classes, as a plugin's own copy of
 * the sdk would have. (errors.js imports nothing, so the query makes a complete second copy.)
 */
type ErrorsModule = typeof import('../../src/errors/errors.js');
const copy = (await import(new URL('../../src/errors/errors.js?second-copy', import.meta.url).href)) as ErrorsModule;

test('the second copy really has other classes', () => {
  assert.is.not(copy.NodeError, NodeError);
  assert.not.instance(new copy.InvalidParamsError('f', 'bad'), InvalidParamsError);
  assert.not.instance(new copy.NodeError('X', 'm'), NodeError);
});

test('errors of either copy are recognised by brand and code, not by instanceof', () => {
  for (const m of [{ NodeError, InvalidParamsError, NotFoundError, isNodeError }, copy]) {
    class KvError extends m.NodeError<'QueueFull'> {}
    const kv = new KvError('QueueFull', 'the write queue is full');
    const bad = new m.InvalidParamsError('key', 'expected a string');
    const missing = new m.NotFoundError('key "a" not found');
    for (const check of [isNodeError, copy.isNodeError]) {
      assert.ok(check(kv) && check(bad) && check(missing));
    }
    assert.ok(isInvalidParamsError(bad));
    assert.not.ok(isInvalidParamsError(kv));
    assert.ok(isNotFoundError(missing));
    assert.not.ok(isNotFoundError(bad));
    assert.ok(hasErrorCode(kv, 'QueueFull'));
    assert.is(kv.name, 'KvError');
  }
  assert.ok(isNodeError(new EncodingError('BadHex', 'x')));
});

test('anything else is not a NodeError, and asking never throws', () => {
  const hostileProxy = new Proxy(
    {},
    {
      get() {
        throw new Error('boom');
      },
      getPrototypeOf() {
        throw new Error('boom');
      },
    },
  );
  const brand = Symbol.for('cornice.NodeError');
  const throwingCode = Object.defineProperty({ [brand]: true }, 'code', {
    get() {
      throw new Error('boom');
    },
  });
  const values: unknown[] = [
    undefined,
    null,
    'InvalidParams',
    42,
    Symbol('x'),
    () => 1,
    new Error('plain'),
    Object.assign(new Error('duck'), { code: 'NotFound' }),
    { code: 'InvalidParams', message: 'looks like one', field: 'x' },
    { [brand]: true, code: 7 },
    { [brand]: 'yes', code: 'NotFound' },
    hostileProxy,
    throwingCode,
  ];
  for (const v of values) {
    assert.not.ok(isNodeError(v), String(typeof v));
    assert.not.ok(isInvalidParamsError(v));
    assert.not.ok(isNotFoundError(v));
  }
});

test.run();
