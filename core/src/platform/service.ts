/**
 * The platform chain's JSON-RPC service (`platform`, API.md), bound to the VM through
 * PlatformBackend. Read methods answer from the last accepted state; builders return unsigned txs
 * in their wire form (cb58), which `sign` fills one signature at a time and `issueTx` submits.
 */
import {
  type UserKeys,
  withNativeAliasHandlers,
  InvalidParamsError,
  PrivateKey,
  ShortId,
  bindService,
  bytesToWire,
  compareBytes,
  hasErrorCode,
  sha256,
  recoverAddressFromHash,
  type BoundService,
  type Handlers,
  type Id,
  serializer,
} from '@cornice/sdk';
import { type platformApi, platformApiWithSymbol, type AccountReply, type ValidatorReply } from './api.js';
import { decodeTx, decodeUtxo, encodeTx, unsignedTxBytes } from './codec.js';
import { PlatformError } from './errors.js';
import { platformKeys } from './keys.js';
import {
  DEFAULT_SUBNET_ID,
  EMPTY_SIGNATURE,
  PLATFORM_CHAIN_ID,
  type Account,
  type AddNonDefaultSubnetValidatorTx,
  type CreateChainTx,
  type ImportTx,
  type IssuableTx,
  type PlatformBackend,
  type PlatformTx,
  type Staker,
  type TransferableInput,
} from './model.js';

export interface PlatformServiceOptions {
  /** The native token's symbol: exportNATIVE/importNATIVE are also served as export<symbol>/import<symbol>. */
  nativeSymbol: string;
  /** A float in [0, 1) for sampleValidators; Math.random by default. */
  random?: () => number;
}

/** Most UTXOs one importNATIVE sweeps (the signed tx must fit in a reply); call again for the rest. */
export const MAX_IMPORT_INPUTS = 64;

const U64_MAX = (1n << 64n) - 1n;

