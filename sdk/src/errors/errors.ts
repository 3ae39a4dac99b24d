/**
 * Typed errors. Every error a Cornice module throws on purpose is a NodeError with a code naming
 * what went wrong; the API layer maps them to JSON-RPC errors with one function
 * (InvalidParamsError -> -32602, any other NodeError -> -32000, anything else -> -32603).
 * Messages are constant texts (the reference node's where it has one), never secrets.
 *
 * A plugin may bring its own copy of this package, whose classes are not ours, so `instanceof`
 * cannot recognise its errors. Every NodeError carries a brand registered process-wide with
 * `Symbol.for`, the same in every copy: recognise errors with `isNodeError` and friends, by brand
 * and `code`, never with `instanceof`.
 */
const NODE_ERROR_BRAND = Symbol.for('cornice.NodeError');

export class NodeError<C extends string = string> extends Error {
  static {
    Object.defineProperty(NodeError.prototype, NODE_ERROR_BRAND, { value: true });
  }

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

/**
 * True for a NodeError made by any copy of the sdk: it carries the brand and a string `code`.
 * Never throws, whatever `e` is (a proxy or a getter that throws counts as not a NodeError).
 */
export function isNodeError(e: unknown): e is NodeError {
  try {
    return (
      (typeof e === 'object' || typeof e === 'function') &&
      e !== null &&
      (e as { [NODE_ERROR_BRAND]?: unknown })[NODE_ERROR_BRAND] === true &&
      typeof (e as { code?: unknown }).code === 'string'
    );
  } catch {
    return false;
  }
}

/** True for a NodeError whose code is `code` (from any copy of the sdk); never throws. */
export function hasErrorCode<C extends string>(e: unknown, code: C): e is NodeError<C> {
  try {
    return isNodeError(e) && e.code === code;
  } catch {
    return false;
  }
}

/** An InvalidParamsError from any copy of the sdk (code `InvalidParams`); never throws. */
export const isInvalidParamsError = (e: unknown): e is InvalidParamsError => hasErrorCode(e, 'InvalidParams');

/** A NotFoundError from any copy of the sdk (code `NotFound`); never throws. */
export const isNotFoundError = (e: unknown): e is NotFoundError => hasErrorCode(e, 'NotFound');

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
