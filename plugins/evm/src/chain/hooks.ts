/**
 * How the chain rules (rules.ts) plug into @ethereumjs: the HookState adapter over a state manager
 * (journaled when a frame is running), the block a hook runs in, the header fields of a new block,
 * and the VM patches for `canCreate` and the stateful precompiles. A VM made
 * without rules is not patched at all: the C-Chain pays nothing.
 */
import type { Block, BlockHeader } from '@ethereumjs/block';
import { EVMError, type ExecResult, type Message } from '@ethereumjs/evm';
import type { MerkleStateManager } from '@ethereumjs/statemanager';
import { Account, Address, bytesToHex, equalsBytes } from '@ethereumjs/util';
import type { VM } from '@ethereumjs/vm';
import { EvmChainError } from '../errors.js';
import type { CustomPrecompiles } from './precompiles/guarded.js';
import { precompileLogs } from './tracing/interpreter-hooks.js';
import type { FeeRules, ParentFeeInfo } from './fees.js';
import type { BlockInfo, ChainRules, HeaderFields, HookState, ParentHeader, PrecompileResult, StatefulPrecompile } from './rules.js';

/** The EVM internals the patches use (protected in the typings). */
interface EvmInternals {
  _executeCall(message: Message): Promise<{ execResult: ExecResult }>;
  _executeCreate(message: Message): Promise<{ execResult: ExecResult; createdAddress?: Address }>;
  _tx?: { origin: Address };
  _block?: Block;
  journal: HookJournal;
  stateManager: MerkleStateManager;
}

/** What HookState writes through: the EVM journal's account writes (they touch the account). */
export interface HookJournal {
  putAccount(address: Address, account: Account): Promise<void>;
  deleteAccount(address: Address): Promise<void>;
}

/**
 * An exceptional halt decided by the rules (a refused create, a failing precompile): the frame
 * consumes all its gas, and `error` is the rules' text, which eth_call / eth_estimateGas return.
 */
export class RulesHalt extends EVMError {
  constructor(text: string) {
    super(text as ConstructorParameters<typeof EVMError>[0]);
  }
}

// ------------------------------------------------------------------ state

/**
 * HookState over a state manager. With `journal`, writes go through the EVM journal (touched as
 * EIP-161 wants; reverted with the frame or the block's checkpoint, as state-manager writes are).
 * Without it the state is read only: a write is a broken hook, refused before it changes anything.
 * `root`: the state is the accepted one at this root, which no one changes (HookState.root).
 */
export function hookState(sm: MerkleStateManager, journal?: HookJournal, root?: Uint8Array): HookState {
  return new ManagerHookState(sm, journal, root && !journal ? root : undefined);
}

/** A class, not an object of closures: a HookState is made for every tx's checks (see the bench). */
class ManagerHookState implements HookState {
  constructor(
    private readonly sm: MerkleStateManager,
    private readonly journal: HookJournal | undefined,
    readonly root: Uint8Array | undefined,
  ) {}

  async getAccount(address: Uint8Array) {
    const a = await this.sm.getAccount(new Address(address));
    return a && { nonce: a.nonce, balance: a.balance };
  }

  async putAccount(address: Uint8Array, { nonce, balance }: { nonce: bigint; balance: bigint }) {
    this.#writable('putAccount');
    const a = new Address(address);
    const acct = await this.#account(a);
    acct.nonce = nonce;
    acct.balance = balance;
    await this.#put(a, acct);
  }

  async addBalance(address: Uint8Array, amount: bigint) {
    this.#writable('addBalance');
    const a = new Address(address);
    const acct = await this.#account(a);
    acct.balance += amount;
    await this.#put(a, acct);
  }

  getCode(address: Uint8Array) {
    return this.sm.getCode(new Address(address));
  }

  async putCode(address: Uint8Array, code: Uint8Array) {
    this.#writable('putCode');
    const a = new Address(address);
    await this.sm.putCode(a, code);
    await this.#put(a, await this.#account(a));
  }

  async getStorage(address: Uint8Array, slot: Uint8Array) {
    return word32(await this.sm.getStorage(new Address(address), slot));
  }

  async putStorage(address: Uint8Array, slot: Uint8Array, value: Uint8Array) {
    this.#writable('putStorage');
    const a = new Address(address);
    if ((await this.sm.getAccount(a)) === undefined) await this.#put(a, new Account());
    await this.sm.putStorage(a, slot, value);
  }

  async deleteAccount(address: Uint8Array) {
    this.#writable('deleteAccount');
    await this.journal!.deleteAccount(new Address(address));
  }

  #writable(what: string): void {
    if (!this.journal) throw new EvmChainError('RulesFailed', `a chain-rules hook called ${what} on a read-only state`);
  }

  async #account(a: Address): Promise<Account> {
    return (await this.sm.getAccount(a)) ?? new Account();
  }

  async #put(a: Address, acct: Account): Promise<void> {
    if (this.journal) await this.journal.putAccount(a, acct);
  }
}

