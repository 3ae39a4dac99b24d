import type { AddressInfo } from 'node:net';
import { createServer as createNetServer } from 'node:net';
import { connect, createServer, type Server, type TLSSocket } from 'node:tls';
import * as assert from 'uvu/assert';
import { fromHex, toHex } from '@cornice/sdk';
import { encodeMessage } from '../../src/network/codec.js';
import { NetworkError, type NetworkErrorCode } from '../../src/network/errors.js';
import { frame } from '../../src/network/framing.js';
import type { Message } from '../../src/network/messages.js';
import { generateStakingCert, type StakingCert } from '../../src/staking/cert.js';

/** Runs `fn`, asserting it throws a NetworkError with `code` whose message matches `message` (exactly, for a string). */
export function throwsNetwork(fn: () => unknown, code: NetworkErrorCode, message: string | RegExp): NetworkError {
  try {
    fn();
  } catch (e) {
    assert.instance(e, NetworkError);
    const err = e as NetworkError;
    assert.is(err.code, code, err.message);
    if (typeof message === 'string') assert.is(err.message, message);
    else assert.match(err.message, message);
    return err;
  }
  assert.unreachable(`no NetworkError ${code}`);
  throw new Error('unreachable');
}

/**
 * A message (or any value) with IDs as `Id:<hex>`, bytes as hex and bigints as `<n>n`, so deep
 * equality compares them by value (Id keeps its bytes in a private field, which assert.equal skips).
 */
export function plain(v: unknown): unknown {
  if (typeof v === 'bigint') return `${v}n`;
  if (v instanceof Uint8Array) return `bytes:${toHex(v)}`;
  if (Array.isArray(v)) return v.map(plain);
  if (v !== null && typeof v === 'object') {
    const key = (v as { key?: unknown }).key;
    if (typeof key === 'string') return `${v.constructor.name}:${key}`;
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  }
  return v;
}

/** Bytes of hex written with spaces for reading (`0000 0c ...`). */
export const unhex = (s: string): Uint8Array => fromHex(s.replace(/\s+/g, ''));

/** Resolves once `cond()` holds (checked every 5 ms); fails naming `what` after `ms`. */
export async function until(cond: () => boolean, what: string, ms = 5_000): Promise<void> {
  const end = performance.now() + ms;
  while (!cond()) {
    if (performance.now() > end) assert.unreachable(`${what} within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Certificates generated once per process (generation takes a few ms each). */
let certs: StakingCert[] | undefined;
/** `n` staking certificates, sorted by node ID (the first has the smallest). */
export async function testCerts(n: number): Promise<StakingCert[]> {
  while ((certs ??= []).length < n) certs.push(await generateStakingCert());
  return certs.slice(0, n).sort((a, b) => a.nodeId.compare(b.nodeId));
}

/** The TLS options of a staking endpoint, as the Network uses them (mutual, no CA). */
export const tlsOptions = (cert: StakingCert) => ({ cert: cert.certPem, key: cert.keyPem, rejectUnauthorized: false, minVersion: 'TLSv1.3' as const });

/** A TLS server on 127.0.0.1 (port 0) asking for client certificates; `accepted` holds its sockets. */
export async function tlsServer(cert: StakingCert): Promise<{ server: Server; port: number; accepted: TLSSocket[]; close(): Promise<void> }> {
  const accepted: TLSSocket[] = [];
  const server = createServer({ ...tlsOptions(cert), requestCert: true }, (s) => void accepted.push(s));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const close = async () => {
    for (const s of accepted) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return { server, port, accepted, close };
}

/** A TLS client connection to 127.0.0.1:`port`, resolved once the TLS handshake is done. */
export function tlsConnect(cert: StakingCert, port: number): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const s = connect({ ...tlsOptions(cert), host: '127.0.0.1', port }, () => resolve(s));
    s.once('error', reject);
  });
}

/** Both ends of one TLS connection on loopback: `server` (with cert `a`) and `client` (with cert `b`). */
export async function tlsPair(a: StakingCert, b: StakingCert): Promise<{ server: TLSSocket; client: TLSSocket }> {
  const srv = await tlsServer(a);
  const client = await tlsConnect(b, srv.port);
  await until(() => srv.accepted.length === 1, 'the server side of the TLS connection');
  srv.server.close(); // stops listening; the connection stays (close's callback would wait for it to end)
  return { server: srv.accepted[0]!, client };
}

/** A free TCP port on 127.0.0.1 (listened on, then closed). */
export async function freePort(): Promise<number> {
  const s = createNetServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

/** `m` as one frame on the wire. */
export const wire = (m: Message): Uint8Array => frame(encodeMessage(m));
