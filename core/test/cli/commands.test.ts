import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cb58Decode, cb58Encode } from '@cornice/sdk';
import { helpText } from '../../src/config/parse.js';
import { MAX_CHAIN_GENESIS_BYTES } from '../../src/genesis/json.js';
import { genesisCommand, vmIdCommand, type CommandIO } from '../../src/cli/commands.js';

function io(stdin: Iterable<Uint8Array | string> = []): CommandIO & { stdout: string; stderr: string } {
  const r = {
    stdin: Readable.from(stdin),
    stdout: '',
    stderr: '',
    out: (t: string) => void (r.stdout += t),
    err: (t: string) => void (r.stderr += t),
  };
  return r;
}

let dir: string;
test.before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cornice-tools-'));
});
test.after(() => rm(dir, { recursive: true, force: true }));

test('vm-id prints the reference\'s vmIDs of names', async () => {
  const expected: Record<string, string> = {
    avm: 'jvYyfQTxGMJLuGWa55kdP2p2zSUYsQ5Raupu4TW34ZAUBAbtq',
    platformvm: 'rWhpuQPF1kb72esV2momhMuTYGkEb1oL29pt2EBXWmSy4kxnT',
    timestamp: 'tGas3T58KzdjLHhBDMnH2TvrddhqTji5iZAMZ3RXs2NLpSnhH',
    evm: 'mgj786NP7uDwBCcq6YwThhaN8FLyybkCa4zBWTQbNgmK6k9A6',
  };
  for (const [name, id] of Object.entries(expected)) {
    const r = io();
    assert.is(await vmIdCommand([name], r), 0);
    assert.is(r.stdout, `${id}\n`);
  }
});

test('vm-id refuses a name too long, an empty one, and bad usage', async () => {
  let r = io();
  assert.is(await vmIdCommand(['x'.repeat(33)], r), 1);
  assert.is(r.stderr, 'cornice vm-id: VM name is longer than 32 bytes\n');
  r = io();
  assert.is(await vmIdCommand([''], r), 1);
  assert.is(r.stderr, 'cornice vm-id: the name is empty\n');
  r = io();
  assert.is(await vmIdCommand([], r), 2);
  assert.match(r.stderr, /usage: cornice vm-id <name>/);
  assert.is(await vmIdCommand(['a', 'b'], io()), 2);
  assert.is(r.stdout, '');
});

test('genesis encode prints the cb58 of a file\'s bytes, or stdin\'s', async () => {
  const file = join(dir, 'g.bin');
  await writeFile(file, Uint8Array.of(0, 1, 2, 255));
  let r = io();
  assert.is(await genesisCommand(['encode', file], r), 0);
  assert.is(r.stdout, `${cb58Encode(Uint8Array.of(0, 1, 2, 255))}\n`);
  r = io([Uint8Array.of(1, 2), '{"a":1}\n']);
  assert.is(await genesisCommand(['encode', '-'], r), 0);
  assert.equal(cb58Decode(r.stdout.trim()), Uint8Array.of(1, 2, ...new TextEncoder().encode('{"a":1}\n')));
  // The largest accepted.
  const big = join(dir, 'max.bin');
  await writeFile(big, new Uint8Array(MAX_CHAIN_GENESIS_BYTES).fill(7));
  r = io();
  assert.is(await genesisCommand(['encode', big], r), 0);
  assert.is(cb58Decode(r.stdout.trim()).length, MAX_CHAIN_GENESIS_BYTES);
});

test('genesis encode: clear errors for a missing file, a directory, an empty or too big input, bad usage', async () => {
  const bad = async (argv: string[], stdin: Iterable<Uint8Array> = []) => {
    const r = io(stdin);
    const code = await genesisCommand(argv, r);
    assert.is(r.stdout, '');
    return [code, r.stderr];
  };
  assert.equal(await bad(['encode', join(dir, 'absent.json')]), [1, `cornice genesis encode: no such file: ${join(dir, 'absent.json')}\n`]);
  await mkdir(join(dir, 'sub'));
  assert.equal(await bad(['encode', join(dir, 'sub')]), [1, `cornice genesis encode: ${join(dir, 'sub')} is not a file\n`]);
  await writeFile(join(dir, 'empty'), '');
  assert.equal(await bad(['encode', join(dir, 'empty')]), [1, `cornice genesis encode: ${join(dir, 'empty')} is empty (a chain without genesis data needs no "genesisData")\n`]);
  await writeFile(join(dir, 'big'), new Uint8Array(MAX_CHAIN_GENESIS_BYTES + 1));
  assert.equal(await bad(['encode', join(dir, 'big')]), [1, `cornice genesis encode: ${join(dir, 'big')} is ${MAX_CHAIN_GENESIS_BYTES + 1} bytes; genesis data is at most ${MAX_CHAIN_GENESIS_BYTES} bytes\n`]);
  const chunks = Array.from({ length: 100 }, () => new Uint8Array(1024));
  assert.equal(await bad(['encode', '-'], chunks), [1, `cornice genesis encode: stdin is more than ${MAX_CHAIN_GENESIS_BYTES} bytes; genesis data is at most ${MAX_CHAIN_GENESIS_BYTES} bytes\n`]);
  assert.equal((await bad(['encode']))[0], 2);
  assert.equal((await bad(['decode', 'x']))[0], 2);
  assert.equal((await bad([]))[0], 2);
});

test('<command> --help prints the usage and exits 0', async () => {
  for (const cmd of [vmIdCommand, genesisCommand]) {
    const r = io();
    assert.is(await cmd(['--help'], r), 0);
    assert.match(r.stdout, /usage: cornice vm-id <name>/);
  }
});

test('--help lists the commands', () => {
  const help = helpText();
  assert.match(help, /cornice vm-id <name>/);
  assert.match(help, /cornice genesis encode <file\|->/);
  assert.match(help, /cornice network start\|stop\|status/);
});

test.run();
