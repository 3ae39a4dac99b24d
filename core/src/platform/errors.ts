import { NodeError } from '@cornice/sdk';

export type PlatformErrorCode =
  /** Bytes that are not a platform tx, block or genesis. */
  | 'Malformed'
  /** A tx that breaks a rule (nonce, balance, staking period, signatures …); the message names it. */
  | 'InvalidTx'
  /** A block that breaks a rule. */
  | 'InvalidBlock'
  /** A vmID or alias no loaded VM answers to. */
  | 'UnknownVM'
  /** A subnet, chain, account key or validator that does not exist. */
  | 'Unknown'
  /** platform.sign with no signature slot left for the key. */
  | 'NoPlaceToSign'
  /** Genesis data the VM cannot use. */
  | 'InvalidGenesis'
  /** The mempool is full. */
  | 'MempoolFull'
  /** A bound this node sets was reached (keys per keystore user). */
  | 'Limit'
  /** platform.sampleValidators asked for more validators than the subnet has. */
  | 'NotEnoughValidators'
  /** A record the VM wrote is missing or malformed. */
  | 'CorruptDatabase'
  /** A call before initialize() or after shutdown(). */
  | 'NotRunning'
  /** buildBlock with no pending tx and no staker change due (the engine backs off and asks again later). */
  | 'NothingToBuild';

/** Every error the platform chain throws on purpose; messages follow the reference where it has one. */
export class PlatformError extends NodeError<PlatformErrorCode> {}
