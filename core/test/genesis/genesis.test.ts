import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Id, ShortId, bindService, bytesEqual, cb58Encode, defineService, method, p, result, sha256, vmIdFromName } from '@cornice/sdk';
import { parseGenesisFile } from '../../src/genesis/file.js';
import { MAX_CHAIN_GENESIS_BYTES } from '../../src/genesis/json.js';
import { genesisChainId, genesisHash, genesisOf, genesisValidators, networkGenesis } from '../../src/genesis/genesis.js';
import { LOCAL_GENESIS_STAKING_END as GENESIS_VALIDATOR_END, LOCAL_GENESIS_TIME as GENESIS_TIME, LOCAL_STAKER_NODE_IDS } from '../../src/genesis/local.js';
import { txId } from '../../src/platform/codec.js';
import { decodeGenesis, encodeGenesis } from '../../src/platform/genesis.js';
import { EMPTY_SIGNATURE } from '../../src/platform/model.js';

const timestampVm = vmIdFromName('timestamp');
const node = (n: number) => ShortId.fromBytes(new Uint8Array(20).fill(n));

test('a genesis spec becomes a platform genesis: chains as genesis CreateChainTxs, validators staking from genesis time far into the future', () => {
  const g = genesisOf(12345, {
    chains: [{ name: 'Simple Timestamp Server', vmId: timestampVm, aliases: ['timestamp'], endpointAliases: ['timestamp'] }],
    validators: [{ nodeId: node(1), weight: 7n }],
    accounts: [{ address: node(9), balance: 100n }],
  });
  const tx = g.platform.chains[0]!;
  assert.equal(tx, {
    kind: 'createChain',
    networkId: 12345,
    subnetId: Id.empty,
    nonce: 0n,
    chainName: 'Simple Timestamp Server',
    vmId: timestampVm,
    fxIds: [],
    genesisData: new Uint8Array(),
    controlSigs: [],
    payerSig: EMPTY_SIGNATURE,
  });
  const id = genesisChainId(12345, { name: 'Simple Timestamp Server', subnetId: Id.empty, vmId: timestampVm, fxIds: [], genesis: new Uint8Array() });
  assert.ok(txId(tx).equals(id), 'a genesis chain ID is its CreateChainTx ID');
  assert.equal(g.aliases.get(id.key), { aliases: ['timestamp'], endpointAliases: ['timestamp'] });
  const v = g.platform.validators[0]!;
  assert.equal([v.nodeId, v.weight, v.start, v.end, v.nonce, v.shares, v.destination], [node(1), 7n, GENESIS_TIME, GENESIS_VALIDATOR_END, 0n, 0, node(9)]);
  assert.ok(GENESIS_VALIDATOR_END - GENESIS_TIME > 365 * 24 * 3600, 'genesis is exempt from the 365-day cap');
  assert.equal(g.platform.accounts, [{ address: node(9), nonce: 0n, balance: 100n }]);
  assert.is(g.platform.timestamp, GENESIS_TIME);
  assert.equal(genesisValidators(g), [{ nodeId: node(1), weight: 7n }]);
});

test('the local genesis: the five local stakers; X, C and timestamp with their aliases; the native asset', () => {
  const g = networkGenesis(12345)!;
  assert.equal(g.platform.validators.map((v) => v.nodeId.toString()), [...LOCAL_STAKER_NODE_IDS]);
  assert.equal(g.platform.chains.map((c) => g.aliases.get(txId(c).key)?.aliases), [['X', 'avm'], ['C', 'evm'], ['timestamp']]);
  assert.is(txId(g.platform.chains[2]!).toString(), '2SMYrx4Dj6QqCEA3WjnUTYEFSnpqVTwyV3GPNgQqQZbBbFgoJX', 'the timestamp chain keeps its ID');
  assert.ok(g.nativeAssetId, 'the X-Chain genesis defines AVA');
  assert.is(networkGenesis(1), undefined);
});

test('the genesis hash is SHA-256 of the platform genesis bytes, and changes with the genesis', () => {
  const g = networkGenesis(12345)!;
  assert.ok(bytesEqual(genesisHash(g), sha256(encodeGenesis(g.platform))));
  assert.equal(decodeGenesis(encodeGenesis(g.platform)), g.platform);
  const other = genesisOf(12345, { chains: [], validators: [] });
  assert.not.ok(bytesEqual(genesisHash(g), genesisHash(other)));
});

const resolveVm = (vm: string) => {
  if (vm === 'timestamp') return timestampVm;
  throw new Error(`unknown VM ${vm}`);
};

test('a genesis file becomes a platform genesis: chains, validators (with destination) and accounts', async () => {
  const text = JSON.stringify({
    chains: [{ name: 'ts', vm: 'timestamp', aliases: ['ts'] }],
    validators: [{ nodeID: node(1).toString(), weight: '5000', destination: node(3).toString() }, { nodeID: node(2).toString(), weight: 10 }],
    accounts: [{ address: node(4).toString(), balance: '20000000000000' }],
  });
  const g = await parseGenesisFile(text, 'g.json', 1, resolveVm, undefined);
  assert.is(g.networkId, 1);
  assert.equal(g.platform.chains.map((c) => [c.chainName, c.networkId, c.vmId]), [['ts', 1, timestampVm]]);
  assert.equal(g.aliases.get(txId(g.platform.chains[0]!).key), { aliases: ['ts'], endpointAliases: [] });
  assert.equal(g.platform.validators.map((v) => [v.nodeId, v.weight, v.destination, v.end]), [
    [node(1), 5000n, node(3), GENESIS_VALIDATOR_END],
    [node(2), 10n, node(4), GENESIS_VALIDATOR_END],
  ]);
  assert.equal(g.platform.accounts, [{ address: node(4), nonce: 0n, balance: 20_000_000_000_000n }]);
});

