/**
 * The asset VM's byte formats, byte for byte as the reference node:
 *
 *   Tx            = u32 typeID (0–4) + unsigned fields, u32 numCreds, each credential u32 9 + Sigs
 *   unsigned bytes = u32 typeID + unsigned fields (keys sign SHA-256 of these)
 *   tx ID         = SHA-256(signed tx bytes); a CreateAssetTx's ID is its asset's ID
 *   UTXO          = TxID, OutputIndex u32, AssetID, u32 typeID (6 or 7) + output; no leading type ID
 *   UTXO ID       = SHA-256(u64 BE OutputIndex ‖ TxID)
 *
 * Decoding is bounded (256 KiB a value; counts checked against the remaining input before anything
 * is allocated) and rejects trailing bytes (`has N leftover bytes after unmarshalling`). Every
 * failure is AvmError('Malformed') with the codec's text, except nftfx/propertyfx values:
 * AvmError('UnsupportedFx'). The syntactic rules are in syntax.ts (`checkSyntax`).
 */
import {
  CodecError,
  EncodingError,
  Id,
  Reader,
  Writer,
  compareBytes,
  sha256,
  type PrivateKey,
  type ShortId,
} from '@cornice/sdk';
import {
  ANY_OUTPUT,
  readBaseTxFields,
  readCreateAssetFields,
  readCreateAssetTx as readCreateAssetTxWith,
  readCredential,
  readMintOperation,
  readTransferableInput as readTransferableInputWith,
  readTransferableOutput as readTransferableOutputWith,
  readUtxo as readUtxoWith,
  readUtxoRef,
  utxoIdOf,
  writeBaseTxFields,
  writeCreateAssetFields,
  writeCredential,
  writeMintOperation,
  writeOutput,
  writeTransferableInput,
  writeTransferableOutput,
  writeUtxo,
  writeUtxoRef,
} from '@cornice/sdk/components';
import { AvmError } from './errors.js';
import { MIN_SIZE, readTypeId } from './fx.js';
import {
  TYPE_ID,
  type CreateAssetTx,
  type Operation,
  type Output,
  type TransferableInput,
  type TransferableOutput,
  type Tx,
  type UnsignedTx,
  type Utxo,
  type UtxoRef,
} from './model.js';

export { TYPE_NAMES } from './fx.js';

/** Runs an encode or decode step, turning the sdk's codec errors into AvmError('Malformed') with the same text. */
export function malformed<T>(step: () => T): T {
  try {
    return step();
  } catch (e) {
    if (e instanceof CodecError || e instanceof EncodingError) throw new AvmError('Malformed', e.message, e.data);
    throw e;
  }
}

/** Reads a whole value with `read` (256 KiB at most, no trailing bytes); AvmError('Malformed') otherwise. */
export function decodeWith<T>(bytes: Uint8Array, read: (r: Reader) => T): T {
  if (!(bytes instanceof Uint8Array)) throw new AvmError('Malformed', `expected bytes but got ${bytes === null ? 'null' : typeof bytes}`);
  return malformed(() => {
    const r = new Reader(bytes);
    const v = read(r);
    r.end();
    return v;
  });
}

/** Writes a whole value (256 KiB at most) with `write`; AvmError('Malformed') when a value cannot be encoded. */
export function encodeWith(write: (w: Writer) => void): Uint8Array {
  return malformed(() => {
    const w = new Writer();
    write(w);
    return w.finish();
  });
}

// ---- transferables (the shared components, read with the AVM's type-ID registry) ---------------

export { writeTransferableInput, writeTransferableOutput, writeUtxo };

export function readTransferableOutput(r: Reader): TransferableOutput {
  return readTransferableOutputWith(r, readTypeId);
}

export function readTransferableInput(r: Reader): TransferableInput {
  return readTransferableInputWith(r, readTypeId);
}

/** Operation{AssetID, UTXOIDs []{TxID, OutputIndex}, Op interface} (a struct: no type ID of its own). */
export function writeOperation(w: Writer, op: Operation): void {
  w.id(op.assetId).array(op.utxos, writeUtxoRef);
  writeMintOperation(w, op.op);
}

function readOperation(r: Reader): Operation {
  const assetId = r.id();
  const utxos = r.array(readUtxoRef, { minItemSize: MIN_SIZE.utxoRef });
  return { assetId, utxos, op: readMintOperation(r, readTypeId) };
}

