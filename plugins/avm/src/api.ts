/**
 * The `avm` JSON-RPC service of an asset chain (API.md), declared once: the server binding
 * (service.ts), the typed client and the docs come from it. Amounts are u64 (a decimal string or a
 * number in, a decimal string out); addresses are `<chain>-<cb58>` (addresses.ts).
 */
import {
  InvalidParamsError,
  MAX_WIRE_BYTES,
  defineService,
  withNativeAliases,
  method,
  p,
  result,
  type Parser,
  type ServiceDef,
} from '@cornice/sdk';
import { chainAddress } from './addresses.js';
import { MAX_DENOMINATION, MAX_NAME_LENGTH, MAX_SYMBOL_LENGTH } from './model.js';
import { assetTextError } from './syntax.js';

/** Most addresses one getUTXOs names. */
export const MAX_QUERY_ADDRESSES = 1024;
/** Most initial holders of a fixed-cap asset. */
export const MAX_INITIAL_HOLDERS = 1024;
/** Most minter sets of a variable-cap asset, and most minters in a set or in a createMintTx. */
export const MAX_MINTER_SETS = 256;
export const MAX_MINTERS = 256;
/** Longest assetID param: an asset ID in cb58 or an alias. */
export const MAX_ASSET_ALIAS = 256;

// The keystore refuses names and passwords over 1024 characters with its own text; this bound only
// keeps absurd inputs out (as the keystore service's).
const username = () => p.string({ max: 4096 });
const password = () => p.string({ max: 4096 });
const assetId = () => p.string({ min: 1, max: MAX_ASSET_ALIAS });
/** A whole signed or unsigned tx in its wire form. */
const txBytes = () => p.cb58({ maxBytes: MAX_WIRE_BYTES });

/**
 * An asset's name or symbol, as the reference node bounds them: at most `max` bytes of printable ASCII without
 * leading or trailing whitespace, refused with the reference's texts (the VM's own check). The
 * string is bounded first (UTF-8 takes at most 4 bytes a character: longer ones are too long).
 */
function assetText(what: 'name' | 'symbol', max: number): Parser<string> {
  const text = p.string({ max: 4 * max });
  return {
    ...text,
    describe: () => `${what}: printable ASCII without leading or trailing whitespace, at most ${max} bytes`,
    parse(v, field) {
      const s = text.parse(v, field);
      const problem = assetTextError(s, what, max);
      if (problem !== undefined) throw new InvalidParamsError(field, problem);
      return s;
    },
  };
}

/** A private key in cb58 (32 bytes); anything else gets the reference's `problem parsing private key`. */
const privateKey = () => p.privateKey({ problem: 'problem parsing private key' });

export interface UtxoIdReply {
  txID: string;
  /** A plain JSON number, as the reference's. */
  outputIndex: number;
}

export interface BalanceReply {
  balance: string;
  /** The UTXOs counted (always an array). */
  utxoIDs: UtxoIdReply[];
}

/**
 * getUTXOs' reply: `{utxos}` alone when called without `limit` and `startIndex` (the reference's);
 * with either, a page as avalanchego's: how many, and where the next page starts.
 */
export interface UtxosReply {
  /** cb58 UTXO bytes. */
  utxos: string[];
  /** Decimal string, as avalanchego's. */
  numFetched?: string;
  /** The last address searched and the last UTXO ID read there: the next page's `startIndex`. */
  endIndex?: { address: string; utxo: string };
}

export interface AssetBalanceReply {
  /** The asset's alias where it has one, else its ID. */
  asset: string;
  balance: string;
}

export interface AssetDescriptionReply {
  assetID: string;
  name: string;
  symbol: string;
  /** Decimal string. */
  denomination: string;
}

type TxIdReply = { txID: string };
type TxReply = { tx: string };
type AddressReply = { address: string };

const userParams = { username: username(), password: password() };

/**
 * What later versions of the reference's API added to methods that spend (a client of the time
 * sends them): `from`, the user's addresses whose UTXOs may be spent (omitted or empty: all of
 * them), and `changeAddr`, where change goes (omitted: the user's first address).
 */
const spendFields = {
  from: p.optional(p.array(chainAddress(), { max: MAX_QUERY_ADDRESSES })),
  changeAddr: p.optional(chainAddress()),
};

const assetFields = {
  name: assetText('name', MAX_NAME_LENGTH),
  symbol: p.optional(assetText('symbol', MAX_SYMBOL_LENGTH)),
  denomination: p.uint(8, { max: MAX_DENOMINATION }),
  // Accepted and ignored, as the reference's: creating an asset spends nothing and signs nothing.
  username: p.optional(username()),
  password: p.optional(password()),
};

const exportNative = method({
  params: p.object({
    /** The P-Chain account: a bare cb58 address, without prefix. */
    to: p.shortId(),
    amount: p.uint64(),
    ...userParams,
    ...spendFields,
  }),
  result: result<TxIdReply>(),
  doc: "Send native tokens from the user's addresses (or those in `from`) to a P-Chain account (change to `changeAddr`, default the user's first address); complete with platform.importNATIVE",
});
const importNative = method({
  params: p.object({ to: chainAddress(), ...userParams }),
  result: result<TxIdReply>(),
  doc: "Move every native-token UTXO the P-Chain exported to the user's addresses into one output to `to` (an address of the user)",
});

