/**
 * The platform chain's rules, the reference node's: what each tx requires of the state it
 * applies to, and what it changes there. Decision and atomic txs change a StateDiff directly;
 * proposal txs yield two diffs, one for Commit and one for Abort. Errors are PlatformError('InvalidTx')
 * with the reference's text where it has one.
 */
import { type Id, ShortId, compareBytes, bytesEqual, recoverSigner, sha256 } from '@cornice/sdk';
import { decodeUtxo, txId as txIdOf, unsignedTxBytes, utxoId as utxoIdOf, encodeUtxo } from './codec.js';
import { PlatformError } from './errors.js';
import {
  DEFAULT_SUBNET_ID,
  EMPTY_SIGNATURE,
  MAX_CONTROL_KEYS_THRESHOLD,
  MAX_STAKING_SECONDS,
  MIN_STAKE,
  MIN_STAKING_SECONDS,
  NUMBER_OF_SHARES,
  SYNC_BOUND_SECONDS,
  TX_FEE,
  type AddDefaultSubnetDelegatorTx,
  type AddDefaultSubnetValidatorTx,
  type AddNonDefaultSubnetValidatorTx,
  type AtomicTx,
  type DecisionTx,
  type ExportTx,
  type ImportTx,
  type IssuableTx,
  type ProposalTx,
  type Staker,
  type SubnetRecord,
  type TimedTx,
} from './model.js';
import { reward, splitDelegatorReward } from './rewards.js';
import { StateDiff, subnetOf, type StateReader } from './state.js';

export interface ExecutorContext {
  readonly networkId: number;
  /** The chain this chain exchanges atomic UTXOs with, and the asset they may carry (the X-Chain and the native asset). */
  readonly atomic: { chainId: Id; assetId: Id } | undefined;
  /** An imported UTXO from shared memory (accepted state), by UTXO ID. */
  readUtxo(utxoId: Id): Promise<Uint8Array | undefined>;
}

export interface ProposalOutcomes {
  onCommit: StateDiff;
  onAbort: StateDiff;
}

/**
 * Whether this node builds Commit (else Abort) on a proposal at local time `now` (reference
 * InitiallyPrefersCommit). Asked when the option is built, not when the proposal was verified: an
 * add-validator tx whose start passed meanwhile gets Abort, an advance of time reached meanwhile Commit.
 */
export function prefersCommit(tx: ProposalTx, now: number): boolean {
  switch (tx.kind) {
    case 'advanceTime':
      return tx.time <= now;
    case 'rewardValidator':
      return true;
    default:
      return tx.start > now;
  }
}

const invalid = (msg: string, data?: Record<string, unknown>): never => {
  throw new PlatformError('InvalidTx', msg, data);
};

const signedHashes = new WeakMap<object, Uint8Array>();

/** SHA-256 of the bytes a tx's keys sign (cached per tx object). */
export function signedHash(tx: IssuableTx): Uint8Array {
  let h = signedHashes.get(tx);
  if (!h) signedHashes.set(tx, (h = sha256(unsignedTxBytes(tx))));
  return h;
}

/** The address that made `sig` over the tx; a clear error when the slot is empty or the signature bad. */
export function signerOf(tx: IssuableTx, sig: Uint8Array, what = 'signature'): ShortId {
  if (bytesEqual(sig, EMPTY_SIGNATURE)) return invalid(`${what} is missing: the tx is not signed by its payer (use platform.sign)`);
  try {
    return recoverSigner(signedHash(tx), sig);
  } catch (e) {
    return invalid(`${what} is invalid: ${(e as Error).message}`);
  }
}

const payers = new WeakMap<object, ShortId>();

/**
 * The payer of a tx: recovered from its payer signature (reference: there is no payer field);
 * cached per tx object (the mempool's txs are asked again at every issue and build).
 */
export function payerOf(tx: IssuableTx): ShortId {
  let payer = payers.get(tx);
  if (!payer) payers.set(tx, (payer = 'payerSig' in tx ? signerOf(tx, tx.payerSig, 'payer signature') : signerOf(tx, tx.sig)));
  return payer;
}

/**
 * Whether `tx` is from an account whose next nonce on `state` is below the tx's: it can apply only
 * after the account's txs before it (false when its payer cannot be recovered: it never applies).
 */
export async function nonceAhead(tx: IssuableTx, state: StateReader): Promise<boolean> {
  let payer: ShortId;
  try {
    payer = payerOf(tx);
  } catch {
    return false;
  }
  return tx.nonce > (await state.account(payer)).nonce + 1n;
}

const txIds = new WeakMap<object, Id>();

