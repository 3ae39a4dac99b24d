/**
 * Tools for VM authors and operators, run as `cornice <command>` (core/src/cli/main.ts dispatches):
 *   cornice vm-id <name>              the vmID (cb58) of a VM name: the name's UTF-8 bytes
 *                                     zero-padded to 32, as the reference derives avm's and evm's
 *   cornice genesis encode <file|->   the cb58 of a file's bytes (or stdin's), for a genesis file's
 *                                     "genesisData" or platform.createBlockchain
 * Each resolves with an exit code: 0 done, 1 bad input (named on stderr), 2 bad usage.
 */
import { open } from 'node:fs/promises';
import { NodeError, cb58Encode, concatBytes, utf8Encode, vmIdFromName } from '@cornice/sdk';
import { MAX_CHAIN_GENESIS_BYTES } from '../genesis/json.js';

export class InputError extends NodeError<'NotFound' | 'Unreadable' | 'TooBig'> {}

export const COMMANDS_USAGE = `usage: cornice vm-id <name>
       cornice genesis encode <file|->`;

/** Where a command reads and writes; the process's own streams by default. */
export interface CommandIO {
  stdin: AsyncIterable<Uint8Array | string>;
  out: (text: string) => void;
  err: (text: string) => void;
}

const processIO = (): CommandIO => ({
  stdin: process.stdin,
  out: (t) => process.stdout.write(t),
  err: (t) => process.stderr.write(t),
});

/** `--help` alone: the usage on stdout, exit 0. */
function helpAsked(argv: string[], io: CommandIO): boolean {
  if (argv.length !== 1 || argv[0] !== '--help') return false;
  io.out(`${COMMANDS_USAGE}\n`);
  return true;
}

/** `cornice vm-id <name>`. */
export async function vmIdCommand(argv: string[], io: CommandIO = processIO()): Promise<number> {
  if (helpAsked(argv, io)) return 0;
  if (argv.length !== 1) {
    io.err(`${COMMANDS_USAGE}\n`);
    return 2;
  }
  const name = argv[0]!;
  if (name.length === 0) {
    io.err('cornice vm-id: the name is empty\n');
    return 1;
  }
  try {
    io.out(`${vmIdFromName(name).toString()}\n`);
    return 0;
  } catch (e) {
    io.err(`cornice vm-id: ${(e as Error).message}\n`);
    return 1;
  }
}

/** `cornice genesis encode <file|->`. */
export async function genesisCommand(argv: string[], io: CommandIO = processIO()): Promise<number> {
  if (helpAsked(argv, io)) return 0;
  if (argv.length !== 2 || argv[0] !== 'encode') {
    io.err(`${COMMANDS_USAGE}\n`);
    return 2;
  }
  const source = argv[1]!;
  const fail = (msg: string) => {
    io.err(`cornice genesis encode: ${msg}\n`);
    return 1;
  };
  let bytes: Uint8Array;
  try {
    bytes = source === '-' ? await readBounded(io.stdin, 'stdin') : await readFileBounded(source);
  } catch (e) {
    return fail((e as Error).message);
  }
  if (bytes.length === 0) return fail(`${source === '-' ? 'stdin' : source} is empty (a chain without genesis data needs no "genesisData")`);
  io.out(`${cb58Encode(bytes)}\n`);
  return 0;
}

const tooBig = (what: string, size: number | string) =>
  new InputError('TooBig', `${what} is ${size} bytes; genesis data is at most ${MAX_CHAIN_GENESIS_BYTES} bytes`);

/** A file's bytes, refused before reading when it is not a file or is too big. */
async function readFileBounded(path: string): Promise<Uint8Array> {
  let file;
  try {
    file = await open(path, 'r');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new InputError('NotFound', `no such file: ${path}`);
    throw new InputError('Unreadable', code === 'EACCES' ? `cannot read ${path}: permission denied` : `cannot open ${path}: ${(e as Error).message}`);
  }
  try {
    const stat = await file.stat();
    if (!stat.isFile()) throw new InputError('Unreadable', `${path} is not a file`);
    if (stat.size > MAX_CHAIN_GENESIS_BYTES) throw tooBig(path, stat.size);
    return new Uint8Array(await file.readFile());
  } finally {
    await file.close();
  }
}

/** A stream's bytes, refused as soon as they pass the bound. */
async function readBounded(stream: AsyncIterable<Uint8Array | string>, what: string): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const bytes = typeof chunk === 'string' ? utf8Encode(chunk) : chunk;
    size += bytes.length;
    if (size > MAX_CHAIN_GENESIS_BYTES) throw tooBig(what, `more than ${MAX_CHAIN_GENESIS_BYTES}`);
    chunks.push(bytes);
  }
  return concatBytes(...chunks);
}
