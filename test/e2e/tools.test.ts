import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cb58Decode, cb58Encode } from '@cornice/sdk';
import { npmStartFlags } from '../src/fixtures.js';
import { runCli, startNodeProcess } from '../src/process.js';

// `cornice vm-id`, `cornice genesis encode`, and a genesis file giving chains' genesis as JSON.
let dir: string;
test.before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cornice-e2e-tools-'));
});
test.after(() => rm(dir, { recursive: true, force: true }));

test('cornice vm-id <name> prints the vmID; a bad name fails naming why', async () => {
  const r = await runCli(['vm-id', 'timestamp']);
  assert.equal([r.code, r.stdout, r.stderr], [0, 'tGas3T58KzdjLHhBDMnH2TvrddhqTji5iZAMZ3RXs2NLpSnhH\n', '']);
  const bad = await runCli(['vm-id', 'a-name-that-is-longer-than-32-bytes']);
  assert.equal([bad.code, bad.stdout, bad.stderr], [1, '', 'cornice vm-id: VM name is longer than 32 bytes\n']);
});

test('cornice genesis encode <file> prints the cb58 of its bytes; a missing file fails clearly', async () => {
  const file = join(dir, 'data.bin');
  await writeFile(file, 'hello genesis');
  const r = await runCli(['genesis', 'encode', file]);
  assert.equal([r.code, r.stdout], [0, `${cb58Encode(new TextEncoder().encode('hello genesis'))}\n`]);
  assert.is(new TextDecoder().decode(cb58Decode(r.stdout.trim())), 'hello genesis');
  const missing = await runCli(['genesis', 'encode', join(dir, 'nope.json')]);
  assert.equal([missing.code, missing.stderr], [1, `cornice genesis encode: no such file: ${join(dir, 'nope.json')}\n`]);
  const usage = await runCli(['genesis']);
  assert.is(usage.code, 2);
  assert.match(usage.stderr, /usage: cornice vm-id <name>\n\s+cornice genesis encode <file\|->/);
});

const ADDRESS = '6Y3kysjF9jnHnYkdS9yGAuoHyae2eNmeV';
const assetGenesis = { TST: { name: 'Test Coin', symbol: 'TST', denomination: 2, initialState: { fixedCap: [{ amount: '12345', address: ADDRESS }] } } };

test('a genesis file\'s JSON "genesis": the avm builds it with avm.buildGenesis, the timestamp VM gets its UTF-8 JSON', async () => {
  const genesisFile = join(dir, 'genesis.json');
  await writeFile(
    genesisFile,
    JSON.stringify({
      chains: [
        { name: 'Assets', vm: 'avm', genesis: assetGenesis, aliases: ['assets'] },
        { name: 'Stamps', vm: 'timestamp', genesis: 'hi', aliases: ['stamps'] },
      ],
    }),
  );
  const node = await startNodeProcess([...npmStartFlags(), `--data-dir=${dir}/a`, '--db-type=memory', `--genesis-file=${genesisFile}`]);
  try {
    const balance = await node.call('bc/assets', 'avm.getBalance', { address: `assets-${ADDRESS}`, assetID: 'TST' });
    assert.is((balance.result as { balance: string } | undefined)?.balance, '12345', JSON.stringify(balance));
    const block = await node.call('bc/stamps', 'timestamp.getBlock', {});
    const data = cb58Decode((block.result as { data: string }).data);
    assert.equal(data.subarray(0, 4), new TextEncoder().encode('"hi"'));
    assert.equal(data.subarray(4), new Uint8Array(28));
  } finally {
    await node.stop();
  }
});

test('a JSON genesis the VM refuses fails start-up naming the chain and the field', async () => {
  const genesisFile = join(dir, 'bad-genesis.json');
  await writeFile(genesisFile, JSON.stringify({ chains: [{ name: 'Assets', vm: 'avm', genesis: { TST: { ...assetGenesis.TST, denomination: 99 } } }] }));
  const r = await runCli([...npmStartFlags(), `--data-dir=${dir}/b`, '--db-type=memory', '--http-port=0', '--staking-port=0', `--genesis-file=${genesisFile}`]);
  assert.is(r.code, 1);
  assert.match(r.stderr, /genesis file .*bad-genesis\.json: chains\[0\] \("Assets"\)\.genesis: buildGenesis refused it: genesisData\.TST\.denomination/);
});

test.run();
