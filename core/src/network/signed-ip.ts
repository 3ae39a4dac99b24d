/**
 * Signed IPs (avalanchego's network/peer/ip.go idea): a node signs the address it listens on, with a
 * timestamp, using its staking key. It sends the claim in its Version; other nodes relay it in
 * PeerLists beside its certificate; a node dials a relayed address only when the claim verifies
 * against the certificate, whose hash is the node ID dialled. So nobody can make a node dial an
 * address on another node's behalf (signed-ip.test.ts; network.test.ts 'a PeerList of addresses not
 * signed…'), and of two claims for one node the newer timestamp wins.
 *
 * Signed bytes: the ASCII context `cornice-signed-ip-v1`, the IP as 16 bytes (v4 as IPv4-mapped v6,
 * the codec's form), the port as u16 and the time (unix seconds) as u64, big-endian.
 * Tests: network/signed-ip.test.ts.
 */
import type { KeyObject } from 'node:crypto';
import { stakingSigner, verifySignature } from '../staking/sign.js';
import { ipToBytes } from './codec.js';

/** What a node says about where it listens, and since when. */
export interface IpClaim {
  ip: string;
  port: number;
  /** Unix seconds when the node signed it. */
  time: bigint;
}

export interface SignedIpClaim extends IpClaim {
  signature: Uint8Array;
}

const CONTEXT = new TextEncoder().encode('cornice-signed-ip-v1');

/** The bytes a claim's signature covers; undefined for an address that cannot travel (not an IP, a zone). */
export function claimBytes(c: IpClaim): Uint8Array | undefined {
  const ip = ipToBytes(c.ip);
  if (!ip || !Number.isInteger(c.port) || c.port < 0 || c.port > 0xffff || typeof c.time !== 'bigint' || c.time < 0n || c.time >= 1n << 64n) return undefined;
  const out = new Uint8Array(CONTEXT.length + 16 + 2 + 8);
  out.set(CONTEXT);
  out.set(ip, CONTEXT.length);
  const view = new DataView(out.buffer);
  view.setUint16(CONTEXT.length + 16, c.port);
  view.setBigUint64(CONTEXT.length + 18, c.time);
  return out;
}

/** Signs a claim with a staking key (PEM); throws for an address that cannot travel. */
export function signIp(keyPem: string | ((data: Uint8Array) => Uint8Array), c: IpClaim): SignedIpClaim {
  const bytes = claimBytes(c);
  if (!bytes) throw new Error(`cannot sign the address ${c.ip}:${c.port}`);
  const signer = typeof keyPem === 'string' ? stakingSigner(keyPem) : keyPem;
  return { ip: c.ip, port: c.port, time: c.time, signature: signer(bytes) };
}

/** Whether `c.signature` is the signature of `c` by `key` (a certificate's public key); never throws. */
export function verifyIp(key: KeyObject | undefined, c: SignedIpClaim): boolean {
  const bytes = claimBytes(c);
  return bytes !== undefined && c.signature instanceof Uint8Array && verifySignature(key, bytes, c.signature);
}