// ---- transactions -----------------------------------------------------------------------------

const TX_TYPE_IDS = [TYPE_ID.baseTx, TYPE_ID.createAssetTx, TYPE_ID.operationTx, TYPE_ID.importTx, TYPE_ID.exportTx] as const;

const TYPE_ID_OF_KIND: Readonly<Record<UnsignedTx['kind'], number>> = {
  base: TYPE_ID.baseTx,
  createAsset: TYPE_ID.createAssetTx,
  operation: TYPE_ID.operationTx,
  import: TYPE_ID.importTx,
  export: TYPE_ID.exportTx,
};

/** The codec type ID of a tx kind (0–4). */
export function txTypeId(tx: UnsignedTx): number {
  const typeId = (TYPE_ID_OF_KIND as Record<string, number | undefined>)[tx?.kind];
  if (typeId === undefined) throw new AvmError('Malformed', `unknown tx kind ${String((tx as { kind?: unknown } | undefined)?.kind)}`);
  return typeId;
}

/** The unsigned fields of a tx, without its type ID (a genesis holds a CreateAssetTx this way). */
export function writeUnsignedFields(w: Writer, tx: UnsignedTx): void {
  writeBaseTxFields(w, tx);
  switch (tx.kind) {
    case 'base':
      return;
    case 'createAsset':
      writeCreateAssetFields(w, tx);
      return;
    case 'operation':
      w.array(tx.ops, writeOperation);
      return;
    case 'import':
      w.array(tx.importedIns, writeTransferableInput);
      return;
    case 'export':
      w.array(tx.exportedOuts, writeTransferableOutput);
      return;
  }
}

/** A CreateAssetTx's fields without a type ID (as a genesis holds it). */
export function readCreateAssetTx(r: Reader): CreateAssetTx {
  return readCreateAssetTxWith(r, readTypeId);
}

export { MIN_CREATE_ASSET_SIZE } from '@cornice/sdk/components';

/** Reads the unsigned fields of a tx of `typeId` (after the type ID). */
function readUnsignedFields(r: Reader, typeId: number): UnsignedTx {
  const base = readBaseTxFields(r, readTypeId);
  switch (typeId) {
    case TYPE_ID.baseTx:
      return { kind: 'base', ...base };
    case TYPE_ID.createAssetTx:
      return readCreateAssetFields(r, readTypeId, base);
    case TYPE_ID.operationTx:
      return { kind: 'operation', ...base, ops: r.array(readOperation, { minItemSize: MIN_SIZE.operation }) };
    case TYPE_ID.importTx:
      return { kind: 'import', ...base, importedIns: r.array(readTransferableInput, { minItemSize: MIN_SIZE.transferableInput }) };
    default:
      return { kind: 'export', ...base, exportedOuts: r.array(readTransferableOutput, { minItemSize: MIN_SIZE.transferableOutput }) };
  }
}

/** An unsigned tx as an interface value: u32 type ID + fields. */
export function writeUnsignedTx(w: Writer, tx: UnsignedTx): void {
  w.u32(txTypeId(tx));
  writeUnsignedFields(w, tx);
}

export function readUnsignedTx(r: Reader): UnsignedTx {
  return readUnsignedFields(r, readTypeId(r, TX_TYPE_IDS, 'tx'));
}

/** A signed tx: the unsigned tx as an interface value, then the credentials. */
export function writeTx(w: Writer, tx: Tx): void {
  writeUnsignedTx(w, tx.unsigned);
  w.array(tx.creds, writeCredential);
}

export function readTx(r: Reader): Tx {
  return { unsigned: readUnsignedTx(r), creds: readCredentials(r) };
}

/** A signed tx's credentials, after its unsigned tx. */
function readCredentials(r: Reader): Tx['creds'] {
  return r.array((r2) => readCredential(r2, readTypeId), { minItemSize: MIN_SIZE.credential });
}

/** Fewest bytes a signed tx takes (a BaseTx with nothing in it): for counts of txs inside other values. */
export const MIN_TX_SIZE = 4 + 4 + 32 + 4 + 4 + 4;

/** The wire form of a signed tx. AvmError('Malformed') when a value cannot be encoded (a 64-byte signature, a u64 overflow...). */
export function encodeTx(tx: Tx): Uint8Array {
  return encodeWith((w) => writeTx(w, tx));
}

/** The unsigned part of the bytes each decoded tx came from (see decodedUnsignedBytes). */
const unsignedOfDecoded = new WeakMap<Tx, Uint8Array>();

