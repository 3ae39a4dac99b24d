// The asset VM genesis: its bytes (the local X-Chain's are core's, byte for byte), asset IDs, and
// buildGenesis from JSON genesis data.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Id, ShortId, concatBytes, fromHex, isInvalidParamsError, sha256, toHex, vmIdFromName } from '@cornice/sdk';
import { networkGenesis } from '@cornice/core';
import {
  BUILD_GENESIS_LIMITS,
  assetIdOf,
  buildGenesis,
  decodeGenesis,
  encodeGenesis,
  encodeTx,
  sortOutputs,
  txIdOf,
  unsignedBytes,
  type CreateAssetTx,
  type GenesisAsset,
} from '../src/index.js';
import { addr, mint, plain, sampleTxs, throwsAvm, transfer } from './helpers.js';

const EWOQ = '6Y3kysjF9jnHnYkdS9yGAuoHyae2eNmeV';

const localData = () => ({
  AVA: { name: 'AVA', symbol: 'AVA', denomination: 9, initialState: { fixedCap: [{ amount: '45000000000000000', address: EWOQ }] } },
});

// The genesis layout and the AVA asset ID are the shared component's vector (sdk/test/components).
test('the local X-Chain genesis: exactly the bytes core builds; the asset ID core names', () => {
  const bytes = buildGenesis(localData());
  const xChain = networkGenesis(12345)!.platform.chains.find((c) => c.vmId.equals(vmIdFromName('avm')))!;
  assert.is(toHex(xChain.genesisData), toHex(bytes));
  const [ava] = decodeGenesis(bytes);
  assert.is(assetIdOf(ava!.tx).toString(), networkGenesis(12345)!.nativeAssetId!.toString());
  assert.equal(plain(ava), plain({
    alias: 'AVA',
    tx: {
      kind: 'createAsset',
      networkId: 0,
      chainId: Id.empty,
      outs: [],
      ins: [],
      name: 'AVA',
      symbol: 'AVA',
      denomination: 9,
      states: [{ fxIndex: 0, outs: [transfer(45_000_000n * 10n ** 9n, [ShortId.fromString(EWOQ)])] }],
    },
  }));
});

test('asset ID = SHA-256(u32(1) ‖ CreateAssetTx fields ‖ u32(0)) = the ID of the tx with no credentials', () => {
  const tx = sampleTxs().createAsset.unsigned as CreateAssetTx;
  const fields = unsignedBytes(tx).subarray(4);
  const manual = sha256(concatBytes(fromHex('00000001'), fields, fromHex('00000000')));
  assert.is(toHex(assetIdOf(tx).bytes), toHex(manual));
  assert.ok(assetIdOf(tx).equals(txIdOf(encodeTx({ unsigned: tx, creds: [] }))));
});

test('encodeGenesis sorts by alias (bytes); decodeGenesis gives the assets back', () => {
  const tx = sampleTxs().createAsset.unsigned as CreateAssetTx;
  const assets: GenesisAsset[] = [
    { alias: 'b', tx: { ...tx, name: 'B' } },
    { alias: 'B', tx: { ...tx, name: 'upper B' } },
    { alias: 'a', tx },
  ];
  const back = decodeGenesis(encodeGenesis(assets));
  assert.equal(back.map((a) => a.alias), ['B', 'a', 'b']);
  assert.equal(plain(back), plain([assets[1], assets[2], assets[0]]));
  assert.equal(decodeGenesis(encodeGenesis([])), []);
});

test('decodeGenesis: malformed bytes and duplicate aliases are refused', () => {
  const bytes = buildGenesis(localData());
  throwsAvm(() => decodeGenesis(new Uint8Array([...bytes, 0])), 'Malformed', 'has 1 leftover bytes after unmarshalling');
  for (let n = 0; n < bytes.length; n++) throwsAvm(() => decodeGenesis(bytes.subarray(0, n)), 'Malformed');
  const twice = concatBytes(fromHex('00000002'), bytes.subarray(4), bytes.subarray(4));
  throwsAvm(() => decodeGenesis(twice), 'InvalidGenesis', 'duplicate alias "AVA"');
  const huge = bytes.slice();
  huge.set([0x7f, 0xff, 0xff, 0xff]);
  throwsAvm(() => decodeGenesis(huge), 'Malformed', /slice length 2147483647 is larger than the limit/);
  throwsAvm(() => encodeGenesis([{ alias: 'x', tx: sampleTxs().base.unsigned as never }]), 'Malformed', 'genesis asset x is not a CreateAssetTx');
});

