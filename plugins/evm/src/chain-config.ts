/**
 * The EVM's default per-chain config (`config.json`, the node's --chain-config-dir): a JSON object
 * with coreth's key names. Kept apart from the VM so that the package root loads it without
 * @ethereumjs (the subnet-EVM's parser reads these keys too).
 */
import { utf8Decode } from '@cornice/sdk';
import type { EvmChainOptions } from './chain/chain.js';
import { MEMPOOL_OPTION_MINIMUMS, type MempoolOptions } from './chain/mempool.js';
import { EvmChainError } from './errors.js';

/** The per-chain config keys this VM reads, by coreth's names (its C-Chain config.json). */
const CONFIG_KEYS: Record<string, (v: unknown, key: string) => Partial<EvmChainOptions>> = {
  'allow-unprotected-txs': (v, key) => {
    if (typeof v !== 'boolean') throw badConfig(key, 'must be true or false');
    return { allowUnprotectedTxs: v };
  },
  'rpc-gas-cap': (v, key) => {
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 21_000) throw badConfig(key, 'must be a whole number of gas >= 21000');
    return { rpcGasCap: BigInt(v) };
  },
  // coreth's bound on a tx's fee over the RPC, in whole native units (0: none).
  'rpc-tx-fee-cap': (v, key) => {
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw badConfig(key, 'must be a number >= 0 (whole native units; 0: no cap)');
    return { rpcTxFeeCap: v };
  },
  // coreth's API list: this VM serves eth, eth-filter, net, web3 and the internal-* reads always;
  // the list decides personal_ and node-held accounts (rpc/personal.ts). An unknown name fails, as in coreth.
  'eth-apis': (v, key) => {
    if (!Array.isArray(v) || v.length > 64 || !v.every((n) => typeof n === 'string')) throw badConfig(key, 'must be a list of API names');
    const unknown = (v as string[]).find((n) => !ETH_API_NAMES.has(n));
    if (unknown !== undefined) throw badConfig(key, `API service ${JSON.stringify(unknown.slice(0, 64))} not found (coreth's names: ${[...ETH_API_NAMES].slice(0, 16).join(', ')}, …)`);
    return { personalApi: (v as string[]).some((n) => PERSONAL_API_NAMES.has(n)), debugApi: (v as string[]).some((n) => DEBUG_API_NAMES.has(n)) };
  },
  'keystore-insecure-unlock-allowed': (v, key) => {
    if (typeof v !== 'boolean') throw badConfig(key, 'must be true or false');
    return { allowInsecureUnlock: v };
  },
  // The pool's bounds (chain/mempool.ts), coreth's names and meanings.
  'tx-pool-account-slots': poolCount('accountSlots'),
  'tx-pool-global-slots': poolCount('globalSlots'),
  'tx-pool-account-queue': poolCount('accountQueue'),
  'tx-pool-global-queue': poolCount('globalQueue'),
  'tx-pool-price-bump': poolCount('priceBumpPercent'),
  'tx-pool-lifetime': (v, key) => ({ mempool: { lifetimeMs: duration(v, key) } }),
  // The JSON-RPC front end's bounds, by coreth's names (geth's --rpc.batch-request-limit,
  // --rpc.batch-response-max-size; coreth's http-body-limit). Unlike coreth, 0 is not "no limit".
  'batch-request-limit': (v, key) => ({ rpcLimits: { maxBatchItems: count(v, key, 1) } }),
  'batch-response-max-size': (v, key) => ({ rpcLimits: { maxResponseChars: count(v, key, 1_024) } }),
  'http-body-limit': (v, key) => ({ rpcLimits: { maxBodyBytes: count(v, key, 1_024) } }),
};

/** The names that turn personal_ on: coreth's, its deprecated one, and geth's. */
const PERSONAL_API_NAMES = new Set(['internal-personal', 'internal-private-personal', 'personal']);