/** A signed tx from its wire form; AvmError('Malformed', <codec text>) or AvmError('UnsupportedFx') otherwise. */
export function decodeTx(bytes: Uint8Array): Tx {
  let unsignedEnd = 0;
  const tx = decodeWith(bytes, (r) => {
    const unsigned = readUnsignedTx(r);
    unsignedEnd = r.offset;
    return { unsigned, creds: readCredentials(r) };
  });
  unsignedOfDecoded.set(tx, bytes.subarray(0, unsignedEnd));
  return tx;
}

/**
 * The unsigned bytes of a tx object decodeTx made, as it read them (a view of its input: no copy,
 * no re-encoding); undefined for a tx built in code. Meant for hashing what was received: a tx
 * changed after decoding no longer matches them (unsignedBytes encodes the object as it is).
 */
export function decodedUnsignedBytes(tx: Tx): Uint8Array | undefined {
  return unsignedOfDecoded.get(tx);
}

/** What keys sign (through SHA-256): u32 type ID + unsigned fields. */
export function unsignedBytes(tx: UnsignedTx): Uint8Array {
  return encodeWith((w) => writeUnsignedTx(w, tx));
}

/** Tx ID = SHA-256 of the full signed tx bytes. */
export function txIdOf(bytes: Uint8Array): Id {
  return Id.fromBytes(sha256(bytes));
}

/** How many credentials a tx carries: one per BaseTx input, then one per operation or imported input. */
export function numCredentials(tx: UnsignedTx): number {
  switch (tx.kind) {
    case 'operation':
      return tx.ins.length + tx.ops.length;
    case 'import':
      return tx.ins.length + tx.importedIns.length;
    default:
      return tx.ins.length;
  }
}

/**
 * Signs a tx: one credential per input in credential order (see numCredentials), credential i
 * holding the signatures of `signers[i]` (in the input's SigIndices order) over SHA-256(unsigned bytes).
 */
export function signTx(unsigned: UnsignedTx, signers: readonly (readonly PrivateKey[])[]): Tx {
  const hash = sha256(unsignedBytes(unsigned));
  return { unsigned, creds: signers.map((keys) => ({ sigs: keys.map((k) => k.signHash(hash)) })) };
}

// ---- UTXOs ------------------------------------------------------------------------------------

/** UTXO: TxID, OutputIndex u32, AssetID, then the output as an interface value. */
export function readUtxo(r: Reader): Utxo {
  return readUtxoWith(r, readTypeId, ANY_OUTPUT);
}

/** The bytes of a UTXO (what getUTXOs returns, and what shared memory holds). */
export function encodeUtxo(u: Utxo): Uint8Array {
  return encodeWith((w) => writeUtxo(w, u));
}

/** A UTXO from its bytes; AvmError('Malformed') otherwise. */
export function decodeUtxo(bytes: Uint8Array): Utxo {
  return decodeWith(bytes, readUtxo);
}

/** UTXO IDs by the ref object they were made from, with the fields they were made of. */
const utxoIds = new WeakMap<UtxoRef, { readonly txId: Id; readonly outputIndex: number; readonly id: Id }>();

/**
 * UTXO ID (the reference's InputID) = SHA-256(u64 BE outputIndex ‖ txID), once per ref object: a tx's
 * input is keyed by the syntax check, the rules and the state write, at admission and again in its
 * block, a cost on every transfer of bench/network.mjs's 5-node figure. A ref whose fields changed is
 * hashed again. Test: codec.test.ts 'a UTXO ID is hashed once per ref object, …'.
 */
export function utxoId(ref: UtxoRef): Id {
  const known = utxoIds.get(ref);
  if (known && known.txId === ref.txId && known.outputIndex === ref.outputIndex) return known.id;
  const id = utxoIdOf(ref.txId, ref.outputIndex);
  utxoIds.set(ref, { txId: ref.txId, outputIndex: ref.outputIndex, id });
  return id;
}

/**
 * The UTXOs a tx of ID `txId` produces on this chain, numbered as the reference node does: BaseTx outs
 * 0..n-1, then a CreateAssetTx's initial-state outputs in order (of the new asset, ID = txId), or
 * each operation's outputs ([MintOutput, TransferOutput] for a mint). An ExportTx's exported outs are
 * not local UTXOs (see exportedUtxos).
 */
