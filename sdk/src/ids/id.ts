/**
 * Identifier value types, as the reference node has them: Id (32 bytes: chain, tx, asset, block, subnet and VM IDs)
 * and ShortId (20 bytes: addresses, node IDs). Both are immutable, written as bare cb58, and compare
 * by value: use `equals`, or `key` (lower-case hex) as a Map/Set key.
 *
 * `bytes` returns a fresh copy on every read, so no holder can mutate an Id; hot paths that only need
 * to copy the bytes somewhere use `copyTo` instead. cb58 and hex forms are computed once, lazily.
 */
import { CodecError, EncodingError } from '../errors/errors.js';
import { compareBytes } from '../encoding/bytes.js';
import { cb58Decode, cb58Encode, cb58MaxChars } from '../encoding/cb58.js';
import { fromHex, toHex } from '../encoding/hex.js';
import { sha256 } from '../crypto/hash.js';

const INSPECT = Symbol.for('nodejs.util.inspect.custom');
const U64_MAX = (1n << 64n) - 1n;
const u64Bytes = new Uint8Array(8);
const u64Scratch = new DataView(u64Bytes.buffer);

/** Copies `b` after checking its length; the reference's ToID/ToShortID error when it is wrong. */
function checkedCopy(b: Uint8Array, length: number): Uint8Array {
  if (!(b instanceof Uint8Array)) throw new EncodingError('BadLength', 'input is not a byte array');
  if (b.length !== length) {
    throw new EncodingError('BadLength', 'input has insufficient length', { expected: length, actual: b.length });
  }
  return Uint8Array.prototype.slice.call(b);
}

