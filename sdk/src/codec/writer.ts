/**
 * Writer of the reference node's binary codec: big-endian integers, bool as one byte,
 * `[]byte` and slices as a u32 count then the items, strings as a u16 length then UTF-8, fixed arrays
 * (IDs) with no count. Interface values (u32 type ID + value) and struct field order are the caller's
 * business: write them field by field.
 */
import { CodecError } from '../errors/errors.js';
import type { Id, ShortId } from '../ids/id.js';

/** Default limit on a whole encoded value (reference: 256 KiB). */
export const DEFAULT_MAX_SIZE = 1 << 18;
/** Default limit on the element count of one slice (reference: 2^18). */
export const DEFAULT_MAX_SLICE_LENGTH = 1 << 18;
/** Longest string the codec can hold (u16 length). */
export const MAX_STRING_LENGTH = 0xffff;

export interface WriterOptions {
  /** Maximum total size in bytes (default 2^18). */
  maxSize?: number;
  /** Maximum element count of a slice or `[]byte` (default 2^18). */
  maxSliceLength?: number;
  /** Bytes to reserve at first (default 256; the buffer doubles as needed): the size, when known, saves the regrowth copies. */
  initialSize?: number;
}

const U64_MAX = (1n << 64n) - 1n;
const encoder = new TextEncoder();

/**
 * Working buffers that finished writers left for the next ones. A writer's first buffer (256 bytes)
 * is past the 64 bytes beyond which V8 allocates a Uint8Array outside its heap (see pooledBytes in
 * encoding/bytes.ts), a cost that a fresh buffer per writer would add to every encoded tx
 * (bench/avm.mjs). Test: writer.test.ts 'writers reuse working buffers, …'. A writer takes one
 * (the last left: nested writers get different ones) and gives it back, zeroed where it wrote, when
 * it finishes; its result is a copy, so nothing it returned is ever written again.
 */
const spares: Array<{ buf: Uint8Array; view: DataView }> = [];
/** Most buffers kept, and the largest kept (a writer that grew past it lets its buffer go). */
const MAX_SPARES = 8;
const MAX_SPARE_BYTES = 64 * 1024;

/** Leaves a working buffer, zeroed over the `used` bytes a writer wrote, for the next writer (if kept). */
function leave(spare: { buf: Uint8Array; view: DataView }, used: number): void {
  if (spare.buf.length > MAX_SPARE_BYTES || spares.length >= MAX_SPARES) return;
  spare.buf.fill(0, 0, used);
  spares.push(spare);
}

export class Writer {
  readonly maxSize: number;
  readonly maxSliceLength: number;
  #buf: Uint8Array;
  #view: DataView;
  #len = 0;
  /** True while #buf is a working buffer that may be left for the next writer (not a result handed out). */
  #spare: boolean;

  constructor(opts: WriterOptions = {}) {
    this.maxSize = opts.maxSize ?? DEFAULT_MAX_SIZE;
    this.maxSliceLength = opts.maxSliceLength ?? DEFAULT_MAX_SLICE_LENGTH;
    const initial = Math.min(Math.max(opts.initialSize ?? 256, 0), Math.max(this.maxSize, 0));
    const last = spares[spares.length - 1];
    if (last && last.buf.length >= initial) {
      spares.pop();
      this.#buf = last.buf;
      this.#view = last.view;
    } else {
      this.#buf = new Uint8Array(initial);
      this.#view = new DataView(this.#buf.buffer);
    }
    this.#spare = true;
  }

  /** Bytes written so far. */
  get length(): number {
    return this.#len;
  }

