// An AssetVM on a memory store with an injected clock and a real shared memory (the platform chain's
// side included), a genesis funding ewoq, and builders of signed txs.
import * as assert from 'uvu/assert';
import { sharedMemoryFor, testChainContext } from '@cornice/core/testing';
import { Id, MemoryStore, PrefixedStore, PrivateKey, hasErrorCode, type ChainContext, type ChainNetwork, type KeyValueStore, type SharedMemory, type ShortId } from '@cornice/sdk';
import {
  AssetVM,
  PLATFORM_CHAIN_ID,
  assetIdOf,
  encodeGenesis,
  encodeUtxo,
  signTx,
  sortAddresses,
  sortOutputs,
  sortTransferableOutputs,
  txIdOf,
  encodeTx,
  utxoId,
  compareUtxoRefs,
  type AssetVMOptions,
  type AvmBlock,
  type AvmErrorCode,
  type CreateAssetTx,
  type GenesisAsset,
  type Output,
  type TransferOutput,
  type TransferableOutput,
  type Tx,
  type UnsignedTx,
  type Utxo,
} from '../src/index.js';

export const EWOQ = PrivateKey.fromString('ewoqjP7PxY4yr3iLTpLisriqt94hdyDFNgchSxGGztUrTXtNN');
export const NETWORK_ID = 12345;
export const CHAIN_ID = Id.fromBytes(new Uint8Array(32).fill(7));
/** 45,000,000 AVA of 9 decimals, as the reference's genesis gives each funded address. */
export const GENESIS_AMOUNT = 45_000_000n * 1_000_000_000n;
/** 2020-05-01T00:00:00Z. */
export const START_MS = Date.UTC(2020, 4, 1);

/** A clock the test moves by hand. */
export class ManualClock {
  constructor(public ms = START_MS) {}
  now(): number {
    return this.ms;
  }
  get seconds(): number {
    return Math.floor(this.ms / 1000);
  }
  advance(seconds: number): void {
    this.ms += seconds * 1000;
  }
}

export function transfer(amount: bigint, owners: ShortId[], threshold = 1, locktime = 0n): TransferOutput {
  return { kind: 'transfer', amount, locktime, threshold, addresses: sortAddresses(owners) };
}

/** A genesis CreateAssetTx (network 0, chain empty, as the reference's genesis). */
export function genesisAsset(alias: string, symbol: string, outs: Output[], denomination = 9): GenesisAsset {
  const tx: CreateAssetTx = { kind: 'createAsset', networkId: 0, chainId: Id.empty, outs: [], ins: [], name: alias, symbol, denomination, states: [{ fxIndex: 0, outs }] };
  return { alias, tx };
}

/** AVA (native, ewoq funded) and GOLD (another fixed-cap asset, ewoq funded). */
export const GENESIS_ASSETS = [genesisAsset('AVA', 'AVA', [transfer(GENESIS_AMOUNT, [EWOQ.address])]), genesisAsset('GOLD', 'GLD', [transfer(1000n, [EWOQ.address])], 0)];
export const GENESIS = encodeGenesis(GENESIS_ASSETS);
export const AVA = assetIdOf(GENESIS_ASSETS[0]!.tx);
export const GOLD = assetIdOf(GENESIS_ASSETS[1]!.tx);
/** ewoq's genesis UTXOs. */
export const AVA_UTXO: Utxo = { txId: AVA, outputIndex: 0, assetId: AVA, out: transfer(GENESIS_AMOUNT, [EWOQ.address]) };
export const GOLD_UTXO: Utxo = { txId: GOLD, outputIndex: 0, assetId: GOLD, out: transfer(1000n, [EWOQ.address]) };

export interface Harness {
  vm: AssetVM;
  ctx: ChainContext;
  clock: ManualClock;
  root: KeyValueStore;
  /** The platform chain's side of shared memory, and a batch of its own store to write it with. */
  platform: { shared: SharedMemory; db: KeyValueStore };
  /** A second VM on the same store (a restart). */
  restart(opts?: AssetVMOptions): Promise<Harness>;
}

