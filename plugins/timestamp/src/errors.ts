import { NodeError } from '@cornice/sdk';

export type TimestampErrorCode =
  /** The genesis data is longer than 32 bytes. */
  | 'InvalidGenesis'
  /** The chain's database was made from another genesis. */
  | 'GenesisMismatch'
  /** A record the VM wrote is missing or malformed. */
  | 'CorruptDatabase'
  /** Block bytes that are not a timestamp block. */
  | 'MalformedBlock'
  /** The block's parent is not known (neither accepted nor processing). */
  | 'UnknownParent'
  /** The block's timestamp is before its parent's. */
  | 'TimestampBeforeParent'
  /** The block's timestamp is 1 hour or more ahead of local time. */
  | 'TimestampTooFarAhead'
  /** accept() of a block whose parent is not the last accepted block. */
  | 'NotNextBlock'
  /** verify/accept/reject of a block that was already decided the other way. */
  | 'AlreadyDecided'
  /** The mempool holds its maximum number of pending payloads. */
  | 'MempoolFull'
  /** More proposals than `free-txs-per-minute` (limits.ts): try again later. */
  | 'RateLimited'
  /** The chain config file is not what this VM reads (limits.ts). */
  | 'InvalidConfig'
  /** buildBlock with nothing pending. */
  | 'MempoolEmpty'
  /** A call before initialize(). */
  | 'NotInitialized'
  /** A call after shutdown(). */
  | 'ShutDown'
  /** waitForEvent's signal aborted. */
  | 'Aborted';

/** Every error the timestamp VM throws on purpose (besides NotFoundError for unknown blocks/heights). */
export class TimestampError extends NodeError<TimestampErrorCode> {}