  /**
   * Makes room for `n` more bytes, growing the buffer; CodecError('TooLarge') past maxSize. Returns
   * where they start. Callers must call this BEFORE reading #buf/#view, which it may replace.
   */
  #reserve(n: number): number {
    const at = this.#len;
    const need = at + n;
    if (need > this.maxSize) {
      throw new CodecError('TooLarge', `size ${need} is larger than the limit of ${this.maxSize} bytes`);
    }
    if (need > this.#buf.length) {
      let cap = Math.max(this.#buf.length * 2, 64);
      while (cap < need) cap *= 2;
      const next = new Uint8Array(Math.min(cap, this.maxSize));
      next.set(this.#buf.subarray(0, at));
      if (this.#spare) leave({ buf: this.#buf, view: this.#view }, at);
      this.#buf = next;
      this.#view = new DataView(next.buffer);
      this.#spare = true;
    }
    this.#len = need;
    return at;
  }

  #uint(n: number, max: number, what: string): void {
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > max) {
      throw new CodecError('Invalid', `${what} out of range: ${String(n)}`);
    }
  }

  u8(n: number): this {
    this.#uint(n, 0xff, 'u8');
    const at = this.#reserve(1);
    this.#buf[at] = n;
    return this;
  }

  u16(n: number): this {
    this.#uint(n, 0xffff, 'u16');
    const at = this.#reserve(2);
    this.#view.setUint16(at, n, false);
    return this;
  }

  u32(n: number): this {
    this.#uint(n, 0xffffffff, 'u32');
    const at = this.#reserve(4);
    this.#view.setUint32(at, n, false);
    return this;
  }

  /** A uint64: a bigint, or a number that is a safe non-negative integer. */
  u64(n: bigint | number): this {
    let v: bigint;
    if (typeof n === 'bigint') v = n;
    else if (typeof n === 'number' && Number.isSafeInteger(n)) v = BigInt(n);
    else throw new CodecError('Invalid', `u64 out of range: ${String(n)}`);
    if (v < 0n || v > U64_MAX) throw new CodecError('Invalid', `u64 out of range: ${v}`);
    const at = this.#reserve(8);
    this.#view.setBigUint64(at, v, false);
    return this;
  }

  bool(b: boolean): this {
    if (typeof b !== 'boolean') throw new CodecError('Invalid', 'bool must be true or false');
    const at = this.#reserve(1);
    this.#buf[at] = b ? 1 : 0;
    return this;
  }

  /** The bytes as they are, with no length (a fixed-size array). */
  fixedBytes(b: Uint8Array): this {
    const at = this.#reserve(b.length);
    this.#buf.set(b, at);
    return this;
  }

  /** `[]byte`: a u32 length, then the bytes. */
  bytes(b: Uint8Array): this {
    this.#sliceLength(b.length);
    return this.u32(b.length).fixedBytes(b);
  }

  /** A string: a u16 length, then its UTF-8 bytes (at most 65535). */
  str(s: string): this {
    const b = encoder.encode(s);
    if (b.length > MAX_STRING_LENGTH) {
      throw new CodecError('TooLarge', `string of ${b.length} bytes is longer than ${MAX_STRING_LENGTH}`);
    }
    return this.u16(b.length).fixedBytes(b);
  }

  /** A slice: a u32 count, then each item written by `write`. */
  array<T>(items: readonly T[], write: (w: Writer, item: T) => void): this {
    this.#sliceLength(items.length);
    this.u32(items.length);
    for (const item of items) write(this, item);
    return this;
  }

  /** A 32-byte ID (fixed array, no length). */
  id(id: Id): this {
    const at = this.#reserve(32);
    id.copyTo(this.#buf, at);
    return this;
  }

  /** A 20-byte ID (fixed array, no length). */
  shortId(id: ShortId): this {
    const at = this.#reserve(20);
    id.copyTo(this.#buf, at);
    return this;
  }

  /** A copy of the bytes written so far (the writer stays usable). */
  finish(): Uint8Array {
    const out = this.#buf.slice(0, this.#len);
    if (this.#spare) {
      leave({ buf: this.#buf, view: this.#view }, this.#len);
      // Writing on goes past the copy's end, so it never changes the copy.
      this.#buf = out;
      this.#view = new DataView(out.buffer);
      this.#spare = false;
    }
    return out;
  }

  #sliceLength(n: number): void {
    if (n > this.maxSliceLength) {
      throw new CodecError('TooLarge', `slice length ${n} is larger than the limit of ${this.maxSliceLength}`);
    }
  }
}
