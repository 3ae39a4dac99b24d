/**
 * `cornice [flags]`: parse the configuration, start the node, stop it cleanly on SIGINT/SIGTERM.
 * Exit codes: 0 after a clean stop or --help, 1 when the node fails, 2 for a bad command line.
 */
import { readFileSync } from 'node:fs';
import { isNodeError } from '@cornice/sdk';
import { parseConfig } from './config/parse.js';
import { createLogger } from './log/logger.js';
import type { RunningNode } from './node/node.js';

/** Runs the CLI; resolves with an exit code once startup failed or the node was stopped. */
export async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number | undefined> {
  let parsed: ReturnType<typeof parseConfig>;
  try {
    parsed = parseConfig(argv, env);
  } catch (e) {
    process.stderr.write(`cornice: ${(e as Error).message}\n`);
    return 2;
  }
  if (parsed.kind === 'help') {
    process.stdout.write(parsed.text);
    return 0;
  }
  if (parsed.kind === 'version') {
    process.stdout.write(`cornice ${readVersion()} (node ${process.version})\n`);
    return 0;
  }
  const config = parsed.config;
  const log = createLogger({ level: config.logLevel, fields: { app: 'cornice' } });
  let node: RunningNode;
  try {
    // Loaded here so --help and bad command lines do not pay for the whole node.
    const { startNode } = await import('./node/node.js');
    node = await startNode(config, { log });
  } catch (e) {
    // By brand, not instanceof: the error may come from a plugin's own copy of the sdk.
    log.fatal('node failed to start', { error: isNodeError(e) ? e.message : e });
    if (isNodeError(e)) process.stderr.write(`cornice: ${e.message}\n`);
    return 1;
  }
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      log.info('shutting down', { signal });
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      node.stop().then(
        () => resolve(0),
        (e: unknown) => {
          log.error('shutdown failed', { error: e });
          resolve(1);
        },
      );
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}

/** The version of @cornice/core, from its package.json (shipped with the package). */
export function readVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}
