/** `create-cornice-vm <name>` (what `npm create cornice-vm <name>` runs). */
import { relative } from 'node:path';
import { ScaffoldError } from './errors.js';
import { generate } from './generate.js';
import { parseProjectName } from './name.js';

export const USAGE = `Usage: npm create cornice-vm <name>
       create-cornice-vm <name>

Writes a ready Cornice VM package into ./<name> (the name without its @scope/): one transaction
type, a mempool, persistent state, a JSON-RPC service, tests on @cornice/core/testing, a genesis
file and a README that starts a node with it. <name> is the npm package name; the part after the
scope also names the VM (at most 32 bytes: its vmID is the name zero-padded to 32 bytes).
`;

export interface Output {
  out(text: string): void;
  err(text: string): void;
}

const stdio: Output = { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) };

/** Runs the CLI; resolves with the exit code. */
export async function main(args: readonly string[], cwd: string, io: Output = stdio): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    io.out(USAGE);
    return 0;
  }
  try {
    const flags = args.filter((a) => a.startsWith('-'));
    if (flags.length > 0) throw new ScaffoldError('Usage', `unknown option ${flags[0]}`);
    if (args.length !== 1) throw new ScaffoldError('Usage', args.length === 0 ? 'a name is required' : 'expected one name');
    const name = parseProjectName(args[0]!);
    const { dir, files } = await generate(name, cwd);
    const where = relative(cwd, dir) || '.';
    io.out(`Wrote ${name.packageName} to ${dir}:\n${files.map((f) => `  ${f}\n`).join('')}\nNext:\n  cd ${where}\n  npm install\n  npm test\n  npm start    # a one-node network running the VM; see README.md\n`);
    return 0;
  } catch (e) {
    // Anything else is the file system's (permissions, a full disk): its message says what.
    io.err(`create-cornice-vm: ${(e as Error).message}\n${e instanceof ScaffoldError && e.code === 'Usage' ? `\n${USAGE}` : ''}`);
    return 1;
  }
}