export function producedUtxos(txId: Id, tx: UnsignedTx): Utxo[] {
  const utxos: Utxo[] = tx.outs.map((o, i) => ({ txId, outputIndex: i, assetId: o.assetId, out: o.out }));
  const add = (assetId: Id, out: Output) => utxos.push({ txId, outputIndex: utxos.length, assetId, out });
  if (tx.kind === 'createAsset') {
    for (const s of tx.states) for (const out of s.outs) add(txId, out);
  } else if (tx.kind === 'operation') {
    for (const op of tx.ops) {
      add(op.assetId, op.op.mintOutput);
      add(op.assetId, op.op.transferOutput);
    }
  }
  return utxos;
}

/** The UTXOs an ExportTx puts into shared memory: exported out i is numbered len(outs)+i, as on the reference node. */
export function exportedUtxos(txId: Id, tx: Extract<UnsignedTx, { kind: 'export' }>): Utxo[] {
  return tx.exportedOuts.map((o, i) => ({ txId, outputIndex: tx.outs.length + i, assetId: o.assetId, out: o.out }));
}

// ---- the orders the syntactic rules require ----------------------------------------------------

/** An output as an interface value (u32 type ID + fields): what outputs are sorted by (`codec.Marshal(&out)`). */
export function encodeOutput(out: Output): Uint8Array {
  return encodeWith((w) => writeOutput(w, out));
}

/** An operation's bytes (AssetID, UTXO refs, type ID + op): what operations are sorted by. */
export function encodeOperation(op: Operation): Uint8Array {
  return encodeWith((w) => writeOperation(w, op));
}

/** Outputs of a tx: by asset ID, then by the bytes of the output. */
export function compareTransferableOutputs(a: TransferableOutput, b: TransferableOutput): number {
  return a.assetId.compare(b.assetId) || compareBytes(encodeOutput(a.out), encodeOutput(b.out));
}

/** Initial-state outputs: by their bytes. */
export function compareOutputs(a: Output, b: Output): number {
  return compareBytes(encodeOutput(a), encodeOutput(b));
}

/** Inputs and UTXO references: by TxID, then OutputIndex. */
export function compareUtxoRefs(a: UtxoRef, b: UtxoRef): number {
  return a.txId.compare(b.txId) || a.outputIndex - b.outputIndex;
}

export function compareOperations(a: Operation, b: Operation): number {
  return compareBytes(encodeOperation(a), encodeOperation(b));
}

export function compareAddresses(a: ShortId, b: ShortId): number {
  return a.compare(b);
}

/** True when each item is ≤ the next (< when `unique`) under `compare`. */
export function isSorted<T>(items: readonly T[], compare: (a: T, b: T) => number, unique = false): boolean {
  for (let i = 1; i < items.length; i++) {
    const c = compare(items[i - 1]!, items[i]!);
    if (c > 0 || (unique && c === 0)) return false;
  }
  return true;
}

/** A sorted copy, each item's sort key computed once. */
function sortByBytes<T>(items: readonly T[], key: (item: T) => Uint8Array): T[] {
  return items
    .map((item) => ({ item, key: key(item) }))
    .sort((a, b) => compareBytes(a.key, b.key))
    .map((x) => x.item);
}

/** Outputs of a tx in the required order (a copy). */
export function sortTransferableOutputs(outs: readonly TransferableOutput[]): TransferableOutput[] {
  return sortByBytes(outs, (o) => encodeWith((w) => writeTransferableOutput(w, o)));
}

/** Initial-state outputs in the required order (a copy). */
export function sortOutputs(outs: readonly Output[]): Output[] {
  return sortByBytes(outs, encodeOutput);
}

/** Inputs in the required order (a copy; uniqueness is the caller's). */
export function sortTransferableInputs(ins: readonly TransferableInput[]): TransferableInput[] {
  return [...ins].sort(compareUtxoRefs);
}

export function sortUtxoRefs(refs: readonly UtxoRef[]): UtxoRef[] {
  return [...refs].sort(compareUtxoRefs);
}

export function sortOperations(ops: readonly Operation[]): Operation[] {
  return sortByBytes(ops, encodeOperation);
}

/** Addresses sorted, duplicates removed: what an owners list must be. */
export function sortAddresses(addresses: readonly ShortId[]): ShortId[] {
  const sorted = [...addresses].sort(compareAddresses);
  return sorted.filter((a, i) => i === 0 || !a.equals(sorted[i - 1]!));
}