/** A tx's ID, cached per tx object (pooled txs are applied again at every issue). */
export function idOf(tx: IssuableTx): Id {
  let id = txIds.get(tx);
  if (!id) txIds.set(tx, (id = txIdOf(tx)));
  return id;
}

// ---- syntactic checks (no state) ----

export function checkSyntax(tx: IssuableTx, networkId: number): void {
  if (tx.networkId !== networkId) invalid(`tx is for network ${tx.networkId} but this is network ${networkId}`);
  if (tx.nonce <= 0n) invalid("sender's next nonce not specified");
  switch (tx.kind) {
    case 'addDefaultSubnetValidator':
    case 'addDefaultSubnetDelegator':
    case 'addNonDefaultSubnetValidator':
      checkPeriod(tx);
      if (tx.nodeId.equals(ShortId.empty)) invalid("validator's node ID can't be empty");
      if (tx.kind === 'addNonDefaultSubnetValidator') {
        if (tx.weight <= 0n) invalid('weight must be positive');
        if (tx.subnetId.equals(DEFAULT_SUBNET_ID)) invalid('use addDefaultSubnetValidator to validate the Default Subnet');
      } else {
        if (tx.destination.equals(ShortId.empty)) invalid("destination can't be empty");
        if (tx.weight < MIN_STAKE) invalid('weight of this validator is too low', { minimum: String(MIN_STAKE) });
        if (tx.kind === 'addDefaultSubnetValidator' && (tx.shares < 0 || tx.shares > NUMBER_OF_SHARES)) {
          invalid(`delegation fee rate (${tx.shares}) must be between 0 and ${NUMBER_OF_SHARES} (millionths)`);
        }
      }
      return;
    case 'createSubnet': {
      for (let i = 1; i < tx.controlKeys.length; i++) {
        if (tx.controlKeys[i - 1]!.compare(tx.controlKeys[i]!) >= 0) invalid('control keys must be sorted and unique');
      }
      if (tx.threshold > MAX_CONTROL_KEYS_THRESHOLD) invalid(`threshold (${tx.threshold}) must be at most ${MAX_CONTROL_KEYS_THRESHOLD}`);
      if (tx.threshold < 1 || tx.threshold > tx.controlKeys.length) {
        invalid(`threshold (${tx.threshold}) must be between 1 and the number of control keys (${tx.controlKeys.length})`);
      }
      return;
    }
    case 'createChain':
      if (tx.subnetId.equals(DEFAULT_SUBNET_ID)) invalid("new blockchain can't be validated by default Subnet");
      if (tx.chainName.length > 128) invalid('chain name must be at most 128 characters');
      return;
    case 'import':
      if (tx.ins.length === 0) invalid('no spendable funds were found');
      for (let i = 1; i < tx.ins.length; i++) {
        const a = tx.ins[i - 1]!;
        const b = tx.ins[i]!;
        const order = a.txId.compare(b.txId) || a.outputIndex - b.outputIndex;
        if (order >= 0) invalid('inputs must be sorted and unique');
      }
      if (tx.creds.length !== tx.ins.length) invalid(`tx has ${tx.creds.length} credentials for ${tx.ins.length} inputs`);
      return;
    case 'export':
      if (tx.outs.length === 0) invalid('an export needs at least one output');
      for (const { out: o } of tx.outs) {
        if (o.amount <= 0n) invalid('amount must be >0');
        if (o.threshold < 1 || o.threshold > o.addresses.length) invalid('output threshold must be between 1 and its number of addresses');
        for (let i = 1; i < o.addresses.length; i++) if (o.addresses[i - 1]!.compare(o.addresses[i]!) >= 0) invalid('output addresses must be sorted and unique');
      }
      return;
  }
}

function checkPeriod(tx: TimedTx): void {
  const duration = tx.end - tx.start;
  if (duration < MIN_STAKING_SECONDS) invalid('staking period is too short', { start: tx.start, end: tx.end });
  if (duration > MAX_STAKING_SECONDS) invalid('staking period is too long', { start: tx.start, end: tx.end });
}

// ---- accounts ----

/** Debits `amount` (+ fee) from the payer and consumes its next nonce. */
async function spend(diff: StateDiff, payer: ShortId, nonce: bigint, amount: bigint): Promise<void> {
  const acct = await diff.account(payer);
  if (nonce !== acct.nonce + 1n) {
    invalid(`account's last nonce is ${acct.nonce} so expected tx nonce to be ${acct.nonce + 1n} but was ${nonce}`);
  }
  const total = TX_FEE + amount;
  if (acct.balance < total) invalid(`insufficient funds: account balance ${acct.balance} < tx fee (${TX_FEE}) + send amount (${amount})`);
  diff.setAccount({ address: payer, nonce, balance: acct.balance - total });
}

