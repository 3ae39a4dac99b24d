/**
 * TEMPORARY (p-node branch only): stands in for core/src/platform/genesis.ts and codec.ts until the
 * p-codec branch is merged; the imports switch to those modules then and this file goes.
 */
import { Id, Writer, sha256 } from '@cornice/sdk';
import type { Account, AddDefaultSubnetValidatorTx, CreateChainTx } from '../platform/model.js';

export interface PlatformGenesis {
  accounts: Account[];
  validators: AddDefaultSubnetValidatorTx[];
  chains: CreateChainTx[];
  timestamp: number;
}

function writeChain(w: Writer, c: CreateChainTx): Writer {
  return w
    .u32(c.networkId)
    .id(c.subnetId)
    .u64(c.nonce)
    .str(c.chainName)
    .id(c.vmId)
    .array(c.fxIds, (w2, fx) => w2.id(fx))
    .bytes(c.genesisData)
    .array(c.controlSigs, (w2, s) => w2.fixedBytes(s))
    .fixedBytes(c.payerSig);
}

export function txId(tx: CreateChainTx): Id {
  return Id.fromBytes(sha256(writeChain(new Writer({ maxSize: 1 << 22 }), tx).finish()));
}

export function encodeGenesis(g: PlatformGenesis): Uint8Array {
  return new Writer({ maxSize: 1 << 24 })
    .array(g.accounts, (w, a) => w.shortId(a.address).u64(a.nonce).u64(a.balance))
    .array(g.validators, (w, v) =>
      w.shortId(v.nodeId).u64(v.weight).u64(BigInt(v.start)).u64(BigInt(v.end)).u32(v.networkId).u64(v.nonce).shortId(v.destination).u32(v.shares).fixedBytes(v.sig),
    )
    .array(g.chains, (w, c) => writeChain(w, c))
    .u64(BigInt(g.timestamp))
    .finish();
}
