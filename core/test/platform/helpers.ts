/** A platform VM on a memory store with an injected clock, and helpers to sign and drive blocks. */
import { Id, MemoryStore, PrivateKey, ShortId, vmIdFromName, type ChainContext, type KeyValueStore, type Logger } from '@cornice/sdk';
import { PrefixedStore } from '@cornice/sdk';
import { sharedMemoryFor } from '../../src/chains/shared-memory.js';
import { testChainContext } from '../../src/testing/context.js';
import { encodeUtxo, unsignedTxBytes, txId, utxoId } from '../../src/platform/codec.js';
import { encodeGenesis, type PlatformGenesis } from '../../src/platform/genesis.js';
import { EMPTY_SIGNATURE, PLATFORM_CHAIN_ID, type ChainRecord, type IssuableTx } from '../../src/platform/model.js';
import { PlatformVM, type PlatformVMDeps } from '../../src/platform/vm.js';
import type { PlatformBlock } from '../../src/platform/blocks.js';

export const EWOQ = PrivateKey.fromString('ewoqjP7PxY4yr3iLTpLisriqt94hdyDFNgchSxGGztUrTXtNN');
export const NETWORK_ID = 12345;
export const GENESIS_TIME = 1_600_000_000;
export const DAY = 24 * 3600;
export const NATIVE_ASSET = Id.fromBytes(new Uint8Array(32).fill(9));
export const GENESIS_BALANCE = 20_000n * 1_000_000_000n;
/** Genesis validators: this node (1…) and another. */
export const NODE = ShortId.fromBytes(new Uint8Array(20).fill(1));
export const OTHER_NODE = ShortId.fromBytes(new Uint8Array(20).fill(2));
const FAR = 4_102_444_800;

export function testGenesis(): PlatformGenesis {
  const validator = (nodeId: ShortId) => ({
    kind: 'addDefaultSubnetValidator' as const,
    nodeId,
    weight: GENESIS_BALANCE,
    start: GENESIS_TIME,
    end: FAR,
    networkId: NETWORK_ID,
    nonce: 0n,
    destination: EWOQ.address,
    shares: 0,
    sig: EMPTY_SIGNATURE,
  });
  return {
    accounts: [{ address: EWOQ.address, nonce: 0n, balance: GENESIS_BALANCE }],
    validators: [validator(NODE), validator(OTHER_NODE)],
    chains: [
      {
        kind: 'createChain',
        networkId: NETWORK_ID,
        subnetId: Id.empty,
        nonce: 0n,
        chainName: 'X-Chain',
        vmId: vmIdFromName('avm'),
        fxIds: [],
        genesisData: new Uint8Array([1, 2, 3]),
        controlSigs: [],
        payerSig: EMPTY_SIGNATURE,
      },
    ],
    timestamp: GENESIS_TIME,
  };
}

export interface Harness {
  vm: PlatformVM;
  ctx: ChainContext;
  clock: { ms: number };
  root: KeyValueStore;
  created: ChainRecord[];
  validatorEvents: Array<{ subnetId: Id; validators: ReadonlyArray<{ nodeId: ShortId; weight: bigint }> }>;
  running: Set<string>;
  xChainId: Id;
  /** A second VM on the same store (a restart). */
  restart(): Promise<Harness>;
}

export interface StartOptions {
  root?: KeyValueStore;
  clock?: { ms: number };
  genesis?: PlatformGenesis;
  log?: Logger;
  /** Timers for waitForEvent (default real ones). */
  timers?: PlatformVMDeps['timers'];
  mempoolCapacity?: number;
}

export async function startVM(o: StartOptions = {}): Promise<Harness> {
  const root = o.root ?? new MemoryStore();
  const clock = o.clock ?? { ms: (GENESIS_TIME + 1000) * 1000 };
  const genesis = o.genesis ?? testGenesis();
  const created: ChainRecord[] = [];
  const validatorEvents: Harness['validatorEvents'] = [];
  const running = new Set<string>();
  const deps: PlatformVMDeps = {
    events: {
      chainCreated: (c) => created.push(c),
      validatorsChanged: (subnetId, validators) => validatorEvents.push({ subnetId, validators }),
    },
    resolveVm: (vm) => {
      if (vm === 'timestamp') return vmIdFromName('timestamp');
      return Id.fromString(vm);
    },
    isChainRunning: (id) => running.has(id.key),
    nativeAssetId: NATIVE_ASSET,
    ...(o.timers ? { timers: o.timers } : {}),
    ...(o.mempoolCapacity !== undefined ? { mempoolCapacity: o.mempoolCapacity } : {}),
  };
  const chains = new PrefixedStore(root, 'chains');
  const ctx: ChainContext = {
    ...testChainContext({
      db: new PrefixedStore(chains, PLATFORM_CHAIN_ID.bytes),
      clock: { now: () => clock.ms },
      chainId: PLATFORM_CHAIN_ID,
      ...(o.log ? { log: o.log } : {}),
    }),
    networkId: NETWORK_ID,
    nodeId: NODE,
    sharedMemory: sharedMemoryFor(new PrefixedStore(root, 'shared'), PLATFORM_CHAIN_ID),
    nativeAsset: { id: NATIVE_ASSET, symbol: 'AVA' },
  };
  const vm = new PlatformVM(deps);
  await vm.initialize(ctx, { genesis: encodeGenesis(genesis) });
  const xChainId = txId(genesis.chains[0]!);
  const h: Harness = {
    vm,
    ctx,
    clock,
    root,
    created,
    validatorEvents,
    running,
    xChainId,
    restart: async () => {
      await vm.shutdown();
      return startVM({ ...o, root, clock, genesis });
    },
  };
  return h;
}

