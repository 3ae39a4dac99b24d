/**
 * Network genesis: the platform chain's genesis (accounts, Default Subnet validators, the genesis
 * chains as CreateChainTxs) plus what only the node knows (the genesis chains' aliases, the native
 * asset). The platform chain reports the chains of its state and the chain manager creates them
 * from ChainDefinitions (chains/definition.ts).
 */
import { Id, ShortId, sha256, type Validator } from '@cornice/sdk';
import { txId } from '../platform/codec.js';
import { encodeGenesis, genesisChainTx, type PlatformGenesis } from '../platform/genesis.js';
import { EMPTY_SIGNATURE } from '../platform/model.js';
import { LOCAL_GENESIS_STAKING_END, LOCAL_GENESIS_TIME, LOCAL_NETWORK_ID, localGenesis, type ChainAliases } from './local.js';

export { genesisChainId } from '../platform/genesis.js';

/** Names a genesis gives one of its chains (the platform state holds none). */
export type GenesisChainNames = ChainAliases;

/** A network's genesis: the platform chain's genesis, and what the node adds to it. */
export interface NetworkGenesis {
  networkId: number;
  platform: PlatformGenesis;
  /** Aliases of genesis chains, by chain ID (`Id.key`). */
  aliases: ReadonlyMap<string, GenesisChainNames>;
  /** The native asset's ID (the X-Chain's AVA), when the genesis defines one. */
  nativeAssetId?: Id;
}

/** A genesis by its chains, validators and accounts (a genesis file, the test kit). */
export interface GenesisSpec {
  chains: Array<{
    name: string;
    vmId: Id;
    subnetId?: Id;
    fxIds?: Id[];
    genesis?: Uint8Array;
    aliases?: readonly string[];
    endpointAliases?: readonly string[];
  }>;
  /** Default Subnet validators, staking from genesis time to far in the future (as the local stakers do). */
  validators: ReadonlyArray<Validator & { destination?: ShortId }>;
  accounts?: ReadonlyArray<{ address: ShortId; balance: bigint }>;
}

/**
 * The platform genesis a spec stands for: its chains as genesis CreateChainTxs (nonce 0, no control
 * signatures, a zero payer signature), its validators as genesis validators of the Default Subnet
 * (rewards to `destination`, by default the first account, else the zero address).
 */
export function genesisOf(networkId: number, spec: GenesisSpec): NetworkGenesis {
  const accounts = (spec.accounts ?? []).map((a) => ({ address: a.address, nonce: 0n, balance: a.balance }));
  const aliases = new Map<string, GenesisChainNames>();
  const chains = spec.chains.map((c) => {
    const tx = genesisChainTx(networkId, { name: c.name, subnetId: c.subnetId ?? Id.empty, vmId: c.vmId, fxIds: c.fxIds ?? [], genesis: c.genesis ?? new Uint8Array() });
    aliases.set(txId(tx).key, { aliases: [...(c.aliases ?? [])], endpointAliases: [...(c.endpointAliases ?? [])] });
    return tx;
  });
  const validators = spec.validators.map((v) => ({
    kind: 'addDefaultSubnetValidator' as const,
    nodeId: v.nodeId,
    weight: v.weight,
    start: LOCAL_GENESIS_TIME,
    end: LOCAL_GENESIS_STAKING_END,
    networkId,
    nonce: 0n,
    destination: v.destination ?? accounts[0]?.address ?? ShortId.fromBytes(new Uint8Array(20)),
    shares: 0,
    sig: EMPTY_SIGNATURE.slice(),
  }));
  return { networkId, platform: { accounts, validators, chains, timestamp: LOCAL_GENESIS_TIME }, aliases };
}

/** The Default Subnet's genesis validators, as the engines sample them until the platform chain reports. */
export function genesisValidators(g: NetworkGenesis): Validator[] {
  return g.platform.validators.map((v) => ({ nodeId: v.nodeId, weight: v.weight }));
}

/** The built-in genesis of a network: only the local network has one; any other needs a genesis file. */
export function networkGenesis(networkId: number): NetworkGenesis | undefined {
  if (networkId !== LOCAL_NETWORK_ID) return undefined;
  const local = localGenesis();
  return { networkId, platform: local.platform, aliases: local.aliases, nativeAssetId: local.nativeAssetId };
}

/** A digest of the genesis: SHA-256 of the platform genesis bytes. The database remembers it and refuses another. */
export function genesisHash(g: NetworkGenesis): Uint8Array {
  return sha256(encodeGenesis(g.platform));
}
