/**
 * TEMPORARY (p-node branch only): stands in for core/src/genesis/local.ts until the p-codec branch
 * is merged (only the timestamp chain; the real one adds X and C).
 */
import { ShortId, vmIdFromName, type Id } from '@cornice/sdk';
import { LOCAL_NETWORK_ID, LOCAL_STAKER_NODE_IDS, genesisOf, type GenesisChainNames } from './genesis.js';
import type { PlatformGenesis } from './pending-codec.js';

export interface LocalGenesis {
  platform: PlatformGenesis;
  aliases: ReadonlyMap<string, GenesisChainNames>;
  nativeAssetId: Id | undefined;
}

export function localGenesis(): LocalGenesis {
  const ewoq = ShortId.fromString('6Y3kysjF9jnHnYkdS9yGAuoHyae2eNmeV');
  const g = genesisOf(LOCAL_NETWORK_ID, {
    chains: [{ name: 'Simple Timestamp Server', vmId: vmIdFromName('timestamp'), aliases: ['timestamp'], endpointAliases: ['timestamp'] }],
    validators: LOCAL_STAKER_NODE_IDS.map((id) => ({ nodeId: ShortId.fromString(id), weight: 20_000n * 1_000_000_000n })),
    accounts: [{ address: ewoq, balance: 20_000n * 1_000_000_000n }],
  });
  return { platform: g.platform, aliases: g.aliases, nativeAssetId: undefined };
}
