/**
 * The peer-to-peer messages: what nodes say to each other over their TLS
 * connections. codec.ts turns them into bytes; framing.ts wraps those bytes in length-prefixed frames.
 *
 * Wire layout of one frame: u32 big-endian length of the rest, then u16 codec version
 * (CODEC_VERSION), u8 op, then the op's fields in the order declared below, with the reference's
 * field types: IDs as 32 raw bytes, request IDs as u32, byte strings and lists as a u32 count then
 * the items. The op numbers 0–12 are the reference's; 13 and up are ours.
 */
import type { Id } from '@cornice/sdk';

/** The only codec version this node speaks; a frame of another version drops the peer. */
export const CODEC_VERSION = 1;

/** Largest frame, most container IDs in a message, most containers in an Ancestors reply: consensus's limits. */
export { MAX_ANCESTORS, MAX_CONTAINER_IDS, MAX_MESSAGE_BYTES } from '../consensus/limits.js';
/** Most peers in one PeerList. */
export const MAX_PEERS = 1_024;
/** Longest version string (UTF-8 bytes). */
export const MAX_VERSION_BYTES = 64;
/** Longest signature of a signed IP (an RSA-8192 signature is 1,024 bytes; ECDSA P-256 about 72). */
export const MAX_SIGNATURE_BYTES = 1_024;
/** Longest certificate in a PeerList entry (staking/cert.ts MAX_CERT_BYTES: a certificate a peer may present). */
export const MAX_PEER_CERT_BYTES = 16 * 1024;

export const Op = {
  GetVersion: 0,
  Version: 1,
  GetPeerList: 2,
  PeerList: 3,
  GetAcceptedFrontier: 4,
  AcceptedFrontier: 5,
  GetAccepted: 6,
  Accepted: 7,
  Get: 8,
  Put: 9,
  PushQuery: 10,
  PullQuery: 11,
  Chits: 12,
  Ping: 13,
  Pong: 14,
  GetAncestors: 15,
  Ancestors: 16,
  Gossip: 17,
} as const;
export type OpName = keyof typeof Op;

/** An IP address (v4 as IPv4-mapped v6 on the wire: 16 bytes) and port. */
export interface IpPort {
  /** Dotted v4 (`127.0.0.1`) or v6 text as node:net prints it. */
  ip: string;
  port: number;
}

/**
 * A peer another node is connected to, as it relays it: the peer's certificate (its node ID is the
 * certificate's hash) and the address the peer signed with that certificate's key (signed-ip.ts).
 */
export interface PeerInfo extends IpPort {
  /** The peer's staking certificate, DER. */
  cert: Uint8Array;
  /** Unix seconds when the peer signed its address: of two claims, the newer wins. */
  time: bigint;
  /** The peer's signature of (ip, port, time) (signed-ip.ts). */
  signature: Uint8Array;
}

export type Message =
  | { op: 'GetVersion' }
  | {
      op: 'Version';
      networkId: number;
      /** Random per process: a node that receives its own nonce is talking to itself. */
      nonce: bigint;
      /** Sender's clock, unix seconds (handshake rejects a skew over a minute). */
      time: bigint;
      /** Where the sender accepts connections (its public IP and staking port). */
      listen: IpPort;
      /** When the sender signed `listen` (unix seconds), and its signature of it with its staking key (signed-ip.ts). */
      ipTime: bigint;
      ipSignature: Uint8Array;
      /** `cornice/<major>.<minor>.<patch>` */
      version: string;
    }
  | { op: 'GetPeerList' }
  | { op: 'PeerList'; peers: PeerInfo[] }
  | { op: 'GetAcceptedFrontier'; chainId: Id; requestId: number }
  | { op: 'AcceptedFrontier'; chainId: Id; requestId: number; containerIds: Id[] }
  | { op: 'GetAccepted'; chainId: Id; requestId: number; containerIds: Id[] }
  | { op: 'Accepted'; chainId: Id; requestId: number; containerIds: Id[] }
  | { op: 'Get'; chainId: Id; requestId: number; containerId: Id }
  /** Put and PushQuery carry the block only: the receiver learns its ID by parsing it (unlike the reference, which also sends the ID). */
  | { op: 'Put'; chainId: Id; requestId: number; container: Uint8Array }
  | { op: 'PushQuery'; chainId: Id; requestId: number; container: Uint8Array }
  | { op: 'PullQuery'; chainId: Id; requestId: number; containerId: Id }
  | { op: 'Chits'; chainId: Id; requestId: number; containerIds: Id[] }
  | { op: 'Ping' }
  | { op: 'Pong' }
  /** Asks for a block and its ancestors, newest first (bootstrapping fetches in batches). */
  | { op: 'GetAncestors'; chainId: Id; requestId: number; containerId: Id }
  /** The block asked for, then its parent, its grandparent… newest first. */
  | { op: 'Ancestors'; chainId: Id; requestId: number; containers: Uint8Array[] }
  /** A VM's gossip (new txs) for a chain: delivered to that chain's VM, never answered. */
  | { op: 'Gossip'; chainId: Id; payload: Uint8Array };

export type MessageOf<O extends OpName> = Extract<Message, { op: O }>;

/** Messages that belong to one chain (routed to its engine or VM). */
export type ChainMessage = Extract<Message, { chainId: Id }>;
