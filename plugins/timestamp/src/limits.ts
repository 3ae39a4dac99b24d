/**
 * The bound on what free txs make the node store (limits.test.ts). Every `timestamp.proposeBlock`
 * is free and becomes a block this node stores for good (its 72 bytes, status and height: ~160
 * bytes with the keys). This node takes at most `free-txs-per-minute` proposals a minute (default
 * 6,000, ~1 MB of blocks a minute), with bursts of up to one minute's worth; past it a proposal is
 * refused with a clear error saying when to try again. Blocks built by other nodes are never
 * refused for it: the bound is on what this node's API admits.
 * Tests: limits.test.ts; through a node: 'the chain configs bound free txs …' (test/e2e/avm.test.ts).
 */
import { utf8Decode, type RateBudget } from '@cornice/sdk';
import { TimestampError } from './errors.js';

/** Default `free-txs-per-minute`: 100 a second on average. */
export const DEFAULT_FREE_TXS_PER_MINUTE = 6000;

/** The per-chain config keys this VM reads (`<chain-config-dir>/<chain>/config.json`). */
export interface TimestampChainConfig {
  freeTxsPerMinute?: number;
}

/**
 * The chain config (a JSON object): `free-txs-per-minute`, a whole number >= 1. Other keys are
 * returned in `ignored` (the VM logs them); anything else is TimestampError('InvalidConfig').
 * Test: 'the chain config sets free-txs-per-minute …' (limits.test.ts).
 */
export function parseTimestampConfig(config: Uint8Array): { options: TimestampChainConfig; ignored: string[] } {
  if (config.length === 0) return { options: {}, ignored: [] };
  let json: unknown;
  try {
    json = JSON.parse(utf8Decode(config));
  } catch {
    throw new TimestampError('InvalidConfig', 'invalid chain config file: not valid JSON');
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new TimestampError('InvalidConfig', 'invalid chain config file: must be a JSON object');
  const options: TimestampChainConfig = {};
  const ignored: string[] = [];
  for (const [key, value] of Object.entries(json)) {
    if (key === 'free-txs-per-minute') {
      if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
        throw new TimestampError('InvalidConfig', `invalid chain config file: ${key}: must be a whole number >= 1`, { field: key });
      }
      options.freeTxsPerMinute = value;
    } else ignored.push(key);
  }
  return { options, ignored };
}

/** Charges one free tx to `budget` at `now`, or throws TimestampError('RateLimited') with the seconds to wait (-32000). */
export function chargeFreeTx(budget: RateBudget, now: number): void {
  const waitMs = budget.take(1, now);
  if (waitMs === 0) return;
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  // `code` in data too: the node sends data in place of its default `{code}`.
  throw new TimestampError('RateLimited', `free transactions on this chain are limited to ${budget.perMinute} per minute; try again in ${seconds} s`, {
    code: 'RateLimited',
    limitPerMinute: budget.perMinute,
    retryAfterSeconds: seconds,
  });
}