test('genesis file mistakes name the field', async () => {
  const bad = async (json: unknown) => {
    try {
      await parseGenesisFile(JSON.stringify(json), 'g.json', 12345, resolveVm, []);
    } catch (e) {
      return (e as Error).message;
    }
    return assert.unreachable('expected an error') as never;
  };
  assert.is(await bad({ chains: [], accounts: {} }), 'genesis file g.json: "accounts" must be an array');
  assert.is((await bad({ chains: [], accounts: [{ address: 'nope', balance: 1 }] })).startsWith('genesis file g.json: accounts[0]: '), true);
  assert.is(await bad({ chains: [], accounts: [{ address: node(1).toString(), balance: 0 }] }), 'genesis file g.json: accounts[0]: balance must be positive');
  assert.is(await bad({ chains: [], accounts: [{ address: node(1).toString(), balance: 1, nonce: 2 }] }), 'genesis file g.json: accounts[0]: unknown key "nonce"');
  assert.is(await bad({ chains: [], validators: [{ nodeID: node(1).toString(), weight: 1, shares: 2 }] }), 'genesis file g.json: validators[0]: unknown key "shares"');
});

// A VM with a buildGenesis static method as the avm has: {genesisData} -> {bytes: cb58}.
const builderVm = vmIdFromName('builder');
const builderService = bindService(
  defineService('builder', {
    buildGenesis: method({ params: p.object({ genesisData: p.object({ n: p.uint(), big: p.optional(p.bool()) }) }), result: result<{ bytes: string }>() }),
  }),
  {
    async buildGenesis({ genesisData: g }) {
      return { bytes: cb58Encode(g.big ? new Uint8Array(MAX_CHAIN_GENESIS_BYTES + 1) : Uint8Array.of(0xb0, g.n)) };
    },
  },
);
const resolveBoth = (vm: string) => (vm === 'builder' ? builderVm : resolveVm(vm));
const servicesOf = (vmId: Id) => (vmId.equals(builderVm) ? [builderService] : []);
const chainGenesis = (g: Awaited<ReturnType<typeof parseGenesisFile>>, i: number) => g.platform.chains[i]!.genesisData;

test('a JSON "genesis" goes through the VM\'s buildGenesis when it has one, else becomes UTF-8 JSON bytes', async () => {
  const text = JSON.stringify({
    chains: [
      { name: 'built', vm: 'builder', genesis: { n: 7 } },
      { name: 'ts', vm: 'timestamp', genesis: { hello: 'world' } },
      { name: 'cb58', vm: 'timestamp', genesisData: cb58Encode(Uint8Array.of(1, 2)) },
    ],
  });
  const g = await parseGenesisFile(text, 'g.json', 12345, resolveBoth, [], servicesOf);
  assert.equal(chainGenesis(g, 0), Uint8Array.of(0xb0, 7));
  assert.equal(chainGenesis(g, 1), new TextEncoder().encode('{"hello":"world"}'));
  assert.equal(chainGenesis(g, 2), Uint8Array.of(1, 2));
  // The same chains given as genesisData make the same genesis (the same chain IDs).
  const same = await parseGenesisFile(
    JSON.stringify({ chains: [{ name: 'built', vm: 'builder', genesisData: cb58Encode(Uint8Array.of(0xb0, 7)) }] }),
    'h.json',
    12345,
    resolveBoth,
    [],
  );
  assert.equal(same.platform.chains[0], g.platform.chains[0]);
});

test('a bad JSON genesis is an error naming the chain and the VM\'s own complaint', async () => {
  const bad = async (chain: Record<string, unknown>) => {
    try {
      await parseGenesisFile(JSON.stringify({ chains: [chain] }), 'g.json', 12345, resolveBoth, [], servicesOf);
    } catch (e) {
      return (e as Error).message;
    }
    return assert.unreachable('expected an error') as never;
  };
  assert.is(await bad({ name: 'kv', vm: 'builder', genesis: { n: 'x' } }), 'genesis file g.json: chains[0] ("kv").genesis: buildGenesis refused it: genesisData.n: expected a non-negative decimal integer but got "x"');
  assert.is(await bad({ name: 'kv', vm: 'builder', genesis: { n: 1, big: true } }), `genesis file g.json: chains[0] ("kv").genesis: encodes to ${MAX_CHAIN_GENESIS_BYTES + 1} bytes; a chain's genesis is at most ${MAX_CHAIN_GENESIS_BYTES} bytes`);
  assert.is(await bad({ name: 'ts', vm: 'timestamp', genesis: 'x'.repeat(MAX_CHAIN_GENESIS_BYTES) }), `genesis file g.json: chains[0] ("ts").genesis: encodes to ${MAX_CHAIN_GENESIS_BYTES + 2} bytes; a chain's genesis is at most ${MAX_CHAIN_GENESIS_BYTES} bytes`);
  assert.is(await bad({ name: 'ts', vm: 'timestamp', genesis: {}, genesisData: '' }), 'genesis file g.json: chains[0] ("ts"): give "genesis" (JSON) or "genesisData" (cb58), not both');
});

test.run();
