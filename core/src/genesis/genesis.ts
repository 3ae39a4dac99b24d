/**
 * Network genesis: the chains a node creates at start-up and the genesis validators. Chain creation
 * is driven by these definitions — the same shape the platform chain will produce from accepted
 * createBlockchain transactions — so the platform chain can take this over without changing the
 * chain manager.
 */
import { Id, ShortId, Writer, sha256, vmIdFromName, type Logger, type Validator } from '@cornice/sdk';

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

export interface NetworkGenesis {
  networkId: number;
  chains: ChainDefinition[];
  /** Validators of the default subnet. */
  validators: Validator[];
}

/**
 * The ID of a genesis chain, as the reference computes it: SHA-256 of the CreateChainTx fields
 * (NetworkID, SubnetID, Nonce 0, ChainName, VMID, FxIDs, GenesisData), then empty ControlSigs and a
 * PayerSig of 65 zero bytes — without type IDs (reference §6.3, §6.8).
 */
export function genesisChainId(networkId: number, chain: { name: string; subnetId: Id; vmId: Id; fxIds: Id[]; genesis: Uint8Array }): Id {
  const w = new Writer({ maxSize: 1 << 22 })
    .u32(networkId)
    .id(chain.subnetId)
    .u64(0n)
    .str(chain.name)
    .id(chain.vmId)
    .array(chain.fxIds, (w2, fx) => w2.id(fx))
    .bytes(chain.genesis)
    .u32(0)
    .fixedBytes(new Uint8Array(65));
  return Id.fromBytes(sha256(w.finish()));
}

/** Node IDs of the committed local staker certificates (core/fixtures/staking/local/staker1..5). */
export const LOCAL_STAKER_NODE_IDS: readonly string[] = [
  'LHgqGqV1QYBuyTywXEvmswXme3iH8myRY',
  'BrUCFthHgbBG5SkGZsVRRtxPh9uYufHr7',
  '2dnEFA4XxJtX8ZATcR3SEfK1cvxGToES7',
  '8U9X27eYX3UALxc8jsm4cak1pjmEeqmVH',
  'BvuGMSg8RNbysMSaoioyPzu2agLW8Y5qR',
];

/** 20,000 AVA in nAVA, each genesis validator's weight (reference §6.8). */
const GENESIS_VALIDATOR_WEIGHT = 20_000n * 1_000_000_000n;

/** The one network whose genesis the node knows. */
export const LOCAL_NETWORK_ID = 12345;

/**
 * The built-in genesis of a network: only the local network has one (the timestamp chain, the five
 * local stakers). Any other network is undefined: it needs a genesis file.
 */
export function networkGenesis(networkId: number): NetworkGenesis | undefined {
  if (networkId !== LOCAL_NETWORK_ID) return undefined;
  const timestamp = {
    name: 'Simple Timestamp Server',
    subnetId: Id.empty,
    vmId: vmIdFromName('timestamp'),
    fxIds: [],
    genesis: new Uint8Array(),
  };
  return {
    networkId,
    chains: [{ ...timestamp, id: genesisChainId(networkId, timestamp), aliases: ['timestamp'], endpointAliases: ['timestamp'] }],
    validators: LOCAL_STAKER_NODE_IDS.map((id) => ({ nodeId: ShortId.fromString(id), weight: GENESIS_VALIDATOR_WEIGHT })),
  };
}

/**
 * The genesis chains this node can run: those whose VM is loaded. A chain whose VM is missing (a
 * built-in VM package that is not installed) is not created, and a warning names the chain and the
 * VM. It stays in the genesis (and its hash), so installing the VM later runs it on the same database.
 */
export function runnableChains(genesis: NetworkGenesis, vms: { has(vmId: Id): boolean }, log: Logger): ChainDefinition[] {
  return genesis.chains.filter((chain) => {
    if (vms.has(chain.vmId)) return true;
    log.warn('genesis chain not run: its VM is not loaded', {
      chain: chain.name,
      chainId: chain.id.toString(),
      alias: chain.aliases[0],
      vmId: chain.vmId.toString(),
      vm: vmNameOf(chain.vmId),
    });
    return false;
  });
}

/** The VM name a vmID was made from (`timestamp`), when it is a zero-padded printable name. */
function vmNameOf(vmId: Id): string | undefined {
  const bytes = vmId.bytes;
  let end = bytes.length;
  while (end > 0 && bytes[end - 1] === 0) end--;
  const name = bytes.subarray(0, end);
  return name.length > 0 && name.every((b) => b >= 0x21 && b <= 0x7e) ? new TextDecoder().decode(name) : undefined;
}

/** A digest of what a genesis creates; the database remembers it and refuses another genesis. */
export function genesisHash(g: NetworkGenesis): Uint8Array {
  const w = new Writer({ maxSize: 1 << 22 })
    .u32(g.networkId)
    .array(g.chains, (w2, c) => w2.id(c.id))
    .array(g.validators, (w2, v) => w2.shortId(v.nodeId).u64(v.weight));
  return sha256(w.finish());
}
