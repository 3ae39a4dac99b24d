/**
 * What a network genesis needs of the AVM's genesis format (the sdk's shared component,
 * `@cornice/sdk/components`, the one the asset VM reads): build the genesis of fixed-cap assets, and
 * read back each asset's alias, ID and description.
 */
import { Id, NodeError, type ShortId, compareBytes, type Writer } from '@cornice/sdk';
import {
  assetIdOf,
  readAvmGenesis,
  writeAvmGenesis,
  writeOutput,
  type CreateAssetTx,
  type Output,
  type TransferOutput,
} from '@cornice/sdk/components';
import { readAll, withCodecErrors, writeAll } from './bounded.js';
import { readFxTypeId } from './codec.js';

export type AvmGenesisErrorCode =
  /** Bytes that are not an AVM genesis. */
  | 'Malformed'
  /** An asset the AVM would refuse (name, symbol, denomination, holders). */
  | 'InvalidAsset';

export class AvmGenesisError extends NodeError<AvmGenesisErrorCode> {}

/** CreateAssetTx limits, the reference node's. */
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
export type GenesisOutput = Output;

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

const holderOutput = (h: FixedCapAsset['holders'][number]): TransferOutput => ({ kind: 'transfer', amount: h.amount, locktime: 0n, threshold: 1, addresses: [h.address] });

/** The bytes of an output as an interface value (type ID + fields): what initial-state outputs sort by. */
const outputBytes = (out: Output): Uint8Array => writeAll((w: Writer) => writeOutput(w, out));

/** The CreateAssetTx of a fixed-cap asset in a genesis: NetID 0, BCID empty, one initial state of FxID 0. */
function createAssetTx(a: FixedCapAsset): CreateAssetTx {
  const outs = a.holders.map(holderOutput).map((out) => ({ out, bytes: outputBytes(out) }));
  outs.sort((x, y) => compareBytes(x.bytes, y.bytes));
  return {
    kind: 'createAsset',
    networkId: 0,
    chainId: Id.empty,
    outs: [],
    ins: [],
    name: a.name,
    symbol: a.symbol,
    denomination: a.denomination,
    states: [{ fxIndex: 0, outs: outs.map((o) => o.out) }],
  };
}

/** The AVM genesis bytes of these assets (sorted by alias). AvmGenesisError('InvalidAsset') for an asset the AVM would refuse. */
export function buildAvmGenesis(assets: readonly FixedCapAsset[]): Uint8Array {
  for (const a of assets) checkAsset(a);
  return codecErrors(() => writeAll((w) => writeAvmGenesis(w, assets.map((a) => ({ alias: a.alias, tx: createAssetTx(a) })))));
}

/** The assets of an AVM genesis. AvmGenesisError('Malformed') when the bytes are not one. */
export function parseAvmGenesis(bytes: Uint8Array): GenesisAsset[] {
  return codecErrors(() =>
    readAll(bytes, (r) => readAvmGenesis(r, readFxTypeId)).map(({ alias, tx }) => ({
      alias,
      assetId: assetIdOf(tx),
      name: tx.name,
      symbol: tx.symbol,
      denomination: tx.denomination,
      outputs: tx.states.flatMap((s) => s.outs),
    })),
  );
}
