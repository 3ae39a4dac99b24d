/**
 * The chain's records beside the state trie: accepted blocks (RLP), the canonical number -> hash
 * index, receipts per block, the tx index (hash -> block number, position), a per-block log bloom
 * index for eth_getLogs (only blocks with logs), the last accepted block and the genesis hash.
 * `accept` queues one block's records into a batch the VM writes atomically with its trie nodes.
 */
import { bytesToBigInt, bigIntToUnpaddedBytes } from '@ethereumjs/util';
import { RLP } from '@ethereumjs/rlp';
import type { KeyValueStore, WriteBatch } from '@cornice/sdk';
import { EvmChainError } from '../errors.js';

/** A log as executed: [address, topics, data]. */
export type RawLog = [address: Uint8Array, topics: Uint8Array[], data: Uint8Array];

export interface StoredReceipt {
  readonly status: 0 | 1;
  readonly cumulativeGasUsed: bigint;
  readonly gasUsed: bigint;
  readonly contractAddress?: Uint8Array;
  readonly logs: readonly RawLog[];
}

const K_BLOCK = 0x62; // 'b' + hash
const K_RECEIPTS = 0x72; // 'r' + hash
const K_NUMBER = 0x6e; // 'n' + u64 -> hash
const K_TX = 0x74; // 't' + tx hash -> [number, index]
const K_BLOOM = 0x67; // 'g' + u64 -> logs bloom (blocks with logs only)
const K_LAST = Uint8Array.of(0x4c); // 'L'
const K_GENESIS = Uint8Array.of(0x47); // 'G'

function key(tag: number, body: Uint8Array): Uint8Array {
  const k = new Uint8Array(body.length + 1);
  k[0] = tag;
  k.set(body, 1);
  return k;
}

export function u64(n: bigint): Uint8Array {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, n);
  return b;
}

export function encodeReceipts(receipts: readonly StoredReceipt[]): Uint8Array {
  return RLP.encode(
    receipts.map((r) => [
      r.status === 1 ? Uint8Array.of(1) : new Uint8Array(),
      bigIntToUnpaddedBytes(r.cumulativeGasUsed),
      bigIntToUnpaddedBytes(r.gasUsed),
      r.contractAddress ?? new Uint8Array(),
      r.logs.map(([a, t, d]) => [a, t, d]),
    ]),
  );
}

export function decodeReceipts(bytes: Uint8Array): StoredReceipt[] {
  const list = RLP.decode(bytes) as unknown as Array<[Uint8Array, Uint8Array, Uint8Array, Uint8Array, RawLog[]]>;
  return list.map(([status, cum, used, ca, logs]) => ({
    status: status.length > 0 ? 1 : 0,
    cumulativeGasUsed: bytesToBigInt(cum),
    gasUsed: bytesToBigInt(used),
    ...(ca.length > 0 ? { contractAddress: ca } : {}),
    logs,
  }));
}

export class ChainStore {
  constructor(private readonly db: KeyValueStore) {}

  async lastAccepted(): Promise<Uint8Array | undefined> {
    return this.db.get(K_LAST);
  }

  async genesisHash(): Promise<Uint8Array | undefined> {
    return this.db.get(K_GENESIS);
  }

  async blockBytes(hash: Uint8Array): Promise<Uint8Array | undefined> {
    return this.db.get(key(K_BLOCK, hash));
  }

  async hashAt(number: bigint): Promise<Uint8Array | undefined> {
    if (number < 0n || number >= 1n << 64n) return undefined;
    return this.db.get(key(K_NUMBER, u64(number)));
  }

  async receipts(hash: Uint8Array): Promise<StoredReceipt[] | undefined> {
    const b = await this.db.get(key(K_RECEIPTS, hash));
    return b === undefined ? undefined : decodeReceipts(b);
  }

  async txLocation(txHash: Uint8Array): Promise<{ number: bigint; index: number } | undefined> {
    const b = await this.db.get(key(K_TX, txHash));
    if (b === undefined) return undefined;
    const [n, i] = RLP.decode(b) as Uint8Array[];
    return { number: bytesToBigInt(n!), index: Number(bytesToBigInt(i!)) };
  }

  /** Numbers (ascending) in [from, to] of blocks with logs, with their blooms; at most `limit`. */
  async *bloomsIn(from: bigint, to: bigint): AsyncIterable<[bigint, Uint8Array]> {
    if (to < from) return;
    const lt = to + 1n >= 1n << 64n ? Uint8Array.of(K_BLOOM + 1) : key(K_BLOOM, u64(to + 1n));
    for await (const [k, v] of this.db.iterate({ gte: key(K_BLOOM, u64(from)), lt })) {
      yield [new DataView(k.buffer, k.byteOffset + 1, 8).getBigUint64(0), v];
    }
  }

  /** Queues an accepted block's records into `batch`. */
  accept(
    batch: WriteBatch,
    b: { hash: Uint8Array; number: bigint; bytes: Uint8Array; receipts: Uint8Array; txHashes: readonly Uint8Array[]; logsBloom?: Uint8Array },
  ): void {
    batch.put(key(K_BLOCK, b.hash), b.bytes);
    batch.put(key(K_RECEIPTS, b.hash), b.receipts);
    batch.put(key(K_NUMBER, u64(b.number)), b.hash);
    b.txHashes.forEach((h, i) => batch.put(key(K_TX, h), RLP.encode([bigIntToUnpaddedBytes(b.number), bigIntToUnpaddedBytes(BigInt(i))])));
    if (b.logsBloom) batch.put(key(K_BLOOM, u64(b.number)), b.logsBloom);
    batch.put(K_LAST, b.hash);
    if (b.number === 0n) batch.put(K_GENESIS, b.hash);
  }

  static corrupt(what: string): EvmChainError {
    return new EvmChainError('CorruptDatabase', `the chain database is corrupt: ${what}`);
  }
}
