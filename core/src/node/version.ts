import { readFileSync } from 'node:fs';

/** The version of @cornice/core, from its package.json (shipped with the package). */
export function readVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

/** The node's version string, `cornice/<version of @cornice/core>`: sent to peers, answered by admin.getNodeVersion. */
export function nodeVersion(): string {
  return `cornice/${readVersion()}`;
}
