/**
 * The AVM's genesis format (reference §4.4), as far as a network genesis needs it: build the genesis
 * of fixed-cap assets, and read back each asset's alias, ID and description.
 *
 *   Genesis{Txs []GenesisAsset{Alias string, CreateAssetTx}}   (assets sorted by alias)
 *   CreateAssetTx{NetID u32 (0), BCID [32] (empty), Outs [], Ins [], Name string, Symbol string,
 *                 Denomination u8, States []InitialState{FxID u32, Outs []interface}}
 *
 * Asset ID = SHA-256(u32(1) ‖ CreateAssetTx bytes ‖ u32(0)): the ID of a Tx with no credentials.
 */
import { Id, NodeError, ShortId, compareBytes, concatBytes, sha256, utf8Encode, type Reader, type Writer } from '@cornice/sdk';
import { readAll, withCodecErrors, writeAll } from './bounded.js';
import type { TransferableOutput } from './model.js';
import {
  MIN_SIZE,
  SECP_TYPE_ID,
  readOutputOwners,
  readTransferOutput,
  readTransferableInput,
  readTransferableOutput,
  writeTransferOutput,
} from './secp256k1fx.js';

export type AvmGenesisErrorCode =
  /** Bytes that are not an AVM genesis. */
  | 'Malformed'
  /** An asset the AVM would refuse (name, symbol, denomination, holders). */
  | 'InvalidAsset';

export class AvmGenesisError extends NodeError<AvmGenesisErrorCode> {}

/** CreateAssetTx limits (reference §4.3). */
export const MAX_ASSET_NAME_LENGTH = 128;
export const MAX_ASSET_SYMBOL_LENGTH = 4;
export const MAX_ASSET_DENOMINATION = 32;

/** A fixed-cap asset: its whole supply goes to the holders at genesis. */
export interface FixedCapAsset {
  alias: string;
  name: string;
  symbol: string;
  denomination: number;
  holders: Array<{ address: ShortId; amount: bigint }>;
}

/** A secp256k1fx output of an initial state: a TransferOutput (7) or a MintOutput (6). */
export type GenesisOutput =
  | ({ kind: 'transfer' } & Omit<TransferableOutput, 'assetId'>)
  | { kind: 'mint'; threshold: number; addresses: ShortId[] };

export interface GenesisAsset {
  alias: string;
  assetId: Id;
  name: string;
  symbol: string;
  denomination: number;
  /** The outputs of every initial state, in order (the UTXOs the asset starts with). */
  outputs: GenesisOutput[];
}

/** Printable ASCII, no leading or trailing whitespace. */
function checkText(value: string, what: string, max: number): void {
  if (value.length > max) throw new AvmGenesisError('InvalidAsset', `${what} is too long (at most ${max} characters)`, { [what]: value.slice(0, max) });
  if (!/^[\x20-\x7e]*$/.test(value)) throw new AvmGenesisError('InvalidAsset', `${what} must be printable ASCII`);
  if (value.trim() !== value) throw new AvmGenesisError('InvalidAsset', `${what} has unexpected leading or trailing whitespace`);
}

function checkAsset(a: FixedCapAsset): void {
  checkText(a.name, 'name', MAX_ASSET_NAME_LENGTH);
  checkText(a.symbol, 'symbol', MAX_ASSET_SYMBOL_LENGTH);
  if (!Number.isInteger(a.denomination) || a.denomination < 0 || a.denomination > MAX_ASSET_DENOMINATION) {
    throw new AvmGenesisError('InvalidAsset', `denomination must be an integer from 0 to ${MAX_ASSET_DENOMINATION}`);
  }
  if (a.holders.length === 0) throw new AvmGenesisError('InvalidAsset', `asset ${a.alias} has no holders`);
  for (const h of a.holders) {
    if (h.amount <= 0n) throw new AvmGenesisError('InvalidAsset', `asset ${a.alias}: a holder's amount must be positive`);
  }
}

