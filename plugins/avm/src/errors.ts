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
  | 'NotRunning'
  // The avm service's own refusals (service.ts); the message is the reference's text where it has one.
  /** The keystore refused the user (`problem retrieving user: not found`, wrong password, throttled). */
  | 'UserAccess'
  /** The user holds no key for an address it must control (`problem retrieving private key: not found`). */
  | 'UnknownKey'
  /** An assetID that names no asset (`asset 'x' not found`, `unknown asset ID`). */
  | 'UnknownAsset'
  /** A txID this node does not know (`transaction is unknown`). */
  | 'UnknownTx'
  /** The user's spendable UTXOs do not cover the amount (`insufficient funds`). */
  | 'InsufficientFunds'
  /** Mint: no minter set of the asset is satisfied by the given minters, or the tx cannot take this signature. */
  | 'CannotMint'
  /** More than the service reads or builds in one call (UTXOs, inputs, keys per user). */
  | 'Limit'
  /** A native-token method on a chain without the native asset. */
  | 'NoNativeAsset'
  /** Free txs (assets created, UTXOs of assets other than the native token) past this chain's budget: try again later (limits.ts). */
  | 'RateLimited'
  /** The chain config file is not what this VM reads (limits.ts parseAvmConfig). */
  | 'InvalidConfig';

/** Every error the asset VM throws on purpose. */
export class AvmError extends NodeError<AvmErrorCode> {}