/** Signs a single-signature tx (or the payer slot) with `key`. */
export function signed<T extends IssuableTx>(tx: T, key: PrivateKey = EWOQ, control: PrivateKey[] = []): T {
  const msg = unsignedTxBytes(tx);
  const sig = key.sign(msg);
  if ('payerSig' in tx) {
    const controlSigs = control.map((k) => k.sign(msg)).sort(compareBytes);
    return { ...tx, controlSigs, payerSig: sig };
  }
  return { ...tx, sig };
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

/** Builds, verifies, prefers and accepts blocks until there is nothing to build; the blocks. */
export async function settle(vm: PlatformVM, max = 20): Promise<PlatformBlock[]> {
  const out: PlatformBlock[] = [];
  for (let i = 0; i < max; i++) {
    let block: PlatformBlock;
    try {
      block = (await vm.buildBlock()) as PlatformBlock;
    } catch (e) {
      if (/nothing to build/.test((e as Error).message)) return out;
      throw e;
    }
    await block.verify();
    await vm.setPreference(block.id);
    await block.accept();
    out.push(block);
  }
  throw new Error(`still building after ${max} blocks`);
}

/** Local time of the harness, unix seconds. */
export const nowOf = (h: Harness) => Math.floor(h.clock.ms / 1000);

/** A signed Default Subnet validator tx from EWOQ (start 60 s ahead, 2 days, node 05… by default). */
export function validatorTx(h: Harness, o: { nonce: bigint; start?: number; days?: number; weight?: bigint; nodeId?: ShortId; shares?: number }): IssuableTx {
  const start = o.start ?? nowOf(h) + 60;
  return signed({
    kind: 'addDefaultSubnetValidator',
    nodeId: o.nodeId ?? ShortId.fromBytes(new Uint8Array(20).fill(5)),
    weight: o.weight ?? 1_000_000n,
    start,
    end: start + (o.days ?? 2) * DAY,
    networkId: NETWORK_ID,
    nonce: o.nonce,
    destination: EWOQ.address,
    shares: o.shares ?? 0,
    sig: EMPTY_SIGNATURE,
  } as IssuableTx);
}

/** A signed createSubnet tx from EWOQ with these control keys. */
export function subnetTx(nonce: bigint, keys: PrivateKey[], threshold: number): IssuableTx {
  const controlKeys = keys.map((k) => k.address).sort((a, b) => a.compare(b));
  return signed({ kind: 'createSubnet', networkId: NETWORK_ID, nonce, controlKeys, threshold, sig: EMPTY_SIGNATURE } as IssuableTx);
}

/** Puts a UTXO of `amount` native asset owned by `owner` into shared memory, as the X-Chain exports it; its X tx ID. */
export async function exportFromX(h: Harness, owner: ShortId, amount: bigint, seed = 0x77): Promise<Id> {
  const xTx = Id.fromBytes(new Uint8Array(32).fill(seed));
  const xShared = sharedMemoryFor(new PrefixedStore(h.root, 'shared'), h.xChainId);
  const xDb = new PrefixedStore(new PrefixedStore(h.root, 'chains'), h.xChainId.bytes);
  const batch = xDb.batch();
  const out = { kind: 'transfer' as const, amount, locktime: 0n, threshold: 1, addresses: [owner] };
  xShared.apply(PLATFORM_CHAIN_ID, { put: [[utxoId(xTx, 0).bytes, encodeUtxo({ txId: xTx, outputIndex: 0, assetId: NATIVE_ASSET, out })]] }, batch);
  await batch.write();
  return xTx;
}

/** An import of output 0 of `xTx` (owned by `owner`, holding `amount`) into `payer`'s account, signed by both. */
export function importTx(o: { xTx: Id; amount: bigint; owner: PrivateKey; payer?: PrivateKey; nonce?: bigint }): IssuableTx {
  const payer = o.payer ?? o.owner;
  const tx = {
    kind: 'import',
    networkId: NETWORK_ID,
    nonce: o.nonce ?? 1n,
    account: payer.address,
    ins: [{ txId: o.xTx, outputIndex: 0, assetId: NATIVE_ASSET, input: { amount: o.amount, sigIndices: [0] } }],
    sig: EMPTY_SIGNATURE,
    creds: [{ sigs: [] as Uint8Array[] }],
  } as IssuableTx;
  return signed({ ...tx, creds: [{ sigs: [o.owner.sign(unsignedTxBytes(tx))] }] } as IssuableTx, payer);
}