async function credit(diff: StateDiff, to: ShortId, amount: bigint): Promise<void> {
  if (amount === 0n) return;
  const acct = await diff.account(to);
  diff.setAccount({ ...acct, balance: acct.balance + amount });
}

// ---- control signatures ----

function checkControlSigs(tx: AddNonDefaultSubnetValidatorTx | DecisionTx, subnet: SubnetRecord, sigs: readonly Uint8Array[]): void {
  if (sigs.length !== subnet.threshold) invalid(`expected ${subnet.threshold} control signatures but got ${sigs.length}`);
  const seen = new Set<string>();
  for (let i = 0; i < sigs.length; i++) {
    if (i > 0 && compareBytes(sigs[i - 1]!, sigs[i]!) >= 0) invalid('control signatures must be sorted and unique');
    const signer = signerOf(tx as IssuableTx, sigs[i]!, 'control signature');
    if (!subnet.controlKeys.some((k) => k.equals(signer))) invalid(`control signature ${i} is not from a control key of subnet ${subnet.id}`);
    if (seen.has(signer.key)) invalid(`control key ${signer} signed twice`);
    seen.add(signer.key);
  }
}

// ---- decision txs ----

export async function applyDecisionTx(tx: DecisionTx, diff: StateDiff, c: ExecutorContext): Promise<void> {
  checkSyntax(tx, c.networkId);
  const id = idOf(tx);
  if (tx.kind === 'createSubnet') {
    if (await diff.subnet(id)) invalid(`subnet ${id} already exists`);
    await spend(diff, payerOf(tx), tx.nonce, 0n);
    diff.addSubnet({ id, controlKeys: tx.controlKeys, threshold: tx.threshold });
    return;
  }
  const subnet = await diff.subnet(tx.subnetId);
  if (!subnet) return invalid(`couldn't find subnet with ID ${tx.subnetId}`);
  checkControlSigs(tx, subnet, tx.controlSigs);
  if (await diff.chain(id)) invalid(`blockchain ${id} already exists`);
  await spend(diff, payerOf(tx), tx.nonce, 0n);
  diff.addChain({ id, name: tx.chainName, subnetId: tx.subnetId, vmId: tx.vmId, fxIds: tx.fxIds, genesisData: tx.genesisData });
}

// ---- atomic txs ----

export async function applyAtomicTx(tx: AtomicTx, diff: StateDiff, c: ExecutorContext): Promise<void> {
  checkSyntax(tx, c.networkId);
  const atomic = c.atomic;
  if (!atomic) return invalid('this network has no chain to exchange atomic UTXOs with');
  return tx.kind === 'import' ? applyImport(tx, diff, c, atomic) : applyExport(tx, diff, atomic);
}

async function applyImport(tx: ImportTx, diff: StateDiff, c: ExecutorContext, atomic: { chainId: Id; assetId: Id }): Promise<void> {
  const payer = payerOf(tx);
  if (!payer.equals(tx.account)) invalid(`tx's account ${tx.account} is not the key that signed it (${payer})`);
  let total = 0n;
  for (let i = 0; i < tx.ins.length; i++) {
    const input = tx.ins[i]!;
    const id = utxoIdOf(input.txId, input.outputIndex);
    const bytes = diff.consumed(id) ? undefined : await c.readUtxo(id);
    if (!bytes) return invalid(`missing utxo ${input.txId}:${input.outputIndex}`);
    const utxo = decodeUtxo(bytes);
    const out = utxo.out;
    const { amount, sigIndices } = input.input;
    if (!input.assetId.equals(atomic.assetId) || !utxo.assetId.equals(atomic.assetId)) invalid(`input ${i} is not of the native asset`);
    if (out.amount !== amount) invalid(`input ${i} spends ${amount} but the utxo holds ${out.amount}`);
    if (out.locktime > BigInt(diff.timestamp())) invalid('output is time locked');
    const cred = tx.creds[i]!;
    if (cred.sigs.length !== sigIndices.length || sigIndices.length !== out.threshold) {
      invalid(`input ${i} needs ${out.threshold} signatures`);
    }
    for (let j = 0; j < cred.sigs.length; j++) {
      const index = sigIndices[j]!;
      if (j > 0 && index <= sigIndices[j - 1]!) invalid(`input ${i}: signature indices must be sorted and unique`);
      const owner = out.addresses[index];
      if (!owner) return invalid(`input ${i}: signature index ${index} is out of range`);
      if (!signerOf(tx, cred.sigs[j]!, `credential ${i}`).equals(owner)) invalid(`input ${i}: signature ${j} is not from the utxo's owner`);
    }
    diff.consume(id);
    total += amount;
  }
  await spend(diff, payer, tx.nonce, 0n);
  await credit(diff, tx.account, total);
}

