import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { randomBytes, createHash } from 'node:crypto';
import { cb58Decode, cb58Encode } from '../../src/encoding/cb58.js';
import { base58Encode } from '../../src/encoding/base58.js';
import { fromHex, toHex } from '../../src/encoding/hex.js';
import { EncodingError, type EncodingErrorCode } from '../../src/errors/errors.js';

function fails(input: string, code: EncodingErrorCode, message: string): void {
  try {
    cb58Decode(input);
  } catch (e) {
    assert.instance(e, EncodingError);
    assert.is((e as EncodingError).code, code);
    assert.is((e as Error).message, message);
    return;
  }
  assert.unreachable(`${JSON.stringify(input)} should not decode`);
}

test('reference vectors', () => {
  assert.is(cb58Encode(new Uint8Array(32)), '11111111111111111111111111111111LpoYY');
  assert.is(
    toHex(cb58Decode('ewoqjP7PxY4yr3iLTpLisriqt94hdyDFNgchSxGGztUrTXtNN')),
    '56289e99c94b6912bfc12adc093c9b51124f0dc54ac7a766b2bc5ccf558d8027',
  );
  assert.is(
    cb58Encode(fromHex('56289e99c94b6912bfc12adc093c9b51124f0dc54ac7a766b2bc5ccf558d8027')),
    'ewoqjP7PxY4yr3iLTpLisriqt94hdyDFNgchSxGGztUrTXtNN',
  );
  assert.is(cb58Encode(fromHex('3cb7d3842e8cee6a0ebd09f1fe884f6861e1b29c')), '6Y3kysjF9jnHnYkdS9yGAuoHyae2eNmeV');
  assert.is(
    cb58Encode(fromHex('07c132d73b379f706aceec6ee50e8b7d0e658a41d02ca32673b6b1b3f422c378')),
    '4R5p2RXDGLqaifZE4hHWH9owe34pfoBULn1DrQTWivjg8o4aH',
  );
});

test('checksum is the last 4 bytes of ONE sha256', () => {
  const payload = Uint8Array.from([1, 2, 3, 4, 5]);
  const h = createHash('sha256').update(payload).digest();
  const expected = base58Encode(Uint8Array.from([...payload, ...h.subarray(28)]));
  assert.is(cb58Encode(payload), expected);
});

test('empty payload round trips', () => {
  const s = cb58Encode(new Uint8Array());
  assert.equal(cb58Decode(s), new Uint8Array());
});

test('random payloads round trip', () => {
  for (let len = 0; len < 80; len++) {
    const p = new Uint8Array(randomBytes(len));
    assert.equal(cb58Decode(cb58Encode(p)), p);
  }
});

test('every reference error text', () => {
  fails('', 'ZeroLength', 'zero length string');
  fails('0', 'InvalidDigit', "Invalid base58 digit ('0')");
  fails('11111111111111111111111111111111LpoYO', 'InvalidDigit', "Invalid base58 digit ('O')");
  fails('1', 'TooShortForChecksum', 'input string is smaller than the checksum size');
  fails('111', 'TooShortForChecksum', 'input string is smaller than the checksum size');
  fails('11111111111111111111111111111111LpoYZ', 'BadChecksum', 'invalid input checksum');
  fails('1111', 'BadChecksum', 'invalid input checksum');
  fails('ewoqjP7PxY4yr3iLTpLisriqt94hdyDFNgchSxGGztUrTXtNn', 'BadChecksum', 'invalid input checksum');
});

test('decode returns a standalone copy', () => {
  const p = cb58Decode(cb58Encode(Uint8Array.of(9, 8, 7)));
  assert.is(p.byteLength, 3);
  assert.is(p.buffer.byteLength, 3);
});

test.run();
