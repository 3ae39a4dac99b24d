// A PlatformBackend over in-memory state for the platform service's unit tests, with a real keystore
// (cheap KDF) behind openUser, and the service reached through the JSON-RPC layer in process.
import {
  type Id,
  MemoryStore,
  RpcCallError,
  createClient,
  jsonReplacer,
  silentLogger,
  vmIdFromName,
  type Client,
  type ShortId,
} from '@cornice/sdk';
import { JsonRpcEndpoint } from '../../src/api/jsonrpc.js';
import { Keystore } from '../../src/keystore/keystore.js';
import { platformApi } from '../../src/platform/api.js';
import { txId } from '../../src/platform/codec.js';
import { PlatformError } from '../../src/platform/errors.js';
import {
  DEFAULT_SUBNET_ID,
  PLATFORM_CHAIN_ID,
  type Account,
  type BlockchainStatus,
  type ChainRecord,
  type IssuableTx,
  type PlatformBackend,
  type PlatformStateView,
  type Staker,
  type SubnetRecord,
} from '../../src/platform/model.js';
import { platformService } from '../../src/platform/service.js';
import { FAST_KDF } from '../keystore/helpers.js';
import { id, shortId } from './samples.js';

export const NOW = 1_600_000_000;
export const PASSWORD = 'Tr0ub4dor&3-horse';

export class FakeState implements PlatformStateView {
  time = NOW;
  readonly accounts = new Map<string, Account>();
  subnetList: SubnetRecord[] = [];
  chainList: ChainRecord[] = [];
  readonly current = new Map<string, Staker[]>();
  readonly pending = new Map<string, Staker[]>();

  timestamp(): number {
    return this.time;
  }
  async account(address: ShortId): Promise<Account> {
    return this.accounts.get(address.key) ?? { address, nonce: 0n, balance: 0n };
  }
  async subnet(subnetId: Id): Promise<SubnetRecord | undefined> {
    return this.subnetList.find((s) => s.id.equals(subnetId));
  }
  async subnets(): Promise<SubnetRecord[]> {
    return [...this.subnetList];
  }
  async chain(chainId: Id): Promise<ChainRecord | undefined> {
    return this.chainList.find((c) => c.id.equals(chainId));
  }
  async chains(): Promise<ChainRecord[]> {
    return [...this.chainList];
  }
  async currentStakers(subnetId: Id): Promise<Staker[]> {
    return [...(this.current.get(subnetId.key) ?? [])];
  }
  async pendingStakers(subnetId: Id): Promise<Staker[]> {
    return [...(this.pending.get(subnetId.key) ?? [])];
  }
}

export const LOADED_VMS: Record<string, Id> = {
  timestamp: vmIdFromName('timestamp'),
  platform: vmIdFromName('platformvm'),
  kv: vmIdFromName('kvvm'),
};

export class FakeBackend implements PlatformBackend {
  readonly networkId = 12345;
  readonly nodeId = shortId('this node');
  clock = NOW;
  readonly acceptedState = new FakeState();
  /** The preferred state: the accepted one unless a test sets another. */
  preferredState: FakeState = this.acceptedState;
  readonly issued: IssuableTx[] = [];
  issueError: Error | undefined;
  readonly statuses = new Map<string, BlockchainStatus>();
  peer: { chainId: Id; assetId: Id } | undefined = { chainId: id('X-Chain'), assetId: id('native asset') };
  utxos: Array<[Uint8Array, Uint8Array]> = [];
  readonly keystoreStore = new MemoryStore();
  readonly keystore = new Keystore({ store: this.keystoreStore, kdf: FAST_KDF, isStrongPassword: async () => true });

