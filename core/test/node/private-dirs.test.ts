import { chmod, mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parseConfig } from '../../src/config/parse.js';
import { startNode } from '../../src/node/node.js';
import { warnOpenDirs } from '../../src/node/private-dirs.js';
import { postRpc } from '../../src/testing/rpc.js';
import { captureLog } from '../helpers/log.js';
import { FAST_KDF } from '../helpers/node.js';

const test = suite('private directories');
let root: string;
test.before.each(async () => {
  root = await mkdtemp(join(tmpdir(), 'cornice-dirs-'));
});
test.after.each(() => rm(root, { recursive: true, force: true }));

const modeOf = async (path: string) => (await stat(path)).mode & 0o777;

async function start(dataDir: string) {
  const parsed = parseConfig(['--http-port=0', '--staking-port=0', '--db-type=leveldb', `--data-dir=${dataDir}`, '--log-level=off'], {});
  if (parsed.kind !== 'run') throw new TypeError('expected a run config');
  const log = captureLog();
  const node = await startNode(parsed.config, { log, keystoreKdf: FAST_KDF });
  return { node, log, config: parsed.config };
}

test('a new data dir, its LevelDB dir, staking dir and profile dir are created 0700', async () => {
  const dataDir = join(root, 'data');
  const { node, log, config } = await start(dataDir);
  try {
    const r = await postRpc(`${node.url}/ext/admin`, 'admin.lockProfile', { fileName: 'lock.json' });
    assert.equal(r.result, { success: true });
    for (const dir of [dataDir, join(dataDir, 'db'), config.dbDir, join(dataDir, 'staking'), config.profileDir]) {
      assert.is((await modeOf(dir)).toString(8), '700', dir);
    }
    assert.equal(log.lines.filter((l) => l.level === 'warn' && l.msg === 'directory is accessible to other users'), []);
  } finally {
    await node.stop();
  }
});

test('an existing dir that others can read gets a warning at start, naming it and its mode', async () => {
  const dataDir = join(root, 'data');
  const { node: first, config } = await start(dataDir);
  await first.stop();
  await chmod(dataDir, 0o755);
  await chmod(config.dbDir, 0o750);
  const { node, log } = await start(dataDir);
  await node.stop();
  const warns = log.lines.filter((l) => l.level === 'warn' && l.msg === 'directory is accessible to other users');
  assert.equal(
    warns.map((l) => [l.msg, l.fields?.path, l.fields?.mode]),
    [
      ['directory is accessible to other users', dataDir, '0755'],
      ['directory is accessible to other users', config.dbDir, '0750'],
    ],
  );
  // Left as they were: the operator decides.
  assert.is(await modeOf(dataDir), 0o755);
});

test('warnOpenDirs: missing paths and files are skipped, private dirs pass', async () => {
  const log = captureLog();
  await mkdir(join(root, 'private'), { mode: 0o700 });
  await writeFile(join(root, 'file'), 'x', { mode: 0o644 });
  await warnOpenDirs([join(root, 'missing'), join(root, 'file'), join(root, 'private')], log);
  assert.equal(log.lines, []);
});

test.run();
