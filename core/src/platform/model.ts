/**
 * The platform chain's domain model, the reference node's: accounts, stakers, subnets, chains, and the
 * transactions and blocks that change them. Plain data; the byte formats are in codec.ts, the rules
 * in executor.ts, storage in state.ts. Times are unix seconds (safe integers; u64 on the wire),
 * amounts and nonces bigint.
 */
import { Id, type ShortId } from '@cornice/sdk';
import { SIGNATURE_LENGTH, type Credential, type TransferableInput, type TransferableOutput, type TransferOutput } from '@cornice/sdk/components';

/** The secp256k1fx values the atomic txs carry: the sdk's shared components, the asset VM's own. */
export { SIGNATURE_LENGTH, type Credential, type TransferableInput, type TransferableOutput, type TransferOutput } from '@cornice/sdk/components';

/** The Default Subnet's ID, and the platform chain's own ID: 32 zero bytes, as on the reference node. */
export const DEFAULT_SUBNET_ID = Id.empty;
export const PLATFORM_CHAIN_ID = Id.empty;

/** Staking rules and constants, the reference node's. */
export const MIN_STAKE = 10_000n;
export const MIN_STAKING_SECONDS = 24 * 3600;
export const MAX_STAKING_SECONDS = 365 * 24 * 3600;
/** How far ahead of local time a proposed chain time, or a timed tx's start, must be (reference Delta). */
export const SYNC_BOUND_SECONDS = 10;
/** Decision txs per standard block. */
export const BATCH_SIZE = 30;
/** delegationFeeRate / shares are millionths. */
export const NUMBER_OF_SHARES = 1_000_000;
/** Control keys per subnet, at most (reference create_subnet_tx.go). */
export const MAX_CONTROL_KEYS_THRESHOLD = 25;
export const TX_FEE = 0n;
/** A signature slot not filled yet (an unsigned tx carries 65 zero bytes). */
export const EMPTY_SIGNATURE = new Uint8Array(SIGNATURE_LENGTH);

export interface Account {
  address: ShortId;
  /** The last nonce used; a tx spending from the account carries nonce + 1. */
  nonce: bigint;
  balance: bigint;
}

// ---- Transactions. Signature fields hold EMPTY_SIGNATURE until signed. ----

export interface AddDefaultSubnetValidatorTx {
  kind: 'addDefaultSubnetValidator';
  nodeId: ShortId;
  weight: bigint;
  start: number;
  end: number;
  networkId: number;
  nonce: bigint;
  destination: ShortId;
  /** delegationFeeRate: the validator's cut of delegators' rewards, in millionths. */
  shares: number;
  sig: Uint8Array;
}

export interface AddDefaultSubnetDelegatorTx {
  kind: 'addDefaultSubnetDelegator';
  nodeId: ShortId;
  weight: bigint;
  start: number;
  end: number;
  networkId: number;
  nonce: bigint;
  destination: ShortId;
  sig: Uint8Array;
}

export interface AddNonDefaultSubnetValidatorTx {
  kind: 'addNonDefaultSubnetValidator';
  nodeId: ShortId;
  weight: bigint;
  start: number;
  end: number;
  subnetId: Id;
  networkId: number;
  nonce: bigint;
  /** Sorted by raw bytes. */
  controlSigs: Uint8Array[];
  payerSig: Uint8Array;
}

export interface CreateSubnetTx {
  kind: 'createSubnet';
  networkId: number;
  nonce: bigint;
  /** Must be sorted and unique at issue. */
  controlKeys: ShortId[];
  threshold: number;
  sig: Uint8Array;
}

export interface CreateChainTx {
  kind: 'createChain';
  networkId: number;
  subnetId: Id;
  nonce: bigint;
  chainName: string;
  vmId: Id;
  fxIds: Id[];
  genesisData: Uint8Array;
  controlSigs: Uint8Array[];
  payerSig: Uint8Array;
}

export interface ImportTx {
  kind: 'import';
  networkId: number;
  nonce: bigint;
  account: ShortId;
  ins: TransferableInput[];
  sig: Uint8Array;
  creds: Credential[];
}

export interface ExportTx {
  kind: 'export';
  networkId: number;
  nonce: bigint;
  /** TransferOutputs of assets, exported to shared memory. */
  outs: TransferableOutput<TransferOutput>[];
  sig: Uint8Array;
}

/** Made by the VM only: moves chain time. */
export interface AdvanceTimeTx {
  kind: 'advanceTime';
  time: number;
}

/** Made by the VM only: ends a Default Subnet staker (validator or delegator) by its add tx ID. */
export interface RewardValidatorTx {
  kind: 'rewardValidator';
  txId: Id;
}