/**
 * A storage value as a 32-byte word (the state manager answers it without leading zeros). Not
 * @ethereumjs's setLengthLeft: its checks cost more than the allow-list read of every tx.
 */
function word32(v: Uint8Array): Uint8Array {
  if (v.length === 32) return v;
  const out = new Uint8Array(32);
  out.set(v.length > 32 ? v.subarray(v.length - 32) : v, 32 - Math.min(v.length, 32));
  return out;
}

// ------------------------------------------------------------------ blocks and headers

export function parentHeader(b: Block): ParentHeader {
  const h = b.header;
  return {
    hash: b.hash(),
    number: h.number,
    timestamp: h.timestamp,
    gasLimit: h.gasLimit,
    gasUsed: h.gasUsed,
    baseFeePerGas: h.baseFeePerGas ?? 0n,
    coinbase: h.coinbase.bytes,
    extraData: h.extraData,
  };
}

export function feeInfo(b: Block): ParentFeeInfo {
  const h = b.header;
  return { number: h.number, timestamp: h.timestamp, gasLimit: h.gasLimit, gasUsed: h.gasUsed, baseFeePerGas: h.baseFeePerGas ?? 0n };
}

/** The header fields of a block on `parent` at `timestamp` by the fee rules (no chain rules). */
export function feeHeaderFields(parent: Block, timestamp: bigint, fees: FeeRules): HeaderFields {
  const info = feeInfo(parent);
  return { baseFeePerGas: fees.baseFee(info, timestamp), gasLimit: fees.gasLimit(info, timestamp), coinbase: fees.coinbase(info), extraData: new Uint8Array() };
}

/** The rules' header fields per rules object, by parent hash and timestamp; the oldest goes first. */
const headerMemo = new WeakMap<ChainRules, Map<string, HeaderFields>>();
/** A few parents: the accepted tip, the preferred block, a block being verified. */
const HEADER_MEMO_MAX = 16;

/** The memoized rule-decided header fields of a block on `parent` at `timestamp`, if asked before. */
export function knownHeaderFields(parent: Block, timestamp: bigint, rules: ChainRules): HeaderFields | undefined {
  return headerMemo.get(rules)?.get(headerKey(parent, timestamp));
}

const headerKey = (parent: Block, timestamp: bigint) => `${bytesToHex(parent.hash())}/${timestamp}`;

/**
 * The header fields of a block on `parent` at `timestamp`: the rules' when they decide them, else the
 * fee rules'. The rules compute them on the parent's state, which the parent's hash fixes, so they
 * are asked once per parent and second: every tx admitted asks for the next block's base fee.
 */
export async function headerFields(parent: Block, timestamp: bigint, fees: FeeRules, rules: ChainRules | undefined, parentState: () => HookState): Promise<HeaderFields> {
  if (!rules?.header) return feeHeaderFields(parent, timestamp, fees);
  let memo = headerMemo.get(rules);
  if (!memo) headerMemo.set(rules, (memo = new Map()));
  const key = headerKey(parent, timestamp);
  const known = memo.get(key);
  if (known) return known;
  const fields = await rules.header(parentHeader(parent), timestamp, parentState());
  if (memo.size >= HEADER_MEMO_MAX) memo.delete(memo.keys().next().value!);
  memo.set(key, fields);
  return fields;
}

/** What is wrong with a foreign block's rule-decided header fields, or undefined. */
export async function headerProblem(parent: Block, h: BlockHeader, fees: FeeRules, rules: ChainRules | undefined, parentState: () => HookState): Promise<string | undefined> {
  const got: HeaderFields = { baseFeePerGas: h.baseFeePerGas ?? 0n, gasLimit: h.gasLimit, coinbase: h.coinbase.bytes, extraData: h.extraData };
  if (rules?.verifyHeader) return rules.verifyHeader(parentHeader(parent), h.timestamp, got, parentState());
  const want = await headerFields(parent, h.timestamp, fees, rules, parentState);
  const by = rules?.header ? 'the chain rules' : 'the fee rules';
  if (got.gasLimit !== want.gasLimit) return `gas limit does not follow ${by}`;
  if (got.baseFeePerGas !== want.baseFeePerGas) return `base fee does not follow ${by}`;
  if (!equalsBytes(got.coinbase, want.coinbase)) return 'coinbase is not the fee recipient';
  if (rules?.header && !equalsBytes(got.extraData, want.extraData)) return 'extra data does not follow the chain rules';
  return undefined;
}

/** BlockInfo of the context blocks the chain runs txs and calls in (they know their parent's time). */
const blockInfos = new WeakMap<object, BlockInfo>();

/** Remembers the BlockInfo of a context block (`parentTimestamp` undefined: the genesis block). */
export function withBlockInfo(block: Block, parentTimestamp: bigint | undefined): BlockInfo {
  const h = block.header;
  const info: BlockInfo = { number: h.number, timestamp: h.timestamp, parentTimestamp, coinbase: h.coinbase.bytes, baseFeePerGas: h.baseFeePerGas ?? 0n };
  blockInfos.set(block, info);
  return info;
}

