import { NodeError } from '@cornice/sdk';

/**
 * Codes of the errors this VM throws on purpose. A NodeError thrown by a service handler reaches
 * the JSON-RPC client as {"code": -32000, "message": <message>, "data": <its data, else {"code":
 * <code>}>}; bad params are refused by the sdk's param parsers with -32602 naming the field before
 * a handler runs; anything that is not a NodeError is a -32603 "internal error" (and logged).
 * Unknown blocks and heights throw the sdk's NotFoundError, which the engine recognises.
 */
export type VmErrorCode =
  /** The chain's genesis bytes are not this VM's genesis (see genesis.ts). */
  | 'InvalidGenesis'
  /** A transaction breaks a rule of tx.ts (empty or too long key or value). */
  | 'InvalidTx'
  /** Block bytes or fields that break a rule of verify(). */
  | 'InvalidBlock'
  /** The mempool already holds this transaction. */
  | 'DuplicateTx'
  /** The mempool is at capacity; the client may try again later. */
  | 'MempoolFull'
  /** buildBlock() with an empty mempool. */
  | 'NothingToBuild'
  /** waitForEvent()'s signal aborted, or the VM shut down. */
  | 'Aborted'
  /** A record this VM wrote is missing or malformed. */
  | 'CorruptDatabase';

export class VmError extends NodeError<VmErrorCode> {}
