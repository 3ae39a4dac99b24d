/**
 * secp256k1fx, the feature extension every chain of the asset family shares (avalanchego's
 * `vms/secp256k1fx`): who may spend (`OutputOwners`), TransferOutput, MintOutput, TransferInput,
 * MintOperation and Credential, with their codec type IDs (5–9: the same numbers in the AVM's and
 * the platform chain's codecs, so a UTXO in shared memory reads alike on both chains).
 *
 * Interface values carry a u32 type ID. Which IDs a slot takes, and the words of the error when it
 * holds another, belong to the codec that registered them (the AVM names its types 0–19, the
 * platform chain its own): readers take that codec's `TypeIdReader`. Writers and readers throw the
 * sdk's CodecError; the caller turns it into its own domain error.
 */
import { CodecError } from '../errors/errors.js';
import type { ShortId } from '../ids/id.js';
import type { Reader } from '../codec/reader.js';
import type { Writer } from '../codec/writer.js';
import { SIGNATURE_LENGTH } from '../crypto/secp256k1.js';

/** A recoverable secp256k1 signature (r ‖ s ‖ v): the sdk's crypto constant, here too for the formats' users. */
export { SIGNATURE_LENGTH };

/** secp256k1fx type IDs, the same in the AVM and platform codecs. */
export const SECP256K1FX_TYPE_ID = {
  transferInput: 5,
  mintOutput: 6,
  transferOutput: 7,
  mintOperation: 8,
  credential: 9,
} as const;

/** OutputOwners: who can spend — `threshold` of `addresses` (sorted, unique). */
export interface OutputOwners {
  threshold: number;
  addresses: ShortId[];
}

/** TransferOutput (type 7): an amount, spendable after `locktime` by its owners. */
export interface TransferOutput extends OutputOwners {
  kind: 'transfer';
  amount: bigint;
  locktime: bigint;
}

/** MintOutput (type 6): the right to mint more of an asset. */
export interface MintOutput extends OutputOwners {
  kind: 'mint';
}

export type Output = TransferOutput | MintOutput;

/** TransferInput (type 5). */
export interface TransferInput {
  amount: bigint;
  /** Indices into the spent output's addresses, sorted, unique; one signature each. */
  sigIndices: number[];
}

/** MintOperation (type 8): spends a MintOutput, produces a new MintOutput and a TransferOutput. */
export interface MintOperation {
  kind: 'mint';
  sigIndices: number[];
  mintOutput: MintOutput;
  transferOutput: TransferOutput;
}

/** Credential (type 9): the signatures of one input, in its SigIndices order. */
export interface Credential {
  sigs: Uint8Array[];
}

/** Smallest encodings, to refuse a declared count the rest of the input cannot hold. */
export const SECP256K1FX_MIN_SIZE = {
  /** Threshold, address count. */
  owners: 4 + 4,
  /** Amt, Locktime, owners. */
  transferOutput: 8 + 8 + 8,
  /** An output as an interface value: type ID + the smaller (MintOutput). */
  output: 4 + 8,
  /** SigIndices count, MintOutput, TransferOutput (structs: no type IDs). */
  mintOperation: 4 + 8 + 24,
  /** Type ID and signature count. */
  credential: 4 + 4,
} as const;

/** Output type IDs by slot: where only transfers go (tx outputs), and where mints may too (UTXOs, initial states). */
export const TRANSFER_ONLY: readonly number[] = [SECP256K1FX_TYPE_ID.transferOutput];
export const ANY_OUTPUT: readonly number[] = [SECP256K1FX_TYPE_ID.mintOutput, SECP256K1FX_TYPE_ID.transferOutput];

/** The slots of the shared formats that hold an interface value (a u32 type ID first). */
export type TypeIdSlot = 'tx' | 'txOutput' | 'txInput' | 'utxoOutput' | 'initialStateOutput' | 'operation' | 'credential';

/**
 * How a codec reads the u32 type ID of an interface value in `slot`: it returns the ID when it is
 * one of `allowed` (a codec may take fewer), and otherwise throws naming the type as its registry
 * knows it.
 */
export type TypeIdReader = (r: Reader, allowed: readonly number[], slot: TypeIdSlot) => number;

/** OutputOwners{Threshold u32, Addrs [][20]} (a MintOutput has only these). */
export function writeOwners(w: Writer, o: OutputOwners): void {
  w.u32(o.threshold).array(o.addresses, (w2, a) => w2.shortId(a));
}

