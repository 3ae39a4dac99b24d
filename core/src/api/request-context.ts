/**
 * Who made the request being served, for code below the HTTP layer that needs it without a
 * parameter (the keystore's password throttle). server.ts runs the synchronous part of each
 * request's dispatch inside `withClient`: the keystore reads `currentClient()` when a call enters it,
 * before its first await — through the keystore API, and through a chain service that opens a user
 * as it starts (avm, platform). A user opened after an await, or from a VM in a worker
 * (--vm-isolation), gets no client: its failures count against the shared key ''.
 *
 * Not AsyncLocalStorage: on Node 20 it puts a hook on every promise of the process, and the EVM's
 * interpreter awaits once per opcode, so under eth_call load a large share of a node's CPU goes to
 * async_hooks (a profile of bench/attack.mjs shows it), as chains/faults.ts says for JSON-RPC.
 *
 * The client key is the remote IP address, except for loopback clients — every local process,
 * hostile web pages in a local browser included, shares 127.0.0.1 — where it is the connection
 * (address and port): a local attacker's failures then count against its own connections, never
 * against the owner's. Test: test/e2e/api-abuse.test.ts "keystore: a guesser cannot lock the owner out".
 */
import { isIP } from 'node:net';

let current: string | undefined;

/** Runs `fn` with `client` as the current client for its synchronous part (see the file comment). */
export function withClient<T>(client: string, fn: () => T): T {
  const outer = current;
  current = client;
  try {
    return fn();
  } finally {
    current = outer;
  }
}

/** The client of the request whose dispatch is running, or undefined outside one. */
export function currentClient(): string | undefined {
  return current;
}

/** The client key of a connection from `address`:`port` (see the file comment). */
export function clientKey(address: string | undefined, port: number | undefined): string {
  if (address === undefined) return 'unknown';
  return isLoopback(address) ? `${address}:${port ?? 0}` : address;
}

function isLoopback(address: string): boolean {
  if (address === '::1') return true;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return isIP(v4) === 4 && v4.startsWith('127.');
}
