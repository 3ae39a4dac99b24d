/**
 * Only the local network (12345) has a built-in genesis: any other network needs --genesis-file
 * (with its validators) instead of silently running the local chains with the local stakers.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryStore, ShortId, sha256, silentLogger } from '@cornice/sdk';
import { DbMismatchError } from '../../src/db/meta.js';
import { PrefixedStore } from '@cornice/sdk';
import { encodeGenesis } from '../../src/platform/genesis.js';
import { ConfigError } from '../../src/config/config.js';
import { parseConfig } from '../../src/config/parse.js';
import { GenesisError } from '../../src/genesis/file.js';
import { genesisOf, type NetworkGenesis } from '../../src/genesis/genesis.js';
import { LOCAL_STAKER_NODE_IDS } from '../../src/genesis/local.js';
import { startNode } from '../../src/node/node.js';
import { FAST_KDF, startTestNode } from '../helpers/node.js';

let dir: string;
test.before.each(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cornice-genesis-'));
});
test.after.each(() => rm(dir, { recursive: true, force: true }));

async function startFails(flags: string[]): Promise<Error> {
  const parsed = parseConfig(['--http-port=0', '--staking-port=0', '--db-type=memory', `--data-dir=${dir}/data`, '--log-level=off', ...flags], {});
  if (parsed.kind !== 'run') throw new TypeError('expected a run config');
  try {
    const node = await startNode(parsed.config, { log: silentLogger, keystoreKdf: FAST_KDF });
    await node.stop();
  } catch (e) {
    assert.instance(e, Error);
    return e as Error;
  }
  return assert.unreachable('the node must refuse to start') as never;
}

test('a network without a built-in genesis refuses to start without --genesis-file, before touching the data dir', async () => {
  for (const [flag, text] of [
    ['mainnet', 'network mainnet (1)'],
    ['denali', 'network denali (3)'],
    ['network-99', 'network 99'],
  ] as const) {
    const e = await startFails([`--network-id=${flag}`]);
    assert.instance(e, ConfigError, 'a configuration problem (the CLI exits 2)');
    assert.is((e as ConfigError).code, 'NoGenesis');
    assert.is(e.message, `${text} has no built-in genesis: give --genesis-file`);
  }
  assert.not.ok(existsSync(join(dir, 'data')), 'no staking key or database was created');
});

test('a genesis file for such a network must list its validators', async () => {
  const file = join(dir, 'genesis.json');
  await writeFile(file, JSON.stringify({ chains: [] }));
  const e = await startFails(['--network-id=mainnet', `--genesis-file=${file}`]);
  assert.instance(e, GenesisError);
  assert.is(e.message, `genesis file ${file}: "validators" is required: network mainnet (1) has no built-in validators`);
});

test('with a genesis file listing validators the network starts', async () => {
  const file = join(dir, 'genesis.json');
  await writeFile(file, JSON.stringify({ chains: [], validators: [{ nodeID: LOCAL_STAKER_NODE_IDS[0], weight: '1000' }] }));
  const node = await startTestNode(['--network-id=mainnet', `--genesis-file=${file}`]);
  try {
    assert.equal((await node.call('admin', 'admin.getNetworkID')).result, { networkID: '1' });
    assert.equal(node.chainManager.chains.map((c) => c.name), ['P-Chain'], 'only the platform chain');
  } finally {
    await node.close();
  }
});

test('the local network keeps its built-in genesis', async () => {
  const node = await startTestNode(['--network-id=local']);
  try {
    assert.equal((await node.call('admin', 'admin.getBlockchainID', { alias: 'timestamp' })).result?.blockchainID !== undefined, true);
  } finally {
    await node.close();
  }
});

test('the database keeps SHA-256 of the platform genesis bytes and refuses another genesis', async () => {
  const store = new MemoryStore();
  const parsed = parseConfig(['--http-port=0', '--staking-port=0', `--data-dir=${dir}/data`, '--log-level=off', '--sybil-protection-enabled=false', '--vms='], {});
  if (parsed.kind !== 'run') throw new TypeError('expected a run config');
  const start = (genesis: NetworkGenesis) => startNode(parsed.config, { log: silentLogger, keystoreKdf: FAST_KDF, db: store, genesis: () => genesis });
  const first = genesisOf(12345, { chains: [], validators: [{ nodeId: ShortId.fromString(LOCAL_STAKER_NODE_IDS[0]!), weight: 1000n }] });
  await (await start(first)).stop();
  const stored = await new PrefixedStore(store, 'meta').get(Uint8Array.of(2));
  assert.equal(stored, sha256(encodeGenesis(first.platform)));
  const other = genesisOf(12345, { chains: [], validators: [{ nodeId: ShortId.fromString(LOCAL_STAKER_NODE_IDS[1]!), weight: 1000n }] });
  try {
    await (await start(other)).stop();
    assert.unreachable('another genesis must be refused');
  } catch (e) {
    assert.instance(e, DbMismatchError);
    assert.is((e as DbMismatchError).code, 'GenesisMismatch');
  }
  await (await start(first)).stop();
});

test.run();
