import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Id, InvalidParamsError, ShortId, cb58Encode } from '@cornice/sdk';
import { ChainAddress, MAX_ADDRESS_CHARS, addressOn, chainAddress, formatAddress, parseAddress } from '../src/addresses.js';
import { CHAIN_ID, EWOQ } from './fake-backend.js';

const X = { chainId: CHAIN_ID, aliases: ['X', 'avm'] };
const EWOQ_CB58 = '6Y3kysjF9jnHnYkdS9yGAuoHyae2eNmeV';

function paramError(f: () => unknown): InvalidParamsError {
  try {
    f();
  } catch (e) {
    assert.instance(e, InvalidParamsError);
    return e as InvalidParamsError;
  }
  throw new Error('expected an InvalidParamsError');
}

test('format: the primary alias, or the chain ID without aliases', () => {
  assert.is(formatAddress(X, EWOQ.address), `X-${EWOQ_CB58}`);
  assert.is(formatAddress({ chainId: CHAIN_ID, aliases: [] }, EWOQ.address), `${CHAIN_ID}-${EWOQ_CB58}`);
});

test('parse: any alias of the chain or its ID before the dash', () => {
  for (const prefix of ['X', 'avm', CHAIN_ID.toString()]) {
    const a = parseAddress(`${prefix}-${EWOQ_CB58}`, 'to');
    assert.is(a.chain, prefix);
    assert.ok(addressOn(X, a, 'to').equals(EWOQ.address));
  }
});

test('parse errors name the field, with the reference texts', () => {
  assert.is(paramError(() => parseAddress(EWOQ_CB58, 'to')).message, 'to: invalid address');
  assert.is(paramError(() => parseAddress('X-', 'to')).message, 'to: zero length string');
  assert.is(paramError(() => parseAddress(`X-${EWOQ_CB58.slice(0, -1)}2`, 'to')).message, 'to: invalid input checksum');
  assert.is(paramError(() => parseAddress('X-0OIl', 'to')).message, "to: Invalid base58 digit ('0')");
  assert.is(paramError(() => parseAddress(`X-${cb58Encode(new Uint8Array(19))}`, 'to')).message, 'to: input has insufficient length');
  assert.is(paramError(() => parseAddress(`X-${cb58Encode(new Uint8Array(32).fill(1))}`, 'to')).message, 'to: input has insufficient length');
  // A long address part is refused before base58 decoding (quadratic).
  assert.is(paramError(() => parseAddress(`X-${'z'.repeat(100)}`, 'to')).message, 'to: input has insufficient length');
});

test('a prefix that names another chain: wrong blockchain ID; two dashes: invalid address', () => {
  const other = Id.fromBytes(new Uint8Array(32).fill(8)).toString();
  for (const prefix of ['P', 'C', other, 'x', '']) {
    assert.is(paramError(() => addressOn(X, parseAddress(`${prefix}-${EWOQ_CB58}`, 'to'), 'to')).message, 'to: wrong blockchain ID');
  }
  assert.is(paramError(() => addressOn(X, parseAddress(`X-Y-${EWOQ_CB58}`, 'to'), 'to')).message, 'to: invalid address');
  // An alias with a dash is still one alias.
  const dashed = { chainId: CHAIN_ID, aliases: ['my-chain'] };
  assert.ok(addressOn(dashed, parseAddress(`my-chain-${EWOQ_CB58}`, 'to'), 'to').equals(EWOQ.address));
});

test('aliases are read at each check (admin.aliasChain adds them live)', () => {
  const chain = { chainId: CHAIN_ID, aliases: ['X'] };
  const a = parseAddress(`later-${EWOQ_CB58}`, 'to');
  assert.throws(() => addressOn(chain, a, 'to'), /wrong blockchain ID/);
  chain.aliases.push('later');
  assert.ok(addressOn(chain, a, 'to').equals(EWOQ.address));
});

test('the param parser: a string kind with a bound; wrong types and oversized strings are -32602 naming the field', () => {
  const parser = chainAddress();
  assert.is(parser.kind, 'string');
  assert.is(parser.max, MAX_ADDRESS_CHARS);
  assert.ok(parser.parse(`X-${EWOQ_CB58}`, 'to') instanceof ChainAddress);
  assert.is(paramError(() => parser.parse(42, 'to')).message, 'to: expected an address string but got number');
  assert.is(paramError(() => parser.parse(null, 'to')).message, 'to: expected an address string but got null');
  assert.match(paramError(() => parser.parse('x'.repeat(MAX_ADDRESS_CHARS + 1), 'to')).message, /^to: must be at most/);
  // The longest alias admin.aliasChain takes still fits.
  assert.ok(parser.parse(`${'a'.repeat(128)}-${EWOQ_CB58}`, 'to').address.equals(EWOQ.address));
});

test('a ChainAddress travels as its text (the typed client accepts either)', () => {
  const a = new ChainAddress('X', ShortId.fromString(EWOQ_CB58));
  assert.is(JSON.stringify({ to: a }), `{"to":"X-${EWOQ_CB58}"}`);
});

test.run();
