import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Id, PrivateKey, ShortId, toHex, utf8Decode, vmIdFromName } from '@cornice/sdk';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { EWOQ_EVM_ADDRESS, LOCAL_C_CHAIN_GENESIS, LOCAL_STAKER_NODE_IDS, localGenesis } from '../../src/genesis/local.js';
import { decodeGenesis, encodeGenesis } from '../../src/platform/genesis.js';
import { txId } from '../../src/platform/codec.js';
import { parseAvmGenesis } from '../../src/platform/avm-genesis.js';

const EWOQ = 'ewoqjP7PxY4yr3iLTpLisriqt94hdyDFNgchSxGGztUrTXtNN';
const plain = (v: unknown) => JSON.parse(JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? `${x}n` : x instanceof Uint8Array ? toHex(x) : x)));

test('local chain IDs, native asset and aliases', () => {
  const g = localGenesis();
  assert.is(g.xChainId.toString(), '4R5p2RXDGLqaifZE4hHWH9owe34pfoBULn1DrQTWivjg8o4aH');
  assert.is(g.nativeAssetId.toString(), 'n8XH5JY1EX5VYqDeAhB4Zd4GKxi9UNQy6oPpMsCAj1Q6xkiiL');
  assert.is(g.timestampChainId.toString(), '2SMYrx4Dj6QqCEA3WjnUTYEFSnpqVTwyV3GPNgQqQZbBbFgoJX');
  assert.equal(g.platform.chains.map((c) => c.chainName), ['X-Chain', 'C-Chain', 'Simple Timestamp Server']);
  assert.equal(g.platform.chains.map(txId).map(String), [g.xChainId, g.cChainId, g.timestampChainId].map(String));
  assert.equal(
    g.platform.chains.map((c) => c.vmId.toString()),
    ['avm', 'evm', 'timestamp'].map((n) => vmIdFromName(n).toString()),
  );
  assert.equal(g.platform.chains[0]!.fxIds.map(String), ['secp256k1fx', 'nftfx', 'propertyfx'].map((n) => vmIdFromName(n).toString()));
  assert.equal(g.platform.chains[1]!.fxIds, []);
  assert.ok(g.platform.chains.every((c) => c.subnetId.equals(Id.empty) && c.networkId === 12345 && c.nonce === 0n));
  assert.equal(g.aliases.get(g.xChainId.key), { aliases: ['X', 'avm'], endpointAliases: ['X'] });
  assert.equal(g.aliases.get(g.cChainId.key), { aliases: ['C', 'evm'], endpointAliases: ['C'] });
  assert.equal(g.aliases.get(g.timestampChainId.key), { aliases: ['timestamp'], endpointAliases: ['timestamp'] });
  assert.is(g.aliases.size, 3);
  assert.equal(parseAvmGenesis(g.platform.chains[0]!.genesisData).map((a) => a.alias), ['AVA']);
});

test('accounts and validators: ewoq holds 20,000 AVA; the five local stakers validate until 2100', () => {
  const g = localGenesis();
  const ewoq = PrivateKey.fromString(EWOQ).address;
  assert.is(g.platform.timestamp, 1_572_566_400);
  assert.equal(plain(g.platform.accounts), plain([{ address: ewoq, nonce: 0n, balance: 20_000_000_000_000n }]));
  assert.equal(g.platform.validators.map((v) => v.nodeId.toString()), [...LOCAL_STAKER_NODE_IDS]);
  for (const v of g.platform.validators) {
    assert.equal(plain({ ...v, nodeId: undefined }), plain({
      kind: 'addDefaultSubnetValidator',
      weight: 20_000_000_000_000n,
      start: 1_572_566_400,
      end: 4_102_444_800,
      networkId: 12345,
      nonce: 0n,
      destination: ewoq,
      shares: 0,
      sig: new Uint8Array(65),
    }));
    assert.ok(v.destination.equals(ShortId.fromString('6Y3kysjF9jnHnYkdS9yGAuoHyae2eNmeV')));
  }
});

test('the genesis round-trips through its bytes', () => {
  const g = localGenesis();
  const bytes = encodeGenesis(g.platform);
  assert.equal(plain(decodeGenesis(bytes)), plain(g.platform));
  assert.equal(encodeGenesis(decodeGenesis(bytes)), bytes);
});

test('the C-Chain genesis: compact JSON, chain ID 43110, forks through Cancun at 0, the ewoq EVM address funded', () => {
  const g = localGenesis();
  const text = utf8Decode(g.platform.chains[1]!.genesisData);
  assert.is(text, JSON.stringify(LOCAL_C_CHAIN_GENESIS));
  const json = JSON.parse(text);
  assert.is(json.config.chainId, 43110);
  assert.is(json.config.cancunTime, 0);
  assert.is(json.config.shanghaiTime, 0);
  assert.is(json.config.londonBlock, 0);
  assert.is(json.difficulty, '0x0');
  // The EVM address of the ewoq key: the last 20 bytes of keccak-256 of the uncompressed public key.
  const priv = PrivateKey.fromString(EWOQ).toBytes();
  const evm = toHex(keccak_256(secp256k1.getPublicKey(priv, false).subarray(1)).subarray(12));
  assert.is(EWOQ_EVM_ADDRESS.toLowerCase(), `0x${evm}`);
  assert.equal(Object.keys(json.alloc), [evm]);
  assert.ok(BigInt(json.alloc[evm].balance) >= 10n ** 27n);
});

test.run();