/** The bytes of the cb58 `s` of an ID of `length` bytes; a string too long to be one is refused before decoding. */
function decodeId(s: string, length: number): Uint8Array {
  if (typeof s === 'string' && s.length > cb58MaxChars(length)) {
    throw new EncodingError('BadLength', 'input has insufficient length', { expected: length, chars: s.length });
  }
  return checkedCopy(cb58Decode(s), length);
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The bytes of an ID-like value from another copy of the sdk, if it has any. */
function foreignBytes(x: unknown): Uint8Array | undefined {
  if (x === null || typeof x !== 'object') return undefined;
  try {
    const b = (x as { bytes?: unknown }).bytes;
    return b instanceof Uint8Array ? b : undefined;
  } catch {
    return undefined;
  }
}

/** What Id and ShortId share: immutable bytes of a fixed length, compared by value. */
abstract class FixedId {
  readonly #bytes: Uint8Array;
  #cb58: string | undefined;
  #key: string | undefined;

  /** Takes ownership of `bytes` (already checked and copied); `cb58` when parsed from it. */
  protected constructor(bytes: Uint8Array, cb58?: string) {
    this.#bytes = bytes;
    this.#cb58 = cb58;
  }

  /** A fresh copy of the bytes (mutating it does not affect the ID). */
  get bytes(): Uint8Array {
    return this.#bytes.slice();
  }

  /** Copies the bytes into `target` at `offset`, without allocating. */
  copyTo(target: Uint8Array, offset = 0): void {
    target.set(this.#bytes, offset);
  }

  /** Lower-case hex of the bytes: a stable string for Map and Set keys. */
  get key(): string {
    return (this.#key ??= toHex(this.#bytes));
  }

  /** cb58 text (cached). */
  toString(): string {
    return (this.#cb58 ??= cb58Encode(this.#bytes));
  }

  toJSON(): string {
    return this.toString();
  }

  [INSPECT](): string {
    return `${this.constructor.name}(${this.toString()})`;
  }

  /**
   * Same kind and same bytes. An ID made by another copy of the sdk (a plugin may carry its own)
   * is compared by its bytes: same length, same bytes.
   */
  /** True when these are the `length` bytes of `source` from `offset` (no copy). */
  isAt(source: Uint8Array, offset: number): boolean {
    const b = this.#bytes;
    for (let i = 0; i < b.length; i++) if (b[i] !== source[offset + i]) return false;
    return true;
  }

  equals(other: this): boolean {
    if (this === other) return true;
    if (other instanceof this.constructor) return equalBytes(this.#bytes, other.#bytes);
    const theirs = foreignBytes(other);
    return theirs !== undefined && theirs.length === this.#bytes.length && equalBytes(this.#bytes, theirs);
  }

  /** Unsigned byte order: -1, 0 or 1 (an ID of another sdk copy by its bytes). */
  compare(other: this): -1 | 0 | 1 {
    if (other instanceof this.constructor) return compareBytes(this.#bytes, other.#bytes);
    const theirs = foreignBytes(other);
    if (theirs === undefined) throw new EncodingError('BadLength', 'input is not an ID');
    return compareBytes(this.#bytes, theirs);
  }
}

/** A 32-byte identifier. */
export class Id extends FixedId {
  static readonly LENGTH = 32;
  /** 32 zero bytes: `11111111111111111111111111111111LpoYY`, the P-chain ID and default subnet ID. */
  static readonly empty: Id = new Id(new Uint8Array(32));

  /** An Id holding a copy of exactly 32 bytes; EncodingError('BadLength') otherwise. */
  static fromBytes(bytes: Uint8Array): Id {
    return new Id(checkedCopy(bytes, Id.LENGTH));
  }

  /** Parses cb58 (EncodingError with the reference's texts on bad input or a wrong length). */
  static fromString(s: string): Id {
    return new Id(decodeId(s, Id.LENGTH), s);
  }

  /** Parses the `key` form (64 hex digits). */
  static fromKey(key: string): Id {
    return new Id(checkedCopy(fromHex(key), Id.LENGTH));
  }

  /**
   * `ID.Prefix(n...)` of the reference (`ids/id.go:84-95`): SHA-256 of the 8-byte big-endian value of
   * each n (each an integer in [0, 2^64)), followed by this ID's 32 bytes.
   */
  prefix(...n: Array<number | bigint>): Id {
    const buf = new Uint8Array(8 * n.length + Id.LENGTH);
    n.forEach((v, i) => {
      let big: bigint;
      if (typeof v === 'bigint') big = v;
      else if (Number.isSafeInteger(v)) big = BigInt(v);
      else throw new CodecError('Invalid', `prefix ${i} is not an integer`);
      if (big < 0n || big > U64_MAX) throw new CodecError('Invalid', `prefix ${i} is out of the uint64 range`);
      // Through a scratch view, not a DataView of `buf`: that would move buf's bytes out of the JS
      // heap (see toHex), once per UTXO ID.
      u64Scratch.setBigUint64(0, big, false);
      buf.set(u64Bytes, 8 * i);
    });
    this.copyTo(buf, 8 * n.length);
    return new Id(sha256(buf));
  }
}

/** A 20-byte identifier (addresses, node IDs). */
export class ShortId extends FixedId {
  static readonly LENGTH = 20;
  /** 20 zero bytes. */
  static readonly empty: ShortId = new ShortId(new Uint8Array(20));

  /** A ShortId holding a copy of exactly 20 bytes; EncodingError('BadLength') otherwise. */
  static fromBytes(bytes: Uint8Array): ShortId {
    return new ShortId(checkedCopy(bytes, ShortId.LENGTH));
  }

  /** Parses cb58 (EncodingError with the reference's texts on bad input or a wrong length). */
  static fromString(s: string): ShortId {
    return new ShortId(decodeId(s, ShortId.LENGTH), s);
  }

  /** Parses the `key` form (40 hex digits). */
  static fromKey(key: string): ShortId {
    return new ShortId(checkedCopy(fromHex(key), ShortId.LENGTH));
  }
}

/**
 * The ID of a VM or Fx named `name`, as the reference node derives it: its bytes right-padded with zeros to 32, e.g.
 * `avm` -> `jvYyfQTxGMJLuGWa55kdP2p2zSUYsQ5Raupu4TW34ZAUBAbtq`. EncodingError('BadLength') when the
 * name is longer than 32 bytes.
 */
export function vmIdFromName(name: string): Id {
  const encoded = new TextEncoder().encode(name);
  if (encoded.length > Id.LENGTH) {
    throw new EncodingError('BadLength', `VM name is longer than 32 bytes`, { name, length: encoded.length });
  }
  const padded = new Uint8Array(Id.LENGTH);
  padded.set(encoded);
  return Id.fromBytes(padded);
}
