import { mkdir } from 'node:fs/promises';
import { MemoryStore, type KeyValueStore } from '@cornice/sdk';
import { LevelStore } from './level.js';

export type DbType = 'leveldb' | 'memory';

/**
 * Opens the node's root store: LevelDB under `dir`, or memory (tests). A missing `dir` (and its
 * missing parents) is created 0700: its files hold keystore salts and verifiers.
 */
export async function openStore(type: DbType, dir: string): Promise<KeyValueStore> {
  if (type === 'memory') return new MemoryStore();
  await mkdir(dir, { recursive: true, mode: 0o700 });
  return LevelStore.open(dir);
}
