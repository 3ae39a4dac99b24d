import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  EncodingError,
  type Id,
  MAX_WIRE_BYTES,
  cb58Decode,
  cb58Encode,
  defineService,
  jsonReplacer,
  method,
  p,
  result,
  vmIdFromName,
  type Client,
  type Wire,
} from '../../src/index.js';

const bytes = Uint8Array.from([0, 1, 2, 250, 255]);
const wire = (v: unknown) => JSON.parse(JSON.stringify(v, jsonReplacer)) as unknown;

test('bytes go on the wire as cb58: Uint8Array, Buffer, subarrays, nested or at the root', () => {
  const cb58 = cb58Encode(bytes);
  assert.is(wire(bytes), cb58);
  assert.is(wire(Buffer.from(bytes)), cb58);
  assert.is(wire(new Uint8Array([9, ...bytes, 9]).subarray(1, 6)), cb58);
  assert.equal(wire({ a: bytes, list: [Buffer.from(bytes), new Uint8Array(0)], n: 5n, id: vmIdFromName('kv') }), {
    a: cb58,
    list: [cb58, cb58Encode(new Uint8Array(0))],
    n: '5',
    id: vmIdFromName('kv').toString(),
  });
  assert.equal(cb58Decode((wire({ x: bytes }) as { x: string }).x), bytes);
  // Objects that merely look like a Buffer's JSON stay as they are.
  assert.equal(wire({ type: 'Buffer', data: [1, 2] }), { type: 'Buffer', data: [1, 2] });
  // Other typed arrays are not bytes.
  assert.equal(wire({ u16: new Uint16Array([1]) }), { u16: { 0: 1 } });
});

test('a byte value longer than MAX_WIRE_BYTES is refused (cb58 is quadratic), the limit itself is fine', () => {
  assert.is(MAX_WIRE_BYTES, 16 * 1024);
  assert.is(cb58Decode(wire(new Uint8Array(MAX_WIRE_BYTES).fill(7)) as string).length, MAX_WIRE_BYTES);
  for (const big of [new Uint8Array(MAX_WIRE_BYTES + 1), Buffer.alloc(MAX_WIRE_BYTES + 1)]) {
    assert.throws(
      () => JSON.stringify({ big }, jsonReplacer),
      (e: unknown) => e instanceof EncodingError && /16385 bytes is too long to send as cb58 \(at most 16384\)/.test(e.message),
    );
  }
});

// Compile-time: the typed client says what the wire carries.
const api = defineService('t', {
  get: method({ params: p.none(), result: result<{ data: Uint8Array; raw: Buffer; id: Id; n: bigint; list: Uint8Array[] }>() }),
});
type GetResult = Awaited<ReturnType<Client<typeof api>['get']>>;
const sample: GetResult = { data: 'cb58', raw: 'cb58', id: 'cb58', n: '1', list: ['cb58'] };
const typed: Wire<Uint8Array> = 'cb58';

test('Wire<T> types bytes, IDs and bigints as strings', () => {
  assert.type(sample.data, 'string');
  assert.type(typed, 'string');
});

test.run();
