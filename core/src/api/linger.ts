/**
 * A reply that closes its connection (`connection: close`) before the request's body was all read,
 * such as the 413 for a body declared too large, answered before that body arrives. Node destroys
 * the socket once such a reply is written, and the kernel answers the bytes the client is still
 * sending with a reset, which can reach the client before the reply: it sees EPIPE or ECONNRESET
 * instead of the 413. So when Node closes a socket whose request is still arriving, the socket
 * closes its write side only, and reads and drops what still comes until the client closes or
 * LINGER_MS pass (Go's net/http lingers the same way).
 * Test: core/test/api/http.test.ts "a 413 answered before its body arrives reaches a client still sending it".
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

/** The longest a refused client's remaining body is read and dropped before its socket is destroyed. */
export const LINGER_MS = 1_000;

/** Each socket's latest request (a keep-alive socket carries several, one at a time). */
const latest = new WeakMap<Socket, IncomingMessage>();

/** Makes `req`'s socket linger as above if Node closes it while `req`'s body is still arriving. */
export function lingerWhileBodyArrives(req: IncomingMessage): void {
  const socket = req.socket;
  if (!latest.has(socket)) {
    const destroySoon = socket.destroySoon.bind(socket);
    socket.destroySoon = () => {
      if (latest.get(socket)?.complete !== false || socket.readableEnded) return destroySoon();
      const timer = setTimeout(() => socket.destroy(), LINGER_MS);
      timer.unref();
      socket.once('close', () => clearTimeout(timer));
      socket.once('end', () => socket.destroy());
      socket.end();
    };
  }
  latest.set(socket, req);
}
