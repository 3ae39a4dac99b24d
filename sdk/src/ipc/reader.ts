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

/** Yields the payload of every frame published at `url` (see the module comment). */
export async function* readIpcFrames(url: string, opts: ReadIpcFramesOptions = {}): AsyncGenerator<Uint8Array, void, undefined> {
  const path = ipcUrlPath(url);
  const maxFrameBytes = opts.maxFrameBytes ?? DEFAULT_IPC_MAX_FRAME_BYTES;
  const { signal } = opts;
  signal?.throwIfAborted();
  const socket = await connect(path, url, signal);
  const onAbort = () => socket.destroy(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });

  // Received bytes not yet yielded: `chunks` from `offset` into the first one, `buffered` in all.
  const chunks: Uint8Array[] = [];
  let offset = 0;
  let buffered = 0;
  /** Takes exactly `n` buffered bytes (a view when they lie in one chunk, else a copy). */
  const take = (n: number): Uint8Array => {
    const first = chunks[0]!;
    if (first.length - offset >= n) {
      const out = first.subarray(offset, offset + n);
      offset += n;
      buffered -= n;
      if (offset === first.length) {
        chunks.shift();
        offset = 0;
      }
      return out;
    }
    const out = new Uint8Array(n);
    let filled = 0;
    while (filled < n) {
      const c = chunks[0]!;
      const k = Math.min(n - filled, c.length - offset);
      out.set(c.subarray(offset, offset + k), filled);
      filled += k;
      offset += k;
      if (offset === c.length) {
        chunks.shift();
        offset = 0;
      }
    }
    buffered -= n;
    return out;
  };

  let need = -1; // payload length of the frame being read; -1 while reading a header
  try {
    try {
      for await (const chunk of socket as AsyncIterable<Buffer>) {
        chunks.push(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length));
        buffered += chunk.length;
        for (;;) {
          if (need < 0) {
            if (buffered < 4) break;
            const h = take(4);
            need = ((h[0]! << 24) | (h[1]! << 16) | (h[2]! << 8) | h[3]!) >>> 0;
            if (need > maxFrameBytes) {
              throw new IpcReadError('FrameTooLarge', `frame of ${need} bytes exceeds the limit of ${maxFrameBytes} bytes`, { length: need, maxFrameBytes });
            }
          }
          if (buffered < need) break;
          const frame = take(need);
          need = -1;
          yield frame;
        }
      }
    } catch (e) {
      if (signal?.aborted) throw signal.reason;
      if (e instanceof IpcReadError) throw e;
      throw new IpcReadError('Io', `reading ${url} failed: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (signal?.aborted) throw signal.reason;
    if (need >= 0 || buffered > 0) {
      throw new IpcReadError('Truncated', `the stream ended inside a frame (${buffered} of ${need >= 0 ? need : 4} bytes)`);
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
    socket.destroy();
  }
}
