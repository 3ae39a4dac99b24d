/**
 * The EVM's tx gossip payload: the raw (signed, EIP-2718) bytes of the txs admitted at this node in
 * one turn, as one RLP list — what devp2p's Transactions message carries. A payload stays under
 * MAX_GOSSIP_BYTES and MAX_GOSSIP_TXS; more txs go in several payloads.
 */
import { RLP } from '@ethereumjs/rlp';
import { EvmChainError } from './errors.js';

/** Largest gossip payload (under the network's 2 MiB message bound). */
export const MAX_GOSSIP_BYTES = 1024 * 1024;
/** Most txs in one payload (each costs the receiver a signature recovery and a state read). */
export const MAX_GOSSIP_TXS = 1024;

export function encodeTxGossip(txs: readonly Uint8Array[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  let batch: Uint8Array[] = [];
  let size = 0;
  const flush = () => {
    if (batch.length > 0) out.push(RLP.encode(batch));
    batch = [];
    size = 0;
  };
  for (const tx of txs) {
    // An RLP item costs at most 9 bytes of prefix; the list's own prefix at most 9 more.
    const cost = tx.length + 9;
    if (cost + 9 > MAX_GOSSIP_BYTES) continue; // cannot be a valid tx anyway
    if (size + cost + 9 > MAX_GOSSIP_BYTES || batch.length >= MAX_GOSSIP_TXS) flush();
    batch.push(tx);
    size += cost;
  }
  flush();
  return out;
}

/** The raw txs of a gossip payload; EvmChainError('MalformedGossip') for anything else. */
export function decodeTxGossip(payload: Uint8Array): Uint8Array[] {
  const bad = (why: string) => new EvmChainError('MalformedGossip', `tx gossip is malformed: ${why}`);
  if (payload.length > MAX_GOSSIP_BYTES) throw bad(`${payload.length} bytes exceed ${MAX_GOSSIP_BYTES}`);
  let decoded: unknown;
  try {
    decoded = RLP.decode(payload);
  } catch (e) {
    throw bad((e as Error).message);
  }
  if (!Array.isArray(decoded)) throw bad('not a list');
  if (decoded.length > MAX_GOSSIP_TXS) throw bad(`${decoded.length} txs, at most ${MAX_GOSSIP_TXS}`);
  if (!decoded.every((tx): tx is Uint8Array => tx instanceof Uint8Array)) throw bad('an item is not a byte string');
  return decoded;
}
