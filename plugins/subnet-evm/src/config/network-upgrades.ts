/**
 * Network upgrades (README.md "Genesis `config`"): the `*Timestamp` fields of the chain config. Absent ones take this
 * node's network defaults (as avalanchego's local network: SubnetEVM, Durango and Etna active from
 * genesis; Fortuna and Granite unscheduled). Durango and Etna map to the Ethereum forks Shanghai and
 * Cancun (SetEthUpgrades).
 */
import { ConfigError, type NetworkUpgrades } from '../types.js';
import { jsonInteger, parseUint64 } from './json.js';

/** In activation order; each must be at or after the previous scheduled one. */
export const NETWORK_UPGRADE_FIELDS = ['subnetEVMTimestamp', 'durangoTimestamp', 'etnaTimestamp', 'fortunaTimestamp', 'graniteTimestamp'] as const;

export type NetworkUpgradeField = (typeof NETWORK_UPGRADE_FIELDS)[number];

export const DEFAULT_NETWORK_UPGRADES: NetworkUpgrades = Object.freeze({
  subnetEVMTimestamp: 0n,
  durangoTimestamp: 0n,
  etnaTimestamp: 0n,
});

/** True when an upgrade scheduled at `at` is active at `timestamp`. */
export function isForked(at: bigint | undefined, timestamp: bigint): boolean {
  return at !== undefined && at <= timestamp;
}

/**
 * Reads the upgrade timestamps from a config object (`field` its path). subnetEVMTimestamp must be
 * 0: this node has no pre-SubnetEVM rules. Scheduled upgrades must be in order; an absent one with
 * a default (Durango, Etna) is not before the upgrade preceding it (`durangoTimestamp: 100` alone
 * schedules Etna at 100 too).
 */
export function parseNetworkUpgrades(config: Readonly<Record<string, unknown>>, field: string): NetworkUpgrades {
  const out: { -readonly [K in NetworkUpgradeField]?: bigint } = {};
  let floor = 0n;
  for (const f of NETWORK_UPGRADE_FIELDS) {
    const v = config[f];
    const fallback = DEFAULT_NETWORK_UPGRADES[f];
    const at = v !== undefined && v !== null ? parseUint64(v, `${field}.${f}`) : fallback === undefined ? undefined : fallback > floor ? fallback : floor;
    if (at === undefined) continue;
    out[f] = at;
    if (at > floor) floor = at;
  }
  if (out.subnetEVMTimestamp !== 0n) throw new ConfigError(`${field}.subnetEVMTimestamp`, `must be 0 (SubnetEVM active from genesis), got ${out.subnetEVMTimestamp}`);
  let previous: { name: NetworkUpgradeField; at: bigint } | undefined;
  for (const f of NETWORK_UPGRADE_FIELDS) {
    const at = out[f];
    if (at === undefined) continue;
    if (previous !== undefined && at < previous.at) {
      throw new ConfigError(`${field}.${f}`, `unsupported fork ordering: ${f} (${at}) is before ${previous.name} (${previous.at})`);
    }
    previous = { name: f, at };
  }
  return out;
}

/** The scheduled upgrades as JSON fields (unscheduled ones omitted). */
export function networkUpgradesJson(u: NetworkUpgrades): Record<string, number | string> {
  const out: Record<string, number | string> = {};
  for (const f of NETWORK_UPGRADE_FIELDS) {
    const at = u[f];
    if (at !== undefined) out[f] = jsonInteger(at);
  }
  return out;
}
