/**
 * The asset VM's genesis, the reference node's. Its format is the sdk's shared component
 * (`@cornice/sdk/components`, avm-genesis.ts), the one the node writes the X-Chain's genesis with:
 *
 *   Genesis{Txs []GenesisAsset{Alias string, CreateAssetTx}}   (sorted by alias; the CreateAssetTx
 *   as a struct, no type ID; NetID 0 and BCID empty in a built genesis)
 *   asset ID = SHA-256(u32(1) ‖ CreateAssetTx fields ‖ u32(0)): the ID of a Tx with no credentials
 *
 * Here: the AVM's errors around it, and `buildGenesis`, the genesis of JSON genesis data (avm.buildGenesis, API.md):
 *
 *   {<alias>: {name, symbol?, denomination?, initialState?: {fixedCap?: [{amount, address}],
 *              variableCap?: [{minters, threshold?}]}}}
 *
 * As the reference: addresses are bare cb58 (no `X-`); all outputs of an asset go into one initial
 * state of FxID 0 (secp256k1fx), sorted by their bytes; a variableCap minter set becomes a MintOutput
 * whose threshold is FORCED TO 1 (the given threshold is accepted and ignored). Stricter than the
 * reference, every asset must be one the VM would accept (name, symbol, denomination as a
 * CreateAssetTx), amounts must be positive, a minter set non-empty and without repeats;
 * limitedTransfer, nonFungible and any other asset type are refused (`unknown asset type`).
 */
import { Id, InvalidParamsError, type ShortId, p, type Parser } from '@cornice/sdk';
import { assetIdOf as sharedAssetIdOf, readAvmGenesis, writeAvmGenesis } from '@cornice/sdk/components';
import { decodeWith, encodeWith, malformed, sortAddresses, sortOutputs } from './codec.js';
import { AvmError } from './errors.js';
import { readTypeId } from './fx.js';
import { MAX_DENOMINATION, MAX_NAME_LENGTH, MAX_SYMBOL_LENGTH, type CreateAssetTx, type GenesisAsset, type Output } from './model.js';
import { assetTextError } from './syntax.js';

/** Asset ID = the ID of the Tx holding the CreateAssetTx with no credentials. AvmError('Malformed') when it cannot be encoded. */
export function assetIdOf(tx: CreateAssetTx): Id {
  return malformed(() => sharedAssetIdOf(tx));
}

/** The genesis bytes of these assets (sorted by alias here). AvmError('Malformed') when they cannot be encoded. */
export function encodeGenesis(assets: readonly GenesisAsset[]): Uint8Array {
  return encodeWith((w) => writeAvmGenesis(w, assets));
}

/**
 * The assets of a genesis, in its order. AvmError('Malformed') when the bytes are not a genesis,
 * AvmError('InvalidGenesis') when an alias appears twice (the VM could not register both).
 */
export function decodeGenesis(bytes: Uint8Array): GenesisAsset[] {
  const assets = decodeWith(bytes, (r) => readAvmGenesis(r, readTypeId));
  const seen = new Set<string>();
  for (const a of assets) {
    if (seen.has(a.alias)) throw new AvmError('InvalidGenesis', `duplicate alias ${JSON.stringify(a.alias)}`);
    seen.add(a.alias);
  }
  return assets;
}

// ---- buildGenesis -----------------------------------------------------------------------------

/** Bounds on genesis data (the genesis bytes are bounded as a whole too: 256 KiB). */
export const BUILD_GENESIS_LIMITS = {
  assets: 256,
  aliasLength: 128,
  holders: 4096,
  minterSets: 256,
  minters: 256,
} as const;

function fail(field: string, message: string): never {
  throw new InvalidParamsError(field, message);
}

const typeName = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

/** A parser checking more after `inner` has parsed. */
function refine<T>(inner: Parser<T>, check: (value: T, field: string) => void, describe?: string): Parser<T> {
  return {
    ...inner,
    ...(describe ? { describe: () => describe } : {}),
    parse(v, field) {
      const value = inner.parse(v, field);
      check(value, field);
      return value;
    },
  };
}

/** A bare cb58 address (genesis data carries no chain prefix). */
function bareAddress(): Parser<ShortId> {
  const inner = p.shortId();
  return {
    ...inner,
    describe: () => 'address (bare cb58 of 20 bytes, no chain prefix)',
    parse(v, field) {
      if (typeof v === 'string' && v.includes('-')) fail(field, 'must be a bare cb58 address, without a chain prefix such as X-');
      return inner.parse(v, field);
    },
  };
}

const holderParser = p.object({
  amount: refine(p.uint64(), (n, f) => n === 0n && fail(f, 'must be positive'), 'uint64 > 0 (decimal string or number)'),
  address: bareAddress(),
});

const minterSetParser = p.object({
  minters: refine(p.array(bareAddress(), { min: 1, max: BUILD_GENESIS_LIMITS.minters }), (addrs, f) => {
    if (sortAddresses(addrs).length !== addrs.length) fail(f, 'an address appears more than once');
  }),
  /** Accepted and ignored, as the reference: a genesis minter set's threshold is 1. */
  threshold: p.optional(p.uint(32)),
});

const ASSET_TYPES = ['fixedCap', 'variableCap'] as const;
/** Asset types the reference lists that this VM does not implement (nftfx, propertyfx). */
const UNSUPPORTED_ASSET_TYPES = ['limitedTransfer', 'nonFungible'];

