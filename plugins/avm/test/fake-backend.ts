// An AvmBackend over in-memory UTXOs for the avm service's unit tests, with a real keystore (cheap
// KDF) behind openUser, and the service served on the node's HTTP and JSON-RPC layers over loopback.
// What it is asked to issue must pass the real syntactic rules (checkSyntax), and every credential
// must sign for the owners of what its input spends.
import { Keystore } from '@cornice/core';
import { postRpc, serveServices, type RpcReply, type ServedServices } from '@cornice/core/testing';
import { Id, MemoryStore, PrivateKey, recoverAddressFromHash, sha256, utf8Encode, type Client, type KeyValueStore, type ShortId } from '@cornice/sdk';
import { avmApi } from '../src/api.js';
import { encodeTx, txIdOf, unsignedBytes, utxoId } from '../src/codec.js';
import { checkSyntax } from '../src/syntax.js';
import { AvmError } from '../src/errors.js';
import type { AssetDescription, AvmBackend, Output, OutputKind, Tx, TxStatus, UtxoCursor, UtxoPage, UtxoRef, Utxo } from '../src/model.js';
import { avmService } from '../src/service.js';
import { NETWORK_ID, X_CHAIN_ID, ewoq, id } from './helpers.js';

export { id, mint, transfer } from './helpers.js';

export const PASSWORD = 'Tr0ub4dor&3-horse';
export const FAST_KDF = { N: 16, r: 1, p: 1 };
export const CHAIN_ID = X_CHAIN_ID;
export const NOW_MS = Date.UTC(2020, 4, 1);
export const NOW_SECONDS = BigInt(NOW_MS / 1000);
export const EWOQ = ewoq();
export const EWOQ_ADDRESS = 'X-6Y3kysjF9jnHnYkdS9yGAuoHyae2eNmeV';

/** A deterministic key from a label. */
export const keyOf = (label: string) => PrivateKey.fromBytes(sha256(utf8Encode(`key ${label}`)));

export const NATIVE: AssetDescription = { assetId: id('AVA asset'), alias: 'AVA', name: 'AVA', symbol: 'AVA', denomination: 9 };
export const GOLD: AssetDescription = { assetId: id('gold asset'), name: 'Gold', symbol: 'GLD', denomination: 2 };

