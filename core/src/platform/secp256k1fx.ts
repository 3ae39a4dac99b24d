/**
 * The secp256k1fx values the platform chain shares with the AVM (reference §4.2, §6.2): transferable
 * outputs and inputs, credentials, UTXOs. Their type IDs (5 TransferInput, 7 TransferOutput, 9
 * Credential) are the same numbers in both codecs, so UTXOs in shared memory decode alike on both
 * chains. Readers throw the sdk's CodecError; the caller turns it into its own domain error.
 */
import { CodecError, Id, type Reader, type Writer } from '@cornice/sdk';
import { SIGNATURE_LENGTH, type Credential, type TransferableInput, type TransferableOutput } from './model.js';

/** secp256k1fx type IDs, the same in the AVM and platform codecs. */
export const SECP_TYPE_ID = {
  transferInput: 5,
  mintOutput: 6,
  transferOutput: 7,
  mintOperation: 8,
  credential: 9,
} as const;

/** Smallest encodings, used to refuse a declared count the rest of the input cannot hold. */
export const MIN_SIZE = {
  /** AssetID, type ID, Amt, Locktime, Threshold, address count. */
  transferableOutput: 32 + 4 + 8 + 8 + 4 + 4,
  /** TxID, OutputIndex, AssetID, type ID, Amt, SigIndices count. */
  transferableInput: 32 + 4 + 32 + 4 + 8 + 4,
  /** Type ID and signature count. */
  credential: 4 + 4,
} as const;

/** A 65-byte recoverable signature; CodecError('Invalid') for any other length. */
export function writeSignature(w: Writer, sig: Uint8Array): void {
  if (!(sig instanceof Uint8Array) || sig.length !== SIGNATURE_LENGTH) {
    throw new CodecError('Invalid', `a signature must be ${SIGNATURE_LENGTH} bytes (got ${sig?.length ?? typeof sig})`);
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

/** The u32 type ID of an interface value, which must be `expected` (`what` names the value). */
export function expectTypeId(r: Reader, expected: number, what: string): void {
  const at = r.offset;
  const typeId = r.u32();
  if (typeId !== expected) {
    throw new CodecError('Invalid', `${what} has type ID ${typeId}; expected ${expected}`, { offset: at });
  }
}

/** OutputOwners{Threshold u32, Addrs [][20]}. */
export function writeOutputOwners(w: Writer, o: { threshold: number; addresses: TransferableOutput['addresses'] }): void {
  w.u32(o.threshold).array(o.addresses, (w2, a) => w2.shortId(a));
}

export function readOutputOwners(r: Reader): Pick<TransferableOutput, 'threshold' | 'addresses'> {
  const threshold = r.u32();
  const addresses = r.array((r2) => r2.shortId(), { minItemSize: 20 });
  return { threshold, addresses };
}

/** TransferOutput{Amt u64, Locktime u64, OutputOwners}, without its type ID. */
export function writeTransferOutput(w: Writer, o: Omit<TransferableOutput, 'assetId'>): void {
  w.u64(o.amount).u64(o.locktime);
  writeOutputOwners(w, o);
}

export function readTransferOutput(r: Reader): Omit<TransferableOutput, 'assetId'> {
  const amount = r.u64();
  const locktime = r.u64();
  return { amount, locktime, ...readOutputOwners(r) };
}

/** TransferableOutput: AssetID, then the output as an interface (type ID 7). */
export function writeTransferableOutput(w: Writer, o: TransferableOutput): void {
  w.id(o.assetId).u32(SECP_TYPE_ID.transferOutput);
  writeTransferOutput(w, o);
}

export function readTransferableOutput(r: Reader): TransferableOutput {
  const assetId = r.id();
  expectTypeId(r, SECP_TYPE_ID.transferOutput, 'an output');
  return { assetId, ...readTransferOutput(r) };
}

/** TransferableInput: TxID, OutputIndex u32, AssetID, then TransferInput{Amt, SigIndices} (type ID 5). */
export function writeTransferableInput(w: Writer, i: TransferableInput): void {
  w.id(i.txId).u32(i.outputIndex).id(i.assetId).u32(SECP_TYPE_ID.transferInput).u64(i.amount);
  w.array(i.sigIndices, (w2, n) => w2.u32(n));
}

export function readTransferableInput(r: Reader): TransferableInput {
  const txId = r.id();
  const outputIndex = r.u32();
  const assetId = r.id();
  expectTypeId(r, SECP_TYPE_ID.transferInput, 'an input');
  const amount = r.u64();
  const sigIndices = r.array((r2) => r2.u32(), { minItemSize: 4 });
  return { txId, outputIndex, assetId, amount, sigIndices };
}

/** A Credential as an interface value: type ID 9, then Sigs [][65]byte. */
export function writeCredential(w: Writer, c: Credential): void {
  w.u32(SECP_TYPE_ID.credential);
  writeSignatures(w, c.sigs);
}

export function readCredential(r: Reader): Credential {
  expectTypeId(r, SECP_TYPE_ID.credential, 'a credential');
  return { sigs: readSignatures(r) };
}

/** A UTXO of a secp256k1fx TransferOutput, as shared memory holds it. */
export interface Utxo {
  txId: Id;
  outputIndex: number;
  out: TransferableOutput;
}

/** UTXO (reference §4.2): TxID, OutputIndex u32, AssetID, then the output as an interface. No leading type ID. */
export function writeUtxo(w: Writer, u: Utxo): void {
  w.id(u.txId).u32(u.outputIndex);
  writeTransferableOutput(w, u.out);
}

export function readUtxo(r: Reader): Utxo {
  const txId = r.id();
  const outputIndex = r.u32();
  return { txId, outputIndex, out: readTransferableOutput(r) };
}

/** UTXO ID (the reference's InputID) = SHA-256(u64 BE outputIndex ‖ txID) (reference §4.3). */
export function utxoId(txId: Id, outputIndex: number): Id {
  return txId.prefix(outputIndex);
}
