import { NodeError } from '@cornice/sdk';

export type NetworkErrorCode =
  /** Bytes that are not a valid message or frame (truncated, trailing bytes, bad value), or a value that cannot be encoded. */
  | 'Malformed'
  /** A frame, message, list or string over its limit (messages.ts). */
  | 'TooLarge'
  /** An op number this node does not know. */
  | 'UnknownOp'
  /** A message of another codec version. */
  | 'WrongVersion';

/**
 * A peer's bytes (or a message we were about to send) that break the wire format; the message names
 * the op and the field. The peer layer drops a peer whose input throws one.
 */
export class NetworkError extends NodeError<NetworkErrorCode> {}