export type TimedTx = AddDefaultSubnetValidatorTx | AddDefaultSubnetDelegatorTx | AddNonDefaultSubnetValidatorTx;
export type DecisionTx = CreateSubnetTx | CreateChainTx;
export type AtomicTx = ImportTx | ExportTx;
export type ProposalTx = TimedTx | AdvanceTimeTx | RewardValidatorTx;
/** What a user can issue (platform.issueTx). */
export type IssuableTx = TimedTx | DecisionTx | AtomicTx;
export type PlatformTx = IssuableTx | AdvanceTimeTx | RewardValidatorTx;

// ---- Blocks ----

export type PlatformBlockFields =
  | { kind: 'proposal'; parentId: Id; tx: ProposalTx }
  | { kind: 'commit'; parentId: Id }
  | { kind: 'abort'; parentId: Id }
  | { kind: 'standard'; parentId: Id; txs: DecisionTx[] }
  | { kind: 'atomic'; parentId: Id; tx: AtomicTx };

// ---- State records ----

/** A validator or delegator of a subnet, as the add tx made it. */
export interface Staker {
  /** The ID of the tx that added it (what rewardValidator names). */
  txId: Id;
  tx: TimedTx;
}

export interface SubnetRecord {
  id: Id;
  controlKeys: ShortId[];
  threshold: number;
}

export interface ChainRecord {
  /** The chain ID: the ID of its CreateChainTx. */
  id: Id;
  name: string;
  subnetId: Id;
  vmId: Id;
  fxIds: Id[];
  genesisData: Uint8Array;
}

/** Read access to the platform state (accepted, or as seen by a processing block). */
export interface PlatformStateView {
  /** Chain time, unix seconds. */
  timestamp(): number;
  account(address: ShortId): Promise<Account>;
  subnet(id: Id): Promise<SubnetRecord | undefined>;
  subnets(): Promise<SubnetRecord[]>;
  chain(id: Id): Promise<ChainRecord | undefined>;
  chains(): Promise<ChainRecord[]>;
  /** Current stakers of a subnet (validators and, on the Default Subnet, delegators), by end time. */
  currentStakers(subnetId: Id): Promise<Staker[]>;
  /** Pending stakers of a subnet, by start time. */
  pendingStakers(subnetId: Id): Promise<Staker[]>;
}

/**
 * What the platform VM tells the node (the composition root wires these to the chain manager and
 * the validator sets). Called after the accepting batch is durable, and once at initialization for
 * what the accepted state already holds. Must not throw; must not block.
 */
export interface PlatformEvents {
  /** A chain now exists in accepted state (genesis chains included). */
  chainCreated(chain: ChainRecord): void;
  /** A subnet's current validator set (node IDs with summed weight) changed. */
  validatorsChanged(subnetId: Id, validators: ReadonlyArray<{ nodeId: ShortId; weight: bigint }>): void;
}

/** A blockchain's status for platform.getBlockchainStatus (API.md). */
export type BlockchainStatus = 'Validating' | 'Created' | 'Preferred' | 'Unknown';

/**
 * What the platform service needs of the VM (PlatformVM implements it; service unit tests fake it).
 */
export interface PlatformBackend {
  readonly networkId: number;
  /** This node's ID (the default `id` of add-validator builders). */
  readonly nodeId: ShortId;
  /** Local time, unix seconds. */
  now(): number;
  /** The last accepted state. */
  accepted(): PlatformStateView;
  /** The state at the preferred block (accepted + processing blocks on the preferred branch). */
  preferred(): PlatformStateView;
  /**
   * Checks a signed tx against the preferred state and queues it for a block; its ID. Throws a
   * PlatformError naming the broken rule (the reference's text where it has one).
   */
  issueTx(tx: IssuableTx): Promise<Id>;
  blockchainStatus(chainId: Id): Promise<BlockchainStatus>;
  /** A vmID from a vmID or alias of a VM this node has loaded; PlatformError('UnknownVM') naming the loaded VMs. */
  resolveVm(vm: string): Id;
  /** Throws (the VM's reason) when `genesis` is not valid genesis data for the VM. */
  checkGenesis(vmId: Id, genesis: Uint8Array): Promise<void>;
  /** The chain whose atomic UTXOs importNATIVE sweeps and exportNATIVE targets (the X-Chain), and the native asset. */
  atomicPeer(): { chainId: Id; assetId: Id } | undefined;
  /** Everything the atomic peer exported to this chain: UTXO bytes by UTXO ID (shared memory). */
  atomicUtxos(): AsyncIterable<[utxoId: Uint8Array, utxo: Uint8Array]>;
  /** The user's encrypted per-chain store (keystore access of the ChainContext). */
  openUser(username: string, password: string): Promise<import('@cornice/sdk').KeyValueStore>;
}
