/**
 * Typed errors. Every error a Cornice module throws on purpose is a NodeError with a code naming
 * what went wrong; the API layer maps them to JSON-RPC errors with one function
 * (InvalidParamsError -> -32602, any other NodeError -> -32000, anything else -> -32603).
 * Messages are constant texts (the reference node's where it has one), never secrets.
 */
export class NodeError<C extends string = string> extends Error {
  constructor(
    readonly code: C,
    message: string,
    /** Extra machine-readable detail, sent as the JSON-RPC error's `data`. Never secrets. */
    readonly data?: unknown,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** A request parameter is missing, of the wrong type or out of range. `field` names it (dotted path). */
export class InvalidParamsError extends NodeError<'InvalidParams'> {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super('InvalidParams', field ? `${field}: ${message}` : message, { field });
  }
}

/** A looked-up thing (block, user, key, alias...) does not exist. */
export class NotFoundError extends NodeError<'NotFound'> {
  constructor(message = 'not found') {
    super('NotFound', message);
  }
}

export type EncodingErrorCode =
  | 'ZeroLength'
  | 'InvalidDigit'
  | 'TooShortForChecksum'
  | 'BadChecksum'
  | 'BadHex'
  | 'BadLength';

/** cb58 / base58 / hex decoding failures; messages are the reference node's texts. */
export class EncodingError extends NodeError<EncodingErrorCode> {}

export type CodecErrorCode = 'InsufficientLength' | 'Leftover' | 'TooLarge' | 'Invalid';

/** Binary codec failures (reading past the end, trailing bytes, size limits, bad values). */
export class CodecError extends NodeError<CodecErrorCode> {}

export type CryptoErrorCode = 'InvalidPrivateKey' | 'InvalidPublicKey' | 'InvalidSignature' | 'MutatedSignature';

/** Key parsing and signature verification/recovery failures. */
export class CryptoError extends NodeError<CryptoErrorCode> {}

export type StoreErrorCode = 'Closed' | 'Io';

/** Storage failures (closed store, I/O). */
export class StoreError extends NodeError<StoreErrorCode> {}
