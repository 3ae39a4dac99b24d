/**
 * Chain rules: the hooks an EVM flavour (the subnet-EVM) plugs into block building, verification,
 * tx admission and execution, without forking this package. Everything is optional; with no rules
 * the chain is the C-Chain. The rules are made once per chain from its genesis and upgrade config
 * (`EvmChainOptions.rules`), and the same rules serve the executing VM and the reading VM (eth_call,
 * eth_estimateGas), so a call sees the precompiles and gates a block would.
 *
 * Addresses, slots and values are raw bytes: addresses 20 bytes, slots and storage values 32 bytes
 * (values left-padded; a missing slot reads as 32 zero bytes).
 */
import type { EvmGenesis } from './genesis.js';

/** State as a hook sees it: the state being executed, journaled (reverted with its block or call frame). */
export interface HookState {
  getAccount(address: Uint8Array): Promise<{ nonce: bigint; balance: bigint } | undefined>;
  /** Sets nonce and balance, creating the account if missing (code and storage kept). */
  putAccount(address: Uint8Array, account: { nonce: bigint; balance: bigint }): Promise<void>;
  /** Adds to the balance, creating the account if missing. */
  addBalance(address: Uint8Array, amount: bigint): Promise<void>;
  getCode(address: Uint8Array): Promise<Uint8Array>;
  putCode(address: Uint8Array, code: Uint8Array): Promise<void>;
  /** The 32-byte value at a 32-byte slot (32 zero bytes when unset). */
  getStorage(address: Uint8Array, slot: Uint8Array): Promise<Uint8Array>;
  /** Writes a 32-byte value (all zero clears the slot). */
  putStorage(address: Uint8Array, slot: Uint8Array, value: Uint8Array): Promise<void>;
  /** Removes the account with its code and storage (a precompile's deactivation). */
  deleteAccount(address: Uint8Array): Promise<void>;
  /**
   * The state root, when this is an accepted state that no one changes (the one admission reads):
   * what a rule may key a memo of its reads by. Undefined on a state a block is executing on.
   */
  readonly root?: Uint8Array;
}

/** What the rules see of a parent block. */
export interface ParentHeader {
  readonly hash: Uint8Array;
  readonly number: bigint;
  readonly timestamp: bigint;
  readonly gasLimit: bigint;
  readonly gasUsed: bigint;
  readonly baseFeePerGas: bigint;
  readonly coinbase: Uint8Array;
  readonly extraData: Uint8Array;
}

/** The header fields the rules decide for a new block (the rest are the executor's). */
export interface HeaderFields {
  readonly baseFeePerGas: bigint;
  readonly gasLimit: bigint;
  /** Fee recipient of a block this node builds. */
  readonly coinbase: Uint8Array;
  /** The whole extraData (the subnet-EVM: the 80-byte fee window, then the block gas cost). */
  readonly extraData: Uint8Array;
}

/** The block a hook runs in. */
export interface BlockInfo {
  readonly number: bigint;
  readonly timestamp: bigint;
  /** The parent's timestamp; undefined for the genesis block. */
  readonly parentTimestamp: bigint | undefined;
  readonly coinbase: Uint8Array;
  readonly baseFeePerGas: bigint;
}

/** One executed tx, as the block-fee check sees it. */
export interface IncludedTx {
  readonly gasUsed: bigint;
  /** Effective tip per gas: min(maxPriorityFee, maxFee - baseFee) (gasPrice - baseFee for legacy). */
  readonly tipPerGas: bigint;
}

/** A call into a stateful precompile. */
export interface PrecompileCall {
  /** The precompile's address (the called address; for a delegatecall, the code address). */
  readonly address: Uint8Array;
  /** msg.sender of the frame. */
  readonly caller: Uint8Array;
  /** tx.origin. */
  readonly origin: Uint8Array;
  readonly value: bigint;
  readonly input: Uint8Array;
  /** Gas given to the frame. */
  readonly gas: bigint;
  /** STATICCALL, or any call below one: writes must fail. */
  readonly isStatic: boolean;
  /** DELEGATECALL or CALLCODE into the precompile. */
  readonly isDelegate: boolean;
  readonly block: BlockInfo;
  readonly state: HookState;
}

export interface PrecompileLog {
  readonly topics: readonly Uint8Array[];
  readonly data: Uint8Array;
}

/**
 * A precompile's answer. Success charges `gasUsed`. A failure with `revert: true` reverts the frame,
 * charges `gasUsed` and returns `output` as revert data; any other failure is an exceptional halt as
 * in geth: the frame consumes all its gas and `error` is the message eth_call / eth_estimateGas
 * return (e.g. `non-enabled cannot mint: 0x…`).
 */