/** The names that turn debug_trace* and debug_getRaw* on: coreth's tracer and debug APIs, and geth's. */
const DEBUG_API_NAMES = new Set(['debug-tracer', 'internal-debug', 'internal-private-debug', 'internal-public-debug', 'debug']);

/** coreth's eth-apis names (and their deprecated forms), and geth's `personal`. */
const ETH_API_NAMES = new Set([
  'eth', 'eth-filter', 'net', 'web3', 'internal-eth', 'internal-blockchain', 'internal-transaction', 'internal-tx-pool',
  'internal-debug', 'internal-account', 'internal-personal', 'admin', 'debug', 'debug-tracer', 'debug-handler', 'personal',
  'public-eth', 'public-eth-filter', 'private-admin', 'private-debug', 'public-debug', 'internal-public-eth',
  'internal-public-blockchain', 'internal-public-transaction-pool', 'internal-public-tx-pool', 'internal-public-debug',
  'internal-private-debug', 'internal-public-account', 'internal-private-personal',
]);

/** A whole-number pool bound, at least the pool's minimum for it. */
function poolCount(name: keyof MempoolOptions): (v: unknown, key: string) => Partial<EvmChainOptions> {
  return (v, key) => {
    const min = MEMPOOL_OPTION_MINIMUMS[name];
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > 2 ** 31) throw badConfig(key, `must be a whole number >= ${min}`);
    return { mempool: { [name]: v } };
  };
}

const DURATION_UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** A duration as coreth reads one: a Go duration string ("10m", "1h30m", "500ms") or a number of nanoseconds; in ms, at least 1. */
function duration(v: unknown, key: string): number {
  let ms: number | undefined;
  if (typeof v === 'number' && Number.isFinite(v)) ms = Math.floor(v / 1e6);
  else if (typeof v === 'string' && /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/.test(v) && v.length <= 64) {
    ms = 0;
    for (const [, n, unit] of v.matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g)) ms += Number(n) * DURATION_UNITS[unit!]!;
    ms = Math.floor(ms);
  }
  if (ms === undefined || !(ms >= 1 && ms <= 365 * 24 * 3_600_000)) throw badConfig(key, 'must be a duration such as "10m" or "3h" (or nanoseconds), from 1ms to a year');
  return ms;
}

function count(v: unknown, key: string, min: number): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) throw badConfig(key, `must be a whole number >= ${min}`);
  return v;
}

const badConfig = (key: string, why: string) => new EvmChainError('InvalidConfig', `invalid chain config file: ${key}: ${why}`, { field: key });

/**
 * The default per-chain config: a JSON object whose keys are coreth's (CONFIG_KEYS); other keys are
 * returned in `ignored` (coreth ignores them too; initialize logs them), and the object itself in
 * `json` (for a VM that reads keys of its own, as the subnet-EVM's feeRecipient).
 */
export function parseChainConfig(config: Uint8Array): { options: Partial<EvmChainOptions>; ignored: string[]; json: Readonly<Record<string, unknown>> } {
  if (config.length === 0) return { options: {}, ignored: [], json: {} };
  let json: unknown;
  try {
    json = JSON.parse(utf8Decode(config));
  } catch {
    throw new EvmChainError('InvalidConfig', 'invalid chain config file: not valid JSON');
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new EvmChainError('InvalidConfig', 'invalid chain config file: must be a JSON object');
  const options: Partial<EvmChainOptions> = {};
  const ignored: string[] = [];
  for (const [key, value] of Object.entries(json)) {
    const read = Object.hasOwn(CONFIG_KEYS, key) ? CONFIG_KEYS[key] : undefined;
    if (read) {
      const { mempool, rpcLimits, ...rest } = read(value, key);
      Object.assign(options, rest);
      if (mempool) options.mempool = { ...options.mempool, ...mempool };
      if (rpcLimits) options.rpcLimits = { ...options.rpcLimits, ...rpcLimits };
    }
    else ignored.push(key);
  }
  return { options, ignored, json: json as Record<string, unknown> };
}
