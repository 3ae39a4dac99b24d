/**
 * Who made the request being served, for code below the HTTP layer that needs it without a
 * parameter (the keystore's password throttle). server.ts runs each request's handling inside
 * `withClient`; anything it awaits sees `currentClient()`.
 *
 * The client key is the remote IP address, except for loopback clients — every local process,
 * hostile web pages in a local browser included, shares 127.0.0.1 — where it is the connection
 * (address and port): a local attacker's failures then count against its own connections, never
 * against the owner's. Test: test/e2e/api-abuse.test.ts "keystore: a guesser cannot lock the owner out".
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { isIP } from 'node:net';

const storage = new AsyncLocalStorage<string>();

/** Runs `fn` with `client` as the current client. */
export function withClient<T>(client: string, fn: () => T): T {
  return storage.run(client, fn);
}

/** The client of the request being served, or undefined outside a request. */
export function currentClient(): string | undefined {
  return storage.getStore();
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
