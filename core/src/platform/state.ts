/**
 * Platform state: the accepted state (`AcceptedState`, persisted in the chain's store, validator
 * sets, subnets and chains held in memory, accounts read through a cache) and `StateDiff`, the
 * changes one processing block makes on top of its parent's state. A diff finds its parent through
 * a callback, so once the parent is accepted the diff reads the accepted state, not a stale copy.
 *
 * Keys in the chain's store (one tag byte first):
 * - `a ‖ address`  -> nonce u64 ‖ balance u64
 * - `s ‖ txID`     -> set u8 (0 pending, 1 current) ‖ the add tx (codec wire form)
 * - `n ‖ subnetID` -> threshold u16 ‖ control keys
 * - `c ‖ chainID`  -> name, subnet, vm, fxs, genesis
 * - `t`            -> chain time u64
 * Blocks are kept by blocks.ts's store (tags `b`, `h`, `l`).
 */
import { Id, Reader, type ShortId, Writer, concatBytes, type KeyValueStore, type WriteBatch } from '@cornice/sdk';
import { decodeTx, encodeTx } from './codec.js';
import { PlatformError } from './errors.js';
import {
  DEFAULT_SUBNET_ID,
  type Account,
  type ChainRecord,
  type PlatformStateView,
  type Staker,
  type SubnetRecord,
  type TimedTx,
  type TransferableOutput,
  type TransferOutput,
} from './model.js';

const ACCOUNT = 0x61; // a
const STAKER = 0x73; // s
const SUBNET = 0x6e; // n
const CHAIN = 0x63; // c
const TIME_KEY = Uint8Array.of(0x74); // t

type StakerSet = 'current' | 'pending';

/** The subnet a staker's add tx is for. */
export function subnetOf(tx: TimedTx): Id {
  return tx.kind === 'addNonDefaultSubnetValidator' ? tx.subnetId : DEFAULT_SUBNET_ID;
}

const byEnd = (a: Staker, b: Staker) => a.tx.end - b.tx.end || a.txId.compare(b.txId);
const byStart = (a: Staker, b: Staker) => a.tx.start - b.tx.start || a.txId.compare(b.txId);

/** A UTXO this chain exports to its atomic peer, by UTXO ID. */
export interface AtomicPut {
  utxoId: Id;
  bytes: Uint8Array;
}

/** Extra reads a diff needs beyond PlatformStateView: atomic UTXOs consumed on the way. */
export interface StateReader extends PlatformStateView {
  /** True when a block between the accepted state and here consumed this imported UTXO. */
  consumed(utxoId: Id): boolean;
}

/** The accepted state. Loaded at initialize; updated by `commit` after the accepting batch is written. */
export class AcceptedState implements StateReader {
  #time = 0;
  readonly #accounts = new Map<string, Account>();
  readonly #stakers = new Map<string, { staker: Staker; set: StakerSet }>();
  readonly #subnets = new Map<string, SubnetRecord>();
  readonly #chains = new Map<string, ChainRecord>();

  constructor(private readonly db: KeyValueStore) {}

  /** Reads what the store holds (chain time, stakers, subnets, chains; accounts lazily). */
  async load(): Promise<void> {
    const t = await this.db.get(TIME_KEY);
    this.#time = t ? Number(new Reader(t).u64()) : 0;
    for await (const [k, v] of this.db.iterate({ prefix: Uint8Array.of(STAKER) })) {
      const txId = Id.fromBytes(k.subarray(1));
      const set: StakerSet = v[0] === 1 ? 'current' : 'pending';
      const tx = decodeTx(v.subarray(1));
      if (tx.kind !== 'addDefaultSubnetValidator' && tx.kind !== 'addDefaultSubnetDelegator' && tx.kind !== 'addNonDefaultSubnetValidator') {
        throw new PlatformError('CorruptDatabase', `stored staker ${txId} is a ${tx.kind} tx`);
      }
      this.#stakers.set(txId.key, { staker: { txId, tx }, set });
    }
    for await (const [k, v] of this.db.iterate({ prefix: Uint8Array.of(SUBNET) })) {
      const subnet = decodeSubnet(Id.fromBytes(k.subarray(1)), v);
      this.#subnets.set(subnet.id.key, subnet);
    }
    for await (const [k, v] of this.db.iterate({ prefix: Uint8Array.of(CHAIN) })) {
      const chain = decodeChain(Id.fromBytes(k.subarray(1)), v);
      this.#chains.set(chain.id.key, chain);
    }
  }

  timestamp(): number {
    return this.#time;
  }