export async function startVM(
  o: { root?: KeyValueStore; clock?: ManualClock; genesis?: Uint8Array; opts?: AssetVMOptions; symbol?: string; chainId?: Id; nativeId?: Id; network?: ChainNetwork; config?: Uint8Array } = {},
): Promise<Harness> {
  const root = o.root ?? new MemoryStore();
  const clock = o.clock ?? new ManualClock();
  const chains = new PrefixedStore(root, 'chains');
  const shared = new PrefixedStore(root, 'shared');
  const chainId = o.chainId ?? CHAIN_ID;
  const ctx: ChainContext = {
    ...testChainContext({ db: new PrefixedStore(chains, chainId.bytes), clock, chainId, ...(o.network ? { network: o.network } : {}) }),
    aliases: ['X', 'avm'],
    sharedMemory: sharedMemoryFor(shared, chainId),
    nativeAsset: { id: o.nativeId, symbol: o.symbol ?? 'AVA' },
  };
  const vm = new AssetVM(o.opts);
  await vm.initialize(ctx, { genesis: o.genesis ?? GENESIS, ...(o.config ? { config: o.config } : {}) });
  await vm.setState('bootstrapping');
  await vm.setState('normalOp');
  return {
    vm,
    ctx,
    clock,
    root,
    platform: { shared: sharedMemoryFor(shared, PLATFORM_CHAIN_ID), db: new PrefixedStore(chains, PLATFORM_CHAIN_ID.bytes) },
    restart: async (opts) => {
      await vm.shutdown();
      return startVM({ ...o, root, clock, ...(opts ? { opts } : {}) });
    },
  };
}

/** A spend of `utxo` by `keys` (its owners at sigIndices 0..n-1 unless given). */
export interface Spend {
  utxo: Utxo;
  keys: PrivateKey[];
  sigIndices?: number[];
}

const chain = { networkId: NETWORK_ID, chainId: CHAIN_ID };

function inputsOf(spends: readonly Spend[]) {
  const sorted = [...spends].sort((a, b) => compareUtxoRefs(a.utxo, b.utxo));
  return {
    ins: sorted.map((s) => ({
      txId: s.utxo.txId,
      outputIndex: s.utxo.outputIndex,
      assetId: s.utxo.assetId,
      input: { amount: (s.utxo.out as TransferOutput).amount, sigIndices: s.sigIndices ?? s.keys.map((_, i) => i) },
    })),
    signers: sorted.map((s) => s.keys),
  };
}

/** A signed BaseTx spending `spends` into `outs`. */
export function baseTx(spends: Spend[], outs: TransferableOutput[], over: Partial<UnsignedTx> = {}): Tx {
  const { ins, signers } = inputsOf(spends);
  return signTx({ kind: 'base', ...chain, outs: sortTransferableOutputs(outs), ins, ...over } as UnsignedTx, signers);
}

/** A signed ExportTx: `spends` into local `outs` and `exported` outs for the platform chain. */
export function exportTx(spends: Spend[], outs: TransferableOutput[], exported: TransferableOutput[]): Tx {
  const { ins, signers } = inputsOf(spends);
  return signTx({ kind: 'export', ...chain, outs: sortTransferableOutputs(outs), ins, exportedOuts: sortTransferableOutputs(exported) }, signers);
}

/** A signed ImportTx of UTXOs in shared memory into local `outs`. */
export function importTx(imported: Spend[], outs: TransferableOutput[]): Tx {
  const { ins, signers } = inputsOf(imported);
  return signTx({ kind: 'import', ...chain, outs: sortTransferableOutputs(outs), ins: [], importedIns: ins }, signers);
}

/** A CreateAssetTx with no inputs (valid with no credentials). */
export function createAssetTx(name: string, symbol: string, outs: Output[], denomination = 0): Tx {
  return { unsigned: { kind: 'createAsset', ...chain, outs: [], ins: [], name, symbol, denomination, states: [{ fxIndex: 0, outs: sortOutputs(outs) }] }, creds: [] };
}

