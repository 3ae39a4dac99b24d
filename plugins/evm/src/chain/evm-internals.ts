/**
 * A module of @ethereumjs/evm that its package does not export (the interpreter, the opcode table),
 * loaded by file: the same ESM module the package itself uses, so patching what it exports reaches
 * every EVM made afterwards.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** `path` under the package's `dist/esm` (e.g. `opcodes/functions.js`). */
export async function importEvmInternal<T>(path: string): Promise<T> {
  const cjsIndex = createRequire(import.meta.url).resolve('@ethereumjs/evm');
  return (await import(pathToFileURL(join(dirname(cjsIndex), '..', 'esm', ...path.split('/'))).href)) as T;
}
