/**
 * The syntactic rules of the asset VM's txs, the reference node's: everything that can be checked from the
 * tx alone, in the reference's order and with its texts. What needs state (the spent UTXOs, their
 * owners' thresholds, signatures, timelocks, asset/fx compatibility) is the VM's.
 *
 * One rule goes beyond the reference's syntactic check, because it needs only the tx: every input's
 * (and mint operation's) signature count equals its number of SigIndices (the reference checks it when
 * verifying the credential, with the same text).
 */
import { Id, utf8Encode } from '@cornice/sdk';
import { AvmError } from './errors.js';
import {
  MAX_DENOMINATION,
  MAX_NAME_LENGTH,
  MAX_SYMBOL_LENGTH,
  type BaseTxFields,
  type CreateAssetTx,
  type Output,
  type OperationTx,
  type OutputOwners,
  type TransferableInput,
  type TransferableOutput,
  type Tx,
} from './model.js';
import {
  compareAddresses,
  compareOperations,
  compareOutputs,
  compareTransferableOutputs,
  compareUtxoRefs,
  isSorted,
  numCredentials,
  utxoId,
} from './codec.js';

/** The chain a tx must be for. */
export interface SyntaxContext {
  networkId: number;
  chainId: Id;
}

/** The reference X-Chain's Fxs: [secp256k1fx, nftfx, propertyfx]; only the first is supported here. */
const FX_NAMES = ['secp256k1fx', 'nftfx', 'propertyfx'] as const;

const U64_MAX = (1n << 64n) - 1n;

function invalid(message: string, data?: unknown): never {
  throw new AvmError('InvalidTx', message, data);
}

/** OutputOwners.Verify: spendable, optimized, addresses sorted and unique. */
function checkOwners(o: OutputOwners): void {
  if (o.threshold > o.addresses.length) invalid('output is unspendable');
  if (o.threshold === 0 && o.addresses.length > 0) invalid('output representation should be optimized');
  if (!isSorted(o.addresses, compareAddresses, true)) invalid('addresses not sorted and unique');
}

function checkOutput(out: Output): void {
  if (out.kind === 'transfer' && out.amount === 0n) invalid('output has no value');
  checkOwners(out);
}

function checkSigIndices(sigIndices: readonly number[]): void {
  if (!isSorted(sigIndices, (a, b) => a - b, true)) invalid('signatures not sorted and unique');
}

function checkAssetId(assetId: Id): void {
  if (assetId.equals(Id.empty)) invalid('empty asset ID is not valid');
}

/** Per-asset sums of what a tx consumes and produces (u64 each, as the reference). */
class FlowChecker {
  readonly #consumed = new Map<string, bigint>();
  readonly #produced = new Map<string, bigint>();

  consume(assetId: Id, amount: bigint): void {
    this.#add(this.#consumed, assetId, amount, 'inputs overflowed uint64');
  }

  produce(assetId: Id, amount: bigint): void {
    this.#add(this.#produced, assetId, amount, 'outputs overflowed uint64');
  }

