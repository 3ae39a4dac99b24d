/**
 * The chain's JSON-RPC service, declared once: the node serves it at /ext/bc/<chainID> (and every
 * alias of the chain), refusing bad params with -32602 naming the field before a handler runs, and
 * the same declaration gives clients a typed client (`createClient(api, httpTransport(url))`).
 */
import { defineService, method, p, result } from '@cornice/sdk';
import { MAX_KEY_LENGTH, MAX_VALUE_LENGTH } from './tx.js';

const key = () => p.string({ min: 1, max: MAX_KEY_LENGTH });

export const api = defineService('__VM_NAME__', {
  issueTx: method({
    params: p.object({ key: key(), value: p.string({ max: MAX_VALUE_LENGTH }) }),
    result: result<{ txID: string }>(),
    doc: 'Queue a tx setting key to value; it applies when a block holding it is accepted',
  }),
  get: method({
    params: p.object({ key: key() }),
    result: result<{ key: string; value: string; height: number }>(),
    doc: "A key's accepted value and the height of the block that set it",
  }),
  status: method({
    params: p.none(),
    result: result<{ lastAccepted: string; height: number; pending: number }>(),
    doc: 'The last accepted block, its height and the number of pending txs',
  }),
});
