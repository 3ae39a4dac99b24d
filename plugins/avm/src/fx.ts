/**
 * The secp256k1fx values of the AVM codec (reference §4.1, §4.2), field by field: outputs (as
 * interface values: u32 type ID + fields), transfer inputs, mint operations, credentials. Readers
 * throw the sdk's CodecError (the caller turns it into AvmError('Malformed')); an nftfx or
 * propertyfx value (type IDs 10–19) is AvmError('UnsupportedFx') wherever it appears.
 */
import { CodecError, type Reader, type Writer } from '@cornice/sdk';
import { AvmError } from './errors.js';
import {
  SIGNATURE_LENGTH,
  TYPE_ID,
  type Credential,
  type MintOperation,
  type MintOutput,
  type Output,
  type OutputOwners,
  type TransferInput,
  type TransferOutput,
} from './model.js';

/** The reference's name of every type ID of the AVM codec, in registration order (reference §4.1). */
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
  /** Threshold, address count. */
  owners: 4 + 4,
  /** Amt, Locktime, owners. */
  transferOutput: 8 + 8 + 8,
  /** An output as an interface value: type ID + the smaller (MintOutput). */
  output: 4 + 8,
  /** AssetID, type ID, TransferOutput. */
  transferableOutput: 32 + 4 + 24,
  /** TxID, OutputIndex, AssetID, type ID, Amt, SigIndices count. */
  transferableInput: 32 + 4 + 32 + 4 + 8 + 4,
  /** TxID, OutputIndex. */
  utxoRef: 32 + 4,
  /** SigIndices count, MintOutput, TransferOutput (structs: no type IDs). */
  mintOperation: 4 + 8 + 24,
  /** AssetID, UTXOIDs count, type ID, MintOperation. */
  operation: 32 + 4 + 4 + 36,
  /** Type ID and signature count. */
  credential: 4 + 4,
  /** FxID, output count. */
  initialState: 4 + 4,
} as const;

/**
 * Reads the u32 type ID of an interface value in a slot (`what`, e.g. `a tx output`) that takes only
 * `allowed`. nftfx/propertyfx: AvmError('UnsupportedFx'); anything else: CodecError naming the type.
 */
export function readTypeId(r: Reader, allowed: readonly number[], what: string): number {
  const at = r.offset;
  const typeId = r.u32();
  if (allowed.includes(typeId)) return typeId;
  const name = TYPE_NAMES[typeId];
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
}

/** OutputOwners{Threshold u32, Addrs [][20]} (MintOutput has only these; no locktime in v0.5). */
export function writeOwners(w: Writer, o: OutputOwners): void {
  w.u32(o.threshold).array(o.addresses, (w2, a) => w2.shortId(a));
}

export function readOwners(r: Reader): OutputOwners {
  const threshold = r.u32();
  const addresses = r.array((r2) => r2.shortId(), { minItemSize: 20 });
  return { threshold, addresses };
}

/** TransferOutput{Amt u64, Locktime u64, OutputOwners}, as a struct (no type ID). */
export function writeTransferOutputFields(w: Writer, o: TransferOutput): void {
  w.u64(o.amount).u64(o.locktime);
  writeOwners(w, o);
}

export function readTransferOutputFields(r: Reader): TransferOutput {
  const amount = r.u64();
  const locktime = r.u64();
  return { kind: 'transfer', amount, locktime, ...readOwners(r) };
}

export function readMintOutputFields(r: Reader): MintOutput {
  return { kind: 'mint', ...readOwners(r) };
}

/** An output as an interface value: type ID 7 + TransferOutput, or type ID 6 + MintOutput. */
export function writeOutput(w: Writer, out: Output): void {
  switch (out?.kind) {
    case 'transfer':
      w.u32(TYPE_ID.transferOutput);
      writeTransferOutputFields(w, out);
      return;
    case 'mint':
      w.u32(TYPE_ID.mintOutput);
      writeOwners(w, out);
      return;
    default:
      throw new CodecError('Invalid', `unknown output kind ${String((out as { kind?: unknown } | undefined)?.kind)}`);
  }
}

/** Output type IDs by slot: where only transfers go (tx outputs), and where mints may too (UTXOs, initial states). */
export const TRANSFER_ONLY = [TYPE_ID.transferOutput] as const;
export const ANY_OUTPUT = [TYPE_ID.mintOutput, TYPE_ID.transferOutput] as const;

/** Reads an output interface value whose type is one of `allowed` (see readTypeId). */
export function readOutput(r: Reader, allowed: readonly number[], what: string): Output {
  const typeId = readTypeId(r, allowed, what);
  return typeId === TYPE_ID.transferOutput ? readTransferOutputFields(r) : readMintOutputFields(r);
}

/** TransferInput as an interface value: type ID 5, Amt u64, SigIndices []u32. */
export function writeTransferInput(w: Writer, i: TransferInput): void {
  w.u32(TYPE_ID.transferInput).u64(i.amount).array(i.sigIndices, (w2, n) => w2.u32(n));
}

export function readTransferInput(r: Reader): TransferInput {
  readTypeId(r, [TYPE_ID.transferInput], 'a tx input');
  const amount = r.u64();
  const sigIndices = r.array((r2) => r2.u32(), { minItemSize: 4 });
  return { amount, sigIndices };
}

/** MintOperation as an interface value: type ID 8, MintInput{SigIndices}, MintOutput, TransferOutput (structs). */
export function writeMintOperation(w: Writer, op: MintOperation): void {
  if (op?.kind !== 'mint') throw new CodecError('Invalid', `unknown operation kind ${String((op as { kind?: unknown } | undefined)?.kind)}`);
  w.u32(TYPE_ID.mintOperation).array(op.sigIndices, (w2, n) => w2.u32(n));
  writeOwners(w, op.mintOutput);
  writeTransferOutputFields(w, op.transferOutput);
}

export function readMintOperation(r: Reader): MintOperation {
  readTypeId(r, [TYPE_ID.mintOperation], 'an operation');
  const sigIndices = r.array((r2) => r2.u32(), { minItemSize: 4 });
  const mintOutput = readMintOutputFields(r);
  const transferOutput = readTransferOutputFields(r);
  return { kind: 'mint', sigIndices, mintOutput, transferOutput };
}

/** A 65-byte recoverable signature; CodecError for any other length. */
function writeSignature(w: Writer, sig: Uint8Array): void {
  if (!(sig instanceof Uint8Array) || sig.length !== SIGNATURE_LENGTH) {
    throw new CodecError('Invalid', `a signature must be ${SIGNATURE_LENGTH} bytes (got ${sig instanceof Uint8Array ? sig.length : typeof sig})`);
  }
  w.fixedBytes(sig);
}

/** A Credential as an interface value: type ID 9, then Sigs [][65]byte. */
export function writeCredential(w: Writer, c: Credential): void {
  w.u32(TYPE_ID.credential).array(c.sigs, writeSignature);
}

export function readCredential(r: Reader): Credential {
  readTypeId(r, [TYPE_ID.credential], 'a credential');
  return { sigs: r.array((r2) => r2.fixedBytes(SIGNATURE_LENGTH), { minItemSize: SIGNATURE_LENGTH }) };
}