async function applyExport(tx: ExportTx, diff: StateDiff, atomic: { chainId: Id; assetId: Id }): Promise<void> {
  let total = 0n;
  for (const o of tx.outs) {
    if (!o.assetId.equals(atomic.assetId)) invalid(`only the native asset ${atomic.assetId} can be exported`);
    total += o.out.amount;
  }
  await spend(diff, payerOf(tx), tx.nonce, total);
  const id = idOf(tx);
  tx.outs.forEach(({ assetId, out }, i) => {
    const utxoId = utxoIdOf(id, i);
    diff.exportUtxo({ utxoId, bytes: encodeUtxo({ txId: id, outputIndex: i, assetId, out }) });
  });
}

// ---- proposal txs ----

/** The next time a staker set changes, across all subnets (earliest pending start or current end). */
export async function nextStakerChange(state: StateReader, subnets: readonly Id[]): Promise<number | undefined> {
  let next: number | undefined;
  for (const s of subnets) {
    const cur = (await state.currentStakers(s))[0];
    const pend = (await state.pendingStakers(s))[0];
    for (const t of [cur?.tx.end, pend?.tx.start]) if (t !== undefined && (next === undefined || t < next)) next = t;
  }
  return next;
}

/**
 * Every subnet with a staker: the Default Subnet and those of the state's subnets. (Subnets are few;
 * a subnet with no stakers contributes nothing.)
 */
export async function allSubnets(state: StateReader): Promise<Id[]> {
  return [DEFAULT_SUBNET_ID, ...(await state.subnets()).map((s) => s.id)];
}

/**
 * The rule of a proposal that depends on local time: an advance of time at most 10 s ahead of it.
 * Checked when a proposal is verified, not when the outcomes of an accepted one are recomputed
 * (after a restart, whatever the clock says then).
 */
export function checkProposalTime(tx: ProposalTx, now: number): void {
  if (tx.kind === 'advanceTime' && tx.time > now + SYNC_BOUND_SECONDS) {
    invalid(`proposed time (${tx.time}) is too far in the future relative to local time (${now})`);
  }
}

/** The Commit and Abort states of a proposal on `parent` (its rules but checkProposalTime's). */
export async function proposalOutcomes(tx: ProposalTx, parent: () => StateReader, c: ExecutorContext): Promise<ProposalOutcomes> {
  const onCommit = new StateDiff(parent);
  const onAbort = new StateDiff(parent);
  const state = parent();
  switch (tx.kind) {
    case 'advanceTime': {
      const current = state.timestamp();
      if (tx.time <= current) invalid(`proposed timestamp (${tx.time}) not after current timestamp (${current})`);
      const next = await nextStakerChange(state, await allSubnets(state));
      if (next !== undefined && tx.time > next) invalid(`proposed timestamp (${tx.time}) later than next staker change time (${next})`);
      onCommit.time = tx.time;
      for (const subnet of await allSubnets(state)) {
        for (const s of await state.pendingStakers(subnet)) if (s.tx.start <= tx.time) onCommit.setStaker(s, 'current');
        if (!subnet.equals(DEFAULT_SUBNET_ID)) {
          for (const s of await state.currentStakers(subnet)) if (s.tx.end <= tx.time) onCommit.setStaker(s, undefined);
        }
      }
      return { onCommit, onAbort };
    }
    case 'rewardValidator': {
      const next = (await state.currentStakers(DEFAULT_SUBNET_ID))[0];
      if (!next) return invalid('there are no Default Subnet stakers to reward');
      if (!next.txId.equals(tx.txId)) invalid(`staker ${tx.txId} is not the next to leave (${next.txId} is)`);
      if (state.timestamp() !== next.tx.end) invalid(`chain time (${state.timestamp()}) is not the staker's end time (${next.tx.end})`);
      await payOut(next, state, onCommit, true);
      await payOut(next, state, onAbort, false);
      return { onCommit, onAbort };
    }
    default: {
      checkSyntax(tx, c.networkId);
      await applyTimedTx(tx, onCommit);
      return { onCommit, onAbort };
    }
  }
}

