/**
 * The asset VM's semantic rules, the reference node's: what a tx requires of the UTXOs it spends. A tx is
 * checked once, in full (syntax, the spent UTXOs, amounts, owners, signatures), into a TxEffect; the
 * effect is then applied to any state with cheap checks only (each spent UTXO still there, each import
 * still unconsumed, the locktime reached). That is sound because a UTXO's content is fixed by its ID
 * (SHA-256 of its tx ID, which hashes the tx, and index), so what the full check read holds in every
 * state that has the UTXO.
 */
import { recoverSigner, sha256, type Id, type ShortId } from '@cornice/sdk';
import { decodedUnsignedBytes, exportedUtxos, producedUtxos, unsignedBytes, utxoId } from './codec.js';
import { AvmError } from './errors.js';
import type { Credential, OutputOwners, Tx, TransferableInput, Utxo, UtxoRef } from './model.js';
import type { KeyedUtxo, StateDiff, TxEffect } from './state.js';
import { checkSyntax } from './syntax.js';

export type { TxEffect } from './state.js';

export interface RuleContext {
  networkId: number;
  chainId: Id;
  /** The only asset imports and exports may carry (the native asset), when this chain has one. */
  nativeAsset: { id: Id; symbol: string } | undefined;
}

/** Where a full check finds what a tx spends. */
export interface UtxoSource {
  /** A local UTXO the tx may spend. */
  utxo(id: Id): Promise<Utxo | undefined>;
  /** A UTXO the platform chain exported to this chain that the tx may import. */
  imported(id: Id): Promise<Utxo | undefined>;
  /** True when a UTXO `utxo` does not offer was spent by a tx in flight (for a clearer error). */
  spentInFlight?(id: Id): boolean;
}

const doubleSpend = (ref: UtxoRef, id: Id): never =>
  invalid(`double spend: utxo ${refText(ref)} is already spent by a tx in this block or a processing ancestor`, { utxoID: id.toString() });

const invalid = (message: string, data?: unknown): never => {
  throw new AvmError('InvalidTx', message, data);
};

const refText = (ref: UtxoRef) => `${ref.txId}:${ref.outputIndex}`;

const signedHashes = new WeakMap<object, Uint8Array>();

/**
 * SHA-256 of the unsigned bytes (what every signature signs), once per tx object; for a decoded tx,
 * of the bytes it was decoded from (the same bytes: the codec is canonical, checked by the vectors).
 */
export function signedHash(tx: Tx): Uint8Array {
  let h = signedHashes.get(tx);
  if (!h) signedHashes.set(tx, (h = sha256(decodedUnsignedBytes(tx) ?? unsignedBytes(tx.unsigned))));
  return h;
}

function signerOf(hash: Uint8Array, sig: Uint8Array): ShortId {
  try {
    return recoverSigner(hash, sig);
  } catch (e) {
    return invalid((e as Error).message);
  }
}

/** secp256k1fx VerifyCredentials: `threshold` signatures, signature i from owner sigIndices[i]. */
function checkCredential(hash: Uint8Array, sigIndices: readonly number[], cred: Credential, owners: OutputOwners, what: string): void {
  const n = sigIndices.length;
  if (owners.threshold < n) invalid('input has more signers than expected', { input: what });
  if (owners.threshold > n) invalid('input has less signers than expected', { input: what });
  if (cred.sigs.length !== n) invalid('input expected a different number of signers than provided in the credential', { input: what });
  for (let i = 0; i < n; i++) {
    const owner = owners.addresses[sigIndices[i]!];
    if (!owner) return invalid('input referenced a nonexistent address in the output', { input: what, sigIndex: sigIndices[i] });
    if (!signerOf(hash, cred.sigs[i]!).equals(owner)) invalid('credential does not produce expected signer', { input: what, signature: i });
  }
}

/** The checks of a TransferInput against the TransferOutput it spends; its locktime. */
function checkTransfer(hash: Uint8Array, input: TransferableInput, utxo: Utxo, cred: Credential, time: bigint, what: string): bigint {
  if (!utxo.assetId.equals(input.assetId)) invalid("asset IDs in the input don't match the utxo", { input: what });
  const out = utxo.out;
  if (out.kind !== 'transfer') return invalid('wrong utxo type: an input can only spend a transfer output', { input: what });
  if (out.amount !== input.input.amount) invalid('input is consuming a different amount than expected', { input: what });
  if (out.locktime > time) invalid('output is time locked', { input: what, locktime: out.locktime.toString() });
  checkCredential(hash, input.input.sigIndices, cred, out, what);
  return out.locktime;
}

function sameOwners(a: OutputOwners, b: OutputOwners): boolean {
  return a.threshold === b.threshold && a.addresses.length === b.addresses.length && a.addresses.every((x, i) => x.equals(b.addresses[i]!));
}

const keyed = (utxo: Utxo): KeyedUtxo => ({ id: utxoId(utxo), utxo });