const codecErrors = <T>(step: () => T): T => withCodecErrors(step, (message, data) => new AvmGenesisError('Malformed', message, data));

/** The bytes of one holder's output as an interface value: type ID 7 + TransferOutput (what outputs sort by). */
function holderOutput(h: FixedCapAsset['holders'][number]): Uint8Array {
  return writeAll((w) => {
    w.u32(SECP_TYPE_ID.transferOutput);
    writeTransferOutput(w, { amount: h.amount, locktime: 0n, threshold: 1, addresses: [h.address] });
  });
}

/** The CreateAssetTx of a fixed-cap asset in a genesis: NetID 0, BCID empty, one initial state of FxID 0. */
function writeCreateAssetTx(w: Writer, a: FixedCapAsset): void {
  w.u32(0).id(Id.empty).u32(0).u32(0).str(a.name).str(a.symbol).u8(a.denomination);
  const outs = a.holders.map(holderOutput).sort(compareBytes);
  w.u32(1).u32(0).array(outs, (w2, o) => w2.fixedBytes(o));
}

/** The AVM genesis bytes of these assets (sorted by alias). AvmGenesisError('InvalidAsset') for an asset the AVM would refuse. */
export function buildAvmGenesis(assets: readonly FixedCapAsset[]): Uint8Array {
  for (const a of assets) checkAsset(a);
  const sorted = [...assets].sort((x, y) => compareBytes(utf8Encode(x.alias), utf8Encode(y.alias)));
  return codecErrors(() =>
    writeAll((w) =>
      w.array(sorted, (w2, a) => {
        w2.str(a.alias);
        writeCreateAssetTx(w2, a);
      }),
    ),
  );
}

/** Asset ID = the ID of the Tx holding the CreateAssetTx with no credentials. */
export function assetIdOf(createAssetTxBytes: Uint8Array): Id {
  const txTypeId = new Uint8Array([0, 0, 0, 1]);
  const noCredentials = new Uint8Array(4);
  return Id.fromBytes(sha256(concatBytes(txTypeId, createAssetTxBytes, noCredentials)));
}

function readGenesisOutput(r: Reader): GenesisOutput {
  const at = r.offset;
  const typeId = r.u32();
  if (typeId === SECP_TYPE_ID.transferOutput) return { kind: 'transfer', ...readTransferOutput(r) };
  if (typeId === SECP_TYPE_ID.mintOutput) return { kind: 'mint', ...readOutputOwners(r) };
  throw new AvmGenesisError('Malformed', `an initial state output has type ID ${typeId}; expected 6 or 7`, { offset: at });
}

/** Reads one GenesisAsset; `bytes` is the whole input (the asset ID hashes a slice of it). */
function readGenesisAsset(r: Reader, bytes: Uint8Array): GenesisAsset {
  const alias = r.str();
  const start = r.offset;
  r.u32(); // NetID
  r.id(); // BCID
  r.array(readTransferableOutput, { minItemSize: MIN_SIZE.transferableOutput });
  r.array(readTransferableInput, { minItemSize: MIN_SIZE.transferableInput });
  const name = r.str();
  const symbol = r.str();
  const denomination = r.u8();
  // InitialState{FxID u32, Outs []interface}: at least an FxID and a count each; an output at least its type ID and owners.
  const states = r.array((r2) => ({ fxId: r2.u32(), outs: r2.array(readGenesisOutput, { minItemSize: 4 + 4 + 4 }) }), { minItemSize: 8 });
  const assetId = assetIdOf(bytes.subarray(start, r.offset));
  return { alias, assetId, name, symbol, denomination, outputs: states.flatMap((s) => s.outs) };
}

/** The assets of an AVM genesis. AvmGenesisError('Malformed') when the bytes are not one. */
export function parseAvmGenesis(bytes: Uint8Array): GenesisAsset[] {
  return codecErrors(() => readAll(bytes, (r) => r.array((r2) => readGenesisAsset(r2, bytes), { minItemSize: 2 + 4 + 32 + 4 + 4 + 2 + 2 + 1 + 4 })));
}