  async account(address: ShortId): Promise<Account> {
    const cached = this.#accounts.get(address.key);
    if (cached) return { ...cached };
    const v = await this.db.get(concatBytes(Uint8Array.of(ACCOUNT), address.bytes));
    const acct = v ? decodeAccount(address, v) : { address, nonce: 0n, balance: 0n };
    if (this.#accounts.size > 100_000) this.#accounts.clear();
    this.#accounts.set(address.key, acct);
    return { ...acct };
  }

  async subnet(id: Id): Promise<SubnetRecord | undefined> {
    return this.#subnets.get(id.key);
  }

  async subnets(): Promise<SubnetRecord[]> {
    return [...this.#subnets.values()];
  }

  async chain(id: Id): Promise<ChainRecord | undefined> {
    return this.#chains.get(id.key);
  }

  async chains(): Promise<ChainRecord[]> {
    return [...this.#chains.values()];
  }

  async currentStakers(subnetId: Id): Promise<Staker[]> {
    return this.#list(subnetId, 'current').sort(byEnd);
  }

  async pendingStakers(subnetId: Id): Promise<Staker[]> {
    return this.#list(subnetId, 'pending').sort(byStart);
  }

  /** Every subnet that has stakers (for "the next change across all subnets"). */
  stakerSubnets(): Id[] {
    const out = new Map<string, Id>();
    for (const { staker } of this.#stakers.values()) {
      const s = subnetOf(staker.tx);
      out.set(s.key, s);
    }
    return [...out.values()];
  }

  consumed(): boolean {
    return false;
  }

  #list(subnetId: Id, set: StakerSet): Staker[] {
    const out: Staker[] = [];
    for (const e of this.#stakers.values()) if (e.set === set && subnetOf(e.staker.tx).equals(subnetId)) out.push(e.staker);
    return out;
  }

  /** Queues a diff's writes into `batch` (the block's accepting batch). */
  write(diff: StateDiff, batch: WriteBatch): void {
    if (diff.time !== undefined) batch.put(TIME_KEY, new Writer().u64(BigInt(diff.time)).finish());
    for (const a of diff.accounts.values()) batch.put(concatBytes(Uint8Array.of(ACCOUNT), a.address.bytes), encodeAccount(a));
    for (const change of diff.stakers.values()) {
      const k = concatBytes(Uint8Array.of(STAKER), change.staker.txId.bytes);
      if (change.set === undefined) batch.delete(k);
      else batch.put(k, concatBytes(Uint8Array.of(change.set === 'current' ? 1 : 0), encodeTx(change.staker.tx)));
    }
    for (const s of diff.newSubnets) batch.put(concatBytes(Uint8Array.of(SUBNET), s.id.bytes), encodeSubnet(s));
    for (const c of diff.newChains) batch.put(concatBytes(Uint8Array.of(CHAIN), c.id.bytes), encodeChain(c));
  }

  /** Applies a diff whose writes are durable to the in-memory state. */
  commit(diff: StateDiff): void {
    if (diff.time !== undefined) this.#time = diff.time;
    for (const a of diff.accounts.values()) this.#accounts.set(a.address.key, { ...a });
    for (const [key, change] of diff.stakers) {
      if (change.set === undefined) this.#stakers.delete(key);
      else this.#stakers.set(key, { staker: change.staker, set: change.set });
    }
    for (const s of diff.newSubnets) this.#subnets.set(s.id.key, s);
    for (const c of diff.newChains) this.#chains.set(c.id.key, c);
  }
}

/** What one block changes, on top of its parent's state. */
export class StateDiff implements StateReader {
  time: number | undefined;
  readonly accounts = new Map<string, Account>();
  /** By staker txID key: its new set, or undefined when it leaves the staker sets. */
  readonly stakers = new Map<string, { staker: Staker; set: StakerSet | undefined }>();
  /** By ID key, in the order added (Maps: a diff of many pooled txs is looked up once per tx). */
  readonly #newSubnets = new Map<string, SubnetRecord>();
  readonly #newChains = new Map<string, ChainRecord>();
  /** Imported UTXOs this diff consumes (removed from shared memory on accept). */
  readonly consumedUtxos = new Map<string, Id>();
  /** UTXOs this diff exports to the atomic peer. */
  readonly exportedUtxos: AtomicPut[] = [];

  constructor(private readonly parent: () => StateReader) {}

  /** A diff on top of a fixed view (tests, mempool checks). */
  static on(view: StateReader): StateDiff {
    return new StateDiff(() => view);
  }

  timestamp(): number {
    return this.time ?? this.parent().timestamp();
  }

  async account(address: ShortId): Promise<Account> {
    const own = this.accounts.get(address.key);
    return own ? { ...own } : this.parent().account(address);
  }

  setAccount(a: Account): void {
    this.accounts.set(a.address.key, { ...a });
  }

  /** Subnets this diff creates, in creation order. */
  get newSubnets(): SubnetRecord[] {
    return [...this.#newSubnets.values()];
  }

  /** Chains this diff creates, in creation order. */
  get newChains(): ChainRecord[] {
    return [...this.#newChains.values()];
  }

  async subnet(id: Id): Promise<SubnetRecord | undefined> {
    return this.#newSubnets.get(id.key) ?? this.parent().subnet(id);
  }

  async subnets(): Promise<SubnetRecord[]> {
    return [...(await this.parent().subnets()), ...this.newSubnets];
  }

  async chain(id: Id): Promise<ChainRecord | undefined> {
    return this.#newChains.get(id.key) ?? this.parent().chain(id);
  }

  async chains(): Promise<ChainRecord[]> {
    return [...(await this.parent().chains()), ...this.newChains];
  }

  async currentStakers(subnetId: Id): Promise<Staker[]> {
    return this.#merge(await this.parent().currentStakers(subnetId), subnetId, 'current').sort(byEnd);
  }

  async pendingStakers(subnetId: Id): Promise<Staker[]> {
    return this.#merge(await this.parent().pendingStakers(subnetId), subnetId, 'pending').sort(byStart);
  }

  consumed(utxoId: Id): boolean {
    return this.consumedUtxos.has(utxoId.key) || this.parent().consumed(utxoId);
  }

  /** Moves a staker into a set, or out of the staker sets (undefined). */
  setStaker(staker: Staker, set: StakerSet | undefined): void {
    this.stakers.set(staker.txId.key, { staker, set });
  }

  addSubnet(s: SubnetRecord): void {
    this.#newSubnets.set(s.id.key, s);
  }

  addChain(c: ChainRecord): void {
    this.#newChains.set(c.id.key, c);
  }

  consume(utxoId: Id): void {
    this.consumedUtxos.set(utxoId.key, utxoId);
  }

  exportUtxo(put: AtomicPut): void {
    this.exportedUtxos.push(put);
  }

  /** Adds this diff's changes to `parent` (the diff it was made on). */
  mergeInto(parent: StateDiff): void {
    if (this.time !== undefined) parent.time = this.time;
    for (const a of this.accounts.values()) parent.setAccount(a);
    for (const e of this.stakers.values()) parent.setStaker(e.staker, e.set);
    for (const s of this.newSubnets) parent.addSubnet(s);
    for (const c of this.newChains) parent.addChain(c);
    for (const id of this.consumedUtxos.values()) parent.consume(id);
    for (const put of this.exportedUtxos) parent.exportUtxo(put);
  }

  /** Subnets whose current validator set this diff changes. */
  changedSubnets(): Id[] {
    const out = new Map<string, Id>();
    for (const { staker, set } of this.stakers.values()) {
      if (set === 'pending') continue;
      const s = subnetOf(staker.tx);
      out.set(s.key, s);
    }
    return [...out.values()];
  }

  #merge(inherited: Staker[], subnetId: Id, set: StakerSet): Staker[] {
    const out = inherited.filter((s) => !this.stakers.has(s.txId.key));
    for (const { staker, set: s } of this.stakers.values()) if (s === set && subnetOf(staker.tx).equals(subnetId)) out.push(staker);
    return out;
  }
}

function encodeAccount(a: Account): Uint8Array {
  return new Writer().u64(a.nonce).u64(a.balance).finish();
}

function decodeAccount(address: ShortId, v: Uint8Array): Account {
  const r = new Reader(v);
  const acct = { address, nonce: r.u64(), balance: r.u64() };
  r.end();
  return acct;
}

function encodeSubnet(s: SubnetRecord): Uint8Array {
  return new Writer().u16(s.threshold).array(s.controlKeys, (w, k) => w.shortId(k)).finish();
}

function decodeSubnet(id: Id, v: Uint8Array): SubnetRecord {
  const r = new Reader(v);
  const threshold = r.u16();
  const controlKeys = r.array(() => r.shortId());
  r.end();
  return { id, threshold, controlKeys };
}

function encodeChain(c: ChainRecord): Uint8Array {
  return new Writer({ maxSize: 1 << 20 })
    .str(c.name)
    .id(c.subnetId)
    .id(c.vmId)
    .array(c.fxIds, (w, fx) => w.id(fx))
    .bytes(c.genesisData)
    .finish();
}

function decodeChain(id: Id, v: Uint8Array): ChainRecord {
  const r = new Reader(v, { maxSize: 1 << 20, maxSliceLength: 1 << 20 });
  const chain = { id, name: r.str(), subnetId: r.id(), vmId: r.id(), fxIds: r.array(() => r.id()), genesisData: r.bytes() };
  r.end();
  return chain;
}

/** The sum an export sends (its outputs of one asset). */
export function exportedAmount(outs: readonly TransferableOutput<TransferOutput>[]): bigint {
  return outs.reduce((sum, o) => sum + o.out.amount, 0n);
}
