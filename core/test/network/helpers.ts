import * as assert from 'uvu/assert';
import { fromHex, toHex } from '@cornice/sdk';
import { NetworkError, type NetworkErrorCode } from '../../src/network/errors.js';

/** Runs `fn`, asserting it throws a NetworkError with `code` whose message matches `message` (exactly, for a string). */
export function throwsNetwork(fn: () => unknown, code: NetworkErrorCode, message: string | RegExp): NetworkError {
  try {
    fn();
  } catch (e) {
    assert.instance(e, NetworkError);
    const err = e as NetworkError;
    assert.is(err.code, code, err.message);
    if (typeof message === 'string') assert.is(err.message, message);
    else assert.match(err.message, message);
    return err;
  }
  assert.unreachable(`no NetworkError ${code}`);
  throw new Error('unreachable');
}

/**
 * A message (or any value) with IDs as `Id:<hex>`, bytes as hex and bigints as `<n>n`, so deep
 * equality compares them by value (Id keeps its bytes in a private field, which assert.equal skips).
 */
export function plain(v: unknown): unknown {
  if (typeof v === 'bigint') return `${v}n`;
  if (v instanceof Uint8Array) return `bytes:${toHex(v)}`;
  if (Array.isArray(v)) return v.map(plain);
  if (v !== null && typeof v === 'object') {
    const key = (v as { key?: unknown }).key;
    if (typeof key === 'string') return `${v.constructor.name}:${key}`;
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  }
  return v;
}

/** Bytes of hex written with spaces for reading (`0000 0c ...`). */
export const unhex = (s: string): Uint8Array => fromHex(s.replace(/\s+/g, ''));
