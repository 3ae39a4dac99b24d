/**
 * `cornice [flags]`: parse the configuration, start the node, stop it cleanly on SIGINT/SIGTERM.
 * Exit codes: 0 after a clean stop or --help, 1 when the node fails (to start, to stop within
 * --shutdown-timeout, or with a fault outside any chain), 2 for a bad configuration (flags,
 * environment, config file, or a network without a genesis). A second signal during shutdown exits
 * at once. The bin exits the process with that code, so a plugin's leftover timer or socket cannot
 * keep it alive.
 */
import { isNodeError, type Logger } from '@cornice/sdk';
import { installFaultHandlers } from '../chains/faults.js';
import { ConfigError, type NodeConfig } from '../config/config.js';
import { parseConfig } from '../config/parse.js';
import { createLogger } from '../log/logger.js';
import { readVersion } from '../node/version.js';
import { networkCommand } from './runner/local-network.js';
import { genesisCommand, vmIdCommand } from './commands.js';
import type { RunningNode } from '../node/node.js';

/** Runs the CLI; resolves with an exit code once startup failed or the node was stopped. */
export async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  if (argv[0] === 'network') return networkCommand(argv.slice(1));
  if (argv[0] === 'vm-id') return vmIdCommand(argv.slice(1));
  if (argv[0] === 'genesis') return genesisCommand(argv.slice(1));
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
  return run(config, log);
}

/**
 * Starts the node and resolves with the exit code once it stopped. Signal and fault handlers are
 * installed before start-up, so that a plugin failing while it starts is caught, and a SIGTERM that
 * arrives while the node starts stops it as soon as it is up (or exits at once on a second signal).
 */
async function run(config: NodeConfig, log: Logger): Promise<number> {
  let node: RunningNode | undefined;
  let stopRequested: number | undefined;
  let stopping = false;
  let done: (code: number) => void = () => {};
  const finished = new Promise<number>((resolve) => (done = resolve));
  const finish = (code: number) => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    uninstall();
    done(code);
  };
  /** Stops the node; whatever happens, finishes within --shutdown-timeout. */
  const stop = (code: number) => {
    if (!node) {
      stopRequested ??= code;
      return;
    }
    if (stopping) return;
    stopping = true;
    const deadline = setTimeout(() => {
      log.error('shutdown did not finish in time; exiting', { timeoutMs: config.shutdownTimeout });
      finish(1);
    }, config.shutdownTimeout);
    node.stop().then(
      () => {
        clearTimeout(deadline);
        finish(code);
      },
      (e: unknown) => {
        clearTimeout(deadline);
        log.error('shutdown failed', { error: e });
        finish(1);
      },
    );
  };
  function onSignal(signal: NodeJS.Signals): void {
    if (stopping || stopRequested !== undefined) {
      log.warn('second signal; exiting now', { signal });
      return finish(1);
    }
    log.info('shutting down', { signal });
    stop(0);
  }
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const uninstall = installFaultHandlers({
    log,
    attribute: (stack) => node?.chainManager.chainsInStack(stack) ?? [],
    onFatal: () => (node ? stop(1) : finish(1)),
  });
  try {
    // Loaded here so --help and bad command lines do not pay for the whole node.
    const { startNode } = await import('../node/node.js');
    node = await startNode(config, { log });
  } catch (e) {
    // By brand, not instanceof: the error may come from a plugin's own copy of the sdk.
    log.fatal('node failed to start', { error: isNodeError(e) ? e.message : e });
    if (isNodeError(e)) process.stderr.write(`cornice: ${e.message}\n`);
    finish(e instanceof ConfigError ? 2 : 1);
    return finished;
  }
  if (stopRequested !== undefined) stop(stopRequested);
  return finished;
}

export { readVersion };