/** The `platform` service of the P-Chain, bound to its VM. */
export function platformService(backend: PlatformBackend, opts: PlatformServiceOptions): BoundService {
  const random = opts.random ?? Math.random;
  const serialAdds = serializer();

  /** Runs `fn` with the user's P-Chain keys; the store is closed afterwards. */
  async function asUser<T>(username: string, password: string, fn: (keys: UserKeys) => Promise<T>): Promise<T> {
    let db;
    try {
      db = await backend.openUser(username, password);
    } catch (e) {
      if (hasErrorCode(e, 'UserNotFound')) throw new PlatformError('Unknown', `couldn't get data for user '${username}'. Does user exist?`);
      throw e;
    }
    try {
      return await fn(platformKeys(db));
    } finally {
      await db.close();
    }
  }

  /** The key of `address` the user holds; a clear error when it holds none. */
  async function keyOf(keys: UserKeys, address: ShortId, field: string): Promise<PrivateKey> {
    const key = await keys.key(address);
    if (!key) throw new PlatformError('Unknown', `the user holds no P-Chain key for ${field} ${address}`);
    return key;
  }

  /** The fields the three staking builders share, after their pre-checks (the staking rules of model.ts). */
  function stakerOf(a: StakerParams, stake: 'stakeAmount' | 'weight') {
    const nonce = checkNonce(a.payerNonce);
    if (a.startTime < backend.now()) throw new PlatformError('InvalidTx', 'start time must be in the future');
    return {
      nodeId: a.id ?? backend.nodeId,
      weight: stakeOf(a, stake),
      start: a.startTime,
      end: a.endTime,
      networkId: backend.networkId,
      nonce,
    };
  }

  async function signTx(tx: PlatformTx, key: PrivateKey): Promise<IssuableTx> {
    switch (tx.kind) {
      case 'addDefaultSubnetValidator':
      case 'addDefaultSubnetDelegator':
      case 'createSubnet':
      case 'export':
        // One signature, which also names the payer: signing again replaces it (as the reference).
        return { ...tx, sig: key.sign(unsignedTxBytes(tx)) };
      case 'addNonDefaultSubnetValidator':
      case 'createChain':
        return signSubnetTx(tx, key);
      case 'import':
        throw new PlatformError('InvalidTx', 'an import tx is built and signed by importNATIVE; sign does not take it');
      default:
        throw new PlatformError('InvalidTx', `${tx.kind} txs are made by the VM and take no signature`);
    }
  }

  /**
   * As the reference node fills a subnet tx's signatures (API.md, "Signing and issuing"): a control
   * key of the subnet that has not signed as control yet takes a free control slot (control signatures kept sorted by raw bytes); otherwise the key
   * fills the payer slot when it is empty; otherwise there is no place for it.
   */
  async function signSubnetTx<T extends AddNonDefaultSubnetValidatorTx | CreateChainTx>(tx: T, key: PrivateKey): Promise<T> {
    const subnetId = tx.subnetId;
    const subnet = await backend.preferred().subnet(subnetId);
    if (!subnet) throw new PlatformError('Unknown', `problem getting subnet information: couldn't find subnet with ID ${subnetId}`);
    const hash = sha256(unsignedTxBytes(tx));
    const signer = key.address;
    const isControlKey = subnet.controlKeys.some((k) => k.equals(signer));
    const signedAsControl = tx.controlSigs.some((s) => signedBy(hash, s, signer));
    if (isControlKey && !signedAsControl && tx.controlSigs.length < subnet.threshold) {
      const controlSigs = [...tx.controlSigs, key.signHash(hash)].sort(compareBytes);
      return { ...tx, controlSigs };
    }
    if (isEmptySignature(tx.payerSig)) return { ...tx, payerSig: key.signHash(hash) };
    throw new PlatformError('NoPlaceToSign', 'no place for key to sign');
  }

  const handlers: Handlers<typeof platformApi> = {
    async createAccount({ username, password, privateKey }) {
      const key = privateKey ?? PrivateKey.generate();
      const address = await asUser(username, password, (keys) => serialAdds(() => keys.add(key)));
      return { address: address.toString() };
    },

    async getAccount({ address }) {
      return accountReply(await backend.accepted().account(address));
    },

    async listAccounts({ username, password }) {
      const addresses = await asUser(username, password, (keys) => keys.addresses());
      const state = backend.accepted();
      const accounts: AccountReply[] = [];
      for (const a of addresses) accounts.push(accountReply(await state.account(a)));
      return { accounts };
    },

    async getCurrentValidators({ subnetID }) {
      const subnetId = await existingSubnet(subnetID);
      return { validators: (await backend.accepted().currentStakers(subnetId)).map(validatorReply) };
    },

    async getPendingValidators({ subnetID }) {
      const subnetId = await existingSubnet(subnetID);
      return { validators: (await backend.accepted().pendingStakers(subnetId)).map(validatorReply) };
    },

    async sampleValidators({ size, subnetID }) {
      const subnetId = await existingSubnet(subnetID);
      const weights = new Map<string, { nodeId: ShortId; weight: bigint }>();
      for (const s of await backend.accepted().currentStakers(subnetId)) {
        const v = weights.get(s.tx.nodeId.key) ?? { nodeId: s.tx.nodeId, weight: 0n };
        v.weight += s.tx.weight;
        weights.set(s.tx.nodeId.key, v);
      }
      const pool = [...weights.values()].filter((v) => v.weight > 0n);
      if (pool.length < size) {
        throw new PlatformError('NotEnoughValidators', `current number of validators (${pool.length}) is insufficient to sample ${size} validators`);
      }
      const sample = sampleByWeight(pool, size, random).sort((a, b) => a.compare(b));
      return { validators: sample.map((id) => id.toString()) };
    },

    async addDefaultSubnetValidator(a) {
      return unsignedReply({
        kind: 'addDefaultSubnetValidator',
        ...stakerOf(a, 'stakeAmount'),
        destination: a.destination,
        shares: a.delegationFeeRate ?? 0,
        sig: EMPTY_SIGNATURE.slice(),
      });
    },

    async addNonDefaultSubnetValidator(a) {
      if (a.subnetID.equals(DEFAULT_SUBNET_ID)) {
        throw new InvalidParamsError('subnetID', 'must not be the Default Subnet (use addDefaultSubnetValidator)');
      }
      return unsignedReply({
        kind: 'addNonDefaultSubnetValidator',
        ...stakerOf(a, 'weight'),
        subnetId: a.subnetID,
        controlSigs: [],
        payerSig: EMPTY_SIGNATURE.slice(),
      });
    },

    async addDefaultSubnetDelegator(a) {
      return unsignedReply({
        kind: 'addDefaultSubnetDelegator',
        ...stakerOf(a, 'stakeAmount'),
        destination: a.destination,
        sig: EMPTY_SIGNATURE.slice(),
      });
    },

    async createSubnet({ controlKeys, threshold, payerNonce }) {
      // Sorted and unique, as the tx must be at issue (the reference left that to the caller).
      const keys = [...new Map(controlKeys.map((k) => [k.key, k])).values()].sort((a, b) => a.compare(b));
      if (threshold > keys.length) {
        throw new InvalidParamsError('threshold', `must be at most the number of distinct control keys (${keys.length})`);
      }
      return unsignedReply({
        kind: 'createSubnet',
        networkId: backend.networkId,
        nonce: checkNonce(payerNonce),
        controlKeys: keys,
        threshold,
        sig: EMPTY_SIGNATURE.slice(),
      });
    },

    async getSubnets({ ids }) {
      const wanted = ids && new Set(ids.map((id) => id.key));
      const subnets = (await backend.accepted().subnets()).filter(
        (s) => !s.id.equals(DEFAULT_SUBNET_ID) && (!wanted || wanted.has(s.id.key)),
      );
      return {
        subnets: subnets.map((s) => ({ id: s.id.toString(), controlKeys: s.controlKeys.map((k) => k.toString()), threshold: String(s.threshold) })),
      };
    },

    async validatedBy({ blockchainID }) {
      if (blockchainID.equals(PLATFORM_CHAIN_ID)) return { subnetID: DEFAULT_SUBNET_ID.toString() };
      const chain = await backend.accepted().chain(blockchainID);
      if (!chain) throw new PlatformError('Unknown', 'there is no blockchain with the specified ID');
      return { subnetID: chain.subnetId.toString() };
    },

    async validates({ subnetID }) {
      const subnetId = await existingSubnet(subnetID);
      const chains = await backend.accepted().chains();
      return {
        blockchainIDs: chains.filter((c) => c.subnetId.equals(subnetId) && !c.id.equals(PLATFORM_CHAIN_ID)).map((c) => c.id.toString()),
      };
    },

    async getBlockchains() {
      const chains = await backend.accepted().chains();
      return {
        blockchains: chains
          .filter((c) => !c.id.equals(PLATFORM_CHAIN_ID))
          .map((c) => ({ id: c.id.toString(), name: c.name, subnetID: c.subnetId.toString(), vmID: c.vmId.toString() })),
      };
    },

    async createBlockchain({ subnetID, vmID, name, payerNonce, genesisData, fxIDs }) {
      if (subnetID === undefined) throw new InvalidParamsError('subnetID', 'subnet not specified');
      if (vmID === undefined || vmID === '') throw new InvalidParamsError('vmID', 'VM not specified');
      const nonce = checkNonce(payerNonce);
      if (subnetID.equals(DEFAULT_SUBNET_ID)) throw new InvalidParamsError('subnetID', "new blockchain can't be validated by default Subnet");
      const vmId = backend.resolveVm(vmID);
      try {
        await backend.checkGenesis(vmId, genesisData);
      } catch (e) {
        throw new InvalidParamsError('genesisData', `not valid genesis data for this VM: ${(e as Error).message}`);
      }
      return unsignedReply({
        kind: 'createChain',
        networkId: backend.networkId,
        subnetId: subnetID,
        nonce,
        chainName: name,
        vmId,
        fxIds: fxIDs ?? [],
        genesisData,
        controlSigs: [],
        payerSig: EMPTY_SIGNATURE.slice(),
      });
    },

    async getBlockchainStatus({ blockchainID }) {
      return { status: await backend.blockchainStatus(blockchainID) };
    },

    async sign({ tx, signer, username, password }) {
      if (signer.equals(ShortId.empty)) throw new InvalidParamsError('signer', "nil ShortID 'signer' is not valid");
      const decoded = decodeTx(tx);
      const key = await asUser(username, password, (keys) => keyOf(keys, signer, 'signer'));
      return { tx: bytesToWire(encodeTx(await signTx(decoded, key))) };
    },

    async issueTx({ tx }) {
      const decoded = decodeTx(tx);
      if (decoded.kind === 'advanceTime' || decoded.kind === 'rewardValidator') {
        throw new PlatformError('InvalidTx', 'Could not parse given tx. Must be a TimedTx, DecisionTx, or AtomicTx');
      }
      return { txID: (await backend.issueTx(decoded)).toString() };
    },

    async exportNATIVE({ to, amount, payerNonce }) {
      if (amount === 0n) throw new InvalidParamsError('amount', 'amount must be >0');
      const nonce = checkNonce(payerNonce);
      const peer = atomicPeer();
      return unsignedReply({
        kind: 'export',
        networkId: backend.networkId,
        nonce,
        outs: [{ assetId: peer.assetId, out: { kind: 'transfer', amount, locktime: 0n, threshold: 1, addresses: [to] } }],
        sig: EMPTY_SIGNATURE.slice(),
      });
    },

    async importNATIVE({ username, password, to, payerNonce }) {
      if (to.equals(ShortId.empty)) throw new InvalidParamsError('to', "nil ShortID 'to' is not valid");
      const nonce = checkNonce(payerNonce);
      const peer = atomicPeer();
      const key = await asUser(username, password, (keys) => keyOf(keys, to, 'to'));
      const ins = await spendableInputs(backend, peer.assetId, to);
      if (ins.length === 0) throw new PlatformError('InvalidTx', 'no spendable funds were found');
      const unsigned: ImportTx = { kind: 'import', networkId: backend.networkId, nonce, account: to, ins, sig: EMPTY_SIGNATURE.slice(), creds: [] };
      const sig = key.signHash(sha256(unsignedTxBytes(unsigned)));
      const signed: ImportTx = { ...unsigned, sig, creds: ins.map(() => ({ sigs: [sig] })) };
      return { tx: bytesToWire(encodeTx(signed)) };
    },
  };

  function atomicPeer(): { chainId: Id; assetId: Id } {
    const peer = backend.atomicPeer();
    if (!peer) throw new PlatformError('Unknown', 'this node runs no X-Chain to move native tokens to or from');
    return peer;
  }

  /** The subnet ID (default: the Default Subnet); a clear error when no such subnet exists. */
  async function existingSubnet(id: Id | undefined): Promise<Id> {
    if (id === undefined || id.equals(DEFAULT_SUBNET_ID)) return DEFAULT_SUBNET_ID;
    if (!(await backend.accepted().subnet(id))) throw new PlatformError('Unknown', `couldn't find subnet with ID ${id}`);
    return id;
  }

  return bindService(platformApiWithSymbol(opts.nativeSymbol), withNativeAliasHandlers(handlers, opts.nativeSymbol) as never);
}

