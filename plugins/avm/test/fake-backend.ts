// An AvmBackend over in-memory UTXOs for the avm service's unit tests, with a real keystore (cheap
// KDF) behind openUser, and the service served on the node's HTTP and JSON-RPC layers over loopback.
import { Keystore } from '@cornice/core';
import { serveServices, type ServedServices } from '@cornice/core/testing';
import {
  Id,
  MemoryStore,
  PrivateKey,
  ShortId,
  utf8Encode,
  sha256,
  type Client,
  type KeyValueStore,
} from '@cornice/sdk';
import { avmApi } from '../src/api.js';
import type { AssetDescription, AvmBackend, Output, Tx, TxStatus, Utxo } from '../src/model.js';
import { avmService } from '../src/service.js';

export const PASSWORD = 'Tr0ub4dor&3-horse';
export const FAST_KDF = { N: 16, r: 1, p: 1 };
export const CHAIN_ID = Id.fromBytes(new Uint8Array(32).fill(7));
export const NOW_MS = Date.UTC(2020, 4, 1);
export const EWOQ = PrivateKey.fromString('ewoqjP7PxY4yr3iLTpLisriqt94hdyDFNgchSxGGztUrTXtNN');
export const EWOQ_ADDRESS = 'X-6Y3kysjF9jnHnYkdS9yGAuoHyae2eNmeV';

/** A deterministic ID from a label. */
export const id = (label: string) => Id.fromBytes(sha256(utf8Encode(label)));
/** A deterministic key from a label. */
export const keyOf = (label: string) => PrivateKey.fromBytes(sha256(utf8Encode(`key ${label}`)));

export const NATIVE: AssetDescription = { assetId: id('AVA asset'), alias: 'AVA', name: 'AVA', symbol: 'AVA', denomination: 9 };
export const GOLD: AssetDescription = { assetId: id('gold asset'), name: 'Gold', symbol: 'GLD', denomination: 2 };

export class FakeAvm implements AvmBackend {
  readonly networkId = 12345;
  readonly chainId = CHAIN_ID;
  aliases: string[] = ['X', 'avm'];
  readonly platformChainId = Id.empty;
  native: AssetDescription | undefined = NATIVE;
  readonly assets: AssetDescription[] = [NATIVE, GOLD];
  /** Accepted UTXOs (any order: utxos() sorts by UTXO ID). */
  utxoList: Utxo[] = [];
  /** What the P-Chain exported to this chain. */
  atomicList: Utxo[] = [];
  readonly issued: Tx[] = [];
  issueError: Error | undefined;
  readonly txBytes = new Map<string, Uint8Array>();
  readonly statuses = new Map<string, TxStatus>();
  /** Calls of utxos(): the addresses asked about and the limit. */
  readonly utxoQueries: Array<{ addresses: string[]; limit: number | undefined }> = [];
  readonly keystoreStore = new MemoryStore();
  readonly keystore = new Keystore({ store: this.keystoreStore, kdf: FAST_KDF, isStrongPassword: async () => true });
  #nextTx = 0;

  nativeAsset(): AssetDescription | undefined {
    return this.native;
  }
  async asset(idOrAlias: string): Promise<AssetDescription | undefined> {
    if (this.native && (idOrAlias === 'NATIVE' || idOrAlias === this.native.symbol)) return this.native;
    return this.assets.find((a) => a.alias === idOrAlias || a.assetId.toString() === idOrAlias);
  }
  async utxos(addresses: readonly ShortId[], limit?: number): Promise<Utxo[]> {
    this.utxoQueries.push({ addresses: addresses.map(String), limit });
    const wanted = new Set(addresses.map((a) => a.key));
    const found = this.utxoList.filter((u) => u.out.addresses.some((a) => wanted.has(a.key))).sort(byUtxoId);
    return limit === undefined ? found : found.slice(0, limit);
  }
  async utxosById(ids: readonly Id[]): Promise<Array<Utxo | undefined>> {
    return ids.map((i) => this.utxoList.find((u) => utxoIdOf(u).equals(i)));
  }
  async atomicUtxos(addresses: readonly ShortId[]): Promise<Utxo[]> {
    const wanted = new Set(addresses.map((a) => a.key));
    return this.atomicList.filter((u) => u.out.addresses.some((a) => wanted.has(a.key)));
  }
  async issueTx(tx: Tx): Promise<Id> {
    if (this.issueError) throw this.issueError;
    this.issued.push(tx);
    return id(`issued tx ${this.#nextTx++}`);
  }
  async getTx(txId: Id): Promise<Uint8Array | undefined> {
    return this.txBytes.get(txId.key);
  }
  async txStatus(txId: Id): Promise<TxStatus> {
    return this.statuses.get(txId.key) ?? 'Unknown';
  }
  openUser(username: string, password: string): Promise<KeyValueStore> {
    return this.keystore.openUserStore(username, password, CHAIN_ID);
  }

  /** Adds an accepted UTXO; returns it. */
  addUtxo(txLabel: string, outputIndex: number, assetId: Id, out: Output): Utxo {
    const utxo = { txId: id(txLabel), outputIndex, assetId, out };
    this.utxoList.push(utxo);
    return utxo;
  }
}

/** UTXO ID = SHA-256(u64 BE output index || tx ID) (reference §4.3). */
export function utxoIdOf(u: { txId: Id; outputIndex: number }): Id {
  return u.txId.prefix(u.outputIndex);
}

function byUtxoId(a: Utxo, b: Utxo): number {
  return utxoIdOf(a).compare(utxoIdOf(b));
}

/** A TransferOutput owned by `owners` (threshold 1 by default). */
export function transfer(amount: bigint, owners: ShortId[], o: { threshold?: number; locktime?: bigint } = {}): Output {
  return { kind: 'transfer', amount, locktime: o.locktime ?? 0n, threshold: o.threshold ?? 1, addresses: [...owners].sort((a, b) => a.compare(b)) };
}

export function mint(owners: ShortId[], threshold: number): Output {
  return { kind: 'mint', threshold, addresses: [...owners].sort((a, b) => a.compare(b)) };
}

export interface Harness extends ServedServices {
  backend: FakeAvm;
  avm: Client<typeof avmApi>;
  /** Creates user `name` (PASSWORD) holding these keys (in this order); its credentials. */
  user(name: string, keys?: PrivateKey[]): Promise<{ username: string; password: string }>;
}

/** The service bound to a fresh FakeAvm, served over loopback; close() when done. */
export async function harness(o: { nativeSymbol?: string; backend?: FakeAvm } = {}): Promise<Harness> {
  const backend = o.backend ?? new FakeAvm();
  const service = avmService(backend, { nativeSymbol: o.nativeSymbol ?? 'AVA', clock: { now: () => NOW_MS } });
  const served = await serveServices([service], { path: 'bc/X' });
  const avm = served.client(avmApi);
  return {
    ...served,
    backend,
    avm,
    async user(name, keys = []) {
      await backend.keystore.createUser(name, PASSWORD);
      for (const key of keys) await avm.importKey({ username: name, password: PASSWORD, privateKey: key.toCb58() });
      return { username: name, password: PASSWORD };
    },
  };
}

/** Awaits `p` and returns its rejection (failing when it resolves). */
export async function rejection(p: Promise<unknown>): Promise<{ rpcCode: number; message: string; data?: unknown }> {
  try {
    await p;
  } catch (e) {
    return e as { rpcCode: number; message: string };
  }
  throw new Error('expected a rejection');
}
