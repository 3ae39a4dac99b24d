/**
 * --vm-isolation with real node processes: a plugin whose buildBlock loops forever (synchronously)
 * in a worker halts its own chain only; the timestamp, asset and EVM chains serve from workers.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { WebSocket } from 'ws';
import { cb58Encode, sha256 } from '@cornice/sdk';
import { postRpc } from '@cornice/core/testing';
import { REPO, npmStartFlags } from '../src/fixtures.js';
import { runCli, startNodeProcess, type NodeProcess } from '../src/process.js';
import { until } from '../src/subnet.js';

const TINY = `${REPO}core/test/vms/fixtures/isolation/tinyvm.js`;

let dir: string;
test.before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cornice-e2e-iso-'));
});
test.after(() => rm(dir, { recursive: true, force: true }));

const payload = (i: number) => cb58Encode(sha256(new TextEncoder().encode(`iso ${i}`)));

async function proposeAndWait(node: NodeProcess, data: string) {
  assert.equal((await node.call('bc/timestamp', 'timestamp.proposeBlock', { data })).result, { Success: true });
  return until(`block ${data}`, async () => {
    const b = await node.call('bc/timestamp', 'timestamp.getBlock', {});
    return b.result?.data === data ? b.result : undefined;
  });
}

test('a plugin looping forever in buildBlock, in a worker: its chain halts, health names it, the other chains and admin serve, SIGTERM ends the node', async () => {
  const genesis = join(dir, 'genesis.json');
  await writeFile(
    genesis,
    JSON.stringify({
      chains: [
        { name: 'Tiny', vm: 'tinyvm', aliases: ['tiny'] },
        { name: 'Timestamp', vm: 'timestamp', aliases: ['timestamp'] },
      ],
    }),
  );
  const node = await startNodeProcess([
    ...npmStartFlags(),
    `--data-dir=${dir}/loop`,
    '--db-type=memory',
    `--vms=@cornice/timestamp,${TINY}`,
    '--vm-isolation=tinyvm=worker',
    '--vm-call-timeout=2s',
    `--genesis-file=${genesis}`,
  ]);
  try {
    assert.ok(node.logs.some((l) => l.msg === 'VM runs in worker threads' && l.name === 'tinyvm'));
    const first = await node.call('bc/tiny', 'tiny.propose', { data: 'first' });
    assert.equal(first.result, { queued: true }, JSON.stringify(first.error));
    await until('the first tiny block', async () => ((await node.call('bc/tiny', 'tiny.heights', {})).result?.length === 2 ? true : undefined));

    const t0 = Date.now();
    assert.equal((await node.call('bc/tiny', 'tiny.propose', { data: 'loop' })).result, { queued: true });
    const halted = await until('chain halted', async () => node.logs.find((l) => l.msg === 'chain halted' && l.chain === 'tiny'));
    assert.match(String(halted.reason), /^vm\.buildBlock did not settle within 2000 ms/);
    assert.ok(Date.now() - t0 < 10_000);

    const health = await fetch(`${node.url}/ext/health`);
    assert.is(health.status, 503);
    const report = (await health.json()) as { checks: Record<string, { error?: { message: string } }> };
    assert.match(report.checks['chain tiny']!.error!.message, /^halted: vm\.buildBlock did not settle within 2000 ms/);
    assert.is(report.checks['chain timestamp']!.error, undefined);
    const refused = await node.call('bc/tiny', 'tiny.now', {});
    assert.match(refused.error!.message, /^chain tiny is halted: vm\.buildBlock did not settle/);

    const t1 = performance.now();
    assert.is((await node.call('admin', 'admin.getNodeID')).result.nodeID, node.nodeId);
    assert.ok(performance.now() - t1 < 1_000, 'admin answers at once');
    await proposeAndWait(node, payload(1));
  } finally {
    const t2 = Date.now();
    assert.is(await node.stop(), 0, 'the first SIGTERM ends the process cleanly');
    assert.ok(Date.now() - t2 < 10_000);
  }
});

test('--vm-isolation=all: the timestamp chain, the X-Chain (keystore, pubsub WebSocket) and the C-Chain (HTTP /rpc, /ws) serve from workers', async () => {
  const node = await startNodeProcess([...npmStartFlags(), `--data-dir=${dir}/all`, '--vm-isolation=all'], 60_000);
  try {
    const isolated = node.logs.filter((l) => l.msg === 'VM runs in worker threads').map((l) => l.name);
    assert.ok(['avm', 'evm', 'timestamp'].every((n) => isolated.includes(n)), `isolated: ${isolated.join(',')}`);
    const b1 = await proposeAndWait(node, payload(2));
    const b2 = await proposeAndWait(node, payload(3));
    assert.is(b2.parentID, b1.id);

    // X-Chain: a keystore user, an address, a send from the ewoq key, reported on the pubsub socket.
    const user = { username: 'iso', password: 'a Strong passw0rd!' };
    assert.ok((await node.call('keystore', 'keystore.createUser', user)).result);
    const imported = await node.call('X', 'avm.importKey', { ...user, privateKey: 'ewoqjP7PxY4yr3iLTpLisriqt94hdyDFNgchSxGGztUrTXtNN' });
    assert.is(imported.result?.address, 'X-6Y3kysjF9jnHnYkdS9yGAuoHyae2eNmeV');
    const ws = new WebSocket(`${node.url.replace('http', 'ws')}/ext/bc/X/pubsub`);
    await new Promise((resolve, reject) => (ws.once('open', resolve), ws.once('error', reject)));
    const messages: Array<{ channel: string; value: string }> = [];
    ws.on('message', (d) => messages.push(JSON.parse(d.toString())));
    ws.send(JSON.stringify({ channel: 'accepted', unsubscribe: false }));
    await new Promise((r) => setTimeout(r, 100));
    const to = (await node.call('X', 'avm.createAddress', user)).result.address as string;
    const sent = await node.call('X', 'avm.send', { ...user, amount: 10, assetID: 'NATIVE', to });
    assert.ok(sent.result?.txID, JSON.stringify(sent.error));
    await until('the pubsub message', async () => (messages.some((m) => m.channel === 'accepted' && m.value === sent.result.txID) ? true : undefined));
    ws.close();
    assert.is((await node.call('X', 'avm.getBalance', { address: to, assetID: 'AVA' })).result.balance, '10');

    // C-Chain: the raw HTTP handler and the WebSocket handler.
    const rpc = await postRpc(`${node.url}/ext/bc/C/rpc`, 'eth_chainId', []);
    assert.match(String(rpc.result), /^0x[0-9a-f]+$/);
    const eth = new WebSocket(`${node.url.replace('http', 'ws')}/ext/bc/C/ws`);
    await new Promise((resolve, reject) => (eth.once('open', resolve), eth.once('error', reject)));
    const reply = new Promise<{ result?: string }>((resolve) => eth.once('message', (d) => resolve(JSON.parse(d.toString()))));
    eth.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }));
    assert.is((await reply).result, rpc.result);
    eth.close();

    const health = (await postRpc(`${node.url}/ext/health`, 'health.getLiveness')).result;
    assert.is(health.healthy, true, JSON.stringify(health));
  } finally {
    assert.is(await node.stop(), 0);
  }
});

test('--vm-isolation naming a VM that is not loaded: the node refuses to start, naming it', async () => {
  const r = await runCli([...npmStartFlags(), `--data-dir=${dir}/unknown`, '--db-type=memory', '--http-port=0', '--staking-port=0', '--vms=@cornice/timestamp', '--vm-isolation=nope=worker']);
  assert.is(r.code, 1);
  assert.match(r.stderr, /cornice: --vm-isolation: no loaded VM is named nope/);
});

test.run();
