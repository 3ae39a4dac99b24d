import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runCli, startNodeProcess } from '../src/process.js';

let dir: string;
test.before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cornice-e2e-cli-'));
});
test.after(() => rm(dir, { recursive: true, force: true }));

test('--help lists the flags and exits 0', async () => {
  const r = await runCli(['--help']);
  assert.is(r.code, 0);
  for (const flag of ['--http-host', '--http-port', '--network-id', '--data-dir', '--db-dir', '--db-type', '--log-level', '--api-admin-enabled', '--api-keystore-enabled', '--api-ipcs-enabled', '--staking-tls-cert-file', '--staking-tls-key-file', '--config-file']) {
    assert.ok(r.stdout.includes(flag), `help mentions ${flag}`);
  }
});

test('--version prints the version', async () => {
  const r = await runCli(['--version']);
  assert.is(r.code, 0);
  assert.match(r.stdout, /^cornice \d+\.\d+\.\d+/);
});

test('bad flags fail with exit 2 and a clear message', async () => {
  const unknown = await runCli(['--htp-port=1']);
  assert.is(unknown.code, 2);
  assert.match(unknown.stderr, /unknown flag --htp-port/);
  const bad = await runCli(['--http-port=abc']);
  assert.is(bad.code, 2);
  assert.match(bad.stderr, /invalid value "abc" for --http-port/);
});

test('a network without a built-in genesis and no --genesis-file refuses to start (exit 2)', async () => {
  const r = await runCli([`--data-dir=${dir}/mainnet`, '--db-type=memory', '--http-port=0', '--staking-port=0', '--network-id=mainnet']);
  assert.is(r.code, 2);
  assert.match(r.stderr, /network mainnet \(1\) has no built-in genesis: give --genesis-file/);
});

test('a database held by another node is a clear start-up error (exit 1)', async () => {
  const args = [`--data-dir=${dir}`, '--log-level=info'];
  const first = await startNodeProcess(args);
  try {
    const second = await runCli([...args, '--http-port=0', '--staking-port=0']);
    assert.is(second.code, 1);
    assert.match(second.stderr, /cannot open database at /);
  } finally {
    assert.is(await first.stop(), 0);
  }
});

test('a port in use is a clear start-up error', async () => {
  const first = await startNodeProcess([`--data-dir=${dir}-a`, '--db-type=memory']);
  try {
    const port = new URL(first.url).port;
    // Its own free staking port: the test is about the HTTP port (the default 9651 may be taken).
    const second = await runCli([`--data-dir=${dir}-b`, '--db-type=memory', '--staking-port=0', `--http-port=${port}`]);
    assert.is(second.code, 1);
    assert.match(second.stderr, new RegExp(`cannot listen on 127.0.0.1:${port}: EADDRINUSE`));
  } finally {
    await first.stop();
    await rm(`${dir}-a`, { recursive: true, force: true });
    await rm(`${dir}-b`, { recursive: true, force: true });
  }
});

test.run();
