/**
 * What bootstrapping exchanges with other nodes: a joining or restarted
 * node asks beacons for their accepted frontier, keeps the blocks that more than half of the beacon
 * weight has accepted, fetches those blocks' ancestors in batches, and verifies and accepts them in
 * height order. The same messages are answered for other nodes from this node's VM.
 */
import type { Id, ShortId } from '@cornice/sdk';

/** How a chain's bootstrapper reaches other nodes (the network's per-chain link). Sends are fire-and-forget. */
export interface BootstrapTransport {
  getAcceptedFrontier(to: readonly ShortId[], requestId: number): void;
  getAccepted(to: readonly ShortId[], requestId: number, blockIds: readonly Id[]): void;
  getAncestors(to: ShortId, requestId: number, blockId: Id): void;
  /** Answers to other nodes' requests. */
  acceptedFrontier(to: ShortId, requestId: number, blockIds: readonly Id[]): void;
  accepted(to: ShortId, requestId: number, blockIds: readonly Id[]): void;
  /** A block and its ancestors, newest first. */
  ancestors(to: ShortId, requestId: number, blocks: readonly Uint8Array[]): void;
}

/** What the network delivers to a chain's bootstrapping side. */
export interface BootstrapTarget {
  onGetAcceptedFrontier(from: ShortId, requestId: number): Promise<void>;
  onAcceptedFrontier(from: ShortId, requestId: number, blockIds: readonly Id[]): void;
  onGetAccepted(from: ShortId, requestId: number, blockIds: readonly Id[]): Promise<void>;
  onAccepted(from: ShortId, requestId: number, blockIds: readonly Id[]): void;
  onGetAncestors(from: ShortId, requestId: number, blockId: Id): Promise<void>;
  onAncestors(from: ShortId, requestId: number, blocks: readonly Uint8Array[]): void;
  /** A request of ours that `from` will not answer (not connected, timed out, dropped). */
  onBootstrapRequestFailed(from: ShortId, requestId: number): void;
}

/** A beacon: a node trusted for the accepted frontier, with its weight. */
export interface Beacon {
  nodeId: ShortId;
  weight: bigint;
}

/** Progress of one chain's bootstrap, for the progress bar / log lines and health. */
export interface BootstrapProgress {
  chain: string;
  phase: 'waiting for beacons' | 'frontier' | 'fetching' | 'executing' | 'done';
  /** Blocks fetched so far and accepted so far in this run. */
  fetched: number;
  accepted: number;
  /** Height to reach (the highest frontier block seen), when known. */
  targetHeight: number | undefined;
  /** Height of the last accepted block. */
  height: number;
  /** Estimated ms left, when it can be estimated. */
  etaMs: number | undefined;
}
