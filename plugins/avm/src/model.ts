/**
 * The asset VM's domain model, the reference node's: the five tx types, operations, assets. Plain data; the
 * byte formats are in codec.ts (byte for byte as the reference), the rules in the VM. Amounts and
 * locktimes are bigint (u64). The secp256k1fx values, transferable outputs and inputs, UTXOs and the
 * CreateAssetTx a genesis holds are the sdk's shared components (`@cornice/sdk/components`), the
 * same ones the platform chain reads; they are re-exported here.
 */
import type { Id, ShortId } from '@cornice/sdk';
import {
  CREATE_ASSET_TX_TYPE_ID,
  SECP256K1FX_TYPE_ID,
  type BaseTxFields,
  type CreateAssetTx,
  type Credential,
  type MintOperation,
  type TransferableInput,
  type TransferableOutput,
  type Utxo,
  type UtxoRef,
} from '@cornice/sdk/components';

export {
  SIGNATURE_LENGTH,
  type BaseTxFields,
  type CreateAssetTx,
  type Credential,
  type GenesisAsset,
  type InitialState,
  type MintOperation,
  type MintOutput,
  type Output,
  type OutputOwners,
  type TransferInput,
  type TransferOutput,
  type TransferableInput,
  type TransferableOutput,
  type Utxo,
  type UtxoRef,
} from '@cornice/sdk/components';

/** Codec type IDs, as the reference node registers them: VM txs first, then secp256k1fx. nftfx/propertyfx (10–19) are parsed and refused. */
export const TYPE_ID = {
  baseTx: 0,
  createAssetTx: CREATE_ASSET_TX_TYPE_ID,
  operationTx: 2,
  importTx: 3,
  exportTx: 4,
  ...SECP256K1FX_TYPE_ID,
} as const;
/** Name at most 128 bytes, symbol at most 4, denomination at most 32, as on the reference node. */
export const MAX_NAME_LENGTH = 128;
export const MAX_SYMBOL_LENGTH = 4;
export const MAX_DENOMINATION = 32;

export interface Operation {
  assetId: Id;
  utxos: UtxoRef[];
  op: MintOperation;
}

export interface BaseTx extends BaseTxFields {
  kind: 'base';
}

export interface OperationTx extends BaseTxFields {
  kind: 'operation';
  ops: Operation[];
}

/** Imports UTXOs the platform chain exported to this chain (consumed from shared memory). */
export interface ImportTx extends BaseTxFields {
  kind: 'import';
  importedIns: TransferableInput[];
}

/** Exports outputs to the platform chain (put into shared memory). */
export interface ExportTx extends BaseTxFields {
  kind: 'export';
  exportedOuts: TransferableOutput[];
}

export type UnsignedTx = BaseTx | CreateAssetTx | OperationTx | ImportTx | ExportTx;

/** A signed tx: credentials in input order (BaseTx ins, then ops / imported ins). */
export interface Tx {
  unsigned: UnsignedTx;
  creds: Credential[];
}

export interface AssetDescription {
  assetId: Id;
  /** The asset's alias (a genesis asset's; getAllBalances shows it in place of the ID). */
  alias?: string;
  name: string;
  symbol: string;
  denomination: number;
}

export type TxStatus = 'Accepted' | 'Processing' | 'Rejected' | 'Unknown';

/** The two kinds of secp256k1fx output a UTXO holds. */
export type OutputKind = 'transfer' | 'mint';

/** Where a page of getUTXOs ends (avalanchego's endIndex): the last address searched and the last UTXO ID read there. */
export interface UtxoCursor {
  address: ShortId;
  /** Id.empty when nothing of `address` was read. */
  utxoId: Id;
}

/** A page of the UTXOs of some addresses (AvmBackend.utxoPage). */
export interface UtxoPage {
  utxos: Utxo[];
  /** Where the next page starts; undefined when no address was searched. */
  end: UtxoCursor | undefined;
  /** True when every address's UTXOs were read to the end: nothing is left after `end`. */
  exhausted: boolean;
}

/**
 * What the avm service needs of the VM (AssetVM implements it; service unit tests fake it).
 * Reads answer from the last accepted state.
 */
export interface AvmBackend {
  readonly networkId: number;
  readonly chainId: Id;
  /** The chain's aliases (primary first: 'X' on the X-Chain); addresses are written `<primary>-…`, or `<chainID>-…` without aliases. */
  readonly aliases: readonly string[];
  /** The platform chain's ID (the atomic peer of exports/imports). */
  readonly platformChainId: Id;
  /** The native asset (genesis asset whose alias or symbol is the native symbol), when this chain has it. */
  nativeAsset(): AssetDescription | undefined;
  /** An asset by ID or alias (genesis aliases, the native symbol, `NATIVE`); undefined when unknown. */
  asset(idOrAlias: string): Promise<AssetDescription | undefined>;
  /** The sum of the TransferOutputs of `assetId` in the accepted UTXOs `address` is among the owners of (indexed: no UTXO is read). */
  balance(address: ShortId, assetId: Id): Promise<bigint>;
  /** Each asset `address` holds (a balance above 0) with its balance, by asset ID; at most `limit`. */
  balances(address: ShortId, limit: number): Promise<Array<{ assetId: Id; amount: bigint }>>;
  /**
   * A page of the accepted UTXOs with at least one of `addresses` (sorted, unique) among their
   * owners: addresses in order, each one's UTXOs in UTXO ID order, from after `start`; at most
   * `limit` (avalanchego's GetPaginatedUTXOs). A page may end early (bounded reads): `end` says
   * where the next starts.
   */
  utxoPage(addresses: readonly ShortId[], start: UtxoCursor | undefined, limit: number): Promise<UtxoPage>;
  /**
   * Accepted UTXOs of `assetId` of one kind that any of `addresses` is among the owners of, largest
   * amount first (ties and mint outputs in UTXO ID order), each once, read as the caller goes: it
   * stops when it has enough.
   */
  utxosByAmount(addresses: readonly ShortId[], assetId: Id, kind: OutputKind): AsyncIterable<Utxo>;
  /** Accepted UTXOs by ID (undefined where spent or unknown). */
  utxosById(ids: readonly Id[]): Promise<Array<Utxo | undefined>>;
  /** Native-asset UTXOs the platform chain exported to this chain with at least one of these owners. */
  atomicUtxos(addresses: readonly ShortId[]): Promise<Utxo[]>;
  /**
   * Checks a signed tx against the preferred state and queues it; its ID. Throws an AvmError naming the
   * broken rule. `bytes`: the tx's signed bytes when the caller has them (what it decoded `tx` from),
   * which saves encoding it again.
   */
  issueTx(tx: Tx, bytes?: Uint8Array): Promise<Id>;
  /** The signed bytes of a tx this node knows (accepted or processing); undefined otherwise. */
  getTx(txId: Id): Promise<Uint8Array | undefined>;
  txStatus(txId: Id): Promise<TxStatus>;
  /** The user's encrypted per-chain store (keystore access of the ChainContext). */
  openUser(username: string, password: string): Promise<import('@cornice/sdk').KeyValueStore>;
}
