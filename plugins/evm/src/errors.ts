import { NodeError } from '@cornice/sdk';

export type EvmChainErrorCode =
  /** The genesis JSON is malformed or a field is invalid (the message names the field). */
  | 'InvalidGenesis'
  /** The chain config (per-chain config bytes) is malformed. */
  | 'InvalidConfig'
  /** The chain's database was made from another genesis. */
  | 'GenesisMismatch'
  /** A record the VM wrote is missing or malformed. */
  | 'CorruptDatabase'
  /** Block bytes that are not an Ethereum block of this chain. */
  | 'MalformedBlock'
  /** A block breaks a rule on top of its parent (the message names the rule). */
  | 'InvalidBlock'
  /** The block's parent is not known (neither accepted nor processing). */
  | 'UnknownParent'
  /** accept() of a block whose parent is not the last accepted block. */
  | 'NotNextBlock'
  /** verify/accept/reject of a block already decided the other way. */
  | 'AlreadyDecided'
  /** buildBlock with no executable transaction. */
  | 'NothingToBuild'
  /** A signature that recovers no public key. */
  | 'InvalidSignature'
  /** A call before initialize(). */
  | 'NotInitialized'
  /** A call after shutdown(). */
  | 'ShutDown'
  /** waitForEvent's signal aborted. */
  | 'Aborted'
  /** A chain-rules hook broke its contract (e.g. wrote to a state it may only read). */
  | 'RulesFailed'
  /** A peer's tx gossip that does not decode. */
  | 'MalformedGossip';

/** Every error the EVM chain throws on purpose, besides NotFoundError and the RPC-facing EvmRpcError. */
export class EvmChainError extends NodeError<EvmChainErrorCode> {}
