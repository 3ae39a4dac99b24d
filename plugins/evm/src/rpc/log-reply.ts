/**
 * A list of logs as a reply (eth_getLogs, eth_getFilterLogs, eth_getFilterChanges of a log filter):
 * sized before it is built, refused with -32003 "response too large" when it cannot fit the reply
 * budget left (a batch's), else written as JSON text in pieces with turns of the event loop between
 * them. Before, each of a batch's eth_getLogs made its 9,000 log objects and their text at once and
 * only then was the reply's size looked at: a batch of 1,000 ran the node out of heap.
 * Test: rpc-limits.test.ts "eth_getLogs replies are sized before they are built".
 */
import type { LogView, StopSignal } from '../evm-backend.js';
import { logText } from './format.js';
import { RawJson, Slicer, type ReplyBudget } from './request.js';

/** Logs formatted between two looks at the clock. */
const PIECE = 256;

/**
 * The most characters `l`'s JSON takes (geth's log object: fixed fields and quantities of at most 64
 * bits are 370 characters at most, each topic 69, the data two per byte) and its comma.
 */
export function logJsonBound(l: LogView): number {
  return 371 + 69 * l.topics.length + 2 * l.data.length;
}

/** `logs` as JSON text, or -32003 when their bound passes what `budget` has left. */
export async function logsReply(logs: readonly LogView[], budget: ReplyBudget, signal?: StopSignal): Promise<RawJson> {
  let bound = 2;
  for (const l of logs) bound += logJsonBound(l);
  budget.reserve(bound);
  const slicer = new Slicer();
  const pieces: string[] = [];
  for (let i = 0; i < logs.length; i += PIECE) {
    if (signal?.aborted) throw signal.reason;
    const end = Math.min(logs.length, i + PIECE);
    const piece: string[] = new Array(end - i);
    for (let j = i; j < end; j++) piece[j - i] = logText(logs[j]!);
    pieces.push(piece.join(','));
    await slicer.pause();
  }
  return new RawJson('[' + pieces.join(',') + ']');
}
