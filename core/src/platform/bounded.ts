/**
 * Whole-value encoding and decoding with the reference's bounds (256 KiB a value, counts checked
 * before allocating, no trailing bytes), turning the sdk's codec errors (CodecError, EncodingError)
 * into the caller's domain error with the same text. Other errors pass through.
 */
import { CodecError, EncodingError, Reader, Writer } from '@cornice/sdk';

/** Makes the domain error for a codec error's message and data. */
export type CodecErrorWrapper = (message: string, data: unknown) => Error;

/** Runs `step`; a CodecError or EncodingError it throws is rethrown wrapped by `wrap`. */
export function withCodecErrors<T>(step: () => T, wrap: CodecErrorWrapper): T {
  try {
    return step();
  } catch (e) {
    if (e instanceof CodecError || e instanceof EncodingError) throw wrap(e.message, e.data);
    throw e;
  }
}

/** Reads a whole value with `read`, then rejects trailing bytes (`has N leftover bytes after unmarshalling`). */
export function readAll<T>(bytes: Uint8Array, read: (r: Reader) => T): T {
  const r = new Reader(bytes);
  const v = read(r);
  r.end();
  return v;
}

/** Writes a whole value (256 KiB at most) with `write`. */
export function writeAll(write: (w: Writer) => void): Uint8Array {
  const w = new Writer();
  write(w);
  return w.finish();
}