/** avm: an asset chain (the X-Chain at /ext/bc/X, other instances at /ext/bc/<chainID>). */
export const avmApi = defineService('avm', {
  createAddress: method({
    params: p.object(userParams),
    result: result<AddressReply>(),
    doc: "Generate a key, store it in the user's keys of this chain; its address",
  }),
  listAddresses: method({
    params: p.object(userParams),
    result: result<{ addresses: string[] }>(),
    doc: "The addresses of the user's keys on this chain, in the order they were added",
  }),
  getBalance: method({
    params: p.object({ address: chainAddress(), assetID: assetId() }),
    result: result<BalanceReply>(),
    doc: 'Amount of an asset in the UTXOs an address appears in (multisig and locked ones too), and those UTXOs (at most 1,024: the largest)',
  }),
  getAllBalances: method({
    params: p.object({ address: chainAddress() }),
    result: result<{ balances: AssetBalanceReply[] }>(),
    doc: 'Every asset an address holds (as getBalance counts it), by asset ID (at most 1,024; the native asset always)',
  }),
  getUTXOs: method({
    params: p.object({
      addresses: p.array(chainAddress(), { max: MAX_QUERY_ADDRESSES }),
      /** Most UTXOs of a page: 1 to 1024 (0, more or omitted with a startIndex: 1024). */
      limit: p.optional(p.uint(32)),
      /** Where the page starts: after this UTXO of this address (a previous page's endIndex). */
      startIndex: p.optional(p.object({ address: chainAddress(), utxo: p.id() })),
    }),
    result: result<UtxosReply>(),
    doc: 'The UTXOs that reference at least one of the addresses (cb58 UTXO bytes): all of them in UTXO ID order, or with limit/startIndex a page (addresses in order, each one\'s UTXOs in UTXO ID order) with numFetched and endIndex',
  }),
  issueTx: method({
    params: p.object({ tx: txBytes() }),
    result: result<TxIdReply>(),
    doc: 'Check a signed tx against the preferred state and queue it',
  }),
  getTx: method({
    // Optional to the parser so that omitting it gets the reference's text (still -32602).
    params: p.object({ txID: p.optional(p.id()) }),
    result: result<TxReply>(),
    doc: 'The signed bytes of a tx this node knows (accepted or processing)',
  }),
  getTxStatus: method({
    params: p.object({ txID: p.optional(p.id()) }),
    result: result<{ status: string }>(),
    doc: 'Accepted, Processing, Rejected or Unknown (a tx this node has not seen)',
  }),
  send: method({
    params: p.object({ amount: p.uint64(), assetID: assetId(), to: chainAddress(), ...userParams, ...spendFields }),
    result: result<TxIdReply>(),
    doc: "Send an asset from the user's addresses, or those in `from` (their largest UTXOs of the asset until the amount is covered, at most 64; change to `changeAddr`, default the user's first address)",
  }),
  createFixedCapAsset: method({
    params: p.object({
      ...assetFields,
      initialHolders: p.array(p.object({ address: chainAddress(), amount: p.uint64() }), { max: MAX_INITIAL_HOLDERS }),
    }),
    result: result<{ assetID: string }>(),
    doc: 'Create an asset whose whole supply goes to the initial holders; no more can ever be minted',
  }),
  createVariableCapAsset: method({
    params: p.object({
      ...assetFields,
      minterSets: p.array(
        p.object({ minters: p.array(chainAddress(), { max: MAX_MINTERS }), threshold: p.uint(32) }),
        { max: MAX_MINTER_SETS },
      ),
    }),
    result: result<{ assetID: string }>(),
    doc: 'Create an asset with no supply; threshold minters of any minter set may mint more',
  }),
  createMintTx: method({
    params: p.object({
      amount: p.uint64(),
      assetID: assetId(),
      to: chainAddress(),
      minters: p.array(chainAddress(), { max: MAX_MINTERS }),
    }),
    result: result<TxReply>(),
    doc: 'Build an unsigned tx minting amount of an asset to `to` with a minter set the minters satisfy (then signMintTx per minter, then issueTx)',
  }),
  signMintTx: method({
    params: p.object({ tx: txBytes(), minter: chainAddress(), ...userParams }),
    result: result<TxReply>(),
    doc: "Add the signature of a minter (one of the user's addresses) to a mint tx, at its place",
  }),
  getAssetDescription: method({
    params: p.object({ assetID: assetId() }),
    result: result<AssetDescriptionReply>(),
    doc: 'An asset by ID or alias: its ID, name, symbol and denomination',
  }),
  exportNATIVE: exportNative,
  importNATIVE: importNative,
  exportKey: method({
    params: p.object({ ...userParams, address: chainAddress() }),
    result: result<{ privateKey: string }>(),
    doc: "The private key (cb58) of one of the user's addresses",
  }),
  importKey: method({
    params: p.object({ ...userParams, privateKey: privateKey() }),
    result: result<AddressReply>(),
    doc: "Add a private key to the user's keys of this chain; its address",
  }),
});

/** The declaration with `exportNATIVE`/`importNATIVE` also under the native symbol (what the node serves). */
export function avmApiWithSymbol(symbol: string): ServiceDef {
  return withNativeAliases(avmApi, symbol);
}
