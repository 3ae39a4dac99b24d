import { readFileSync } from 'node:fs';

/** The version of @cornice/core, from its package.json (shipped with the package). */
export function readVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}
