/**
 * The bound on what free txs make the node store (limits.test.ts). The X-Chain charges no fee,
 * and anyone can create an asset: a tx that creates an asset, or makes UTXOs of any asset but the
 * native token, costs its maker nothing scarce. Such txs may make this node store at most
 * `free-tx-bytes-per-minute` bytes a minute (storedBytes in state.ts), with bursts of up to one
 * minute's worth: past it, issuing one (through the API or by gossip) is refused with a clear error
 * saying when to try again. Txs that only move the native token are not counted (what bounds them
 * is the token itself). Blocks from other nodes are never refused for it: the bound is this node's
 * admission, so a network of n nodes stores at most n times it.
 * Tests: limits.test.ts ('free txs past free-tx-bytes-per-minute are refused …', 'gossiped free txs
 * count too …', 'a native transfer carrying UTXOs of another asset is free …'); through a node:
 * 'the chain configs bound free txs …' (test/e2e/avm.test.ts, the timestamp chain's).
 */
import { utf8Decode, type Id, type RateBudget } from '@cornice/sdk';
import { AvmError } from './errors.js';
import type { TxEffect } from './rules.js';

/** Default `free-tx-bytes-per-minute`: 4 MiB, ~5,000 one-holder assets or ~10 assets of 1,024 holders a minute. */
export const DEFAULT_FREE_TX_BYTES_PER_MINUTE = 4 * 1024 * 1024;

/** The per-chain config keys this VM reads (`<chain-config-dir>/<chain>/config.json`). */
export interface AvmChainConfig {
  freeTxBytesPerMinute?: number;
}

const badConfig = (key: string, why: string) => new AvmError('InvalidConfig', `invalid chain config file: ${key}: ${why}`, { field: key });

/**
 * The chain config (a JSON object): `free-tx-bytes-per-minute`, a whole number >= 1. Other keys
 * are returned in `ignored` (the VM logs them); anything else is AvmError('InvalidConfig').
 * Test: 'the chain config sets free-tx-bytes-per-minute …' (limits.test.ts).
 */
export function parseAvmConfig(config: Uint8Array): { options: AvmChainConfig; ignored: string[] } {
  if (config.length === 0) return { options: {}, ignored: [] };
  let json: unknown;
  try {
    json = JSON.parse(utf8Decode(config));
  } catch {
    throw new AvmError('InvalidConfig', 'invalid chain config file: not valid JSON');
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new AvmError('InvalidConfig', 'invalid chain config file: must be a JSON object');
  const options: AvmChainConfig = {};
  const ignored: string[] = [];
  for (const [key, value] of Object.entries(json)) {
    if (key === 'free-tx-bytes-per-minute') {
      if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) throw badConfig(key, 'must be a whole number of bytes >= 1');
      options.freeTxBytesPerMinute = value;
    } else ignored.push(key);
  }
  return { options, ignored };
}

/**
 * Whether a tx counts against the free-tx budget: it creates an asset, or makes a UTXO of an asset
 * other than `native` (every UTXO it makes, on a chain without a native asset).
 */
export function isFreeTx(e: TxEffect, native: Id | undefined): boolean {
  if (e.asset) return true;
  for (const p of e.produced) if (!native || !p.utxo.assetId.equals(native)) return true;
  return false;
}

/**
 * Charges a free tx of `cost` stored bytes to `budget` at `now`, or throws the error the API
 * answers with (-32000): `RateLimited` with the seconds to wait, or `Limit` for a tx bigger than a
 * minute's worth. `nativeSymbol` names the token whose txs are not counted.
 */
export function chargeFreeTx(budget: RateBudget, cost: number, now: number, nativeSymbol: string): void {
  const waitMs = budget.take(cost, now);
  if (waitMs === 0) return;
  // `code` in data too: the node sends data in place of its default `{code}`.
  const data = { limitBytesPerMinute: budget.perMinute, txBytes: cost };
  if (waitMs === Infinity) {
    throw new AvmError(
      'Limit',
      `this transaction would store ${cost} bytes, more than the ${budget.perMinute} bytes a minute free transactions may store on this chain (free-tx-bytes-per-minute); make it smaller`,
      { code: 'Limit', ...data },
    );
  }
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  throw new AvmError(
    'RateLimited',
    `free transactions on this chain are limited to ${budget.perMinute} bytes per minute (those that create an asset or make UTXOs of an asset other than ${nativeSymbol}); try again in ${seconds} s`,
    { code: 'RateLimited', ...data, retryAfterSeconds: seconds },
  );
}