interface StakerParams {
  id?: ShortId;
  startTime: number;
  endTime: number;
  stakeAmount?: bigint;
  weight?: bigint;
  payerNonce: bigint;
}

/** The wire form of a built tx. */
function unsignedReply(tx: IssuableTx): { unsignedTx: string } {
  return { unsignedTx: bytesToWire(encodeTx(tx)) };
}

function checkNonce(nonce: bigint): bigint {
  if (nonce === 0n) throw new InvalidParamsError('payerNonce', "sender's next nonce not specified");
  return nonce;
}

/** The staked amount from either spelling (`primary` is the one this method documents). */
function stakeOf(a: { stakeAmount?: bigint; weight?: bigint }, primary: 'stakeAmount' | 'weight'): bigint {
  const other = primary === 'weight' ? 'stakeAmount' : 'weight';
  if (a.stakeAmount !== undefined && a.weight !== undefined && a.stakeAmount !== a.weight) {
    throw new InvalidParamsError(other, `differs from ${primary}: give one of them`);
  }
  const amount = a[primary] ?? a[other];
  if (amount === undefined) throw new InvalidParamsError(primary, `missing required field (or give ${other})`);
  return amount;
}

function accountReply(a: Account): AccountReply {
  return { address: a.address.toString(), nonce: a.nonce.toString(), balance: a.balance.toString() };
}