/** Ends a Default Subnet staker: its stake back to its destination, with the reward on commit. */
async function payOut(staker: Staker, state: StateReader, diff: StateDiff, withReward: boolean): Promise<void> {
  const tx = staker.tx as AddDefaultSubnetValidatorTx | AddDefaultSubnetDelegatorTx;
  diff.setStaker(staker, undefined);
  const earned = withReward ? reward(tx.weight, tx.end - tx.start) : 0n;
  if (tx.kind === 'addDefaultSubnetValidator' || earned === 0n) {
    await credit(diff, tx.destination, tx.weight + earned);
    return;
  }
  const validator = await defaultValidatorOf(state, tx.nodeId);
  const split = splitDelegatorReward(earned, validator?.tx.kind === 'addDefaultSubnetValidator' ? validator.tx.shares : 0);
  await credit(diff, tx.destination, tx.weight + split.delegator);
  if (validator?.tx.kind === 'addDefaultSubnetValidator') await credit(diff, validator.tx.destination, split.validator);
  else await credit(diff, tx.destination, split.validator);
}

/** A node's Default Subnet validator entry (current or pending), not its delegations. */
async function defaultValidatorOf(state: StateReader, nodeId: ShortId): Promise<Staker | undefined> {
  const all = [...(await state.currentStakers(DEFAULT_SUBNET_ID)), ...(await state.pendingStakers(DEFAULT_SUBNET_ID))];
  return all.find((s) => s.tx.kind === 'addDefaultSubnetValidator' && s.tx.nodeId.equals(nodeId));
}

/** Applies an add-validator/delegator tx (the Commit side of its proposal): a pending staker. */
export async function applyTimedTx(tx: TimedTx, diff: StateDiff): Promise<void> {
  const time = diff.timestamp();
  if (time >= tx.start) invalid(`chain timestamp (${time}) not before validator's start time (${tx.start})`);
  const subnetId = subnetOf(tx);
  const id = idOf(tx);
  switch (tx.kind) {
    case 'addDefaultSubnetValidator': {
      if (await defaultValidatorOf(diff, tx.nodeId)) invalid(`validator ${tx.nodeId} is already a current or pending validator of the Default Subnet`);
      await spend(diff, payerOf(tx), tx.nonce, tx.weight);
      break;
    }
    case 'addDefaultSubnetDelegator': {
      const validator = await defaultValidatorOf(diff, tx.nodeId);
      if (!validator) return invalid(`delegatee ${tx.nodeId} is not a current or pending validator of the Default Subnet`);
      if (tx.start < validator.tx.start || tx.end > validator.tx.end) invalid('all subnets must be a subset of the default subnet');
      await spend(diff, payerOf(tx), tx.nonce, tx.weight);
      break;
    }
    case 'addNonDefaultSubnetValidator': {
      const subnet = await diff.subnet(subnetId);
      if (!subnet) return invalid(`couldn't find subnet with ID ${subnetId}`);
      checkControlSigs(tx, subnet, tx.controlSigs);
      const validator = await defaultValidatorOf(diff, tx.nodeId);
      if (!validator || tx.start < validator.tx.start || tx.end > validator.tx.end) {
        invalid('all subnets must be a subset of the default subnet', { detail: `node ${tx.nodeId} must validate the Default Subnet from ${tx.start} to ${tx.end}` });
      }
      const existing = [...(await diff.currentStakers(subnetId)), ...(await diff.pendingStakers(subnetId))];
      if (existing.some((s) => s.tx.nodeId.equals(tx.nodeId))) invalid(`validator ${tx.nodeId} is already a current or pending validator of subnet ${subnetId}`);
      await spend(diff, payerOf(tx), tx.nonce, 0n);
      break;
    }
  }
  diff.setStaker({ txId: id, tx }, 'pending');
}

/** Any issuable tx applied to `diff` as if accepted (proposals: their Commit side). For mempool checks. */
export async function applyAsAccepted(tx: IssuableTx, diff: StateDiff, c: ExecutorContext): Promise<void> {
  switch (tx.kind) {
    case 'createSubnet':
    case 'createChain':
      return applyDecisionTx(tx, diff, c);
    case 'import':
    case 'export':
      return applyAtomicTx(tx, diff, c);
    default:
      checkSyntax(tx, c.networkId);
      return applyTimedTx(tx, diff);
  }
}

/** A subnet's current validators as the engine samples them: weight summed by node (stake plus delegations). */
export async function validatorWeights(state: StateReader, subnetId: Id): Promise<Array<{ nodeId: ShortId; weight: bigint }>> {
  const sums = new Map<string, { nodeId: ShortId; weight: bigint }>();
  for (const s of await state.currentStakers(subnetId)) {
    const e = sums.get(s.tx.nodeId.key);
    if (e) e.weight += s.tx.weight;
    else sums.set(s.tx.nodeId.key, { nodeId: s.tx.nodeId, weight: s.tx.weight });
  }
  return [...sums.values()];
}