  #add(sums: Map<string, bigint>, assetId: Id, amount: bigint, overflow: string): void {
    const sum = (sums.get(assetId.key) ?? 0n) + amount;
    if (sum > U64_MAX) invalid(overflow, { assetId: assetId.toString() });
    sums.set(assetId.key, sum);
  }

  /** Produced ≤ consumed for every asset (no fee in the AVM: the rest is burned). */
  verify(): void {
    for (const [key, produced] of this.#produced) {
      if (produced > (this.#consumed.get(key) ?? 0n)) invalid('insufficient funds', { assetId: Id.fromKey(key).toString() });
    }
  }
}

function checkOutputs(outs: readonly TransferableOutput[], flow: FlowChecker): void {
  for (const o of outs) {
    checkAssetId(o.assetId);
    checkOutput(o.out);
    if (o.out.kind === 'transfer') flow.produce(o.assetId, o.out.amount);
  }
  if (!isSorted(outs, compareTransferableOutputs)) invalid('outputs not sorted');
}

function checkInputs(ins: readonly TransferableInput[], flow: FlowChecker): void {
  for (const i of ins) {
    checkAssetId(i.assetId);
    if (i.input.amount === 0n) invalid('input has no value');
    checkSigIndices(i.input.sigIndices);
    flow.consume(i.assetId, i.input.amount);
  }
  if (!isSorted(ins, compareUtxoRefs, true)) invalid('inputs not sorted and unique');
}

function checkChain(t: BaseTxFields, ctx: SyntaxContext): void {
  if (t.networkId !== ctx.networkId) invalid('tx has wrong network ID', { expected: ctx.networkId, actual: t.networkId });
  if (!t.chainId.equals(ctx.chainId)) invalid('tx has wrong chain ID');
}

/** BaseTx.SyntacticVerify without its flow check (the caller's, after any further ins and outs). */
function checkBase(t: BaseTxFields, ctx: SyntaxContext, flow: FlowChecker): void {
  checkChain(t, ctx);
  checkOutputs(t.outs, flow);
  checkInputs(t.ins, flow);
}

const hasOuterWhitespace = (s: string): boolean => /^\s|\s$/.test(s);
const isPrintableAscii = (s: string): boolean => /^[\x20-\x7e]*$/.test(s);

/**
 * What is wrong with an asset's name or symbol, in the reference's words (at most `max` bytes,
 * printable ASCII, no leading or trailing whitespace); undefined when nothing.
 */
export function assetTextError(value: string, what: 'name' | 'symbol', max: number): string | undefined {
  if (utf8Encode(value).length > max) return `${what} is too long, maximum size is ${max}`;
  if (hasOuterWhitespace(value)) return 'unexpected whitespace provided';
  if (!isPrintableAscii(value)) return 'unprintable ascii character was provided';
  return undefined;
}

/** CreateAssetTx's own checks, in the reference's order. */
function checkCreateAsset(tx: CreateAssetTx): void {
  if (utf8Encode(tx.name).length > MAX_NAME_LENGTH) invalid(`name is too long, maximum size is ${MAX_NAME_LENGTH}`);
  if (utf8Encode(tx.symbol).length > MAX_SYMBOL_LENGTH) invalid(`symbol is too long, maximum size is ${MAX_SYMBOL_LENGTH}`);
  if (tx.states.length === 0) invalid('assets must support at least one Fx');
  if (tx.denomination > MAX_DENOMINATION) invalid('denomination is too large');
  if (hasOuterWhitespace(tx.name) || hasOuterWhitespace(tx.symbol)) invalid('unexpected whitespace provided');
  if (!isPrintableAscii(tx.name) || !isPrintableAscii(tx.symbol)) invalid('unprintable ascii character was provided');
}

function checkInitialStates(tx: CreateAssetTx): void {
  for (const s of tx.states) {
    if (s.fxIndex >= FX_NAMES.length) invalid('unknown feature extension', { fxIndex: s.fxIndex });
    if (s.fxIndex !== 0) {
      throw new AvmError('UnsupportedFx', `${FX_NAMES[s.fxIndex]} is not supported: an initial state of feature extension ${s.fxIndex}; this asset VM implements secp256k1fx only`);
    }
    for (const out of s.outs) checkOutput(out);
    if (!isSorted(s.outs, compareOutputs)) invalid('outputs not sorted');
  }
  if (!isSorted(tx.states, (a, b) => a.fxIndex - b.fxIndex, true)) invalid('initial states not sorted and unique');
}

function checkOperations(tx: OperationTx): void {
  const spent = new Set(tx.ins.map((i) => utxoId(i).key));
  for (const op of tx.ops) {
    if (!isSorted(op.utxos, compareUtxoRefs, true)) invalid('utxo IDs not sorted and unique');
    checkAssetId(op.assetId);
    checkSigIndices(op.op.sigIndices);
    checkOwners(op.op.mintOutput);
    checkOutput(op.op.transferOutput);
    for (const ref of op.utxos) {
      const key = utxoId(ref).key;
      if (spent.has(key)) invalid('inputs attempt to double spend an input');
      spent.add(key);
    }
  }
  if (!isSorted(tx.ops, compareOperations, true)) invalid('operations not sorted and unique');
}

/** The SigIndices of each credential's input, in credential order. */
function sigIndicesByCredential(tx: Tx['unsigned']): ReadonlyArray<readonly number[]> {
  const base = tx.ins.map((i) => i.input.sigIndices);
  if (tx.kind === 'operation') return [...base, ...tx.ops.map((op) => op.op.sigIndices)];
  if (tx.kind === 'import') return [...base, ...tx.importedIns.map((i) => i.input.sigIndices)];
  return base;
}

/**
 * Checks every syntactic rule on a signed tx for the chain `ctx`; AvmError('InvalidTx')
 * with the reference's text for the first broken one (AvmError('UnsupportedFx') for an initial state
 * of another fx).
 */
export function checkSyntax(tx: Tx, ctx: SyntaxContext): void {
  const u = tx.unsigned;
  const flow = new FlowChecker();
  switch (u.kind) {
    case 'base':
      checkBase(u, ctx, flow);
      flow.verify();
      break;
    case 'createAsset':
      checkCreateAsset(u);
      checkBase(u, ctx, flow);
      flow.verify();
      checkInitialStates(u);
      break;
    case 'operation':
      if (u.ops.length === 0) invalid('an operationTx must have at least one operation');
      checkBase(u, ctx, flow);
      flow.verify();
      checkOperations(u);
      break;
    case 'import':
      checkChain(u, ctx);
      if (u.importedIns.length === 0) invalid('no import inputs');
      checkOutputs(u.outs, flow);
      checkInputs(u.ins, flow);
      checkInputs(u.importedIns, flow);
      flow.verify();
      break;
    case 'export':
      checkBase(u, ctx, flow);
      checkOutputs(u.exportedOuts, flow);
      flow.verify();
      break;
    default:
      invalid(`unknown tx kind ${String((u as { kind?: unknown }).kind)}`);
  }
  const expected = numCredentials(u);
  if (tx.creds.length !== expected) invalid('should have the same number of credentials as inputs', { credentials: tx.creds.length, inputs: expected });
  sigIndicesByCredential(u).forEach((indices, i) => {
    if (tx.creds[i]!.sigs.length !== indices.length) {
      invalid('input expected a different number of signers than provided in the credential', { credential: i });
    }
  });
}