  now(): number {
    return this.clock;
  }
  accepted(): PlatformStateView {
    return this.acceptedState;
  }
  preferred(): PlatformStateView {
    return this.preferredState;
  }
  async issueTx(tx: IssuableTx): Promise<Id> {
    if (this.issueError) throw this.issueError;
    this.issued.push(tx);
    return txId(tx);
  }
  async blockchainStatus(chainId: Id): Promise<BlockchainStatus> {
    return this.statuses.get(chainId.key) ?? 'Unknown';
  }
  /** Genesis data the fake VMs refuse: the bytes 'bad genesis'. */
  async checkGenesis(_vmId: Id, genesis: Uint8Array): Promise<void> {
    if (new TextDecoder().decode(genesis) === 'bad genesis') throw new Error('bad genesis: field x is wrong');
  }

  resolveVm(vm: string): Id {
    const byAlias = LOADED_VMS[vm];
    if (byAlias) return byAlias;
    const byId = Object.values(LOADED_VMS).find((v) => v.toString() === vm);
    if (byId) return byId;
    throw new PlatformError('UnknownVM', `no VM with ID or alias '${vm}' is loaded (loaded: ${Object.keys(LOADED_VMS).join(', ')})`);
  }
  atomicPeer(): { chainId: Id; assetId: Id } | undefined {
    return this.peer;
  }
  async *atomicUtxos(): AsyncIterable<[Uint8Array, Uint8Array]> {
    yield* this.utxos;
  }
  openUser(username: string, password: string) {
    return this.keystore.openUserStore(username, password, PLATFORM_CHAIN_ID);
  }
}

export interface RpcOutcome {
  result?: any;
  error?: { code: number; message: string; data?: unknown };
}

export interface Harness {
  backend: FakeBackend;
  endpoint: JsonRpcEndpoint;
  /** A raw call of `platform.<method>`; errors come back as data. */
  call(method: string, params?: unknown): Promise<RpcOutcome>;
  /** The sdk's typed client over the same endpoint. */
  client: Client<typeof platformApi>;
  /** Calls `method` and returns the error, failing when it succeeds or answers -32603. */
  fails(method: string, params: unknown, code?: number): Promise<{ code: number; message: string; data?: unknown }>;
}

export function harness(o: { nativeSymbol?: string; random?: () => number } = {}): Harness {
  const backend = new FakeBackend();
  const service = platformService(backend, { nativeSymbol: o.nativeSymbol ?? 'AVA', ...(o.random ? { random: o.random } : {}) });
  const endpoint = new JsonRpcEndpoint([service], { maxBatchSize: 10, log: silentLogger });
  let nextId = 1;
  const raw = async (method: string, params: unknown): Promise<RpcOutcome> => {
    const text = await endpoint.handle(JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }, jsonReplacer));
    return JSON.parse(text!) as RpcOutcome;
  };
  const call = (method: string, params?: unknown) => raw(`platform.${method}`, params);
  const client = createClient(platformApi, async (method, params) => {
    const r = await raw(method, params);
    if (r.error) throw new RpcCallError(r.error.code, r.error.message, r.error.data);
    return r.result;
  });
  const fails = async (method: string, params: unknown, code?: number) => {
    const r = await call(method, params);
    if (!r.error) throw new Error(`platform.${method} ${JSON.stringify(params, jsonReplacer).slice(0, 200)} should have failed`);
    if (r.error.code === -32603) throw new Error(`platform.${method}: internal error`);
    if (code !== undefined && r.error.code !== code) throw new Error(`platform.${method}: code ${r.error.code} (${r.error.message}), expected ${code}`);
    return r.error;
  };
  return { backend, endpoint, call, client, fails };
}

/** A subnet record in the fake state (accepted and so preferred). */
export function addSubnet(backend: FakeBackend, controlKeys: ShortId[], threshold: number, label = 'subnet'): SubnetRecord {
  const subnet = { id: id(label), controlKeys: [...controlKeys].sort((a, b) => a.compare(b)), threshold };
  backend.acceptedState.subnetList.push(subnet);
  return subnet;
}

export { DEFAULT_SUBNET_ID };
