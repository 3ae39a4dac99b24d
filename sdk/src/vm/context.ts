import type { KeyValueStore, WriteBatch } from '../db/store.js';
import type { Id, ShortId } from '../ids/id.js';
import type { Logger } from '../log/logger.js';

/** Milliseconds since the epoch; injected so tests and simulations control time. */
export interface Clock {
  now(): number;
}

/** Minimal metrics a VM can register; the node exports them at /ext/metrics with its chain ID. */
export interface VMMetrics {
  counter(name: string, help: string): { inc(by?: number): void };
  gauge(name: string, help: string): { set(value: number): void };
  histogram(name: string, help: string, buckets?: number[]): { observe(value: number): void };
}

/**
 * Memory shared between the chains of a node (atomic UTXO exchange, e.g. X <-> P). Each chain owns
 * what it exports; a peer chain reads and removes it. Writes join the batch that accepts the block,
 * so a block and its atomic effects are one commit.
 */
export interface SharedMemory {
  /** Values this chain can import from `peerChainId`, by key (undefined where absent). */
  get(peerChainId: Id, keys: readonly Uint8Array[]): Promise<Array<Uint8Array | undefined>>;
  /** Everything `peerChainId` exported to this chain, in key order. */
  list(peerChainId: Id): AsyncIterable<[key: Uint8Array, value: Uint8Array]>;
  /**
   * Queues, into `batch` (a batch of this chain's `db`), puts of values for `peerChainId` to import
   * and removals of values this chain imported from it.
   */
  apply(peerChainId: Id, ops: { put?: Array<[Uint8Array, Uint8Array]>; remove?: Uint8Array[] }, batch: WriteBatch): void;
}

/** A keystore user's encrypted store for this chain, after the password was checked. */
export interface KeystoreAccess {
  openUser(username: string, password: string): Promise<KeyValueStore>;
}

export interface Validator {
  nodeId: ShortId;
  weight: bigint;
}

/** Read-only view of validator sets: each subnet's current validators, as the platform chain reports them. */
export interface ValidatorsView {
  /** Validators of `subnetId` (default: this chain's subnet). */
  list(subnetId?: Id): Promise<Validator[]>;
}

/** Everything the node gives a VM. The only way a VM reaches the node. */
export interface ChainContext {
  readonly networkId: number;
  readonly subnetId: Id;
  readonly chainId: Id;
  /** Aliases of this chain (primary first), e.g. ['X', 'avm']. */
  readonly aliases: readonly string[];
  readonly nodeId: ShortId;
  readonly vmId: Id;
  /** The chain's own store (a prefix of the node's database). */
  readonly db: KeyValueStore;
  readonly log: Logger;
  readonly metrics: VMMetrics;
  readonly clock: Clock;
  /** Aborted when the chain shuts down. */
  readonly signal: AbortSignal;
  readonly sharedMemory: SharedMemory;
  readonly keystore: KeystoreAccess;
  /** The native token: its asset ID once an asset chain defines it, and its symbol (e.g. AVA). */
  readonly nativeAsset: { readonly id: Id | undefined; readonly symbol: string };
  readonly validators: ValidatorsView;
  /** The chain's other nodes. */
  readonly network: ChainNetwork;
  /**
   * The operator asked for developer/debug APIs (the node's `--evm-debug-api`, which `npm start` and
   * `cornice network start` pass): a VM that has such methods (the EVM's debug_trace*, trace_*)
   * serves them on this chain. False on a production node; a VM may still turn them on per chain from
   * its own chain config.
   */
  readonly debugApis: boolean;
}

/** What a VM may send to its chain's other nodes. */
export interface ChainNetwork {
  /**
   * Sends `payload` (e.g. a tx this node was given) to the chain's connected peers, whose VMs get it
   * in `onGossip`. Fire-and-forget; at most 2 MiB minus framing. Gossip what was issued here, not
   * what arrived by gossip, so that a message is not echoed around the network.
   */
  gossip(payload: Uint8Array): void;
}