function validatorReply({ tx }: Staker): ValidatorReply {
  const times = { id: tx.nodeId.toString(), startTime: String(tx.start), endTime: String(tx.end) };
  if (tx.kind === 'addNonDefaultSubnetValidator') return { ...times, weight: tx.weight.toString() };
  return { ...times, stakeAmount: tx.weight.toString(), address: tx.destination.toString() };
}

function isEmptySignature(sig: Uint8Array): boolean {
  return compareBytes(sig, EMPTY_SIGNATURE) === 0;
}

function signedBy(hash: Uint8Array, sig: Uint8Array, address: ShortId): boolean {
  try {
    return recoverAddressFromHash(hash, sig).equals(address);
  } catch {
    return false; // not a signature: it signs for nobody
  }
}

/**
 * `k` distinct node IDs drawn with probability by weight, without replacement (Efraimidis–Spirakis:
 * the k largest u^(1/w), compared as ln(u)/w).
 */
function sampleByWeight(pool: ReadonlyArray<{ nodeId: ShortId; weight: bigint }>, k: number, random: () => number): ShortId[] {
  return pool
    .map((v) => ({ nodeId: v.nodeId, score: Math.log(1 - random()) / Number(v.weight) }))
    .sort((a, b) => b.score - a.score)
    .slice(0, k)
    .map((v) => v.nodeId);
}

