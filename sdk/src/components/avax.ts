/**
 * The asset-family values around secp256k1fx (avalanchego's `vms/components/avax`): an asset's
 * output and input in a tx, a UTXO and its ID, the fields every tx of the family starts with.
 * Byte for byte as the reference node:
 *
 *   TransferableOutput = AssetID [32] ‖ output as an interface value
 *   TransferableInput  = TxID [32] ‖ OutputIndex u32 ‖ AssetID [32] ‖ TransferInput as an interface value
 *   UTXO               = TxID ‖ OutputIndex u32 ‖ AssetID ‖ output as an interface value (no leading type ID)
 *   UTXO ID            = SHA-256(u64 BE OutputIndex ‖ TxID)
 *   BaseTx fields      = NetID u32 ‖ BCID [32] ‖ Outs []TransferableOutput ‖ Ins []TransferableInput
 */
import { CodecError } from '../errors/errors.js';
import type { Id } from '../ids/id.js';
import type { Reader } from '../codec/reader.js';
import type { Writer } from '../codec/writer.js';
import {
  ANY_OUTPUT,
  SECP256K1FX_MIN_SIZE,
  TRANSFER_ONLY,
  readOutput,
  readTransferInput,
  writeOutput,
  writeTransferInput,
  type Output,
  type TransferInput,
  type TransferOutput,
  type TypeIdReader,
} from './secp256k1fx.js';

/** Where an output is: the tx that made it and its index there. */
export interface UtxoRef {
  txId: Id;
  outputIndex: number;
}

/** An output of a tx: an asset and its output. In a tx it is always a TransferOutput. */
export interface TransferableOutput<O extends Output = Output> {
  assetId: Id;
  out: O;
}

/** A tx input: the UTXO it spends, the asset, and the input. */
export interface TransferableInput extends UtxoRef {
  assetId: Id;
  input: TransferInput;
}

/** An unspent output: where it came from, its asset, the output. */
export interface Utxo<O extends Output = Output> extends UtxoRef {
  assetId: Id;
  out: O;
}

/** The fields every tx of the family starts with (avax.BaseTx, without a memo). */
export interface BaseTxFields {
  networkId: number;
  /** The chain's ID (BCID). */
  chainId: Id;
  outs: TransferableOutput[];
  ins: TransferableInput[];
}

/** Smallest encodings, to refuse a declared count the rest of the input cannot hold. */
export const AVAX_MIN_SIZE = {
  /** AssetID, type ID, TransferOutput. */
  transferableOutput: 32 + 4 + SECP256K1FX_MIN_SIZE.transferOutput,
  /** TxID, OutputIndex, AssetID, type ID, Amt, SigIndices count. */
  transferableInput: 32 + 4 + 32 + 4 + 8 + 4,
  /** TxID, OutputIndex. */
  utxoRef: 32 + 4,
  /** NetID, BCID, two counts. */
  baseTxFields: 4 + 32 + 4 + 4,
} as const;

/** UTXO ID (the reference's InputID) = SHA-256(u64 BE outputIndex ‖ txID). */
export function utxoIdOf(txId: Id, outputIndex: number): Id {
  return txId.prefix(outputIndex);
}

export function writeUtxoRef(w: Writer, u: UtxoRef): void {
  w.id(u.txId).u32(u.outputIndex);
}

export function readUtxoRef(r: Reader): UtxoRef {
  const txId = r.id();
  return { txId, outputIndex: r.u32() };
}

/** TransferableOutput: AssetID, then the output as an interface value (a TransferOutput: CodecError otherwise). */
export function writeTransferableOutput(w: Writer, o: TransferableOutput): void {
  if (o?.out?.kind !== 'transfer') throw new CodecError('Invalid', 'a tx output must be a secp256k1fx.TransferOutput');
  w.id(o.assetId);
  writeOutput(w, o.out);
}

export function readTransferableOutput(r: Reader, typeIds: TypeIdReader): TransferableOutput<TransferOutput> {
  const assetId = r.id();
  return { assetId, out: readOutput(r, typeIds, TRANSFER_ONLY, 'txOutput') as TransferOutput };
}

/** TransferableInput: TxID, OutputIndex u32, AssetID, then the TransferInput as an interface value. */
export function writeTransferableInput(w: Writer, i: TransferableInput): void {
  w.id(i.txId).u32(i.outputIndex).id(i.assetId);
  writeTransferInput(w, i.input);
}

export function readTransferableInput(r: Reader, typeIds: TypeIdReader): TransferableInput {
  const txId = r.id();
  const outputIndex = r.u32();
  const assetId = r.id();
  return { txId, outputIndex, assetId, input: readTransferInput(r, typeIds) };
}

/** UTXO: TxID, OutputIndex u32, AssetID, then the output as an interface value. */
export function writeUtxo(w: Writer, u: Utxo): void {
  writeUtxoRef(w, u);
  w.id(u.assetId);
  writeOutput(w, u.out);
}

/** A UTXO; its output one of `allowed` (a TransferOutput or a MintOutput unless the caller narrows it). */
export function readUtxo(r: Reader, typeIds: TypeIdReader, allowed: readonly number[] = ANY_OUTPUT): Utxo {
  const { txId, outputIndex } = readUtxoRef(r);
  const assetId = r.id();
  return { txId, outputIndex, assetId, out: readOutput(r, typeIds, allowed, 'utxoOutput') };
}

/** BaseTx{NetID u32, BCID [32], Outs, Ins}. */
export function writeBaseTxFields(w: Writer, t: BaseTxFields): void {
  w.u32(t.networkId).id(t.chainId).array(t.outs, writeTransferableOutput).array(t.ins, writeTransferableInput);
}

export function readBaseTxFields(r: Reader, typeIds: TypeIdReader): BaseTxFields {
  const networkId = r.u32();
  const chainId = r.id();
  const outs = r.array((r2) => readTransferableOutput(r2, typeIds), { minItemSize: AVAX_MIN_SIZE.transferableOutput });
  const ins = r.array((r2) => readTransferableInput(r2, typeIds), { minItemSize: AVAX_MIN_SIZE.transferableInput });
  return { networkId, chainId, outs, ins };
}
