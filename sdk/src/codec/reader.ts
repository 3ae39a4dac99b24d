/**
 * Reader of the reference node's binary codec; the mirror of Writer. Every read checks the
 * remaining length first, and declared lengths and counts are checked against the limits and the
 * remaining input before anything is allocated, so hostile input cannot make it allocate much.
 * Call `end()` after the last field: the reference rejects trailing bytes.
 */
import { CodecError } from '../errors/errors.js';
import { Id, ShortId } from '../ids/id.js';
import { DEFAULT_MAX_SIZE, DEFAULT_MAX_SLICE_LENGTH } from './writer.js';

/**
 * IDs read lately, 256 of each length, in the slot their first and last bytes pick. Decoded values
 * repeat IDs: every tx of a chain names the chain and mostly the same assets and owners, and a
 * block's txs were decoded once already from gossip. IDs are immutable, so a repeated one can be the
 * same object: no copy of its bytes, and its `key` and cb58 string made once. A node keeps its txs
 * for a while (pooled, then in processing blocks), so each copy it does not make is also one the
 * garbage collector does not move.
 */
const recentIds: Array<Id | undefined> = new Array(256);
const recentShortIds: Array<ShortId | undefined> = new Array(256);

/** The ID of `length` bytes at `at` in `b`: the one in its slot of `recent` if it has these bytes, else a new one put there. */
function recall<T extends Id | ShortId>(recent: Array<T | undefined>, b: Uint8Array, at: number, length: number, make: (bytes: Uint8Array) => T): T {
  const slot = b[at]! ^ b[at + length - 1]!;
  const known = recent[slot];
  if (known?.isAt(b, at)) return known;
  return (recent[slot] = make(b.subarray(at, at + length)));
}

export interface ReaderOptions {
  /** Maximum input size in bytes (default 2^18); larger input is rejected by the constructor. */
  maxSize?: number;
  /** Maximum element count of a slice or `[]byte` (default 2^18). */
  maxSliceLength?: number;
}

export interface ArrayReadOptions {
  /**
   * Fewest bytes one item occupies (default 1). A declared count that cannot fit in the remaining
   * input at this size is rejected before reading; pass 0 for items that may encode to nothing.
   */
  minItemSize?: number;
}

const decoder = new TextDecoder('utf-8', { fatal: true });

export class Reader {
  readonly maxSize: number;
  readonly maxSliceLength: number;
  readonly #bytes: Uint8Array;
  readonly #view: DataView;
  #off = 0;

  constructor(bytes: Uint8Array, opts: ReaderOptions = {}) {
    this.maxSize = opts.maxSize ?? DEFAULT_MAX_SIZE;
    this.maxSliceLength = opts.maxSliceLength ?? DEFAULT_MAX_SLICE_LENGTH;
    if (bytes.length > this.maxSize) {
      throw new CodecError('TooLarge', `input of ${bytes.length} bytes is larger than the limit of ${this.maxSize}`);
    }
    this.#bytes = bytes;
    this.#view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  /** Bytes not read yet. */
  get remaining(): number {
    return this.#bytes.length - this.#off;
  }

  /** Bytes read so far. */
  get offset(): number {
    return this.#off;
  }

  /** Advances past `n` bytes, returning where they start; CodecError('InsufficientLength') if absent. */
  #take(n: number): number {
    const at = this.#off;
    if (n > this.#bytes.length - at) {
      throw new CodecError('InsufficientLength', 'packer has insufficient length for input', {
        offset: at,
        needed: n,
        remaining: this.#bytes.length - at,
      });
    }
    this.#off = at + n;
    return at;
  }

  u8(): number {
    return this.#bytes[this.#take(1)]!;
  }

  u16(): number {
    return this.#view.getUint16(this.#take(2), false);
  }

  u32(): number {
    return this.#view.getUint32(this.#take(4), false);
  }

  u64(): bigint {
    return this.#view.getBigUint64(this.#take(8), false);
  }

  /** One byte that must be 0 or 1; CodecError('Invalid') otherwise. */
  bool(): boolean {
    const at = this.#take(1);
    const b = this.#bytes[at]!;
    if (b > 1) {
      this.#off = at;
      throw new CodecError('Invalid', 'unexpected value when unpacking bool', { offset: at, value: b });
    }
    return b === 1;
  }

  /** `n` bytes as they are (a copy). */
  fixedBytes(n: number): Uint8Array {
    if (!Number.isInteger(n) || n < 0) throw new CodecError('Invalid', `invalid length ${n}`);
    const at = this.#take(n);
    return this.#bytes.slice(at, at + n);
  }

  /** `[]byte`: a u32 length (checked against the limit and the input), then the bytes (a copy). */
  bytes(): Uint8Array {
    const start = this.#off;
    const n = this.u32();
    this.#checkCount(n, 1, start);
    return this.fixedBytes(n);
  }

  /** A string: a u16 length, then UTF-8 bytes (CodecError('Invalid') when not valid UTF-8). */
  str(): string {
    const start = this.#off;
    const n = this.u16();
    const at = this.#take(n);
    try {
      return decoder.decode(this.#bytes.subarray(at, at + n));
    } catch {
      this.#off = start;
      throw new CodecError('Invalid', 'string is not valid UTF-8', { offset: start });
    }
  }

  /** A slice: a u32 count (checked against the limit and the input), then each item read by `read`. */
  array<T>(read: (r: Reader) => T, opts: ArrayReadOptions = {}): T[] {
    const start = this.#off;
    const n = this.u32();
    this.#checkCount(n, opts.minItemSize ?? 1, start);
    // Exactly n slots: pushed one by one, a one-item array gets room for 17 (152 bytes), and decoded
    // txs keep ~8 arrays each for as long as a node pools them.
    const out = new Array<T>(n);
    for (let i = 0; i < n; i++) out[i] = read(this);
    return out;
  }

  /** A 32-byte ID (the one read last with these bytes, if still remembered: see `recentIds`). */
  id(): Id {
    return recall(recentIds, this.#bytes, this.#take(32), 32, Id.fromBytes);
  }

  /** A 20-byte ID (the one read last with these bytes, if still remembered: see `recentIds`). */
  shortId(): ShortId {
    return recall(recentShortIds, this.#bytes, this.#take(20), 20, ShortId.fromBytes);
  }

  /** Asserts that everything was read: CodecError('Leftover') otherwise, with the reference's text. */
  end(): void {
    const left = this.remaining;
    if (left !== 0) {
      throw new CodecError('Leftover', `has ${left} leftover bytes after unmarshalling`, { offset: this.#off });
    }
  }

  /** Rejects a declared count above the limit or larger than the rest of the input could hold. */
  #checkCount(n: number, minItemSize: number, start: number): void {
    if (n > this.maxSliceLength) {
      this.#off = start;
      throw new CodecError('TooLarge', `slice length ${n} is larger than the limit of ${this.maxSliceLength}`, {
        offset: start,
      });
    }
    if (n * minItemSize > this.remaining) {
      const remaining = this.remaining;
      this.#off = start;
      throw new CodecError('InsufficientLength', 'packer has insufficient length for input', {
        offset: start,
        needed: n * minItemSize,
        remaining,
      });
    }
  }
}
