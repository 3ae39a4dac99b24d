import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Id, Writer, concatBytes, toHex, vmIdFromName } from '@cornice/sdk';
import { encodeTx, txId } from '../../src/platform/codec.js';
import { decodeGenesis, encodeGenesis, genesisChainId, genesisChainTx, type PlatformGenesis } from '../../src/platform/genesis.js';
import type { AddDefaultSubnetValidatorTx, CreateChainTx } from '../../src/platform/model.js';
import { malformed, plain, sampleTxs, shortId } from './samples.js';

const timestampChain = { name: 'Simple Timestamp Server', subnetId: Id.empty, vmId: vmIdFromName('timestamp'), fxIds: [], genesis: new Uint8Array() };

function sample(): PlatformGenesis {
  const validator = sampleTxs().find((t) => t.kind === 'addDefaultSubnetValidator') as AddDefaultSubnetValidatorTx;
  return {
    accounts: [
      { address: shortId('a'), nonce: 0n, balance: 20_000_000_000_000n },
      { address: shortId('b'), nonce: 3n, balance: 1n },
    ],
    validators: [validator, { ...validator, nodeId: shortId('other'), end: validator.end + 1 }],
    chains: [genesisChainTx(12345, timestampChain), sampleTxs().find((t) => t.kind === 'createChain') as CreateChainTx],
    timestamp: 1_572_566_400,
  };
}

test('the timestamp chain of the local network has the ID 2SMYrx4…, as the reference computes it', () => {
  assert.is(genesisChainId(12345, timestampChain).toString(), '2SMYrx4Dj6QqCEA3WjnUTYEFSnpqVTwyV3GPNgQqQZbBbFgoJX');
  const tx = genesisChainTx(12345, timestampChain);
  assert.equal(tx.controlSigs, []);
  assert.equal(tx.payerSig, new Uint8Array(65));
  assert.is(txId(tx).toString(), genesisChainId(12345, timestampChain).toString());
});

test('genesis round-trips', () => {
  const g = sample();
  const bytes = encodeGenesis(g);
  assert.equal(plain(decodeGenesis(bytes)), plain(g));
  assert.equal(encodeGenesis(decodeGenesis(bytes)), bytes);
  const empty: PlatformGenesis = { accounts: [], validators: [], chains: [], timestamp: 0 };
  assert.equal(plain(decodeGenesis(encodeGenesis(empty))), plain(empty));
});

test('layout: accounts, EventHeap{false, validators as type-11 interfaces}, chains as bare structs, timestamp', () => {
  const g = sample();
  const w = new Writer().u32(2);
  for (const a of g.accounts) w.shortId(a.address).u64(a.nonce).u64(a.balance);
  w.bool(false).u32(2);
  for (const v of g.validators) w.fixedBytes(encodeTx(v)); // wire form: type ID 11 + fields
  w.u32(2);
  for (const c of g.chains) w.fixedBytes(encodeTx(c).subarray(4)); // no type ID
  w.u64(g.timestamp);
  assert.is(toHex(encodeGenesis(g)), toHex(w.finish()));
});

test('malformed genesis bytes are refused with clear errors', () => {
  const bytes = encodeGenesis(sample());
  assert.is(malformed(() => decodeGenesis(concatBytes(bytes, new Uint8Array(2)))), 'has 2 leftover bytes after unmarshalling');
  assert.match(malformed(() => decodeGenesis(bytes.subarray(0, bytes.length - 1))), 'insufficient length');
  // A validator that is not an addDefaultSubnetValidatorTx.
  const delegator = sampleTxs().find((t) => t.kind === 'addDefaultSubnetDelegator')!;
  const withDelegator = new Writer().u32(0).bool(false).u32(1).fixedBytes(encodeTx(delegator)).u32(0).u64(0n).finish();
  assert.match(malformed(() => decodeGenesis(withDelegator)), 'type ID 15 (addDefaultSubnetDelegatorTx) cannot appear in a genesis validator');
  const byStart = new Writer().u32(0).bool(true).u32(0).u32(0).u64(0n).finish();
  assert.match(malformed(() => decodeGenesis(byStart)), 'SortByStartTime');
  // Counts larger than the input holds.
  assert.match(malformed(() => decodeGenesis(new Writer().u32(1000).finish())), 'insufficient length');
  assert.match(malformed(() => decodeGenesis(new Writer().u32(0).bool(false).u32(0).u32(0xffffff).finish())), 'larger than the limit');
  assert.match(malformed(() => decodeGenesis(new Writer().u32(0).bool(false).u32(0).u32(0).u64((1n << 64n) - 1n).finish())), 'genesis timestamp 18446744073709551615 is out of range');
  // A chain that is not a CreateChainTx cannot be encoded.
  const notChain = { ...sample(), chains: [sampleTxs()[0] as unknown as CreateChainTx] };
  assert.match(malformed(() => encodeGenesis(notChain)), 'a genesis chain must be a CreateChainTx');
});

test.run();
