/**
 * Reads the stream a node publishes with `ipcs.publishBlockchain`: connects to the `ipc://<path>`
 * Unix domain socket and yields each frame's payload — one accepted block's raw bytes, in acceptance
 * order. A frame is a u32 big-endian length followed by that many bytes.
 *
 * The iteration ends when the node closes the socket (unpublish, shutdown, or this reader was dropped
 * for falling too far behind) on a frame boundary; a stream that stops inside a frame rejects with
 * IpcReadError('Truncated'). Aborting `signal` rejects the iteration with the signal's reason.
 * Breaking out of the loop closes the connection.
 */
import { createConnection, type Socket } from 'node:net';
import { NodeError } from '../errors/errors.js';

export type IpcReadErrorCode = 'BadUrl' | 'Connect' | 'FrameTooLarge' | 'Truncated' | 'Io';

/** Failures of `readIpcFrames`. */
export class IpcReadError extends NodeError<IpcReadErrorCode> {}

export interface ReadIpcFramesOptions {
  /** Stops reading: the iteration rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Frames announcing more bytes than this are refused before anything is allocated. Default 64 MiB. */
  maxFrameBytes?: number;
}

export const DEFAULT_IPC_MAX_FRAME_BYTES = 64 * 1024 * 1024;

/** The socket path of an `ipc://<path>` url. */
export function ipcUrlPath(url: string): string {
  if (typeof url !== 'string' || !url.startsWith('ipc://') || url.length === 'ipc://'.length) {
    throw new IpcReadError('BadUrl', `not an ipc:// url: ${String(url).slice(0, 256)}`);
  }
  return url.slice('ipc://'.length);
}

function connect(path: string, url: string, signal: AbortSignal | undefined): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(path);
    const onAbort = () => {
      socket.destroy();
      reject(signal?.reason);
    };
    const onError = (e: Error) => {
      signal?.removeEventListener('abort', onAbort);
      reject(new IpcReadError('Connect', `cannot connect to ${url}: ${e.message}`));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    socket.once('error', onError);
    socket.once('connect', () => {
      signal?.removeEventListener('abort', onAbort);
      socket.off('error', onError);
      resolve(socket);
    });
  });
}

/**
 * Splits a byte stream into frames (u32 big-endian length + payload). Push chunks as they arrive;
 * each call returns the frames completed by that chunk. A length above `maxFrameBytes` is refused with
 * IpcReadError('FrameTooLarge') as soon as its 4 header bytes are in, before anything is allocated:
 * thrown by `push` at once, or — when that chunk also completed earlier frames — returned with them
 * and exposed as `error` (and thrown by the next call).
 */
export class IpcFrameDecoder {
  readonly #max: number;
  /** Received bytes not yet returned: `#chunks` from `#offset` into the first one. */
  readonly #chunks: Uint8Array[] = [];
  #offset = 0;
  #buffered = 0;
  /** Payload length of the frame being read; -1 while reading a header. */
  #need = -1;
  #error: IpcReadError | undefined;

  constructor(maxFrameBytes: number = DEFAULT_IPC_MAX_FRAME_BYTES) {
    this.#max = maxFrameBytes;
  }

  /** Bytes received that do not yet make a whole frame. */
  get pendingBytes(): number {
    return this.#buffered + (this.#need >= 0 ? 4 : 0);
  }

  /**
   * A refused frame length seen after frames that `push` returned: thrown by the next `push`/`end`.
   * Check it after consuming those frames so as not to wait for more data.
   */
  get error(): IpcReadError | undefined {
    return this.#error;
  }

  push(chunk: Uint8Array): Uint8Array[] {
    if (this.#error) throw this.#error;
    const out: Uint8Array[] = [];
    if (chunk.length > 0) {
      this.#chunks.push(chunk);
      this.#buffered += chunk.length;
    }
    for (;;) {
      if (this.#need < 0) {
        if (this.#buffered < 4) break;
        const h = this.#take(4);
        const n = ((h[0]! << 24) | (h[1]! << 16) | (h[2]! << 8) | h[3]!) >>> 0;
        if (n > this.#max) {
          this.#error = new IpcReadError('FrameTooLarge', `frame of ${n} bytes exceeds the limit of ${this.#max} bytes`, { length: n, maxFrameBytes: this.#max });
          this.#chunks.length = 0;
          this.#buffered = 0;
          if (out.length === 0) throw this.#error;
          return out;
        }
        this.#need = n;
      }
      if (this.#buffered < this.#need) break;
      out.push(this.#take(this.#need));
      this.#need = -1;
    }
    return out;
  }

  /** The stream ended: IpcReadError('Truncated') when it stopped inside a frame. */
  end(): void {
    if (this.#error) throw this.#error;
    if (this.#need >= 0 || this.#buffered > 0) {
      const expected = this.#need >= 0 ? `${this.#need}-byte payload` : '4-byte length';
      throw new IpcReadError('Truncated', `the stream ended inside a frame (${this.#buffered} bytes of a ${expected})`);
    }
  }

  /** Takes exactly `n` buffered bytes (a view when they lie in one chunk, else a copy). */
  #take(n: number): Uint8Array {
    const first = this.#chunks[0];
    if (n === 0 || first === undefined) return new Uint8Array(0);
    if (first.length - this.#offset >= n) {
      const view = first.subarray(this.#offset, this.#offset + n);
      this.#advance(first, n);
      return view;
    }
    const out = new Uint8Array(n);
    let filled = 0;
    while (filled < n) {
      const c = this.#chunks[0]!;
      const k = Math.min(n - filled, c.length - this.#offset);
      out.set(c.subarray(this.#offset, this.#offset + k), filled);
      filled += k;
      this.#advance(c, k);
    }
    return out;
  }

  #advance(chunk: Uint8Array, k: number): void {
    this.#offset += k;
    this.#buffered -= k;
    if (this.#offset === chunk.length) {
      this.#chunks.shift();
      this.#offset = 0;
    }
  }
}

/** Yields the payload of every frame published at `url` (see the module comment). */
export async function* readIpcFrames(url: string, opts: ReadIpcFramesOptions = {}): AsyncGenerator<Uint8Array, void, undefined> {
  const path = ipcUrlPath(url);
  const decoder = new IpcFrameDecoder(opts.maxFrameBytes ?? DEFAULT_IPC_MAX_FRAME_BYTES);
  const { signal } = opts;
  signal?.throwIfAborted();
  const socket = await connect(path, url, signal);
  const onAbort = () => socket.destroy();
  signal?.addEventListener('abort', onAbort, { once: true });
  const chunks = socket[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  try {
    for (;;) {
      let frames: Uint8Array[];
      try {
        const { value, done } = await chunks.next();
        if (done) break;
        frames = decoder.push(new Uint8Array(value.buffer, value.byteOffset, value.length));
      } catch (e) {
        if (signal?.aborted) throw signal.reason;
        if (e instanceof IpcReadError) throw e;
        throw new IpcReadError('Io', `reading ${url} failed: ${e instanceof Error ? e.message : String(e)}`);
      }
      for (const f of frames) yield f;
      if (decoder.error) throw decoder.error;
    }
    if (signal?.aborted) throw signal.reason;
    decoder.end();
  } finally {
    signal?.removeEventListener('abort', onAbort);
    socket.destroy();
  }
}