/**
 * The native-token UTXOs the X-Chain exported to this chain that `to` alone can spend now (threshold
 * 1, unlocked), as inputs sorted by (txID, output index): the first MAX_IMPORT_INPUTS of them, their
 * sum within a u64. UTXOs that do not decode are not ours to judge: they are skipped.
 */
async function spendableInputs(backend: PlatformBackend, assetId: Id, to: ShortId): Promise<TransferableInput[]> {
  const now = BigInt(backend.now());
  const byOrder = (a: TransferableInput, b: TransferableInput) => compareBytes(a.txId.bytes, b.txId.bytes) || a.outputIndex - b.outputIndex;
  let found: TransferableInput[] = [];
  for await (const [, bytes] of backend.atomicUtxos()) {
    let utxo: ReturnType<typeof decodeUtxo>;
    try {
      utxo = decodeUtxo(bytes);
    } catch {
      continue;
    }
    const out = utxo.out;
    const index = out.addresses.findIndex((a) => a.equals(to));
    if (!utxo.assetId.equals(assetId) || out.threshold !== 1 || index < 0 || out.locktime > now || out.amount === 0n) continue;
    found.push({ txId: utxo.txId, outputIndex: utxo.outputIndex, assetId, input: { amount: out.amount, sigIndices: [index] } });
    if (found.length > 4 * MAX_IMPORT_INPUTS) found = found.sort(byOrder).slice(0, MAX_IMPORT_INPUTS); // bounded memory
  }
  const ins: TransferableInput[] = [];
  let total = 0n;
  for (const input of found.sort(byOrder)) {
    if (ins.length === MAX_IMPORT_INPUTS) break;
    if (total + input.input.amount > U64_MAX) continue;
    total += input.input.amount;
    ins.push(input);
  }
  return ins;
}
