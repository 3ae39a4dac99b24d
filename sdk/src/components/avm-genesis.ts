/**
 * The asset VM's genesis format (the reference's AVM genesis), the one format both the node (which
 * writes the network genesis of the X-Chain) and the asset VM (which starts a chain from it) read:
 *
 *   Genesis       = Txs []GenesisAsset{Alias string, CreateAssetTx}   (sorted by alias, as bytes)
 *   CreateAssetTx = BaseTx fields ‖ Name string ‖ Symbol string ‖ Denomination u8 ‖
 *                   States []InitialState{FxID u32, Outs []output as an interface value}
 *                   (a struct in a genesis: no type ID; NetID 0 and BCID empty in a built genesis)
 *   asset ID      = SHA-256(u32(1) ‖ CreateAssetTx fields ‖ u32(0)): the ID of a Tx holding it with no credentials
 */
import { CodecError } from '../errors/errors.js';
import { Id } from '../ids/id.js';
import type { Reader } from '../codec/reader.js';
import { Writer } from '../codec/writer.js';
import { compareBytes, utf8Encode } from '../encoding/bytes.js';
import { sha256 } from '../crypto/hash.js';
import { AVAX_MIN_SIZE, readBaseTxFields, writeBaseTxFields, type BaseTxFields } from './avax.js';
import { ANY_OUTPUT, SECP256K1FX_MIN_SIZE, readOutput, writeOutput, type Output, type TypeIdReader } from './secp256k1fx.js';

/** CreateAssetTx's type ID in the AVM codec (what an asset ID hashes first). */
export const CREATE_ASSET_TX_TYPE_ID = 1;

/** The outputs an asset starts with, of one fx (FxID: its index in the chain's fx list, 0 = secp256k1fx). */
export interface InitialState {
  fxIndex: number;
  outs: Output[];
}

/** CreateAssetTx: makes an asset (its ID is the tx's ID) and its initial outputs. */
export interface CreateAssetTx extends BaseTxFields {
  kind: 'createAsset';
  name: string;
  symbol: string;
  denomination: number;
  states: InitialState[];
}

/** A genesis asset: an alias and the CreateAssetTx that makes it. */
export interface GenesisAsset {
  alias: string;
  tx: CreateAssetTx;
}

/** Fewest bytes a CreateAssetTx's fields take: BaseTx with nothing, empty name and symbol, denomination, no states. */
export const MIN_CREATE_ASSET_SIZE = AVAX_MIN_SIZE.baseTxFields + 2 + 2 + 1 + 4;
/** FxID, output count. */
const MIN_INITIAL_STATE_SIZE = 4 + 4;

/** InitialState{FxID u32, Outs []interface}. */
export function writeInitialState(w: Writer, s: InitialState): void {
  w.u32(s.fxIndex).array(s.outs, writeOutput);
}

export function readInitialState(r: Reader, typeIds: TypeIdReader): InitialState {
  const fxIndex = r.u32();
  const outs = r.array((r2) => readOutput(r2, typeIds, ANY_OUTPUT, 'initialStateOutput'), { minItemSize: SECP256K1FX_MIN_SIZE.output });
  return { fxIndex, outs };
}

/** The CreateAssetTx fields after the BaseTx fields. */
export function writeCreateAssetFields(w: Writer, tx: CreateAssetTx): void {
  w.str(tx.name).str(tx.symbol).u8(tx.denomination).array(tx.states, writeInitialState);
}

/** The CreateAssetTx fields after `base`, the BaseTx fields already read. */
export function readCreateAssetFields(r: Reader, typeIds: TypeIdReader, base: BaseTxFields): CreateAssetTx {
  const name = r.str();
  const symbol = r.str();
  const denomination = r.u8();
  const states = r.array((r2) => readInitialState(r2, typeIds), { minItemSize: MIN_INITIAL_STATE_SIZE });
  return { kind: 'createAsset', ...base, name, symbol, denomination, states };
}

/** A CreateAssetTx's fields without a type ID (as a genesis holds it). */
export function writeCreateAssetTx(w: Writer, tx: CreateAssetTx): void {
  writeBaseTxFields(w, tx);
  writeCreateAssetFields(w, tx);
}

export function readCreateAssetTx(r: Reader, typeIds: TypeIdReader): CreateAssetTx {
  return readCreateAssetFields(r, typeIds, readBaseTxFields(r, typeIds));
}

/** Asset ID = the ID of the Tx holding the CreateAssetTx with no credentials. */
export function assetIdOf(tx: CreateAssetTx): Id {
  const w = new Writer();
  w.u32(CREATE_ASSET_TX_TYPE_ID);
  writeCreateAssetTx(w, tx);
  w.u32(0);
  return Id.fromBytes(sha256(w.finish()));
}

const byAlias = (a: GenesisAsset, b: GenesisAsset): number => compareBytes(utf8Encode(a.alias), utf8Encode(b.alias));

/** A genesis of these assets, sorted here by alias. CodecError when an asset is not a CreateAssetTx. */
export function writeAvmGenesis(w: Writer, assets: readonly GenesisAsset[]): void {
  w.array([...assets].sort(byAlias), (w2, a) => {
    if (a.tx?.kind !== 'createAsset') throw new CodecError('Invalid', `genesis asset ${a.alias} is not a CreateAssetTx`);
    w2.str(a.alias);
    writeCreateAssetTx(w2, a.tx);
  });
}

/** The assets of a genesis, in its order. */
export function readAvmGenesis(r: Reader, typeIds: TypeIdReader): GenesisAsset[] {
  return r.array(
    (r2) => {
      const alias = r2.str();
      return { alias, tx: readCreateAssetTx(r2, typeIds) };
    },
    { minItemSize: 2 + MIN_CREATE_ASSET_SIZE },
  );
}
