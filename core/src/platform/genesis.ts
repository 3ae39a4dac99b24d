/**
 * The platform chain's genesis bytes, the reference node's format:
 *   Genesis{Accounts []Account{Address [20], Nonce u64, Balance u64},
 *           Validators EventHeap{SortByStartTime bool, Txs []TimedTx (interfaces: u32 type ID 11 + fields)},
 *           Chains []CreateChainTx (structs: signed fields, NO type IDs),
 *           Timestamp u64}
 * A genesis chain's ID is the ID of its CreateChainTx, which carries no control signatures and a
 * payer signature of 65 zero bytes.
 */
import type { Id, Reader, Writer } from '@cornice/sdk';
import { decodeAll, encodeAll, readSignedFields, readTime, readTx, txId, writeSignedFields, writeTx } from './codec.js';
import { PlatformError } from './errors.js';
import { EMPTY_SIGNATURE, type Account, type AddDefaultSubnetValidatorTx, type CreateChainTx } from './model.js';

export interface PlatformGenesis {
  accounts: Account[];
  /** Default Subnet validators from genesis time, written as the current validators' heap (by end time). */
  validators: AddDefaultSubnetValidatorTx[];
  chains: CreateChainTx[];
  /** Genesis time, unix seconds. */
  timestamp: number;
}

/** Address, nonce, balance. */
const ACCOUNT_SIZE = 20 + 8 + 8;
/** Smallest CreateChainTx: NetworkID, SubnetID, Nonce, name length, VMID, FxIDs count, GenesisData length, ControlSigs count, PayerSig. */
const MIN_CHAIN_SIZE = 4 + 32 + 8 + 2 + 32 + 4 + 4 + 4 + 65;
/** Type ID + addDefaultSubnetValidatorTx fields. */
const VALIDATOR_SIZE = 4 + 20 + 8 + 8 + 8 + 4 + 8 + 20 + 4 + 65;

function writeAccount(w: Writer, a: Account): void {
  w.shortId(a.address).u64(a.nonce).u64(a.balance);
}

function readAccount(r: Reader): Account {
  return { address: r.shortId(), nonce: r.u64(), balance: r.u64() };
}

/** The genesis bytes. PlatformError('Malformed') when a value does not fit its field or the whole exceeds 256 KiB. */
export function encodeGenesis(g: PlatformGenesis): Uint8Array {
  return encodeAll((w) => {
    w.array(g.accounts, writeAccount);
    // EventHeap: the current validators, a heap by end time (SortByStartTime false).
    w.bool(false).array(g.validators, (w2, v) => writeTx(w2, v, 'genesisValidator'));
    w.array(g.chains, (w2, c) => {
      if (c.kind !== 'createChain') throw new PlatformError('Malformed', 'a genesis chain must be a CreateChainTx');
      writeSignedFields(w2, c);
    });
    w.u64(g.timestamp);
  });
}

/** A genesis from its bytes; PlatformError('Malformed') otherwise. */
export function decodeGenesis(bytes: Uint8Array): PlatformGenesis {
  return decodeAll(bytes, (r) => {
    const accounts = r.array(readAccount, { minItemSize: ACCOUNT_SIZE });
    const at = r.offset;
    if (r.bool()) {
      throw new PlatformError('Malformed', 'genesis validators must be a heap by end time (SortByStartTime false)', { offset: at });
    }
    const validators = r.array((r2) => readTx(r2, 'genesisValidator') as AddDefaultSubnetValidatorTx, { minItemSize: VALIDATOR_SIZE });
    const chains = r.array((r2) => readSignedFields(r2, 'createChain'), { minItemSize: MIN_CHAIN_SIZE });
    return { accounts, validators, chains, timestamp: readTime(r, 'genesis timestamp') };
  });
}

/** What a genesis chain is made of (the shape core/src/genesis uses). */
export interface GenesisChainSpec {
  name: string;
  subnetId: Id;
  vmId: Id;
  fxIds: Id[];
  genesis: Uint8Array;
}

/** The CreateChainTx of a genesis chain: nonce 0, no control signatures, a payer signature of 65 zero bytes. */
export function genesisChainTx(networkId: number, chain: GenesisChainSpec): CreateChainTx {
  return {
    kind: 'createChain',
    networkId,
    subnetId: chain.subnetId,
    nonce: 0n,
    chainName: chain.name,
    vmId: chain.vmId,
    fxIds: [...chain.fxIds],
    genesisData: chain.genesis,
    controlSigs: [],
    payerSig: EMPTY_SIGNATURE.slice(),
  };
}

/** The ID of a genesis chain: the ID of its CreateChainTx. */
export function genesisChainId(networkId: number, chain: GenesisChainSpec): Id {
  return txId(genesisChainTx(networkId, chain));
}
