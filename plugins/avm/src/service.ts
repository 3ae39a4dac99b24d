/**
 * The asset chain's JSON-RPC service (`avm`, API.md), bound to the VM through AvmBackend.
 * Reads answer from the last accepted state. Methods that spend build the tx the reference builds
 * (same outputs, order and signatures), sign it with the user's keys and issue it; there are no
 * fees. Inputs are the largest UTXOs of the asset the keys can spend, not the reference's first
 * ones in UTXO ID order: nothing anyone sends to an address (UTXOs of other assets, dust of this
 * one) can keep its owner from spending what it holds (service-spend.test.ts; the lock-out test of
 * test/e2e/avm.test.ts). Every call reads a bounded
 * number of index entries and UTXOs (the constants below). The user's keys live in the user's
 * encrypted store for this chain (keys.ts).
 */
import {
  type UserKeys,
  withNativeAliasHandlers,
  Id,
  InvalidParamsError,
  PrivateKey,
  bindService,
  bytesToWire,
  isNodeError,
  type BoundService,
  type Clock,
  type Handlers,
  type ShortId,
  serializer,
} from '@cornice/sdk';
import { addressOn, formatAddress, type ChainAddress } from './addresses.js';
import { type avmApi, avmApiWithSymbol, type AssetBalanceReply } from './api.js';
import {
  compareUtxoRefs,
  decodeTx,
  encodeTx,
  encodeUtxo,
  signTx,
  sortAddresses,
  sortOutputs,
  sortTransferableOutputs,
  unsignedBytes,
  utxoId,
} from './codec.js';
import { AvmError } from './errors.js';
import { Keychain, keychainOf, matchOwners, userKeys } from './keys.js';
import {
  SIGNATURE_LENGTH,
  type AssetDescription,
  type AvmBackend,
  type Output,
  type TransferableInput,
  type TransferableOutput,
  type TransferOutput,
  type Tx,
  type UnsignedTx,
  type Utxo,
} from './model.js';

export interface AvmServiceOptions {
  /** The native token's symbol: exportNATIVE/importNATIVE are also served as export<symbol>/import<symbol>. */
  nativeSymbol: string;
  /** The chain's clock (ms): outputs locked until later are not spent. Default: the system clock. */
  clock?: Clock;
}

/** Most UTXOs getUTXOs answers without pagination; beyond it the call fails, pointing at `limit` and `startIndex`. */
export const MAX_UTXOS_READ = 10_000;
/** Most UTXOs of a getUTXOs page (a `limit` of 0, above it or omitted with a `startIndex` is this, as avalanchego's). */
export const MAX_UTXO_PAGE = 1024;
/** Most UTXO IDs getBalance lists: past it, the largest ones (the balance still counts every UTXO). */
export const MAX_BALANCE_UTXO_IDS = 1024;
/** Most assets getAllBalances lists (by asset ID; the native asset is listed whenever held). */
export const MAX_BALANCES = 1024;
/**
 * Most UTXOs send, exportNATIVE and createMintTx look at, largest first: UTXOs the keys cannot spend
 * now (locked, or needing other signers) among the largest are skipped, up to this many.
 */
export const MAX_SPEND_SCAN = 4096;
/**
 * Most inputs a tx built here spends (send, exportNATIVE, importNATIVE): keeps it well within the
 * 16 KiB a tx may take on the wire (getTx, issueTx). importNATIVE sweeps the rest in later calls.
 */
export const MAX_SPEND_INPUTS = 64;

const U64_MAX = (1n << 64n) - 1n;
const EMPTY_SIGNATURE = new Uint8Array(SIGNATURE_LENGTH);

/** An input being built, with the keys that sign it (in sigIndices order). */
interface SignedInput {
  input: TransferableInput;
  signers: PrivateKey[];
}

