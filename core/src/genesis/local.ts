/**
 * The local network's platform genesis (network ID 12345, as the reference node's local network): the ewoq
 * account, the five local stakers as Default Subnet validators from genesis time to 2100, and the
 * genesis chains X (avm), C (evm) and timestamp, in that order.
 */
import { type Id, ShortId, utf8Encode, vmIdFromName } from '@cornice/sdk';
import { buildAvmGenesis, parseAvmGenesis } from '../platform/avm-genesis.js';
import { genesisChainTx, type GenesisChainSpec, type PlatformGenesis } from '../platform/genesis.js';
import { txId } from '../platform/codec.js';
import { DEFAULT_SUBNET_ID, EMPTY_SIGNATURE, type AddDefaultSubnetValidatorTx } from '../platform/model.js';

/** The one network whose genesis the node knows. */
export const LOCAL_NETWORK_ID = 12345;

/** Node IDs of the committed local staker certificates (core/fixtures/staking/local/staker1..5). */
export const LOCAL_STAKER_NODE_IDS: readonly string[] = [
  'LHgqGqV1QYBuyTywXEvmswXme3iH8myRY',
  'BrUCFthHgbBG5SkGZsVRRtxPh9uYufHr7',
  '2dnEFA4XxJtX8ZATcR3SEfK1cvxGToES7',
  '8U9X27eYX3UALxc8jsm4cak1pjmEeqmVH',
  'BvuGMSg8RNbysMSaoioyPzu2agLW8Y5qR',
];

/** The funded key's address (key `ewoqjP7PxY4yr3iLTpLisriqt94hdyDFNgchSxGGztUrTXtNN`). */
export const EWOQ_ADDRESS = ShortId.fromString('6Y3kysjF9jnHnYkdS9yGAuoHyae2eNmeV');
/** The same key's EVM address (keccak of its public key), funded on the C-Chain. */
export const EWOQ_EVM_ADDRESS = '0x8db97C7cEcE249c2b98bDC0226Cc4C2A57BF52FC';

/** 1 AVA in nAVA. */
const AVA = 1_000_000_000n;
/** Genesis time: 2019-11-01T00:00:00Z. */
export const LOCAL_GENESIS_TIME = 1_572_566_400;
/** Genesis validators stake until 2100-01-01 (genesis is exempt from the 365-day cap). */
export const LOCAL_GENESIS_STAKING_END = 4_102_444_800;
/** Each genesis validator's weight, and the ewoq account's P-Chain balance: 20,000 AVA. */
export const LOCAL_GENESIS_STAKE = 20_000n * AVA;
/** The ewoq address's X-Chain balance: 45,000,000 AVA. */
export const LOCAL_X_CHAIN_BALANCE = 45_000_000n * AVA;

/** The C-Chain's genesis (coreth-style JSON, written compact): chain ID 43110, every fork up to Cancun from genesis, ewoq funded. */
export const LOCAL_C_CHAIN_GENESIS = {
  config: {
    chainId: 43110,
    homesteadBlock: 0,
    daoForkBlock: 0,
    daoForkSupport: true,
    eip150Block: 0,
    eip155Block: 0,
    eip158Block: 0,
    byzantiumBlock: 0,
    constantinopleBlock: 0,
    petersburgBlock: 0,
    istanbulBlock: 0,
    muirGlacierBlock: 0,
    berlinBlock: 0,
    londonBlock: 0,
    arrowGlacierBlock: 0,
    grayGlacierBlock: 0,
    mergeNetsplitBlock: 0,
    terminalTotalDifficulty: 0,
    terminalTotalDifficultyPassed: true,
    shanghaiTime: 0,
    cancunTime: 0,
  },
  nonce: '0x0',
  timestamp: '0x0',
  extraData: '0x00',
  gasLimit: '0x5f5e100',
  difficulty: '0x0',
  mixHash: `0x${'00'.repeat(32)}`,
  coinbase: `0x${'00'.repeat(20)}`,
  alloc: {
    // 1,000,000,000 AVA (18 decimals on the EVM).
    [EWOQ_EVM_ADDRESS.slice(2).toLowerCase()]: { balance: '0x33b2e3c9fd0803ce8000000' },
  },
  number: '0x0',
  gasUsed: '0x0',
  parentHash: `0x${'00'.repeat(32)}`,
} as const;