test('buildGenesis: fixedCap and variableCap outputs in one initial state (FxID 0), sorted by bytes; minter thresholds forced to 1', () => {
  const [m1, m2, h] = [addr('m1'), addr('m2'), addr('h')];
  const bytes = buildGenesis({
    zeta: { name: 'Zeta', symbol: 'Z', initialState: { variableCap: [{ minters: [m2.toString(), m1.toString()], threshold: 2 }] } },
    mixed: {
      name: 'Mixed',
      denomination: '3',
      initialState: { fixedCap: [{ amount: 7, address: h.toString() }, { amount: '5', address: h.toString() }], variableCap: [{ minters: [m1.toString()] }] },
    },
  });
  const [mixed, zeta] = decodeGenesis(bytes);
  assert.equal([mixed!.alias, zeta!.alias], ['mixed', 'zeta']);
  assert.equal(plain(zeta!.tx.states), plain([{ fxIndex: 0, outs: [mint([m1, m2], 1)] }]));
  assert.equal(plain(mixed!.tx.states), plain([{ fxIndex: 0, outs: sortOutputs([transfer(7n, [h]), transfer(5n, [h]), mint([m1])]) }]));
  assert.equal(mixed!.tx.states[0]!.outs.map((o) => o.kind), ['mint', 'transfer', 'transfer']);
  assert.equal([mixed!.tx.symbol, mixed!.tx.denomination, zeta!.tx.denomination], ['', 3, 0]);
});

test('buildGenesis: no initialState means no initial states; an asset type with no entries is a state with no outputs', () => {
  const [a, b, c] = decodeGenesis(buildGenesis({ a: { name: 'A' }, b: { initialState: {} }, c: { initialState: { fixedCap: [] } } }));
  assert.equal(a!.tx.states, []);
  assert.equal(b!.tx.states, []);
  assert.equal(plain(c!.tx.states), [{ fxIndex: 0, outs: [] }]);
  assert.is(b!.tx.name, '');
  assert.equal(decodeGenesis(buildGenesis({})), []);
});

/** Asserts buildGenesis refuses `data` with InvalidParamsError naming `field` (and matching `text`). */
function refused(data: unknown, field: string, text?: string | RegExp): void {
  try {
    buildGenesis(data);
  } catch (e) {
    assert.ok(isInvalidParamsError(e), String(e));
    assert.ok((e as Error).message.startsWith(`${field}: `), (e as Error).message);
    if (text) assert.match((e as Error).message, text);
    return;
  }
  assert.unreachable(`accepted ${JSON.stringify(data)}`);
}

