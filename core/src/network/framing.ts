/**
 * Frames on a peer's byte stream: a u32 big-endian length, then that many
 * bytes of payload (codec.ts). TCP/TLS deliver arbitrary chunks; FrameDecoder cuts them back into
 * payloads.
 *
 * FrameDecoder checks an announced length against its limit as soon as the 4 prefix bytes are in,
 * BEFORE it buffers or allocates anything for the frame, so a peer announcing 2 GiB costs nothing.
 * It holds at most 4 + maxFrameBytes bytes: the prefix, then one buffer of exactly the announced size
 * that incoming bytes are copied into (linear time, however the stream is cut). A frame that lies
 * whole inside one chunk is returned as a view of that chunk, without a copy: decodeMessage copies
 * what it keeps, so the chunk is not pinned, but the caller must not overwrite a chunk before it has
 * decoded the payloads push() returned for it.
 */
import { pooledBytes } from '@cornice/sdk';
import { NetworkError } from './errors.js';
import { MAX_MESSAGE_BYTES } from './messages.js';

/** Bytes of the length prefix. */
export const FRAME_PREFIX_BYTES = 4;
/**
 * Largest payload this node sends: the whole frame, its length prefix included, stays within
 * MAX_MESSAGE_BYTES, so a peer reading the limit either way (prefix value or whole frame) accepts it.
 * Received payloads may be up to MAX_MESSAGE_BYTES (the prefix's value, as messages.ts defines it).
 */
export const MAX_PAYLOAD_BYTES = MAX_MESSAGE_BYTES - FRAME_PREFIX_BYTES;

/**
 * `payload` behind its u32 big-endian length; a payload that is empty or over MAX_PAYLOAD_BYTES is
 * refused. The frame is pooled (the sdk's pooledBytes, whose
 * header says why): every message sent makes one.
 */
export function frame(payload: Uint8Array): Uint8Array {
  if (payload.length === 0) throw new NetworkError('Malformed', 'frame: an empty payload cannot be sent');
  if (payload.length > MAX_PAYLOAD_BYTES) {
    throw new NetworkError('TooLarge', `frame: payload of ${payload.length} bytes exceeds ${MAX_PAYLOAD_BYTES}`);
  }
  const out = pooledBytes(FRAME_PREFIX_BYTES + payload.length);
  new DataView(out.buffer, out.byteOffset, FRAME_PREFIX_BYTES).setUint32(0, payload.length, false);
  out.set(payload, FRAME_PREFIX_BYTES);
  return out;
}

export interface FrameDecoderOptions {
  /** Largest payload (length prefix value) accepted; default MAX_MESSAGE_BYTES. */
  maxFrameBytes?: number;
}

/**
 * Cuts a byte stream into frame payloads. Feed it every chunk in order with `push`, which returns the
 * payloads completed by that chunk, in order. A frame announcing more than maxFrameBytes throws
 * NetworkError('TooLarge'), an empty frame NetworkError('Malformed'); after a throw the stream is lost
 * (the frames before the bad one in the same chunk are not returned) and every later push throws the
 * same error: drop the peer.
 */
export class FrameDecoder {
  readonly maxFrameBytes: number;
  /** The length prefix being read, and how many of its bytes are in. */
  readonly #prefix = new Uint8Array(FRAME_PREFIX_BYTES);
  #prefixFill = 0;
  /** The payload being filled (exactly its announced size), and how many of its bytes are in. */
  #body: Uint8Array | undefined;
  #bodyFill = 0;
  #failed: NetworkError | undefined;

  constructor(opts: FrameDecoderOptions = {}) {
    const max = opts.maxFrameBytes ?? MAX_MESSAGE_BYTES;
    if (!Number.isSafeInteger(max) || max < 1 || max > 0xffffffff) {
      throw new NetworkError('Malformed', `maxFrameBytes must be an integer from 1 to 4294967295, not ${max}`);
    }
    this.maxFrameBytes = max;
  }

  /** Bytes held of an incomplete frame (prefix included): nonzero when a stream ends mid-frame. */
  get buffered(): number {
    return this.#body ? FRAME_PREFIX_BYTES + this.#bodyFill : this.#prefixFill;
  }

  push(chunk: Uint8Array): Uint8Array[] {
    if (this.#failed) throw this.#failed;
    const out: Uint8Array[] = [];
    let at = 0;
    while (at < chunk.length) {
      if (this.#body) {
        const n = Math.min(this.#body.length - this.#bodyFill, chunk.length - at);
        this.#body.set(chunk.subarray(at, at + n), this.#bodyFill);
        this.#bodyFill += n;
        at += n;
        if (this.#bodyFill === this.#body.length) {
          out.push(this.#body);
          this.#body = undefined;
          this.#bodyFill = 0;
        }
        continue;
      }
      // Reading a prefix: take the bytes one by one (at most 4) so a prefix split anywhere works.
      this.#prefix[this.#prefixFill++] = chunk[at++]!;
      if (this.#prefixFill < FRAME_PREFIX_BYTES) continue;
      this.#prefixFill = 0;
      const length = new DataView(this.#prefix.buffer).getUint32(0, false);
      this.#check(length);
      if (chunk.length - at >= length) {
        out.push(chunk.subarray(at, at + length)); // whole in this chunk: a view, no copy
        at += length;
      } else {
        this.#body = new Uint8Array(length); // only now, after the check
      }
    }
    return out;
  }

  #check(length: number): void {
    if (length === 0) this.#fail(new NetworkError('Malformed', 'frame: announced length is 0'));
    if (length > this.maxFrameBytes) {
      this.#fail(new NetworkError('TooLarge', `frame: announced length ${length} exceeds ${this.maxFrameBytes}`, { length }));
    }
  }

  #fail(e: NetworkError): never {
    this.#failed = e;
    throw e;
  }
}
