/** The example key/value VM (examples/custom-vm) as a test drives it: its vmID and one write read back. */
import * as assert from 'uvu/assert';
import type { NodeProcess } from './process.js';

/** vmIdFromName('kvvm'). */
export const KV_VM_ID = 'pKzWfwFJiwYE8pfXv6iF7r9E8nG68tv8uQuTKUA9Wmv5yUEmM';

/** Puts colour=blue through the chain aliased `kv` and resolves with kv.get's answer once accepted (bounded: ~5 s). */
export async function putAndGet(node: NodeProcess): Promise<unknown> {
  assert.equal((await node.call('bc/kv', 'kv.put', { key: 'colour', value: 'blue' })).result, { success: true });
  for (let i = 0; i < 500; i++) {
    const r = await node.call('bc/kv', 'kv.get', { key: 'colour' });
    if (r.result) return r.result;
    await new Promise((res) => setTimeout(res, 10));
  }
  throw new Error('write was not accepted');
}
