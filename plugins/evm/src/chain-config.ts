/**
 * The EVM's default per-chain config (`config.json`, the node's --chain-config-dir): a JSON object
 * with coreth's key names. Kept apart from the VM so that the package root loads it without
 * @ethereumjs (the subnet-EVM's parser reads these keys too).
 */
import { utf8Decode } from '@cornice/sdk';
import type { EvmChainOptions } from './chain/chain.js';
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
  // The JSON-RPC front end's bounds, by coreth's names (geth's --rpc.batch-request-limit,
  // --rpc.batch-response-max-size; coreth's http-body-limit). Unlike coreth, 0 is not "no limit".
  'batch-request-limit': (v, key) => ({ rpcLimits: { maxBatchItems: count(v, key, 1) } }),
  'batch-response-max-size': (v, key) => ({ rpcLimits: { maxResponseChars: count(v, key, 1_024) } }),
  'http-body-limit': (v, key) => ({ rpcLimits: { maxBodyBytes: count(v, key, 1_024) } }),
};

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
      const { rpcLimits, ...rest } = read(value, key);
      Object.assign(options, rest);
      if (rpcLimits) options.rpcLimits = { ...options.rpcLimits, ...rpcLimits };
    }
    else ignored.push(key);
  }
  return { options, ignored, json: json as Record<string, unknown> };
}
