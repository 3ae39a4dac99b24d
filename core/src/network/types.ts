import type { Id, ShortId } from '@cornice/sdk';
import type { BootstrapTarget, BootstrapTransport } from '../consensus/bootstrap/types.js';
import type { EngineTransport, LoopbackTarget } from '../consensus/index.js';

/** One chain's link to the other nodes: its engine's, its bootstrapper's and its VM's gossip. */
export interface ChainLink {
  transport: EngineTransport;
  /** The engine side (the chain's RequestSender) that receives queries and answers. */
  attach(target: LoopbackTarget): void;
  bootstrap: BootstrapTransport;
  attachBootstrap(target: BootstrapTarget): void;
  /** Sends a block this node accepted to `to` (peers no poll reaches: non-validators). */
  gossipAccepted(to: readonly ShortId[], block: Uint8Array): void;
  /** Sends a VM's gossip (new txs) to the chain's peers. */
  gossip(payload: Uint8Array): void;
  attachGossip(receive: (from: ShortId, payload: Uint8Array) => void): void;
  /** Stops delivering to this chain. */
  close(): void;
}

/** What the chain manager needs from a network: links per chain and who is connected. */
export interface EngineNetwork {
  /** Nodes reachable now, this one included. */
  connected(): readonly ShortId[];
  isConnected(node: ShortId): boolean;
  open(chainId: Id): ChainLink;
}

/** A connected peer, as admin.peers shows it. */
export interface PeerSummary {
  /** ip:port it listens on (its advertised staking address). */
  ip: string;
  nodeID: string;
  version: string;
  direction: 'inbound' | 'outbound';
  /** ISO times of the last message sent to / received from it. */
  lastSent: string;
  lastReceived: string;
}
