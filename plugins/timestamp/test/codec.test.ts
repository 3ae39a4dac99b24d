import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Id, sha256, toHex, vmIdFromName } from '@cornice/sdk';
import {
  BLOCK_LENGTH,
  TimestampError,
  blockIdOf,
  decodeBlock,
  encodeBlock,
  genesisFields,
  vmFactory,
} from '../src/index.js';

const parentId = Id.fromBytes(new Uint8Array(32).fill(0xaa));
const data = Uint8Array.from({ length: 32 }, (_, i) => i);

test('layout: parent ‖ data ‖ int64 big-endian timestamp, 72 bytes, no type ID', () => {
  const bytes = encodeBlock({ parentId, data, timestamp: 0x0102030405 });
  assert.is(bytes.length, BLOCK_LENGTH);
  assert.is(BLOCK_LENGTH, 72);
  assert.is(toHex(bytes), 'aa'.repeat(32) + toHex(data) + '0000000102030405');
});

test('round trip', () => {
  for (const timestamp of [0, 1, 1588291200, Number.MAX_SAFE_INTEGER, -1]) {
    const bytes = encodeBlock({ parentId, data, timestamp });
    const back = decodeBlock(bytes);
    assert.ok(back.parentId.equals(parentId));
    assert.equal(back.data, data);
    assert.is(back.timestamp, timestamp);
    assert.equal(encodeBlock(back), bytes);
  }
});

test('negative timestamps are two-complement int64', () => {
  assert.is(toHex(encodeBlock({ parentId, data, timestamp: -1 }).subarray(64)), 'ff'.repeat(8));
});

test('block ID is SHA-256 of the bytes', () => {
  const bytes = encodeBlock({ parentId, data, timestamp: 42 });
  assert.equal(blockIdOf(bytes).bytes, sha256(bytes));
});

test('decode rejects other lengths and out-of-range timestamps', () => {
  for (const n of [0, 71, 73]) {
    assert.throws(
      () => decodeBlock(new Uint8Array(n)),
      (e: unknown) => e instanceof TimestampError && e.code === 'MalformedBlock' && e.message === `a timestamp block is 72 bytes (got ${n} bytes)`,
    );
  }
  const huge = encodeBlock({ parentId, data, timestamp: 0 });
  new DataView(huge.buffer).setBigInt64(64, 1n << 62n, false);
  assert.throws(() => decodeBlock(huge), (e: unknown) => e instanceof TimestampError && e.code === 'MalformedBlock');
});

test('encode rejects wrong data length and non-integer timestamps', () => {
  assert.throws(() => encodeBlock({ parentId, data: new Uint8Array(31), timestamp: 0 }), (e: unknown) => e instanceof TimestampError);
  assert.throws(() => encodeBlock({ parentId, data, timestamp: 1.5 }), (e: unknown) => e instanceof TimestampError);
});

test('genesis ID with empty genesis data (reference vector)', () => {
  const g = genesisFields(new Uint8Array(0));
  assert.ok(g.parentId.equals(Id.empty));
  assert.is(g.timestamp, 0);
  assert.equal(g.data, new Uint8Array(32));
  assert.is(blockIdOf(encodeBlock(g)).toString(), 'zpeWnFqmbnoSw1DSNzJE22SfMBBXa6tqwHdniD6cYSsSEwDro');
});

test('genesis data is zero-padded; more than 32 bytes is refused', () => {
  const g = genesisFields(Uint8Array.of(1, 2, 3));
  assert.is(toHex(g.data), '010203' + '00'.repeat(29));
  assert.is(genesisFields(new Uint8Array(32).fill(9)).data.length, 32);
  assert.throws(
    () => genesisFields(new Uint8Array(33)),
    (e: unknown) => e instanceof TimestampError && e.code === 'InvalidGenesis' && e.message === 'genesis data should be bytes (max length 32)',
  );
});

test('vmFactory: name, version, vmId', () => {
  assert.is(vmFactory.name, 'timestamp');
  assert.is(vmFactory.version, '0.1.0');
  assert.is(vmFactory.vmId.toString(), 'tGas3T58KzdjLHhBDMnH2TvrddhqTji5iZAMZ3RXs2NLpSnhH');
  assert.ok(vmFactory.vmId.equals(vmIdFromName('timestamp')));
});

test.run();
