import type { Id } from '@cornice/sdk';

/**
 * A chain the chain manager creates: from the platform state (chains/creator.ts), the network genesis
 * (genesis/genesis.ts) or the test kit.
 */
export interface ChainDefinition {
  /** The chain ID (= the ID of the transaction that created it). */
  id: Id;
  name: string;
  subnetId: Id;
  vmId: Id;
  fxIds: Id[];
  genesis: Uint8Array;
  /** Aliases, primary first (e.g. ['timestamp']). */
  aliases: string[];
  /** Extra endpoint aliases: /ext/<alias> -> /ext/bc/<chainID> (e.g. 'timestamp'). */
  endpointAliases?: string[];
}
