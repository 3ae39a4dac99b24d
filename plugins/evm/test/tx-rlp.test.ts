import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RLP } from '@ethereumjs/rlp';
import { createTx } from '@ethereumjs/tx';
import { txRlpError } from '../src/chain/tx-rlp.js';
import { addr, common, key, signedTx } from './helpers.js';

type Item = Uint8Array | Item[];
const b = (...xs: number[]): Uint8Array => Uint8Array.from(xs);
const legacyFields = (): Item[] => (RLP.decode(createTx({ type: 0, nonce: 1n, to: addr(1), gasLimit: 21_000n, gasPrice: 30n }, { common }).sign(key(1)).serialize()) as Item[]);
const dynamicFields = (): Item[] => RLP.decode(signedTx({ nonce: 1n, to: addr(1) }).serialize().subarray(1)) as Item[];
const legacy = (f: Item[]): string | undefined => txRlpError(0, RLP.encode(f));
const dynamic = (f: Item[]): string | undefined => txRlpError(2, RLP.encode(f));
const withField = (f: Item[], i: number, v: Item): Item[] => f.map((x, j) => (j === i ? v : x));

test('well-formed txs of each type pass', () => {
  assert.is(legacy(legacyFields()), undefined);
  assert.is(dynamic(dynamicFields()), undefined);
  const withKeys = dynamicFields();
  withKeys[8] = [[addr(2), [new Uint8Array(32).fill(1)]]];
  assert.is(dynamic(withKeys), undefined);
  const creation = withField(legacyFields(), 3, new Uint8Array(0));
  assert.is(legacy(creation), undefined);
  const t1 = createTx({ type: 1, nonce: 1n, to: addr(1), gasLimit: 21_000n, gasPrice: 30n }, { common }).sign(key(1)).serialize();
  assert.is(txRlpError(1, t1.subarray(1)), undefined);
});

test("stream errors: geth's texts, never @ethereumjs's", () => {
  // A list header longer than the input (what @ethereumjs calls "invalid RLP (safeSlice)").
  assert.is(txRlpError(0, b(0xc5, 0x83, 1, 2)), 'rlp: value size exceeds available input length');
  assert.is(txRlpError(0, b(0xf8, 0xff, 1)), 'rlp: value size exceeds available input length');
  assert.is(txRlpError(0, b(0xc2, 0x83, 1)), 'rlp: element is larger than containing list');
  assert.is(txRlpError(0, b(0xf8, 0x05, 1, 2, 3, 4, 5)), 'rlp: non-canonical size information for types.LegacyTx');
  assert.is(txRlpError(0, b(0x83, 1, 2, 3)), 'rlp: expected input list for types.LegacyTx');
  assert.is(txRlpError(0, b(0xc3, 1, 2, 3)), 'rlp: too few elements for types.LegacyTx');
  assert.is(txRlpError(2, b(0xc0)), 'rlp: too few elements for types.DynamicFeeTx');
  assert.is(legacy([...legacyFields(), b(1)]), 'rlp: input list has too many elements for types.LegacyTx');
  assert.is(txRlpError(0, Uint8Array.from([...RLP.encode(legacyFields()), 0])), 'rlp: input contains more than one value');
});

test('field errors name the type and the field, as geth', () => {
  const f = legacyFields();
  assert.is(legacy(withField(f, 0, b(0, 1))), 'rlp: non-canonical integer (leading zero bytes) for uint64, decoding into (types.LegacyTx).Nonce');
  assert.is(legacy(withField(f, 0, b(0))), 'rlp: non-canonical integer (leading zero bytes) for uint64, decoding into (types.LegacyTx).Nonce');
  assert.is(legacy(withField(f, 2, new Uint8Array(9).fill(1))), 'rlp: input string too long for uint64, decoding into (types.LegacyTx).Gas');
  assert.is(legacy(withField(f, 2, [])), 'rlp: expected input string or byte for uint64, decoding into (types.LegacyTx).Gas');
  assert.is(legacy(withField(f, 1, b(0))), 'rlp: non-canonical integer (leading zero bytes) for *big.Int, decoding into (types.LegacyTx).GasPrice');
  assert.is(legacy(withField(f, 3, new Uint8Array(19))), 'rlp: input string too short for common.Address, decoding into (types.LegacyTx).To');
  assert.is(legacy(withField(f, 3, new Uint8Array(21))), 'rlp: input string too long for common.Address, decoding into (types.LegacyTx).To');
  assert.is(legacy(withField(f, 3, [])), 'rlp: wrong kind of empty value (got List, want String) for *common.Address, decoding into (types.LegacyTx).To');
  assert.is(legacy(withField(f, 5, [b(1)])), 'rlp: expected input string or byte for []uint8, decoding into (types.LegacyTx).Data');
  // A byte under 0x80 written as a one-byte string is not canonical.
  const nonCanon = RLP.encode(f);
  const at = nonCanon.indexOf(0x01); // the nonce, first field
  const patched = Uint8Array.from([...nonCanon.subarray(0, at), 0x81, ...nonCanon.subarray(at)]);
  patched[1] = patched[1]! + 1; // the list grows by one byte (a 0xf8 list: its size byte)
  assert.is(nonCanon[0], 0xf8);
  assert.is(txRlpError(0, patched), 'rlp: non-canonical size information for uint64, decoding into (types.LegacyTx).Nonce');

  const d = dynamicFields();
  assert.is(dynamic(withField(d, 8, b(1))), 'rlp: expected input list for types.AccessList, decoding into (types.DynamicFeeTx).AccessList');
  assert.is(dynamic(withField(d, 8, [[addr(2)]])), 'rlp: too few elements for types.AccessTuple, decoding into (types.DynamicFeeTx).AccessList[0]');
  assert.is(
    dynamic(withField(d, 8, [[addr(2), []], [addr(3), [new Uint8Array(32), new Uint8Array(31)]]])),
    'rlp: input string too short for common.Hash, decoding into (types.DynamicFeeTx).AccessList[1].StorageKeys[1]',
  );
  assert.is(dynamic(withField(d, 0, [])), 'rlp: expected input string or byte for *big.Int, decoding into (types.DynamicFeeTx).ChainID');
});

test.run();
