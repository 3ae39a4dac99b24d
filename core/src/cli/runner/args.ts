/**
 * `cornice network …`'s arguments, parsed by the node's command-line rules (config/parse.ts
 * parseCommandLine): `--nodes 5` and `--nodes=5`, a repeated flag's last value wins, errors name
 * the flag and what was expected. `--help` or `-h` anywhere before `--` asks for the usage text
 * (exit 0), whatever else is there, as `cornice --help` does. Flags after `--` go to every node
 * (start only). Each flag belongs to the subcommands that use it: `--nodes` for stop is refused
 * rather than ignored. Tests: core/test/cli/runner/local-network.test.ts.
 */
import { homedir as osHomedir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../config/config.js';
import { intType, pathType, type ValueType } from '../../config/flags.js';
import { parseCommandLine, wantsHelp } from '../../config/parse.js';

/** Most nodes a local network may have. */
export const MAX_NODES = 50;

export const SUBCOMMANDS = ['start', 'stop', 'status', 'restart'] as const;
export type Subcommand = (typeof SUBCOMMANDS)[number];

interface RunnerFlag {
  name: string;
  type: ValueType<unknown>;
  /** The subcommands that take it. */
  of: readonly Subcommand[];
}

const FLAGS: readonly RunnerFlag[] = [
  { name: 'nodes', type: intType(1, MAX_NODES) as ValueType<unknown>, of: ['start'] },
  { name: 'dir', type: pathType as ValueType<unknown>, of: SUBCOMMANDS },
  // Node i uses base + 2(i-1) and the port after it: room for MAX_NODES nodes above the base.
  { name: 'base-port', type: intType(1, 65535 - 2 * MAX_NODES) as ValueType<unknown>, of: ['start'] },
];

export const USAGE = `usage: cornice network start [--nodes N] [--dir D] [--base-port P] [-- <node flags>]
       cornice network stop [--dir D]
       cornice network status [--dir D]
       cornice network restart <i> [--dir D]
  start        runs the nodes in the foreground; Ctrl-C stops them all. A node that exits is reported
               and the others keep running.
  stop         stops a network started elsewhere: the runner and every node, restarted ones included
  status       each node: up (with its peer count), not answering, or down
  restart <i>  starts node i again (after it died, or stops it first): same data dir, ports,
               certificate, flags and log file; through the running \`start\`, or on its own if that is gone
  --nodes      nodes to run (default 5; nodes 1-5 are the local genesis validators)
  --dir        where the nodes' data dirs and network.json live (default ~/.cornice/local-network)
  --base-port  HTTP port of node 1 (default 9650); node i uses base+2(i-1) for HTTP and base+2(i-1)+1 for peers
  -h, --help   this text
Values: --flag=value or --flag value. Flags after -- go to every node (start only).
Every node runs as a dev node: --network-id=local --evm-debug-api (the EVM's debug_ and trace_
methods on); -- --evm-debug-api=false turns them off.
`;

export type RunnerArgs =
  | { kind: 'help' }
  | {
      kind: 'run';
      sub: Subcommand;
      nodes: number;
      dir: string;
      baseHttpPort: number;
      /** Flags after `--`, passed to every node. */
      nodeFlags: string[];
      /** restart: the node's number. */
      node?: number;
    };

const seeHelp = '(see cornice network --help)';

/** The network dir without --dir: ~/.cornice/local-network. */
export function defaultDir(homedir: string = osHomedir()): string {
  return join(homedir, '.cornice', 'local-network');
}

/** Parses `cornice network <sub> …` (argv after `network`); throws ConfigError with a message for the user. */
export function parseRunnerArgs(argv: readonly string[], homedir: string = osHomedir()): RunnerArgs {
  const dash = argv.indexOf('--');
  const own = dash >= 0 ? argv.slice(0, dash) : argv;
  const nodeFlags = dash >= 0 ? argv.slice(dash + 1) : [];
  if (wantsHelp(own) || own.includes('-h')) return { kind: 'help' };
  const [sub, ...rest] = own;
  if (sub === undefined) throw new ConfigError('UnexpectedArgument', `missing command: ${SUBCOMMANDS.join(', ')} ${seeHelp}`);
  if (!(SUBCOMMANDS as readonly string[]).includes(sub)) {
    throw new ConfigError('UnexpectedArgument', `unknown command ${JSON.stringify(sub)}: expected ${SUBCOMMANDS.join(', ')} ${seeHelp}`, { argument: sub });
  }
  const command = sub as Subcommand;
  const { values, positionals } = parseCommandLine(rest, {
    find: (name) => FLAGS.find((f) => f.name === name),
    help: seeHelp,
    positionals: command === 'restart',
    ctx: { homedir },
  });
  for (const flag of values.keys()) {
    if (!flag.of.includes(command)) {
      throw new ConfigError('UnknownFlag', `--${flag.name} is not a flag of cornice network ${command} (only of ${flag.of.join(', ')}) ${seeHelp}`, { flag: `--${flag.name}` });
    }
  }
  if (nodeFlags.length > 0 && command !== 'start') {
    throw new ConfigError('UnexpectedArgument', `flags after -- go to the nodes of cornice network start only; a restarted node keeps the flags it was started with ${seeHelp}`);
  }
  const value = <T>(name: string, dflt: T): T => {
    const flag = FLAGS.find((f) => f.name === name)!;
    return values.has(flag) ? (values.get(flag) as T) : dflt;
  };
  const out: RunnerArgs = {
    kind: 'run',
    sub: command,
    nodes: value('nodes', 5),
    dir: value('dir', defaultDir(homedir)),
    baseHttpPort: value('base-port', 9650),
    nodeFlags,
  };
  if (command === 'restart') {
    if (positionals.length !== 1) {
      throw new ConfigError('UnexpectedArgument', `restart takes one node number, e.g. cornice network restart 3; got ${positionals.length === 0 ? 'none' : positionals.map((p) => JSON.stringify(p)).join(' ')} ${seeHelp}`);
    }
    const n = intType(1, MAX_NODES).fromString(positionals[0]!, { homedir });
    if (n === undefined) throw new ConfigError('InvalidValue', `invalid node number ${JSON.stringify(positionals[0])}: expected an integer from 1 to ${MAX_NODES} ${seeHelp}`);
    out.node = n;
  }
  return out;
}
