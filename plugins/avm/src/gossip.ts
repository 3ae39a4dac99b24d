/**
 * The asset VM's gossip payload: the signed bytes of several txs (those issued at this node in one
 * turn), as u32 count then u32 length + bytes each. A payload stays under MAX_GOSSIP_BYTES; more txs
 * go in several payloads.
 */
import { Reader, Writer } from '@cornice/sdk';
import { AvmError } from './errors.js';

/** Largest gossip payload (under the network's 2 MiB message bound). */
export const MAX_GOSSIP_BYTES = 1024 * 1024;
/** Most txs in one payload. */
export const MAX_GOSSIP_TXS = 4096;

export function encodeGossip(txs: readonly Uint8Array[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  let batch: Uint8Array[] = [];
  let size = 4;
  const flush = () => {
    if (batch.length === 0) return;
    // The Writer's default bound (256 KiB) is below a payload's: a turn's txs would not encode.
    const w = new Writer({ maxSize: MAX_GOSSIP_BYTES, maxSliceLength: MAX_GOSSIP_BYTES, initialSize: size }).u32(batch.length);
    for (const tx of batch) w.bytes(tx);
    out.push(w.finish());
    batch = [];
    size = 4;
  };
  for (const tx of txs) {
    if (tx.length + 8 > MAX_GOSSIP_BYTES) continue; // cannot be a valid tx anyway
    if (size + 4 + tx.length > MAX_GOSSIP_BYTES || batch.length >= MAX_GOSSIP_TXS) flush();
    batch.push(tx);
    size += 4 + tx.length;
  }
  flush();
  return out;
}

/** The txs of a gossip payload; AvmError('Malformed') for anything else. */
export function decodeGossip(payload: Uint8Array): Uint8Array[] {
  if (payload.length > MAX_GOSSIP_BYTES) throw new AvmError('Malformed', `gossip payload of ${payload.length} bytes exceeds ${MAX_GOSSIP_BYTES}`);
  try {
    const r = new Reader(payload, { maxSize: MAX_GOSSIP_BYTES, maxSliceLength: MAX_GOSSIP_BYTES });
    const n = r.u32();
    if (n > MAX_GOSSIP_TXS) throw new AvmError('Malformed', `gossip payload announces ${n} txs, at most ${MAX_GOSSIP_TXS}`);
    const txs: Uint8Array[] = [];
    for (let i = 0; i < n; i++) txs.push(r.bytes());
    r.end();
    return txs;
  } catch (e) {
    if (e instanceof AvmError) throw e;
    throw new AvmError('Malformed', `gossip payload is malformed: ${(e as Error).message}`);
  }
}