/**
 * Checks a signed tx in full against the UTXOs `source` offers at chain time `time` (unix seconds);
 * what it does, or AvmError('InvalidTx') naming the first broken rule.
 */
export async function checkTx(tx: Tx, bytes: Uint8Array, id: Id, source: UtxoSource, time: bigint, c: RuleContext): Promise<TxEffect> {
  checkSyntax(tx, { networkId: c.networkId, chainId: c.chainId });
  const u = tx.unsigned;
  const hash = signedHash(tx);
  const spends: KeyedUtxo[] = [];
  const seen = new Set<string>();
  let locktime = 0n;
  const spend = async (ref: UtxoRef): Promise<Utxo> => {
    const uid = utxoId(ref);
    if (seen.has(uid.key)) invalid('inputs attempt to double spend an input', { utxo: refText(ref) });
    seen.add(uid.key);
    const utxo = await source.utxo(uid);
    if (!utxo && source.spentInFlight?.(uid)) return doubleSpend(ref, uid);
    if (!utxo) return invalid(`missing utxo ${refText(ref)}`, { utxoID: uid.toString() });
    spends.push({ id: uid, utxo });
    return utxo;
  };

  for (let i = 0; i < u.ins.length; i++) {
    const input = u.ins[i]!;
    const utxo = await spend(input);
    const lt = checkTransfer(hash, input, utxo, tx.creds[i]!, time, `input ${i}`);
    if (lt > locktime) locktime = lt;
  }

  const imports: Id[] = [];
  if (u.kind === 'operation') {
    for (let j = 0; j < u.ops.length; j++) {
      const op = u.ops[j]!;
      const what = `operation ${j}`;
      if (op.utxos.length !== 1) invalid('wrong number of utxos for the operation', { operation: j });
      const utxo = await spend(op.utxos[0]!);
      if (!utxo.assetId.equals(op.assetId)) invalid("asset IDs in the input don't match the utxo", { operation: j });
      if (utxo.out.kind !== 'mint') return invalid('wrong utxo type: a mint operation can only spend a mint output', { operation: j });
      if (!sameOwners(utxo.out, op.op.mintOutput)) invalid('wrong mint output created from the operation', { operation: j });
      checkCredential(hash, op.op.sigIndices, tx.creds[u.ins.length + j]!, utxo.out, what);
    }
  } else if (u.kind === 'import') {
    for (let k = 0; k < u.importedIns.length; k++) {
      const input = u.importedIns[k]!;
      const what = `imported input ${k}`;
      const uid = utxoId(input);
      if (seen.has(uid.key)) invalid('inputs attempt to double spend an input', { utxo: refText(input) });
      seen.add(uid.key);
      const utxo = await source.imported(uid);
      if (!utxo) return invalid(`missing utxo ${refText(input)}: not in shared memory with the platform chain`, { utxoID: uid.toString() });
      checkNative(input.assetId, c);
      const lt = checkTransfer(hash, input, utxo, tx.creds[u.ins.length + k]!, time, what);
      if (lt > locktime) locktime = lt;
      imports.push(uid);
    }
  }

  const exports = u.kind === 'export' ? exportedUtxos(id, u).map(keyed) : [];
  for (const e of exports) checkNative(e.utxo.assetId, c);
  return {
    id,
    bytes,
    tx,
    spends,
    imports,
    produced: producedUtxos(id, u).map(keyed),
    exports,
    asset: u.kind === 'createAsset' ? { assetId: id, name: u.name, symbol: u.symbol, denomination: u.denomination } : undefined,
    locktime,
  };
}

function checkNative(assetId: Id, c: RuleContext): void {
  const native = c.nativeAsset;
  if (!native) return invalid('this chain has no native asset to exchange with the platform chain');
  if (!assetId.equals(native.id)) invalid(`asset ID must be ${native.symbol} in the atomic tx`, { assetId: assetId.toString() });
}

/**
 * Applies a checked tx to `diff` at block time `time`: each spent UTXO must still be unspent there,
 * each import unconsumed, the locktime reached, and the tx not already in. AvmError('InvalidTx') otherwise.
 */
export async function applyEffect(e: TxEffect, diff: StateDiff, time: bigint): Promise<void> {
  if (e.locktime > time) invalid('output is time locked', { locktime: e.locktime.toString() });
  for (const s of e.spends) {
    if (!(await diff.utxo(s.id))) {
      if (diff.spentInFlight(s.id)) doubleSpend(s.utxo, s.id);
      invalid(`missing utxo ${refText(s.utxo)}`, { utxoID: s.id.toString() });
    }
  }
  for (const id of e.imports) {
    if (!(await diff.importAvailable(id))) invalid(`missing utxo ${id}: already imported, or not in shared memory with the platform chain`, { utxoID: id.toString() });
  }
  // A tx with nothing to spend could be replayed; one that spends something cannot (its inputs are gone).
  if (e.spends.length === 0 && e.imports.length === 0 && (await diff.hasTx(e.id))) invalid(`tx ${e.id} is already accepted or processing`);
  diff.record(e);
}

