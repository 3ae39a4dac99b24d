import { MemoryStore, type KeyValueStore } from '@cornice/sdk';
import { LevelStore } from './level.js';

export type DbType = 'leveldb' | 'memory';

/** Opens the node's root store: LevelDB under `dir`, or memory (tests). */
export async function openStore(type: DbType, dir: string): Promise<KeyValueStore> {
  return type === 'memory' ? new MemoryStore() : LevelStore.open(dir);
}
