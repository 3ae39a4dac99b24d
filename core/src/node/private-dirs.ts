/**
 * The node's private directories: the data dir, the LevelDB dir (user records hold salts and
 * password verifiers), the staking key's dir and the profile dir (heap snapshots hold whatever was
 * in memory). Where they are made (db/open.ts, staking/cert.ts, api/admin/profiler.ts) they are
 * created 0700; one that already exists with wider permissions is left alone, with a warning at
 * start naming it and its mode.
 */
import { stat } from 'node:fs/promises';
import type { Logger } from '@cornice/sdk';

/** Logs a warning for each existing directory of `dirs` that group or others can access. */
export async function warnOpenDirs(dirs: readonly string[], log: Logger): Promise<void> {
  for (const path of new Set(dirs)) {
    let mode: number;
    try {
      const s = await stat(path);
      if (!s.isDirectory()) continue;
      mode = s.mode & 0o777;
    } catch {
      continue; // not there yet: it will be created private
    }
    if (mode & 0o077) {
      log.warn('directory is accessible to other users', {
        path,
        mode: '0' + mode.toString(8),
        fix: `chmod 700 ${path}`,
      });
    }
  }
}