export const idOf = (tx: Tx): Id => txIdOf(encodeTx(tx));

/** The UTXO at `outputIndex` of the tx. */
export function utxoOf(tx: Tx, outputIndex: number): Utxo {
  const id = idOf(tx);
  const u = tx.unsigned;
  const outs: Array<{ assetId: Id; out: Output }> = [...u.outs];
  if (u.kind === 'createAsset') for (const s of u.states) for (const out of s.outs) outs.push({ assetId: id, out });
  if (u.kind === 'operation') for (const op of u.ops) outs.push({ assetId: op.assetId, out: op.op.mintOutput }, { assetId: op.assetId, out: op.op.transferOutput });
  if (u.kind === 'export') outs.push(...u.exportedOuts);
  const o = outs[outputIndex]!;
  return { txId: id, outputIndex, assetId: o.assetId, out: o.out };
}

export const out = (assetId: Id, amount: bigint, owners: ShortId[], threshold = 1, locktime = 0n): TransferableOutput => ({
  assetId,
  out: transfer(amount, owners, threshold, locktime),
});

/** A transfer of `amount` AVA from ewoq's genesis UTXO to `to`, change back to ewoq. */
export function sendAva(amount: bigint, to: ShortId, from: Utxo = AVA_UTXO): Tx {
  const total = (from.out as TransferOutput).amount;
  return baseTx([{ utxo: from, keys: [EWOQ] }], [out(AVA, amount, [to]), out(AVA, total - amount, [EWOQ.address])]);
}

/** Builds, verifies, prefers and accepts blocks until nothing is left to build; the blocks. */
export async function settle(vm: AssetVM, max = 20): Promise<AvmBlock[]> {
  const done: AvmBlock[] = [];
  for (let i = 0; i < max; i++) {
    let block: AvmBlock;
    try {
      block = await vm.buildBlock();
    } catch (e) {
      if (hasErrorCode(e, 'NothingToBuild')) return done;
      throw e;
    }
    await block.verify();
    await vm.setPreference(block.id);
    await block.accept();
    done.push(block);
  }
  throw new TypeError(`still building after ${max} blocks`);
}

/** Puts a native UTXO owned by `owner` into the X-Chain's inbox, as the platform chain exports it. */
export async function exportFromPlatform(h: Harness, owner: ShortId, amount: bigint, seed = 0x55): Promise<Utxo> {
  const utxo: Utxo = { txId: Id.fromBytes(new Uint8Array(32).fill(seed)), outputIndex: 0, assetId: AVA, out: transfer(amount, [owner]) };
  const batch = h.platform.db.batch();
  h.platform.shared.apply(CHAIN_ID, { put: [[utxoId(utxo).bytes, encodeUtxo(utxo)]] }, batch);
  await batch.write();
  return utxo;
}

/** The sum of the accepted `assetId` UTXOs of `address`. */
export async function balance(vm: AssetVM, address: ShortId, assetId: Id = AVA): Promise<bigint> {
  let sum = 0n;
  for (const u of await vm.utxos([address])) if (u.assetId.equals(assetId) && u.out.kind === 'transfer') sum += u.out.amount;
  return sum;
}

/** Resolves to the error `p` rejects with; fails when it resolves. */
export async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  throw new TypeError('expected a rejection');
}

/** Asserts that `p` rejects with an AvmError (or NodeError) of `code` whose message matches. */
export async function rejectsWith(p: Promise<unknown>, code: AvmErrorCode | 'NotFound', message?: RegExp): Promise<Error> {
  const e = await rejection(p);
  assert.ok(hasErrorCode(e, code), `expected ${code} but got ${(e as { code?: string }).code}: ${e.message}`);
  if (message) assert.match(e.message, message);
  return e;
}

/** Whether waitForEvent resolves within `ms` (it is aborted otherwise). */
export async function eventWithin(vm: AssetVM, ms: number): Promise<boolean> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), ms);
  try {
    await vm.waitForEvent(ac.signal);
    return true;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