/** The BlockInfo of the block an EVM runs in (one the chain did not register: parent time unknown). */
function blockInfoOf(block: Block | undefined): BlockInfo {
  if (!block) return { number: 0n, timestamp: 0n, parentTimestamp: undefined, coinbase: new Uint8Array(20), baseFeePerGas: 0n };
  return blockInfos.get(block) ?? withBlockInfo(block, undefined);
}

// ------------------------------------------------------------------ VM patches

/** Frames being executed, innermost last, per EVM (set by the `_executeCall` patch). */
const frames = new WeakMap<object, Message[]>();

/** The rules' stateful precompiles as ethereumjs custom precompiles (with the chain's own ones). */
export function precompilesWith(rules: ChainRules | undefined, custom: CustomPrecompiles | undefined): CustomPrecompiles | undefined {
  const stateful = rules?.precompiles ?? [];
  if (stateful.length === 0) return custom;
  return [...(custom ?? []), ...stateful.map((p) => ({ address: new Address(p.address), function: (input: { gasLimit: bigint; data: Uint8Array; _EVM: unknown }) => runStateful(p, input) }))];
}

async function runStateful(p: StatefulPrecompile, input: { gasLimit: bigint; data: Uint8Array; _EVM: unknown }): Promise<ExecResult> {
  const evm = input._EVM as EvmInternals;
  const gasLimit = input.gasLimit;
  const block = evm._block;
  if (p.isActive && !p.isActive(block?.header.timestamp ?? 0n)) return { executionGasUsed: 0n, returnValue: new Uint8Array() };
  const stack = frames.get(evm);
  const msg = stack?.[stack.length - 1];
  if (!msg?.to) return halt(gasLimit, 'stateful precompile called on a VM without the chain rules (made by makeVM)');
  const codeAddress = msg.codeAddress ?? msg.to;
  const result: PrecompileResult = await p.run({
    address: codeAddress.bytes,
    caller: msg.caller.bytes,
    origin: (evm._tx?.origin ?? msg.caller).bytes,
    value: msg.value,
    input: input.data,
    gas: gasLimit,
    isStatic: stack!.some((m) => m.isStatic),
    isDelegate: msg.delegatecall || !equalsBytes(codeAddress.bytes, msg.to.bytes),
    block: blockInfoOf(block),
    state: hookState(evm.stateManager, evm.journal),
  });
  if (result.ok) {
    if (result.gasUsed > gasLimit) return { executionGasUsed: gasLimit, returnValue: new Uint8Array(), exceptionError: new EVMError(EVMError.errorMessages.OUT_OF_GAS) };
    const logs = result.logs?.map((l) => [codeAddress.bytes, [...l.topics], l.data] as [Uint8Array, Uint8Array[], Uint8Array]);
    // A traced run's callTracer puts them in this precompile's frame (withLog).
    if (logs && logs.length > 0) precompileLogs(evm, logs);
    return { executionGasUsed: result.gasUsed, returnValue: result.output, ...(logs && logs.length > 0 ? { logs } : {}) };
  }
  if (result.revert) {
    const used = result.gasUsed ?? 0n;
    return { executionGasUsed: used < gasLimit ? used : gasLimit, returnValue: result.output ?? new Uint8Array(), exceptionError: new EVMError(EVMError.errorMessages.REVERT) };
  }
  return halt(gasLimit, result.error);
}

function halt(gasLimit: bigint, text: string): ExecResult {
  return { executionGasUsed: gasLimit, returnValue: new Uint8Array(), exceptionError: new RulesHalt(text) };
}

/**
 * Patches a VM made for a chain with rules: the frame stack the stateful precompiles read, the
 * create gate, and `shallowCopy` so a copy (which @ethereumjs builds with a fresh EVM and without
 * the VM params) gets both again.
 */
export function installRules(vm: VM, rules: ChainRules, params: Record<string, Record<string, unknown>> | undefined): void {
  const evm = vm.evm as unknown as EvmInternals;
  if ((rules.precompiles?.length ?? 0) > 0) {
    const stack: Message[] = [];
    frames.set(evm, stack);
    const executeCall = evm._executeCall.bind(evm);
    evm._executeCall = async (message) => {
      stack.push(message);
      try {
        return await executeCall(message);
      } finally {
        stack.pop();
      }
    };
  }
  const canCreate = rules.canCreate?.bind(rules);
  if (canCreate) {
    const executeCreate = evm._executeCreate.bind(evm);
    evm._executeCreate = async (message) => {
      const origin = evm._tx?.origin ?? message.caller;
      const why = await canCreate(origin.bytes, blockInfoOf(evm._block), hookState(evm.stateManager));
      if (why !== undefined) return { execResult: halt(message.gasLimit, why) };
      return executeCreate(message);
    };
  }
  const shallowCopy = vm.shallowCopy.bind(vm);
  vm.shallowCopy = async (downlevelCaches?: boolean) => {
    const copy = await shallowCopy(downlevelCaches);
    if (params) copy.common.updateParams(params as never);
    installRules(copy, rules, params);
    return copy;
  };
}