export function readOwners(r: Reader): OutputOwners {
  const threshold = r.u32();
  const addresses = r.array((r2) => r2.shortId(), { minItemSize: 20 });
  return { threshold, addresses };
}

/** TransferOutput{Amt u64, Locktime u64, OutputOwners}, as a struct (no type ID). */
export function writeTransferOutputFields(w: Writer, o: Omit<TransferOutput, 'kind'>): void {
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
      w.u32(SECP256K1FX_TYPE_ID.transferOutput);
      writeTransferOutputFields(w, out);
      return;
    case 'mint':
      w.u32(SECP256K1FX_TYPE_ID.mintOutput);
      writeOwners(w, out);
      return;
    default:
      throw new CodecError('Invalid', `unknown output kind ${String((out as { kind?: unknown } | undefined)?.kind)}`);
  }
}

/** Reads an output interface value whose type is one of `allowed`, as `typeIds` checks it. */
export function readOutput(r: Reader, typeIds: TypeIdReader, allowed: readonly number[], slot: TypeIdSlot): Output {
  const typeId = typeIds(r, allowed, slot);
  return typeId === SECP256K1FX_TYPE_ID.transferOutput ? readTransferOutputFields(r) : readMintOutputFields(r);
}

/** TransferInput as an interface value: type ID 5, Amt u64, SigIndices []u32. */
export function writeTransferInput(w: Writer, i: TransferInput): void {
  w.u32(SECP256K1FX_TYPE_ID.transferInput).u64(i.amount).array(i.sigIndices, (w2, n) => w2.u32(n));
}

export function readTransferInput(r: Reader, typeIds: TypeIdReader): TransferInput {
  typeIds(r, [SECP256K1FX_TYPE_ID.transferInput], 'txInput');
  const amount = r.u64();
  const sigIndices = r.array((r2) => r2.u32(), { minItemSize: 4 });
  return { amount, sigIndices };
}

/** MintOperation as an interface value: type ID 8, MintInput{SigIndices}, MintOutput, TransferOutput (structs). */
export function writeMintOperation(w: Writer, op: MintOperation): void {
  if (op?.kind !== 'mint') throw new CodecError('Invalid', `unknown operation kind ${String((op as { kind?: unknown } | undefined)?.kind)}`);
  w.u32(SECP256K1FX_TYPE_ID.mintOperation).array(op.sigIndices, (w2, n) => w2.u32(n));
  writeOwners(w, op.mintOutput);
  writeTransferOutputFields(w, op.transferOutput);
}

export function readMintOperation(r: Reader, typeIds: TypeIdReader): MintOperation {
  typeIds(r, [SECP256K1FX_TYPE_ID.mintOperation], 'operation');
  const sigIndices = r.array((r2) => r2.u32(), { minItemSize: 4 });
  const mintOutput = readMintOutputFields(r);
  const transferOutput = readTransferOutputFields(r);
  return { kind: 'mint', sigIndices, mintOutput, transferOutput };
}

/** A 65-byte recoverable signature; CodecError('Invalid') for any other length. */
export function writeSignature(w: Writer, sig: Uint8Array): void {
  if (!(sig instanceof Uint8Array) || sig.length !== SIGNATURE_LENGTH) {
    throw new CodecError('Invalid', `a signature must be ${SIGNATURE_LENGTH} bytes (got ${sig instanceof Uint8Array ? sig.length : typeof sig})`);
  }
  w.fixedBytes(sig);
}

export function readSignature(r: Reader): Uint8Array {
  return r.fixedBytes(SIGNATURE_LENGTH);
}

/** `[][65]byte`: a u32 count, then 65 bytes each. */
export function writeSignatures(w: Writer, sigs: readonly Uint8Array[]): void {
  w.array(sigs, writeSignature);
}

export function readSignatures(r: Reader): Uint8Array[] {
  return r.array(readSignature, { minItemSize: SIGNATURE_LENGTH });
}

/** A Credential as an interface value: type ID 9, then Sigs [][65]byte. */
export function writeCredential(w: Writer, c: Credential): void {
  w.u32(SECP256K1FX_TYPE_ID.credential);
  writeSignatures(w, c.sigs);
}

export function readCredential(r: Reader, typeIds: TypeIdReader): Credential {
  typeIds(r, [SECP256K1FX_TYPE_ID.credential], 'credential');
  return { sigs: readSignatures(r) };
}
