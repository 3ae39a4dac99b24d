import { NodeError } from '@cornice/sdk';

export type FeeErrorCode =
  /** A block's extraData is not the fee window (80 bytes) and block gas cost (8 bytes). */
  | 'InvalidExtraData'
  /** A block's timestamp is before its parent's. */
  | 'InvalidTimestamp';

/** A header the fee rules cannot compute on (the message says what is wrong). */
export class FeeError extends NodeError<FeeErrorCode> {}
