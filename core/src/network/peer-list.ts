/**
 * PeerLists with signed IPs (signed-ip.ts): what this node relays about its peers, and which of the
 * claims it receives it believes.
 *
 * Relayed: each connected peer's certificate and the claim from its Version, when that claim names a
 * real address (a peer that advertised 0.0.0.0 signed no address others could dial), within
 * MAX_PEERS entries and a byte budget that keeps the message under the frame limit.
 *
 * Believed: a claim whose certificate parses, whose node ID is not this node's, whose time is not
 * ahead of this node's clock by more than the allowed skew, that is newer than what this node knows
 * of that node (`isNewer`), and whose signature verifies against the certificate. Checking costs a
 * certificate parse and a signature check, so one PeerList gets at most `maxVerifications` of them
 * (the claims known already cost nothing: they are not newer), and parsed keys are cached by node ID.
 * Tests: network/signed-ip.test.ts ('a PeerList\'s claims: …', 'relayed: …').
 */
import type { KeyObject } from 'node:crypto';
import type { ShortId } from '@cornice/sdk';
import { nodeIdFromCert, peerCertificate } from '../staking/cert.js';
import { MAX_PEERS, type MessageOf, type PeerInfo } from './messages.js';
import { verifyIp, type SignedIpClaim } from './signed-ip.js';

/** Bytes of a PeerList kept free for the header and count (the rest is for entries). */
const PEER_LIST_OVERHEAD = 64;
/** Fixed bytes of one entry besides its certificate and signature (lengths, IP, port, time). */
const ENTRY_FIXED_BYTES = 4 + 16 + 2 + 8 + 4;
/** Certificates whose keys are cached. */
const KEY_CACHE_SIZE = 1_024;
const UNSPECIFIED = new Set(['0.0.0.0', '::', '']);

/** A connected peer as the PeerList needs it. */
export interface RelayedPeer {
  nodeId: ShortId;
  certDer: Uint8Array;
  info: Pick<MessageOf<'Version'>, 'listen' | 'ipTime' | 'ipSignature'>;
}

/** The entries to send: each relayable peer's signed claim, within MAX_PEERS and `maxBytes`. */
export function peerListEntries(peers: Iterable<RelayedPeer>, maxBytes: number): PeerInfo[] {
  const out: PeerInfo[] = [];
  let bytes = PEER_LIST_OVERHEAD;
  for (const p of peers) {
    const { listen, ipTime, ipSignature } = p.info;
    if (UNSPECIFIED.has(listen.ip) || listen.port === 0) continue;
    const size = ENTRY_FIXED_BYTES + p.certDer.length + ipSignature.length;
    if (out.length >= MAX_PEERS || bytes + size > maxBytes) break;
    bytes += size;
    out.push({ cert: p.certDer, ip: listen.ip, port: listen.port, time: ipTime, signature: ipSignature });
  }
  return out;
}

export interface VerifiedClaim extends SignedIpClaim {
  nodeId: ShortId;
}

export interface ClaimCheckOptions {
  selfId: ShortId;
  /** This node's clock (ms). */
  now: () => number;
  maxClockSkewSeconds: number;
  /** Signature checks (and certificate parses) one PeerList may cost. */
  maxVerifications: number;
}

export interface ClaimCheck {
  /** Claims that verified, in the list's order. */
  believed: VerifiedClaim[];
  /** Claims whose certificate or signature did not check out. */
  invalid: number;
  /** Claims not looked at: over the verification budget. */
  skipped: number;
}

export class ClaimVerifier {
  readonly #o: ClaimCheckOptions;
  /** Public keys of certificates seen, by node ID key (a node ID is the certificate's hash). */
  readonly #keys = new Map<string, KeyObject | undefined>();

  constructor(o: ClaimCheckOptions) {
    this.#o = o;
  }

  /** Which of `entries` to believe; `isNewer(nodeId, time)` says whether a claim would tell anything new. */
  check(entries: readonly PeerInfo[], isNewer: (nodeId: ShortId, time: bigint) => boolean): ClaimCheck {
    const result: ClaimCheck = { believed: [], invalid: 0, skipped: 0 };
    const latest = BigInt(Math.floor(this.#o.now() / 1000) + this.#o.maxClockSkewSeconds);
    let budget = this.#o.maxVerifications;
    for (const e of entries) {
      const nodeId = nodeIdFromCert(e.cert);
      if (nodeId.equals(this.#o.selfId) || e.time > latest || !isNewer(nodeId, e.time)) continue;
      if (budget <= 0) {
        result.skipped += 1;
        continue;
      }
      budget -= 1;
      const claim: SignedIpClaim = { ip: e.ip, port: e.port, time: e.time, signature: e.signature };
      if (verifyIp(this.#key(nodeId, e.cert), claim)) result.believed.push({ ...claim, nodeId });
      else result.invalid += 1;
    }
    return result;
  }

  #key(nodeId: ShortId, der: Uint8Array): KeyObject | undefined {
    if (this.#keys.has(nodeId.key)) return this.#keys.get(nodeId.key);
    let key: KeyObject | undefined;
    try {
      key = peerCertificate(der).publicKey;
    } catch {
      key = undefined;
    }
    if (this.#keys.size >= KEY_CACHE_SIZE) this.#keys.delete(this.#keys.keys().next().value as string);
    this.#keys.set(nodeId.key, key);
    return key;
  }
}