export type PrecompileResult =
  | { readonly ok: true; readonly output: Uint8Array; readonly gasUsed: bigint; readonly logs?: readonly PrecompileLog[] }
  | { readonly ok: false; readonly error: string; readonly revert?: boolean; readonly output?: Uint8Array; readonly gasUsed?: bigint };

/**
 * A stateful precompile at a fixed address. It is reachable only while `isActive` says so; at other
 * times the address is an ordinary account (note: @ethereumjs treats registered precompile addresses
 * as warm, so a call to an inactive one costs the warm price).
 */
export interface StatefulPrecompile {
  readonly address: Uint8Array;
  /** Active at this block timestamp (default: always). */
  isActive?(timestamp: bigint): boolean;
  run(call: PrecompileCall): Promise<PrecompileResult>;
}

export interface ChainRules {
  /**
   * The header fields of a block on `parent` at `timestamp`, computed on the parent's state (read
   * only). Replaces FeeRules' baseFee / gasLimit / coinbase; extraData defaults to empty.
   */
  header?(parent: ParentHeader, timestamp: bigint, state: HookState): Promise<HeaderFields>;
  /**
   * Checks another node's header fields (its block at `timestamp`) against the rules (default: all
   * four equal what `header` answers). Returns why it is invalid, or undefined. `coinbase` may legitimately differ when fee
   * recipients are allowed: that is this check's call.
   */
  verifyHeader?(parent: ParentHeader, timestamp: bigint, got: HeaderFields, state: HookState): Promise<string | undefined>;
  /**
   * The longest extraData a block may have (default 32 bytes, as Ethereum); the subnet-EVM's is 80 + 8.
   */
  readonly maxExtraDataBytes?: number;
  /**
   * Runs on the block's state before its first tx, in build, verify and for the genesis block
   * (parentTimestamp undefined, after the alloc): the subnet-EVM activates and deactivates
   * precompiles here (nonce 1 and code 0x01 and their configure step; a wipe on disable).
   */
  beforeBlock?(block: BlockInfo, state: HookState): Promise<void>;
  /**
   * Refuses a tx from `sender` (the tx allow list): returns the error text, or undefined. Asked at
   * admission (on the accepted state, the text becomes the JSON-RPC error) and before each tx runs
   * in a block (a refused tx is left out of a block being built; it makes a foreign block invalid).
   * In a block, `block` is one object for all its txs, and `state` has no `root` (it changes as txs
   * run); at admission `state.root` is the accepted root — what a memo of the answer may key by.
   */
  checkTx?(sender: Uint8Array, block: BlockInfo, state: HookState): Promise<string | undefined>;
  /**
   * Refuses a CREATE/CREATE2 (the deployer allow list, checked against tx.origin on every create, in
   * txs and in calls): returns the error text, or undefined. A refused create consumes its gas.
   */
  canCreate?(origin: Uint8Array, block: BlockInfo, state: HookState): Promise<string | undefined>;
  /** Stateful precompiles (their addresses are taken from the EVM's built-in set). */
  readonly precompiles?: readonly StatefulPrecompile[];
  /**
   * Checks the executed block's fee (the subnet-EVM's VerifyBlockFee: tips must buy the block gas
   * cost): returns why the block is invalid, or undefined. A block built here that fails it is not
   * proposed; the builder waits until `buildableAt`.
   */
  verifyBlockFee?(header: HeaderFields & { readonly number: bigint; readonly timestamp: bigint }, txs: readonly IncludedTx[]): string | undefined;
  /**
   * The earliest unix second at which a block on `parent` may be built with tip-less txs (the
   * subnet-EVM: when its block gas cost falls to what no tips can pay, i.e. 0); undefined: any time.
   * The chain's waitForEvent sleeps until then while txs are pending.
   */
  buildableAt?(parent: ParentHeader, state: HookState): Promise<bigint | undefined>;
  /** Base fees go to the coinbase instead of being burned (the subnet-EVM: always). */
  readonly creditBaseFee?: boolean;
  /** Extra fields in eth_getBlockBy* and newHeads JSON (the subnet-EVM's blockGasCost). */
  headerJson?(header: { readonly extraData: Uint8Array; readonly number: bigint }): Record<string, unknown>;
}

/**
 * Makes a chain's rules from its genesis and its upgrade config (the bytes of
 * `<chain-config-dir>/<chain>/upgrade.json`, empty when there is none). Throws an
 * EvmChainError('InvalidConfig' or 'InvalidGenesis') naming the field for a bad config: the chain
 * does not start.
 */
export type ChainRulesFactory = (genesis: EvmGenesis, upgrade: Uint8Array) => ChainRules;
