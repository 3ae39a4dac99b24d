import { defineService, method, p, result } from '@cornice/sdk';

const key = () => p.string({ min: 1, max: 256 });

/** kv: the example VM's service, served at /ext/bc/<chainID>. */
export const kvApi = defineService('kv', {
  put: method({
    params: p.object({ key: key(), value: p.string({ max: 4096 }) }),
    result: result<{ success: boolean }>(),
    doc: 'Queue a write; it applies when its block is accepted',
  }),
  get: method({
    params: p.object({ key: key() }),
    result: result<{ key: string; value: string; height: number }>(),
    doc: 'The accepted value of a key and the height of the block that wrote it',
  }),
  status: method({ params: p.none(), result: result<{ lastAccepted: string; height: number; pending: number }>(), doc: 'Chain tip and queue size' }),
});