/** The `avm` service of one asset chain, bound to its VM. */
export function avmService(backend: AvmBackend, opts: AvmServiceOptions): BoundService {
  const serialAdds = serializer();
  const nowSeconds = () => BigInt(Math.floor((opts.clock?.now() ?? Date.now()) / 1000));
  const format = (a: ShortId) => formatAddress(backend, a);
  const own = (a: ChainAddress, field: string) => addressOn(backend, a, field);

  /** Runs `fn` with the user's keys of this chain; the store is closed afterwards. */
  async function asUser<T>(username: string, password: string, fn: (keys: UserKeys) => Promise<T>): Promise<T> {
    let db;
    try {
      db = await backend.openUser(username, password);
    } catch (e) {
      // The keystore's refusals (unknown user, wrong password, throttled) with the reference's prefix.
      if (isNodeError(e)) throw new AvmError('UserAccess', `problem retrieving user: ${e.message}`, { code: e.code });
      throw e;
    }
    try {
      return await fn(userKeys(db));
    } finally {
      await db.close();
    }
  }

  /** The asset an assetID param names (ID, alias, the native symbol or NATIVE). */
  async function assetNamed(idOrAlias: string): Promise<AssetDescription> {
    const asset = await backend.asset(idOrAlias);
    if (!asset) throw new AvmError('UnknownAsset', `asset '${idOrAlias}' not found`);
    return asset;
  }

  /** For balances: the asset's ID; a well-formed ID of no known asset counts too (it holds nothing). */
  async function assetIdForQuery(idOrAlias: string): Promise<Id> {
    const asset = await backend.asset(idOrAlias);
    if (asset) return asset.assetId;
    try {
      return Id.fromString(idOrAlias);
    } catch {
      throw new AvmError('UnknownAsset', `asset '${idOrAlias}' not found`);
    }
  }

  function nativeAsset(): AssetDescription {
    const asset = backend.nativeAsset();
    if (!asset) throw new AvmError('NoNativeAsset', `this chain has no native asset (${opts.nativeSymbol}) to move to or from the P-Chain`);
    return asset;
  }

  /**
   * The spend of send and exportNATIVE: the user's UTXOs of the asset (only those: the `o` index)
   * that its keys can spend now, largest first, until `amount` is covered, in at most
   * MAX_SPEND_INPUTS inputs after looking at most at MAX_SPEND_SCAN UTXOs. Largest first takes the
   * fewest inputs there can be, so dust sent to the user is never what it tries to spend while it
   * holds larger UTXOs. Their inputs, sorted, with their signers, and the change output (to
   * `changeAddr`, default the user's first address) when they hold more. With a non-empty `from`,
   * only those addresses' UTXOs and keys are used; each must be one of the user's (-32602 naming it).
   * Tests: 'send: the largest UTXOs …', 'send: dust and other assets …', 'send: past the 4096 largest …',
   * 'send: from and changeAddr …' (service-spend.test.ts), 'lock-out (issue 32) …' (test/e2e/avm.test.ts).
   */
  async function spendFromUser(
    username: string,
    password: string,
    assetId: Id,
    amount: bigint,
    spend: { from?: ChainAddress[] | undefined; changeAddr?: ChainAddress | undefined },
  ): Promise<{ ins: SignedInput[]; change: TransferableOutput[] }> {
    const from = (spend.from ?? []).map((a, i) => own(a, `from[${i}]`));
    const changeAddr = spend.changeAddr && own(spend.changeAddr, 'changeAddr');
    const all = await asUser(username, password, (keys) => keychainOf(keys));
    from.forEach((a, i) => {
      if (!all.get(a)) throw new InvalidParamsError(`from[${i}]`, `${format(a)} is not an address of user '${username}'`);
    });
    const wanted = new Set(from.map((a) => a.key));
    const keychain = wanted.size === 0 ? all : new Keychain(all.keys.filter((k) => wanted.has(k.address.key)));
    const now = nowSeconds();
    const ins: SignedInput[] = [];
    let spent = 0n;
    let looked = 0;
    for await (const utxo of backend.utxosByAmount(keychain.keys.map((k) => k.address), assetId, 'transfer')) {
      if (++looked > MAX_SPEND_SCAN) {
        throw new AvmError(
          'Limit',
          `the ${MAX_SPEND_SCAN} largest UTXOs of this asset the user's addresses are among the owners of do not cover the amount with those its keys can spend now (the others are locked or need other signers); send less`,
        );
      }
      const spend = spendable(utxo, assetId, keychain, now);
      if (!spend) continue;
      if (ins.length === MAX_SPEND_INPUTS) {
        throw new AvmError('Limit', `the amount needs more than ${MAX_SPEND_INPUTS} UTXOs; send less, or join UTXOs first by sending smaller amounts to yourself`);
      }
      spent += spend.input.input.amount;
      if (spent > U64_MAX) throw new AvmError('InvalidTx', 'spent amount overflows uint64');
      ins.push(spend);
      if (spent >= amount) break;
    }
    if (spent < amount) throw new AvmError('InsufficientFunds', 'insufficient funds');
    const change = spent > amount ? [transferable(assetId, spent - amount, changeAddr ?? all.first!)] : [];
    return { ins: sortInputs(ins), change };
  }

  /** Signs `unsigned` (each input with its keys, in input order) and issues it; the tx ID. */
  function signAndIssue(unsigned: UnsignedTx, ins: readonly SignedInput[]): Promise<Id> {
    return backend.issueTx(signTx(unsigned, ins.map((i) => i.signers)));
  }

  const base = () => ({ networkId: backend.networkId, chainId: backend.chainId });

  const handlers: Handlers<typeof avmApi> = {
    async createAddress({ username, password }) {
      const key = PrivateKey.generate();
      return { address: format(await asUser(username, password, (keys) => serialAdds(() => keys.add(key)))) };
    },

    async listAddresses({ username, password }) {
      const addresses = await asUser(username, password, (keys) => keys.addresses());
      return { addresses: addresses.map(format) };
    },

    // The balance is the `w` index's (no UTXO read); the list, the asset's largest UTXOs (at most
    // MAX_BALANCE_UTXO_IDS, in UTXO ID order). Test: 'getBalance reads only the asked asset …' (service-read.test.ts).
    async getBalance({ address, assetID }) {
      const owner = own(address, 'address');
      const assetId = await assetIdForQuery(assetID);
      const balance = await backend.balance(owner, assetId);
      const listed: Utxo[] = [];
      for await (const utxo of backend.utxosByAmount([owner], assetId, 'transfer')) {
        listed.push(utxo);
        if (listed.length >= MAX_BALANCE_UTXO_IDS) break;
      }
      listed.sort((a, b) => utxoId(a).compare(utxoId(b)));
      return { balance: clampU64(balance).toString(), utxoIDs: listed.map((u) => ({ txID: u.txId.toString(), outputIndex: u.outputIndex })) };
    },

    // At most MAX_BALANCES assets by asset ID, and the native asset whenever held.
    async getAllBalances({ address }) {
      const owner = own(address, 'address');
      const held = await backend.balances(owner, MAX_BALANCES);
      const native = backend.nativeAsset();
      if (native && held.length === MAX_BALANCES && !held.some((h) => h.assetId.equals(native.assetId))) {
        const amount = await backend.balance(owner, native.assetId);
        if (amount > 0n) held.push({ assetId: native.assetId, amount });
      }
      const balances: AssetBalanceReply[] = [];
      for (const { assetId, amount } of held.sort((a, b) => a.assetId.compare(b.assetId))) {
        const asset = await backend.asset(assetId.toString());
        balances.push({ asset: asset?.alias ?? assetId.toString(), balance: clampU64(amount).toString() });
      }
      return { balances };
    },

    // Without `limit` and `startIndex`: the reference's `{utxos}`, all of them (at most
    // MAX_UTXOS_READ). With either: a page as avalanchego's (numFetched, utxos, endIndex).
    // Tests: 'getUTXOs pages …', 'getUTXOs without limit and startIndex …' (service-spend.test.ts), 'lock-out (issue 32) …' (test/e2e/avm.test.ts).
    async getUTXOs({ addresses, limit, startIndex }) {
      const owners = sortAddresses(addresses.map((a, i) => own(a, `addresses[${i}]`)));
      if (limit === undefined && startIndex === undefined) {
        if (owners.length === 0) return { utxos: [] };
        const all = await backend.utxoPage(owners, undefined, MAX_UTXOS_READ + 1);
        if (all.utxos.length > MAX_UTXOS_READ || !all.exhausted) {
          throw new AvmError('Limit', `these addresses own more than ${MAX_UTXOS_READ} UTXOs, more than one call reads; page through them with limit and startIndex`);
        }
        // The reference's order: by UTXO ID across the addresses.
        const sorted = all.utxos.sort((x, y) => utxoId(x).compare(utxoId(y)));
        return { utxos: sorted.map((u) => bytesToWire(encodeUtxo(u))) };
      }
      if (owners.length === 0) throw new InvalidParamsError('addresses', 'no addresses provided');
      const start = startIndex && { address: own(startIndex.address, 'startIndex.address'), utxoId: startIndex.utxo };
      const page = await backend.utxoPage(owners, start, limit === undefined || limit === 0 || limit > MAX_UTXO_PAGE ? MAX_UTXO_PAGE : limit);
      const end = page.end ?? start ?? { address: owners[0]!, utxoId: Id.empty };
      return {
        numFetched: String(page.utxos.length),
        utxos: page.utxos.map((u) => bytesToWire(encodeUtxo(u))),
        endIndex: { address: format(end.address), utxo: end.utxoId.toString() },
      };
    },

    async issueTx({ tx }) {
      return { txID: (await backend.issueTx(decodeTx(tx), tx)).toString() };
    },

    async getTx({ txID }) {
      const bytes = await backend.getTx(requireTxId(txID));
      if (!bytes) throw new AvmError('UnknownTx', 'transaction is unknown');
      return { tx: bytesToWire(bytes) };
    },

    async getTxStatus({ txID }) {
      return { status: await backend.txStatus(requireTxId(txID)) };
    },

    async send({ amount, assetID, to, username, password, from, changeAddr }) {
      if (amount === 0n) throw new InvalidParamsError('amount', 'amount must be positive');
      const assetId = (await assetNamed(assetID)).assetId;
      const recipient = own(to, 'to');
      const { ins, change } = await spendFromUser(username, password, assetId, amount, { from, changeAddr });
      const outs = [transferable(assetId, amount, recipient), ...change];
      return { txID: (await signAndIssue({ kind: 'base', ...base(), outs: sortTransferableOutputs(outs), ins: ins.map((i) => i.input) }, ins)).toString() };
    },

    async createFixedCapAsset({ name, symbol, denomination, initialHolders }) {
      if (initialHolders.length === 0) throw new InvalidParamsError('initialHolders', 'initialHolders must not be empty');
      const outs = initialHolders.map(({ address, amount }, i): Output => {
        if (amount === 0n) throw new InvalidParamsError(`initialHolders[${i}].amount`, 'must be positive');
        return transferOutput(amount, own(address, `initialHolders[${i}].address`));
      });
      return { assetID: (await createAsset(name, symbol, denomination, outs)).toString() };
    },

    async createVariableCapAsset({ name, symbol, denomination, minterSets }) {
      if (minterSets.length === 0) throw new InvalidParamsError('minterSets', 'no minters provided');
      const outs = minterSets.map(({ minters, threshold }, i): Output => {
        const addresses = sortAddresses(minters.map((m, j) => own(m, `minterSets[${i}].minters[${j}]`)));
        if (addresses.length === 0) throw new InvalidParamsError(`minterSets[${i}].minters`, 'no minters provided');
        if (threshold < 1 || threshold > addresses.length) {
          throw new InvalidParamsError(`minterSets[${i}].threshold`, `must be between 1 and the number of distinct minters (${addresses.length})`);
        }
        return { kind: 'mint', threshold, addresses };
      });
      return { assetID: (await createAsset(name, symbol, denomination, outs)).toString() };
    },

    async createMintTx({ amount, assetID, to, minters }) {
      if (amount === 0n) throw new InvalidParamsError('amount', 'amount minted must be positive');
      const asset = await assetNamed(assetID);
      const recipient = own(to, 'to');
      const signers = sortAddresses(minters.map((m, i) => own(m, `minters[${i}]`)));
      const keys = new Set(signers.map((a) => a.key));
      // The asset's mint outputs only (the `o` index), in UTXO ID order; at most MAX_SPEND_SCAN looked at.
      let looked = 0;
      for await (const utxo of backend.utxosByAmount(signers, asset.assetId, 'mint')) {
        if (++looked > MAX_SPEND_SCAN) break;
        if (utxo.out.kind !== 'mint' || !utxo.assetId.equals(asset.assetId)) continue;
        const sigIndices = matchOwners(utxo.out, (a) => (keys.has(a.key) ? a : undefined))?.sigIndices;
        if (!sigIndices) continue;
        const unsigned: UnsignedTx = {
          kind: 'operation',
          ...base(),
          outs: [],
          ins: [],
          ops: [
            {
              assetId: asset.assetId,
              utxos: [{ txId: utxo.txId, outputIndex: utxo.outputIndex }],
              op: {
                kind: 'mint',
                sigIndices,
                mintOutput: { kind: 'mint', threshold: utxo.out.threshold, addresses: utxo.out.addresses },
                transferOutput: transferOutput(amount, recipient),
              },
            },
          ],
        };
        // No credentials yet, as the reference's: signMintTx makes the one the operation needs.
        return { tx: bytesToWire(encodeTx({ unsigned, creds: [] })) };
      }
      throw new AvmError('CannotMint', "provided addresses don't have the authority to mint the provided asset");
    },

    async signMintTx({ tx, minter, username, password }) {
      const signer = own(minter, 'minter');
      const decoded = decodeTx(tx);
      const unsigned = decoded.unsigned;
      if (unsigned.kind !== 'operation') throw new AvmError('CannotMint', 'transaction must be a mint transaction');
      const op = unsigned.ops[0];
      if (unsigned.ins.length !== 0 || unsigned.ops.length !== 1 || op!.utxos.length !== 1) {
        throw new AvmError('CannotMint', 'can only sign transactions with one input');
      }
      const [utxo] = await backend.utxosById([utxoId(op!.utxos[0]!)]);
      if (!utxo) throw new AvmError('CannotMint', 'unknown utxo: the mint output this tx spends is spent or unknown');
      if (utxo.out.kind !== 'mint' || !utxo.assetId.equals(op!.assetId)) throw new AvmError('CannotMint', 'the UTXO this tx spends is not a mint output of its asset');
      const owners = utxo.out;
      if (op!.op.sigIndices.some((index) => index >= owners.addresses.length)) throw new AvmError('CannotMint', 'input output mismatch');
      const slot = op!.op.sigIndices.findIndex((index) => owners.addresses[index]!.equals(signer));
      if (slot < 0) throw new AvmError('CannotMint', 'address not required to sign');
      if (decoded.creds.length > 1) throw new AvmError('CannotMint', 'can only sign transactions with one input');
      const key = await asUser(username, password, (keys) => keyOf(keys, signer, 'minter'));
      // One credential with a place per required signature (threshold); others' signatures are kept.
      const size = owners.threshold;
      if (slot >= size) throw new AvmError('CannotMint', 'input output mismatch');
      const old = decoded.creds[0]?.sigs ?? [];
      const sigs = old.length === size ? old.slice() : Array.from({ length: size }, () => EMPTY_SIGNATURE.slice());
      sigs[slot] = key.sign(unsignedBytes(unsigned));
      const signed: Tx = { unsigned, creds: [{ sigs }] };
      return { tx: bytesToWire(encodeTx(signed)) };
    },

    async getAssetDescription({ assetID }) {
      const asset = await backend.asset(assetID);
      if (!asset) throw new AvmError('UnknownAsset', 'unknown asset ID');
      return { assetID: asset.assetId.toString(), name: asset.name, symbol: asset.symbol, denomination: String(asset.denomination) };
    },

    async exportNATIVE({ to, amount, username, password, from, changeAddr }) {
      if (amount === 0n) throw new InvalidParamsError('amount', 'amount must be positive');
      const assetId = nativeAsset().assetId;
      const { ins, change } = await spendFromUser(username, password, assetId, amount, { from, changeAddr });
      const unsigned: UnsignedTx = {
        kind: 'export',
        ...base(),
        outs: change,
        ins: ins.map((i) => i.input),
        exportedOuts: [transferable(assetId, amount, to)],
      };
      return { txID: (await signAndIssue(unsigned, ins)).toString() };
    },

    async importNATIVE({ to, username, password }) {
      const recipient = own(to, 'to');
      const assetId = nativeAsset().assetId;
      const ins = await asUser(username, password, async (keys) => {
        const keychain = await keychainOf(keys);
        if (!keychain.get(recipient)) throw new AvmError('UnknownKey', `the user holds no key for to ${format(recipient)}`);
        const now = nowSeconds();
        const found: SignedInput[] = [];
        let total = 0n;
        for (const utxo of await backend.atomicUtxos(keychain.keys.map((k) => k.address))) {
          if (found.length === MAX_SPEND_INPUTS) break;
          const spend = spendable(utxo, assetId, keychain, now);
          if (!spend || total + spend.input.input.amount > U64_MAX) continue;
          total += spend.input.input.amount;
          found.push(spend);
        }
        return found;
      });
      if (ins.length === 0) throw new AvmError('InsufficientFunds', 'no spendable funds were found');
      const total = ins.reduce((sum, i) => sum + i.input.input.amount, 0n);
      const sortedIns = sortInputs(ins);
      const unsigned: UnsignedTx = {
        kind: 'import',
        ...base(),
        outs: [transferable(assetId, total, recipient)],
        ins: [],
        importedIns: sortedIns.map((i) => i.input),
      };
      return { txID: (await signAndIssue(unsigned, sortedIns)).toString() };
    },

    async exportKey({ username, password, address }) {
      const owner = own(address, 'address');
      const key = await asUser(username, password, (keys) => keys.key(owner));
      if (!key) throw new AvmError('UnknownKey', 'problem retrieving private key: not found');
      return { privateKey: key.toCb58() };
    },

    async importKey({ username, password, privateKey }) {
      return { address: format(await asUser(username, password, (keys) => serialAdds(() => keys.add(privateKey)))) };
    },
  };

  /** Issues the CreateAssetTx of these initial outputs (no inputs, no credentials); the asset ID. */
  async function createAsset(name: string, symbol: string | undefined, denomination: number, outs: Output[]): Promise<Id> {
    return backend.issueTx({
      unsigned: { kind: 'createAsset', ...base(), outs: [], ins: [], name, symbol: symbol ?? '', denomination, states: [{ fxIndex: 0, outs: sortOutputs(outs) }] },
      creds: [],
    });
  }

  return bindService(avmApiWithSymbol(opts.nativeSymbol), withNativeAliasHandlers(handlers, opts.nativeSymbol) as never);
}

