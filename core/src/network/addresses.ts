/** Staking addresses and node IDs as flags give them: `ip:port` (v6 as `[ip]:port`) and cb58 node IDs. */
import { isIP } from 'node:net';
import { ShortId } from '@cornice/sdk';
import type { IpPort } from './messages.js';

/** Longest node ID text read (a 20-byte cb58 ID is ~33 characters). */
const MAX_NODE_ID_CHARS = 64;

/** `1.2.3.4:9651` or `[::1]:9651`, or undefined. */
export function parseIpPort(text: string): IpPort | undefined {
  const m = /^\[([^\]]+)\]:(\d{1,5})$/.exec(text) ?? /^([^:]+):(\d{1,5})$/.exec(text);
  if (!m) return undefined;
  const port = Number(m[2]);
  if (!isIP(m[1]!) || port < 1 || port > 65535) return undefined;
  return { ip: m[1]!, port };
}

export function ipPortProblem(text: string): string | undefined {
  return parseIpPort(text) ? undefined : `staking addresses such as 127.0.0.1:9651 or [::1]:9651 (got ${JSON.stringify(text.slice(0, 80))})`;
}

/** A node ID (cb58, optionally prefixed `NodeID-`), or undefined. */
export function parseNodeId(text: string): ShortId | undefined {
  if (text.length > MAX_NODE_ID_CHARS) return undefined;
  try {
    return ShortId.fromString(text.startsWith('NodeID-') ? text.slice(7) : text);
  } catch {
    return undefined;
  }
}

export function nodeIdProblem(text: string): string | undefined {
  return parseNodeId(text) ? undefined : `node IDs such as LHgqGqV1QYBuyTywXEvmswXme3iH8myRY (got ${JSON.stringify(text.slice(0, 80))})`;
}
