/**
 * The AVM codec's type-ID registry, the reference node's: the name of each type ID, and how a slot's type
 * ID is read (`readTypeId`, the `TypeIdReader` the shared components take). The secp256k1fx values
 * themselves are the sdk's shared components (`@cornice/sdk/components`). An nftfx or propertyfx
 * value (type IDs 10–19) is AvmError('UnsupportedFx') wherever it appears.
 */
import { CodecError, type Reader } from '@cornice/sdk';
import { AVAX_MIN_SIZE, SECP256K1FX_MIN_SIZE, type TypeIdReader, type TypeIdSlot } from '@cornice/sdk/components';
import { AvmError } from './errors.js';

/** The reference node's name of every type ID of the AVM codec, in registration order. */
export const TYPE_NAMES: readonly string[] = [
  'BaseTx',
  'CreateAssetTx',
  'OperationTx',
  'ImportTx',
  'ExportTx',
  'secp256k1fx.TransferInput',
  'secp256k1fx.MintOutput',
  'secp256k1fx.TransferOutput',
  'secp256k1fx.MintOperation',
  'secp256k1fx.Credential',
  'nftfx.MintOutput',
  'nftfx.TransferOutput',
  'nftfx.MintOperation',
  'nftfx.TransferOperation',
  'nftfx.Credential',
  'propertyfx.MintOutput',
  'propertyfx.OwnedOutput',
  'propertyfx.MintOperation',
  'propertyfx.BurnOperation',
  'propertyfx.Credential',
];

/** The nftfx and propertyfx type IDs: parsed far enough to name them, then refused. */
const UNSUPPORTED_FX_TYPE_IDS = { first: 10, last: 19 } as const;

/** Smallest encodings, to refuse a declared count the rest of the input cannot hold. */
export const MIN_SIZE = {
  ...SECP256K1FX_MIN_SIZE,
  ...AVAX_MIN_SIZE,
  /** AssetID, UTXOIDs count, type ID, MintOperation. */
  operation: 32 + 4 + 4 + 36,
} as const;

/** What the AVM's errors call the value in each slot. */
const SLOT_WORDS: Readonly<Record<TypeIdSlot, string>> = {
  tx: 'a tx',
  txOutput: 'a tx output',
  txInput: 'a tx input',
  utxoOutput: 'a UTXO output',
  initialStateOutput: 'an initial state output',
  operation: 'an operation',
  credential: 'a credential',
};

/**
 * Reads the u32 type ID of an interface value in a slot that takes only `allowed`.
 * nftfx/propertyfx: AvmError('UnsupportedFx'); anything else: CodecError naming the type.
 */
export const readTypeId: TypeIdReader = (r: Reader, allowed: readonly number[], slot: TypeIdSlot): number => {
  const at = r.offset;
  const typeId = r.u32();
  if (allowed.includes(typeId)) return typeId;
  const name = TYPE_NAMES[typeId];
  const what = SLOT_WORDS[slot];
  if (typeId >= UNSUPPORTED_FX_TYPE_IDS.first && typeId <= UNSUPPORTED_FX_TYPE_IDS.last) {
    const fx = name!.slice(0, name!.indexOf('.'));
    throw new AvmError('UnsupportedFx', `${fx} is not supported: ${what} is a ${name} (type ID ${typeId}); this asset VM implements secp256k1fx only`, {
      offset: at,
      typeId,
    });
  }
  throw new CodecError('Invalid', name === undefined ? `unknown type ID ${typeId} for ${what}` : `${what} cannot be a ${name} (type ID ${typeId})`, {
    offset: at,
    typeId,
  });
};