test('buildGenesis refuses bad data with an error naming the field', () => {
  const ava = localData().AVA;
  const holder = ava.initialState.fixedCap[0]!;
  const asset = (over: Record<string, unknown>) => ({ AVA: { ...ava, ...over } });
  const holders = (h: Record<string, unknown>) => asset({ initialState: { fixedCap: [{ ...holder, ...h }] } });
  refused('x', 'genesisData', 'expected an object but got string');
  refused([], 'genesisData', 'expected an object but got array');
  refused({ '': ava }, 'genesisData', 'an asset alias must be 1 to 128 characters (got 0)');
  refused({ ['a'.repeat(129)]: ava }, 'genesisData', 'an asset alias must be 1 to 128 characters (got 129)');
  refused(Object.fromEntries(Array.from({ length: BUILD_GENESIS_LIMITS.assets + 1 }, (_, i) => [`a${i}`, ava])), 'genesisData', 'must have at most 256 assets');
  refused({ AVA: 42 }, 'genesisData.AVA', 'expected an object but got number');
  assert.is(toHex(buildGenesis(asset({ bogus: 1 }))), toHex(buildGenesis(asset({}))), 'an unknown field is ignored');
  refused(asset({ initialState: { nonFungible: [] } }), 'genesisData.AVA.initialState.nonFungible', /^genesisData.AVA.initialState.nonFungible: unknown asset type: nonFungible assets are not supported/);
  refused(asset({ initialState: { limitedTransfer: [] } }), 'genesisData.AVA.initialState.limitedTransfer', 'unknown asset type: limitedTransfer assets are not supported');
  refused(asset({ initialState: { other: [] } }), 'genesisData.AVA.initialState.other', 'unknown asset type (expected fixedCap or variableCap)');
  refused(asset({ initialState: [] }), 'genesisData.AVA.initialState', 'expected an object');
  refused(holders({ address: `X-${EWOQ}` }), 'genesisData.AVA.initialState.fixedCap[0].address', 'must be a bare cb58 address, without a chain prefix such as X-');
  refused(holders({ address: 'nope0' }), 'genesisData.AVA.initialState.fixedCap[0].address', "Invalid base58 digit ('0')");
  refused(holders({ address: 'z'.repeat(65) }), 'genesisData.AVA.initialState.fixedCap[0].address', 'at most 64 characters');
  refused(holders({ amount: 0 }), 'genesisData.AVA.initialState.fixedCap[0].amount', 'must be positive');
  refused(holders({ amount: '18446744073709551616' }), 'genesisData.AVA.initialState.fixedCap[0].amount', 'overflowed uint64');
  refused(holders({ amount: -1 }), 'genesisData.AVA.initialState.fixedCap[0].amount');
  refused(
    asset({ initialState: { fixedCap: [{ ...holder, amount: '18446744073709551615' }, { ...holder, amount: 1 }] } }),
    'genesisData.AVA.initialState.fixedCap',
    'the amounts add up to more than 2^64-1',
  );
  refused(asset({ initialState: { fixedCap: Array(BUILD_GENESIS_LIMITS.holders + 1).fill(holder) } }), 'genesisData.AVA.initialState.fixedCap', 'at most 4096 items');
  refused(asset({ initialState: { variableCap: [{ minters: [] }] } }), 'genesisData.AVA.initialState.variableCap[0].minters', 'at least 1 items');
  refused(asset({ initialState: { variableCap: [{ minters: [EWOQ, EWOQ] }] } }), 'genesisData.AVA.initialState.variableCap[0].minters', 'an address appears more than once');
  refused(asset({ initialState: { variableCap: [{ minters: [EWOQ], threshold: -1 }] } }), 'genesisData.AVA.initialState.variableCap[0].threshold');
  refused(asset({ name: 'n'.repeat(129) }), 'genesisData.AVA.name', 'at most 128 characters');
  refused(asset({ name: 'é'.repeat(65) }), 'genesisData.AVA.name', 'name is too long, maximum size is 128');
  refused(asset({ name: 'AVA ' }), 'genesisData.AVA.name', 'unexpected whitespace provided');
  refused(asset({ name: 'A\u0007' }), 'genesisData.AVA.name', 'unprintable ascii character was provided');
  refused(asset({ symbol: 'AVAXX' }), 'genesisData.AVA.symbol', 'at most 4 characters');
  refused(asset({ symbol: 'ÄVA' }), 'genesisData.AVA.symbol', 'unprintable ascii character was provided');
  refused(asset({ denomination: 33 }), 'genesisData.AVA.denomination', 'denomination is too large (at most 32)');
  refused(asset({ denomination: 256 }), 'genesisData.AVA.denomination', 'overflowed uint8');
});

test('a genesis over 256 KiB as a whole is refused with a clear error', () => {
  const holder = localData().AVA.initialState.fixedCap[0]!;
  const big = { name: 'Big', initialState: { fixedCap: Array(BUILD_GENESIS_LIMITS.holders).fill({ ...holder, amount: 1 }) } };
  throwsAvm(() => buildGenesis({ a: big, b: big }), 'InvalidGenesis', /^the genesis is too large: size \d+ is larger than the limit of 262144 bytes$/);
});

test.run();