/** The key of `address` the user holds; the reference's error when it holds none. */
async function keyOf(keys: UserKeys, address: ShortId, field: string): Promise<PrivateKey> {
  const key = await keys.key(address);
  if (!key) throw new AvmError('UnknownKey', `problem retrieving private key of ${field}: not found`);
  return key;
}

/** A nil txID (omitted, or 32 zero bytes) gets the reference's `nil transaction ID`. */
function requireTxId(txID: Id | undefined): Id {
  if (txID === undefined || txID.equals(Id.empty)) throw new InvalidParamsError('txID', 'nil transaction ID');
  return txID;
}

/** A TransferOutput of `amount` to one address, unlocked (what the API's methods pay out). */
function transferOutput(amount: bigint, to: ShortId): TransferOutput {
  return { kind: 'transfer', amount, locktime: 0n, threshold: 1, addresses: [to] };
}

function transferable(assetId: Id, amount: bigint, to: ShortId): TransferableOutput {
  return { assetId, out: transferOutput(amount, to) };
}

/** How `keychain` spends `utxo` of `assetId` now (the reference's keychain Spend); undefined when it cannot. */
function spendable(utxo: Utxo, assetId: Id, keychain: Keychain, now: bigint): SignedInput | undefined {
  const out = utxo.out;
  if (out.kind !== 'transfer' || !utxo.assetId.equals(assetId) || out.locktime > now) return undefined;
  const match = keychain.match(out);
  if (!match) return undefined;
  return {
    input: { txId: utxo.txId, outputIndex: utxo.outputIndex, assetId, input: { amount: out.amount, sigIndices: match.sigIndices } },
    signers: match.signers,
  };
}

/** Inputs in the order a tx must list them: by (txID, output index); their signers follow. */
function sortInputs(ins: readonly SignedInput[]): SignedInput[] {
  return [...ins].sort((a, b) => compareUtxoRefs(a.input, b.input));
}

function clampU64(n: bigint): bigint {
  return n > U64_MAX ? U64_MAX : n;
}
