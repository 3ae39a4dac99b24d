import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Id, ShortId, Writer, concatBytes, hasErrorCode, vmIdFromName } from '@cornice/sdk';
import { buildAvmGenesis, parseAvmGenesis, type FixedCapAsset } from '../../src/platform/avm-genesis.js';
import { genesisChainId } from '../../src/platform/genesis.js';
import { EWOQ_ADDRESS, plain, shortId } from './samples.js';

const ewoq = ShortId.fromString(EWOQ_ADDRESS);
const AVA: FixedCapAsset = { alias: 'AVA', name: 'AVA', symbol: 'AVA', denomination: 9, holders: [{ address: ewoq, amount: 45_000_000_000_000_000n }] };

// The genesis layout and the AVA asset ID are the shared component's vector (sdk/test/components):
// here, what the node builds and reads of it.
test('the local X-Chain genesis: the AVA asset n8XH5JY… read back; chain 4R5p2RX…', () => {
  const bytes = buildAvmGenesis([AVA]);
  const [asset] = parseAvmGenesis(bytes);
  assert.is(asset!.assetId.toString(), 'n8XH5JY1EX5VYqDeAhB4Zd4GKxi9UNQy6oPpMsCAj1Q6xkiiL');
  assert.equal(plain({ ...asset, assetId: undefined }), plain({
    alias: 'AVA',
    name: 'AVA',
    symbol: 'AVA',
    denomination: 9,
    outputs: [{ kind: 'transfer', amount: 45_000_000_000_000_000n, locktime: 0n, threshold: 1, addresses: [ewoq] }],
  }));
  const xChain = genesisChainId(12345, {
    name: 'X-Chain',
    subnetId: Id.empty,
    vmId: vmIdFromName('avm'),
    fxIds: ['secp256k1fx', 'nftfx', 'propertyfx'].map(vmIdFromName),
    genesis: bytes,
  });
  assert.is(xChain.toString(), '4R5p2RXDGLqaifZE4hHWH9owe34pfoBULn1DrQTWivjg8o4aH');
});

test('assets are sorted by alias and outputs by their bytes; each asset ID hashes its own CreateAssetTx', () => {
  const two: FixedCapAsset = {
    alias: 'BEE',
    name: 'Bee token',
    symbol: 'BEE',
    denomination: 0,
    holders: [
      { address: shortId('z'), amount: 9n },
      { address: shortId('y'), amount: 1n },
    ],
  };
  const bytes = buildAvmGenesis([two, AVA]);
  assert.equal(buildAvmGenesis([AVA, two]), bytes);
  const assets = parseAvmGenesis(bytes);
  assert.equal(assets.map((a) => a.alias), ['AVA', 'BEE']);
  assert.is(assets[0]!.assetId.toString(), 'n8XH5JY1EX5VYqDeAhB4Zd4GKxi9UNQy6oPpMsCAj1Q6xkiiL');
  const amounts = assets[1]!.outputs.map((o) => (o.kind === 'transfer' ? o.amount : -1n));
  assert.equal(amounts, [1n, 9n]); // 00..01 sorts before 00..09
  assert.is(assets[1]!.name, 'Bee token');
  assert.is(assets[1]!.denomination, 0);
});

test('assets the AVM would refuse are refused when building', () => {
  const refused = (a: Partial<FixedCapAsset>, text: string) => {
    try {
      buildAvmGenesis([{ ...AVA, ...a }]);
    } catch (e) {
      assert.ok(hasErrorCode(e, 'InvalidAsset'), String(e));
      assert.match((e as Error).message, text);
      return;
    }
    assert.unreachable(text);
  };
  refused({ name: 'x'.repeat(129) }, 'name is too long');
  refused({ symbol: 'ABCDE' }, 'symbol is too long');
  refused({ symbol: ' AB' }, 'symbol has unexpected leading or trailing whitespace');
  refused({ name: 'caf\u00e9' }, 'name must be printable ASCII');
  refused({ denomination: 33 }, 'denomination must be an integer from 0 to 32');
  refused({ holders: [] }, 'asset AVA has no holders');
  refused({ holders: [{ address: ewoq, amount: 0n }] }, "a holder's amount must be positive");
});

test('malformed AVM genesis bytes are refused', () => {
  const bytes = buildAvmGenesis([AVA]);
  const malformed = (b: Uint8Array, text: string) => {
    try {
      parseAvmGenesis(b);
    } catch (e) {
      assert.ok(hasErrorCode(e, 'Malformed'), String(e));
      assert.is((e as Error).name, 'AvmGenesisError');
      assert.match((e as Error).message, text);
      return;
    }
    assert.unreachable(text);
  };
  malformed(concatBytes(bytes, new Uint8Array(1)), 'has 1 leftover bytes after unmarshalling');
  malformed(bytes.subarray(0, bytes.length - 1), 'insufficient length');
  malformed(new Writer().u32(0xfffffff).finish(), 'larger than the limit');
  const other = bytes.slice();
  other.set([0, 0, 0, 11], bytes.length - (20 + 4 + 4 + 8 + 8 + 4));
  malformed(other, 'an initial state output has type ID 11; expected 6 or 7');
  assert.equal(parseAvmGenesis(new Writer().u32(0).finish()), []);
});

test('a variable-cap (mint) output reads back as such', () => {
  const bytes = new Writer()
    .u32(1)
    .str('M')
    .u32(0)
    .id(Id.empty)
    .u32(0)
    .u32(0)
    .str('Mintable')
    .str('MNT')
    .u8(2)
    .u32(1)
    .u32(0)
    .u32(1)
    .u32(6)
    .u32(1)
    .u32(1)
    .shortId(ewoq)
    .finish();
  const [asset] = parseAvmGenesis(bytes);
  assert.equal(plain(asset!.outputs), plain([{ kind: 'mint', threshold: 1, addresses: [ewoq] }]));
});

test.run();