const assetTypesParser = p.object({
  fixedCap: p.optional(p.array(holderParser, { max: BUILD_GENESIS_LIMITS.holders })),
  variableCap: p.optional(p.array(minterSetParser, { max: BUILD_GENESIS_LIMITS.minterSets })),
});

/** initialState: asset type -> its outputs; an unknown type is named. */
const initialStateParser: typeof assetTypesParser = {
  ...assetTypesParser,
  describe: () => `object {${ASSET_TYPES.join('?, ')}?} (the asset types)`,
  parse(v, field) {
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      for (const key of Object.keys(v)) {
        if (ASSET_TYPES.some((t) => t.toLowerCase() === key.toLowerCase())) continue;
        const unsupported = UNSUPPORTED_ASSET_TYPES.find((t) => t.toLowerCase() === key.toLowerCase());
        fail(
          `${field}.${key}`,
          unsupported
            ? `unknown asset type: ${unsupported} assets are not supported (this asset VM implements secp256k1fx: fixedCap and variableCap)`
            : `unknown asset type (expected ${ASSET_TYPES.join(' or ')})`,
        );
      }
    }
    return assetTypesParser.parse(v, field);
  },
};

/** An asset's definition, checked as a CreateAssetTx would be (reference texts). */
const assetParser = refine(
  p.object({
    name: p.optional(p.string({ max: MAX_NAME_LENGTH })),
    symbol: p.optional(p.string({ max: MAX_SYMBOL_LENGTH })),
    denomination: p.optional(p.uint(8)),
    initialState: p.optional(initialStateParser),
  }),
  (a, f) => {
    const nameError = assetTextError(a.name ?? '', 'name', MAX_NAME_LENGTH);
    if (nameError) fail(`${f}.name`, nameError);
    const symbolError = assetTextError(a.symbol ?? '', 'symbol', MAX_SYMBOL_LENGTH);
    if (symbolError) fail(`${f}.symbol`, symbolError);
    if ((a.denomination ?? 0) > MAX_DENOMINATION) fail(`${f}.denomination`, `denomination is too large (at most ${MAX_DENOMINATION})`);
    const supply = (a.initialState?.fixedCap ?? []).reduce((sum, h) => sum + h.amount, 0n);
    if (supply >= 1n << 64n) fail(`${f}.initialState.fixedCap`, 'the amounts add up to more than 2^64-1');
  },
);

export type AssetDefinition = ReturnType<typeof assetParser.parse>;

/** genesisData: an object mapping each asset's alias to its definition. */
export const genesisDataParser: Parser<Map<string, AssetDefinition>> = {
  kind: 'object',
  optional: false,
  describe: () => `object mapping an asset alias (1 to ${BUILD_GENESIS_LIMITS.aliasLength} characters) to ${assetParser.describe()} (at most ${BUILD_GENESIS_LIMITS.assets} assets)`,
  parse(v, field) {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) fail(field, `expected an object but got ${typeName(v)}`);
    const entries = Object.entries(v);
    if (entries.length > BUILD_GENESIS_LIMITS.assets) fail(field, `must have at most ${BUILD_GENESIS_LIMITS.assets} assets (got ${entries.length})`);
    const assets = new Map<string, AssetDefinition>();
    for (const [alias, def] of entries) {
      if (alias.length === 0 || alias.length > BUILD_GENESIS_LIMITS.aliasLength) {
        fail(field, `an asset alias must be 1 to ${BUILD_GENESIS_LIMITS.aliasLength} characters (got ${alias.length})`);
      }
      assets.set(alias, assetParser.parse(def, `${field}.${alias}`));
    }
    return assets;
  },
};

/** The genesis asset of a definition: NetID 0, BCID empty, no ins or outs, one initial state of FxID 0. */
function genesisAsset(alias: string, def: AssetDefinition): GenesisAsset {
  const fixed = def.initialState?.fixedCap;
  const variable = def.initialState?.variableCap;
  const outs: Output[] = [
    ...(fixed ?? []).map((h): Output => ({ kind: 'transfer', amount: h.amount, locktime: 0n, threshold: 1, addresses: [h.address] })),
    ...(variable ?? []).map((m): Output => ({ kind: 'mint', threshold: 1, addresses: sortAddresses(m.minters) })),
  ];
  return {
    alias,
    tx: {
      kind: 'createAsset',
      networkId: 0,
      chainId: Id.empty,
      outs: [],
      ins: [],
      name: def.name ?? '',
      symbol: def.symbol ?? '',
      denomination: def.denomination ?? 0,
      states: fixed === undefined && variable === undefined ? [] : [{ fxIndex: 0, outs: sortOutputs(outs) }],
    },
  };
}

/** The genesis bytes of parsed genesis data; AvmError('InvalidGenesis') when the whole exceeds 256 KiB. */
export function encodeGenesisData(data: ReadonlyMap<string, AssetDefinition>): Uint8Array {
  const assets = [...data].map(([alias, def]) => genesisAsset(alias, def));
  try {
    return encodeGenesis(assets);
  } catch (e) {
    if (e instanceof AvmError && e.code === 'Malformed') throw new AvmError('InvalidGenesis', `the genesis is too large: ${e.message}`);
    throw e;
  }
}

/**
 * The genesis bytes of JSON genesis data (see the file comment). InvalidParamsError naming the field
 * (`genesisData.<alias>...`) for bad data; AvmError('InvalidGenesis') when the whole exceeds 256 KiB.
 */
export function buildGenesis(genesisData: unknown): Uint8Array {
  return encodeGenesisData(genesisDataParser.parse(genesisData, 'genesisData'));
}