export class FakeAvm implements AvmBackend {
  readonly networkId = NETWORK_ID;
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
  /** UTXOs utxosByAmount handed out (what the service read), and utxoPage's calls. */
  readonly byAmountReads: Utxo[] = [];
  readonly pageQueries: Array<{ addresses: string[]; start: UtxoCursor | undefined; limit: number }> = [];
  readonly keystoreStore = new MemoryStore();
  readonly keystore = new Keystore({ store: this.keystoreStore, kdf: FAST_KDF, isStrongPassword: async () => true });

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
  async balance(address: ShortId, assetId: Id): Promise<bigint> {
    let sum = 0n;
    for (const u of this.utxoList) if (u.out.kind === 'transfer' && u.assetId.equals(assetId) && u.out.addresses.some((a) => a.equals(address))) sum += u.out.amount;
    return sum;
  }
  async balances(address: ShortId, limit: number): Promise<Array<{ assetId: Id; amount: bigint }>> {
    const assets = new Map<string, Id>();
    for (const u of this.utxoList) if (u.out.kind === 'transfer' && u.out.addresses.some((a) => a.equals(address))) assets.set(u.assetId.key, u.assetId);
    const out: Array<{ assetId: Id; amount: bigint }> = [];
    for (const assetId of [...assets.values()].sort((a, b) => a.compare(b))) out.push({ assetId, amount: await this.balance(address, assetId) });
    return out.filter((b) => b.amount > 0n).slice(0, limit);
  }
  /** As the VM's (state.ts utxoPage), over the list, without its read budget. */
  async utxoPage(addresses: readonly ShortId[], start: UtxoCursor | undefined, limit: number): Promise<UtxoPage> {
    this.pageQueries.push({ addresses: addresses.map(String), start, limit });
    const utxos: Utxo[] = [];
    const seen = new Set<string>();
    let end: UtxoCursor | undefined = start;
    for (const address of addresses) {
      if (start && address.compare(start.address) < 0) continue;
      const after = start && address.equals(start.address) ? start.utxoId : undefined;
      end = { address, utxoId: after ?? Id.empty };
      const own = this.utxoList.filter((u) => u.out.addresses.some((a) => a.equals(address))).sort(byUtxoId);
      for (const u of own) {
        const uid = utxoId(u);
        if (after && uid.compare(after) <= 0) continue;
        end = { address, utxoId: uid };
        if (seen.has(uid.key)) continue;
        seen.add(uid.key);
        utxos.push(u);
        if (utxos.length >= limit) return { utxos, end, exhausted: false };
      }
    }
    return { utxos, end, exhausted: true };
  }
  async *utxosByAmount(addresses: readonly ShortId[], assetId: Id, kind: OutputKind): AsyncIterable<Utxo> {
    const wanted = new Set(addresses.map((a) => a.key));
    const amount = (u: Utxo) => (u.out.kind === 'transfer' ? u.out.amount : 0n);
    const found = this.utxoList
      .filter((u) => u.out.kind === kind && u.assetId.equals(assetId) && u.out.addresses.some((a) => wanted.has(a.key)))
      .sort((a, b) => (amount(a) === amount(b) ? byUtxoId(a, b) : amount(a) > amount(b) ? -1 : 1));
    for (const u of found) {
      this.byAmountReads.push(u);
      yield u;
    }
  }
  async utxosById(ids: readonly Id[]): Promise<Array<Utxo | undefined>> {
    return ids.map((i) => this.utxoList.find((u) => utxoId(u).equals(i)));
  }
  async atomicUtxos(addresses: readonly ShortId[]): Promise<Utxo[]> {
    const wanted = new Set(addresses.map((a) => a.key));
    return this.atomicList.filter((u) => u.out.addresses.some((a) => wanted.has(a.key)));
  }
  async issueTx(tx: Tx): Promise<Id> {
    if (this.issueError) throw this.issueError;
    checkSyntax(tx, { networkId: this.networkId, chainId: this.chainId });
    checkCredentials(tx, (ref) => [...this.utxoList, ...this.atomicList].find((u) => utxoId(u).equals(utxoId(ref))));
    this.issued.push(tx);
    const bytes = encodeTx(tx);
    const txId = txIdOf(bytes);
    this.txBytes.set(txId.key, bytes);
    this.statuses.set(txId.key, 'Processing');
    return txId;
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

/**
 * The semantic signature rule: credential i of input i spending UTXO u holds
 * len(SigIndices) signatures, signature j recovering to u's address SigIndices[j], and as many as
 * u's threshold. A UTXO this backend does not hold is refused.
 */
export function checkCredentials(tx: Tx, find: (ref: UtxoRef) => Utxo | undefined): void {
  const u = tx.unsigned;
  const spends: Array<{ ref: UtxoRef; sigIndices: number[] }> = [...u.ins.map((i) => ({ ref: i, sigIndices: i.input.sigIndices }))];
  if (u.kind === 'import') spends.push(...u.importedIns.map((i) => ({ ref: i, sigIndices: i.input.sigIndices })));
  if (u.kind === 'operation') spends.push(...u.ops.map((o) => ({ ref: o.utxos[0]!, sigIndices: o.op.sigIndices })));
  if (tx.creds.length !== spends.length) throw new AvmError('InvalidTx', `${tx.creds.length} credentials for ${spends.length} inputs`);
  const hash = sha256(unsignedBytes(u));
  spends.forEach(({ ref, sigIndices }, i) => {
    const utxo = find(ref);
    if (!utxo) throw new AvmError('InvalidTx', 'missing utxo');
    const sigs = tx.creds[i]!.sigs;
    if (sigs.length !== sigIndices.length || sigs.length !== utxo.out.threshold) throw new AvmError('InvalidTx', `credential ${i}: wrong number of signatures`);
    sigs.forEach((sig, j) => {
      const signer: ShortId = recoverAddressFromHash(hash, sig);
      if (!signer.equals(utxo.out.addresses[sigIndices[j]!]!)) throw new AvmError('InvalidTx', `credential ${i}: signature ${j} is not of its address`);
    });
  });
}

function byUtxoId(a: Utxo, b: Utxo): number {
  return utxoId(a).compare(utxoId(b));
}

export interface Harness extends ServedServices {
  backend: FakeAvm;
  avm: Client<typeof avmApi>;
  /** A raw call of `avm.<method>` (aliases included); errors come back as data. */
  call(method: string, params?: unknown): Promise<RpcReply>;
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
    call: (method, params) => postRpc(served.url, `avm.${method}`, params),
    async user(name, keys = []) {
      await backend.keystore.createUser(name, PASSWORD);
      for (const key of keys) await avm.importKey({ username: name, password: PASSWORD, privateKey: key.toCb58() });
      return { username: name, password: PASSWORD };
    },
  };
}

/** A test body run against a fresh harness, closed afterwards. */
export function served(body: (h: Harness) => Promise<void>, o: { nativeSymbol?: string } = {}): () => Promise<void> {
  return async () => {
    const h = await harness(o);
    try {
      await body(h);
    } finally {
      await h.close();
    }
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
