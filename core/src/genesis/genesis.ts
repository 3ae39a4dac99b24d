/**
 * Network genesis: the platform chain's genesis (accounts, Default Subnet validators, the genesis
 * chains as CreateChainTxs) plus what only the node knows (the genesis chains' aliases, the native
 * asset). The platform chain reports the chains of its state and the chain manager creates them
 * from ChainDefinitions.
 */
import { Id, ShortId, sha256, type Validator } from '@cornice/sdk';
import { EMPTY_SIGNATURE, type CreateChainTx } from '../platform/model.js';
import { encodeGenesis, txId, type PlatformGenesis } from './pending-codec.js';
import { localGenesis } from './pending-local.js';

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

/** Names a genesis gives one of its chains (the platform state holds none). */
export interface GenesisChainNames {
  aliases: readonly string[];
  endpointAliases: readonly string[];
}

/** A network's genesis: the platform chain's genesis, and what the node adds to it. */
export interface NetworkGenesis {
  networkId: number;
  platform: PlatformGenesis;
  /** Aliases of genesis chains, by cb58 chain ID. */
  aliases: ReadonlyMap<string, GenesisChainNames>;
  /** The native asset's ID (the X-Chain's AVA), when the genesis defines one. */
  nativeAssetId?: Id;
}

/** Genesis time, 2019-11-01T00:00:00Z (reference §6.8). */
export const GENESIS_TIME = 1572566400;
/** When genesis validators stop staking: far in the future (DESIGN §8: genesis is exempt from the 365-day cap). */
export const GENESIS_VALIDATOR_END = GENESIS_TIME + 100 * 365 * 24 * 3600;

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
  /** Default Subnet validators, staking from genesis time to GENESIS_VALIDATOR_END. */
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
    const tx = genesisCreateChainTx(networkId, { name: c.name, subnetId: c.subnetId ?? Id.empty, vmId: c.vmId, fxIds: c.fxIds ?? [], genesis: c.genesis ?? new Uint8Array() });
    aliases.set(txId(tx).toString(), { aliases: [...(c.aliases ?? [])], endpointAliases: [...(c.endpointAliases ?? [])] });
    return tx;
  });
  const validators = spec.validators.map((v) => ({
    kind: 'addDefaultSubnetValidator' as const,
    nodeId: v.nodeId,
    weight: v.weight,
    start: GENESIS_TIME,
    end: GENESIS_VALIDATOR_END,
    networkId,
    nonce: 0n,
    destination: v.destination ?? accounts[0]?.address ?? ShortId.fromBytes(new Uint8Array(20)),
    shares: 0,
    sig: EMPTY_SIGNATURE,
  }));
  return { networkId, platform: { accounts, validators, chains, timestamp: GENESIS_TIME }, aliases };
}

function genesisCreateChainTx(networkId: number, chain: { name: string; subnetId: Id; vmId: Id; fxIds: Id[]; genesis: Uint8Array }): CreateChainTx {
  return {
    kind: 'createChain',
    networkId,
    subnetId: chain.subnetId,
    nonce: 0n,
    chainName: chain.name,
    vmId: chain.vmId,
    fxIds: chain.fxIds,
    genesisData: chain.genesis,
    controlSigs: [],
    payerSig: EMPTY_SIGNATURE,
  };
}

/** The Default Subnet's genesis validators, as the engines sample them until the platform chain reports. */
export function genesisValidators(g: NetworkGenesis): Validator[] {
  return g.platform.validators.map((v) => ({ nodeId: v.nodeId, weight: v.weight }));
}

/**
 * The ID of a genesis chain, as the reference computes it: the ID of its genesis CreateChainTx
 * (SHA-256 of NetworkID, SubnetID, Nonce 0, ChainName, VMID, FxIDs, GenesisData, empty ControlSigs
 * and a PayerSig of 65 zero bytes, without type IDs; reference §6.3, §6.8).
 */
export function genesisChainId(networkId: number, chain: { name: string; subnetId: Id; vmId: Id; fxIds: Id[]; genesis: Uint8Array }): Id {
  return txId(genesisCreateChainTx(networkId, chain));
}

/** Node IDs of the committed local staker certificates (core/fixtures/staking/local/staker1..5). */
export const LOCAL_STAKER_NODE_IDS: readonly string[] = [
  'LHgqGqV1QYBuyTywXEvmswXme3iH8myRY',
  'BrUCFthHgbBG5SkGZsVRRtxPh9uYufHr7',
  '2dnEFA4XxJtX8ZATcR3SEfK1cvxGToES7',
  '8U9X27eYX3UALxc8jsm4cak1pjmEeqmVH',
  'BvuGMSg8RNbysMSaoioyPzu2agLW8Y5qR',
];

/** The one network whose genesis the node knows. */
export const LOCAL_NETWORK_ID = 12345;

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