/** A genesis chain's aliases: the first is the primary; endpoint aliases also serve /ext/<alias>. */
export interface ChainAliases {
  aliases: string[];
  endpointAliases: string[];
}

export interface LocalGenesis {
  platform: PlatformGenesis;
  /** Aliases of each genesis chain by chain ID (`Id.key`). */
  aliases: ReadonlyMap<string, ChainAliases>;
  /** The AVA asset (alias "AVA" in the X-Chain genesis). */
  nativeAssetId: Id;
  xChainId: Id;
  cChainId: Id;
  timestampChainId: Id;
}

const secpFxs = ['secp256k1fx', 'nftfx', 'propertyfx'].map(vmIdFromName);

/** The X-Chain genesis: one fixed-cap asset, AVA (denomination 9), all held by ewoq. */
export function localXChainGenesis(): Uint8Array {
  return buildAvmGenesis([
    { alias: 'AVA', name: 'AVA', symbol: 'AVA', denomination: 9, holders: [{ address: EWOQ_ADDRESS, amount: LOCAL_X_CHAIN_BALANCE }] },
  ]);
}

function localValidator(nodeId: string): AddDefaultSubnetValidatorTx {
  return {
    kind: 'addDefaultSubnetValidator',
    nodeId: ShortId.fromString(nodeId),
    weight: LOCAL_GENESIS_STAKE,
    start: LOCAL_GENESIS_TIME,
    end: LOCAL_GENESIS_STAKING_END,
    networkId: LOCAL_NETWORK_ID,
    nonce: 0n,
    destination: EWOQ_ADDRESS,
    shares: 0,
    sig: EMPTY_SIGNATURE.slice(),
  };
}

/** The local network's genesis, its chains' aliases, and the IDs other parts need. */
export function localGenesis(): LocalGenesis {
  const xGenesis = localXChainGenesis();
  const chain = (name: string, vm: string, fxIds: Id[], genesis: Uint8Array): GenesisChainSpec => ({
    name,
    subnetId: DEFAULT_SUBNET_ID,
    vmId: vmIdFromName(vm),
    fxIds,
    genesis,
  });
  const specs: Array<{ spec: GenesisChainSpec } & ChainAliases> = [
    { spec: chain('X-Chain', 'avm', secpFxs, xGenesis), aliases: ['X', 'avm'], endpointAliases: ['X'] },
    { spec: chain('C-Chain', 'evm', [], utf8Encode(JSON.stringify(LOCAL_C_CHAIN_GENESIS))), aliases: ['C', 'evm'], endpointAliases: ['C'] },
    { spec: chain('Simple Timestamp Server', 'timestamp', [], new Uint8Array()), aliases: ['timestamp'], endpointAliases: ['timestamp'] },
  ];
  const chains = specs.map((s) => genesisChainTx(LOCAL_NETWORK_ID, s.spec));
  const [xChainId, cChainId, timestampChainId] = chains.map(txId) as [Id, Id, Id];
  const aliases = new Map<string, ChainAliases>();
  [xChainId, cChainId, timestampChainId].forEach((chainId, i) => {
    aliases.set(chainId.key, { aliases: [...specs[i]!.aliases], endpointAliases: [...specs[i]!.endpointAliases] });
  });
  const ava = parseAvmGenesis(xGenesis).find((a) => a.alias === 'AVA')!;
  return {
    platform: {
      accounts: [{ address: EWOQ_ADDRESS, nonce: 0n, balance: LOCAL_GENESIS_STAKE }],
      validators: LOCAL_STAKER_NODE_IDS.map(localValidator),
      chains,
      timestamp: LOCAL_GENESIS_TIME,
    },
    aliases,
    nativeAssetId: ava.assetId,
    xChainId,
    cChainId,
    timestampChainId,
  };
}
