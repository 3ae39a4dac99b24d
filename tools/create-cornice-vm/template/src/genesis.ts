/**
 * The chain's genesis: UTF-8 JSON of the keys the chain starts with, e.g. {"hello": "world"}; empty
 * bytes start an empty store. In a node's genesis file it is the chain's `genesisData`, as cb58
 * (genesis.json beside this package has it).
 */
import { utf8Decode } from '@cornice/sdk';
import { MAX_TXS_PER_BLOCK } from './block.js';
import { VmError } from './errors.js';
import { makeTx, type SetTx } from './tx.js';

/** The genesis entries as the txs of block 0; VmError('InvalidGenesis') naming the problem. */
export function parseGenesis(bytes: Uint8Array): SetTx[] {
  if (bytes.length === 0) return [];
  let json: unknown;
  try {
    json = JSON.parse(utf8Decode(bytes));
  } catch {
    throw new VmError('InvalidGenesis', 'genesis must be UTF-8 JSON: an object of string keys and values');
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw new VmError('InvalidGenesis', 'genesis must be a JSON object of string keys and values');
  }
  const entries = Object.entries(json);
  if (entries.length > MAX_TXS_PER_BLOCK) throw new VmError('InvalidGenesis', `genesis may set at most ${MAX_TXS_PER_BLOCK} keys`);
  return entries.map(([key, value]) => {
    if (typeof value !== 'string') throw new VmError('InvalidGenesis', `genesis key "${key.slice(0, 64)}": the value must be a string`);
    try {
      return makeTx(key, value);
    } catch (e) {
      throw new VmError('InvalidGenesis', `genesis key "${key.slice(0, 64)}": ${(e as Error).message}`);
    }
  });
}
