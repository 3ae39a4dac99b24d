import { NodeError } from '@cornice/sdk';

export type AvmErrorCode =
  /** Bytes that are not an AVM tx, UTXO, block or genesis (codec text, e.g. `has N leftover bytes after unmarshalling`). */
  | 'Malformed'
  /** A tx that breaks a rule (syntax or state); the message names it, with the reference's text where it has one. */
  | 'InvalidTx'
  /** A block that breaks a rule. */
  | 'InvalidBlock'
  /** An nftfx or propertyfx value: parsed, not supported. */
  | 'UnsupportedFx'
  /** Genesis data the VM cannot use. */
  | 'InvalidGenesis'
  /** The mempool is full. */
  | 'MempoolFull'
  /** buildBlock with nothing to build. */
  | 'NothingToBuild'
  /** A record the VM wrote is missing or malformed. */
  | 'CorruptDatabase'
  /** A call before initialize() or after shutdown(). */
  | 'NotRunning';

/** Every error the asset VM throws on purpose. */
export class AvmError extends NodeError<AvmErrorCode> {}
