/**
 * The asset chain's pubsub WebSocket (API.md), served at /ext/bc/<chain>/pubsub: a client
 * sends `{"channel":"accepted"|"rejected","unsubscribe":false}` to follow a channel (and
 * `"unsubscribe":true` to stop); the server pushes `{"channel":"accepted","value":"<txID>"}` for each
 * tx decided that way. `verified` is accepted as a channel name and stays silent (txs are verified
 * as part of blocks here). A malformed request gets `{"error":"…"}` and the connection stays open.
 */
import type { Id, WebSocketHandler } from '@cornice/sdk';

export type DecidedStatus = 'accepted' | 'rejected';

/** What the pubsub needs of the VM: decided txs, with a way to stop listening. */
export interface TxDecisions {
  onTxDecided(listener: (txId: Id, status: DecidedStatus) => void): () => void;
}

const CHANNELS = new Set(['accepted', 'rejected', 'verified']);
const MAX_REQUEST_LENGTH = 256;

export function pubsubHandler(vm: TxDecisions): WebSocketHandler {
  return (conn) => {
    const channels = new Set<string>();
    const stop = vm.onTxDecided((txId, status) => {
      if (channels.has(status)) conn.send(JSON.stringify({ channel: status, value: txId.toString() }));
    });
    conn.onClose(stop);
    conn.onMessage((text) => {
      const fail = (why: string) => conn.send(JSON.stringify({ error: why }));
      if (text.length > MAX_REQUEST_LENGTH) return fail(`a request is at most ${MAX_REQUEST_LENGTH} characters`);
      let req: unknown;
      try {
        req = JSON.parse(text);
      } catch {
        return fail('expected JSON: {"channel":"accepted"|"rejected"|"verified","unsubscribe":false}');
      }
      const { channel, unsubscribe } = (req ?? {}) as { channel?: unknown; unsubscribe?: unknown };
      if (typeof channel !== 'string' || !CHANNELS.has(channel)) return fail('channel must be "accepted", "rejected" or "verified"');
      if (unsubscribe !== undefined && typeof unsubscribe !== 'boolean') return fail('unsubscribe must be true or false');
      if (unsubscribe) channels.delete(channel);
      else channels.add(channel);
    });
  };
}
