/**
 * Writes a reply body with backpressure: in chunks, each only once the socket has taken the
 * previous ones (res.write's return value and 'drain'), so a socket never queues more than about a
 * chunk and its high-water mark; the rest stays in one Buffer the connection table counts as held
 * for that connection (connections.ts). A client that stops reading leaves the writer waiting; the
 * table closes its connection after --http-write-timeout, which ends the wait and frees the Buffer.
 * A reply that would take the node over --http-max-buffered-bytes is refused before it is written.
 * Test: core/test/api/write-bounds.test.ts.
 */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ConnectionTable } from './connections.js';

/** Bytes handed to the socket at a time. */
export const REPLY_CHUNK_BYTES = 64 * 1024;

/**
 * Sends `body` with `status` and `headers` on the connection `socket` (the request's: a pipelined
 * reply has no res.socket until the replies before it are done); false (nothing sent) when the
 * table has no room for it. Resolves once written, or once the connection is gone.
 */
export async function writeReply(
  table: ConnectionTable,
  socket: Socket,
  res: ServerResponse,
  status: number,
  headers: Record<string, string | number>,
  body: string,
): Promise<boolean> {
  if (socket.destroyed) return true;
  const bytes = Buffer.from(body);
  // The text is no longer needed: only the Buffer is held while the reply waits for its reader
  // (the caller returns this call's promise without keeping the text either).
  body = '';
  if (!table.admit(socket, bytes.length)) return false;
  res.writeHead(status, { ...headers, 'content-length': bytes.length });
  if (bytes.length <= REPLY_CHUNK_BYTES) {
    res.end(bytes);
    return true;
  }
  table.hold(socket, bytes.length);
  let left = bytes.length;
  try {
    for (let at = 0; at < bytes.length && !res.destroyed; at += REPLY_CHUNK_BYTES) {
      const chunk = bytes.subarray(at, at + REPLY_CHUNK_BYTES);
      table.hold(socket, -chunk.length);
      left -= chunk.length;
      if (!res.write(chunk)) await drained(res);
    }
    if (!res.destroyed) res.end();
  } finally {
    table.hold(socket, -left);
  }
  return true;
}

/** Resolves on 'drain' or when the response can no longer be written ('close'). */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
