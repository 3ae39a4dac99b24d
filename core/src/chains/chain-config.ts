/**
 * Per-chain files an operator gives a VM (avalanchego's chain config dir): under
 * `<chain-config-dir>/<chain ID or alias>/`, `config.json` reaches the VM as `VMInit.config` and
 * `upgrade.json` as `VMInit.upgrade` (e.g. a subnet-EVM's precompile upgrades). The folder named by
 * the chain ID wins over one named by an alias; aliases are tried in order. The bytes go to the VM
 * unread: what they mean is the VM's business, and a VM refuses what it cannot use.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { NodeError, type Id } from '@cornice/sdk';

export class ChainConfigError extends NodeError<'ConfigInvalid'> {}

/** Largest file read (a config is a few KB; this keeps a wrong path from filling memory). */
export const MAX_CHAIN_CONFIG_BYTES = 1 << 20;

export interface ChainConfigFiles {
  config?: Uint8Array;
  upgrade?: Uint8Array;
  /** The folder they came from. */
  dir?: string;
}

const FILES = [
  ['config', 'config.json'],
  ['upgrade', 'upgrade.json'],
] as const;

async function isDir(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/** The files for the chain `id` (known by `aliases`), from the first of its folders that exists. */
export async function readChainConfigFiles(root: string, id: Id, aliases: readonly string[]): Promise<ChainConfigFiles> {
  // An alias that is not a plain name could reach outside the root: such folders are not looked at.
  const names = [id.toString(), ...aliases.filter((a) => /^[A-Za-z0-9._~-]+$/.test(a) && a !== '.' && a !== '..')];
  for (const name of names) {
    const dir = join(root, name);
    if (!(await isDir(dir))) continue;
    const files: ChainConfigFiles = { dir };
    for (const [field, file] of FILES) {
      const path = join(dir, file);
      let size: number;
      try {
        const s = await stat(path);
        if (!s.isFile()) continue;
        size = s.size;
      } catch {
        continue; // absent
      }
      if (size > MAX_CHAIN_CONFIG_BYTES) {
        throw new ChainConfigError('ConfigInvalid', `${path} is ${size} bytes; a chain's ${file} may be at most ${MAX_CHAIN_CONFIG_BYTES} bytes`);
      }
      try {
        files[field] = new Uint8Array(await readFile(path));
      } catch (e) {
        throw new ChainConfigError('ConfigInvalid', `cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
      }
    }
    return files;
  }
  return {};
}
