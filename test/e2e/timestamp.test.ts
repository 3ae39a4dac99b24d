import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cb58Encode, readIpcFrames, sha256 } from '@cornice/sdk';
import { NODE1_ID, TIMESTAMP_CHAIN_ID, npmStartFlags } from '../src/fixtures.js';
import { startNodeProcess, type NodeProcess } from '../src/process.js';

let dir: string;
test.before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cornice-e2e-ts-'));
});
test.after(() => rm(dir, { recursive: true, force: true }));

const payload = (i: number) => cb58Encode(sha256(new TextEncoder().encode(`payload ${i}`)));

async function proposeAndWait(node: NodeProcess, data: string, path = 'timestamp') {
  const r = await node.call(path, 'timestamp.proposeBlock', { data });
  assert.equal(r.result, { Success: true });
  for (let i = 0; i < 500; i++) {
    const b = await node.call(path, 'timestamp.getBlock', {});
    if (b.result?.data === data) return b.result;
    await new Promise((res) => setTimeout(res, 10));
  }
  throw new Error(`block with ${data} not accepted`);
}

test('a node started as `npm start` serves the timestamp chain; blocks are accepted and survive a restart', async () => {
  const args = [...npmStartFlags(), `--data-dir=${dir}/a`];
  const node = await startNodeProcess(args);
  let genesisId: string;
  try {
    assert.is(node.nodeId, NODE1_ID);
    const genesis = await node.call('timestamp', 'timestamp.getBlock', {});
    genesisId = genesis.result.id;
    assert.is(genesisId, 'zpeWnFqmbnoSw1DSNzJE22SfMBBXa6tqwHdniD6cYSsSEwDro');
    const b1 = await proposeAndWait(node, payload(1));
    assert.is(b1.parentID, genesisId);
    assert.type(b1.timestamp, 'string');
    const b2 = await proposeAndWait(node, payload(2), 'bc/timestamp');
    assert.is(b2.parentID, b1.id);
    const byId = await node.call(`bc/${TIMESTAMP_CHAIN_ID}`, 'timestamp.getBlock', { id: b1.id });
    assert.equal(byId.result, b1);
    assert.equal((await node.call('admin', 'admin.getBlockchainID', { alias: 'timestamp' })).result, { blockchainID: TIMESTAMP_CHAIN_ID });
    const metrics = await (await fetch(`${node.url}/ext/metrics`)).text();
    assert.match(metrics, new RegExp(`cornice_chain_blocks_accepted_total\\{chain="${TIMESTAMP_CHAIN_ID}"\\} 2`));
  } finally {
    assert.is(await node.stop(), 0);
  }
  const again = await startNodeProcess(args);
  try {
    const last = await again.call('timestamp', 'timestamp.getBlock', {});
    assert.is(last.result.data, payload(2));
    const b3 = await proposeAndWait(again, payload(3));
    assert.is(b3.parentID, last.result.id);
  } finally {
    await again.stop();
  }
});

test('admin.aliasChain makes /ext/bc/<alias> work', async () => {
  const node = await startNodeProcess([...npmStartFlags(), `--data-dir=${dir}/b`, '--db-type=memory']);
  try {
    assert.equal((await node.call('admin', 'admin.aliasChain', { chain: 'timestamp', alias: 'ts' })).result, { success: true });
    const viaAlias = await node.call('bc/ts', 'timestamp.getBlock', {});
    assert.is(viaAlias.result.id, 'zpeWnFqmbnoSw1DSNzJE22SfMBBXa6tqwHdniD6cYSsSEwDro');
    assert.equal((await node.call('admin', 'admin.getChainAliases', { chainID: TIMESTAMP_CHAIN_ID })).result, { Aliases: ['timestamp', 'ts'] });
  } finally {
    await node.stop();
  }
});

test('the IPC socket receives every accepted block, in order', async () => {
  const node = await startNodeProcess([...npmStartFlags(), `--data-dir=${dir}/c`, '--db-type=memory', '--api-ipcs-enabled', `--ipcs-path=${dir}`]);
  try {
    const { url } = (await node.call('ipcs', 'ipcs.publishBlockchain', { blockchainID: 'timestamp' })).result;
    assert.is(url, `ipc://${dir}/${TIMESTAMP_CHAIN_ID}.ipc`);
    assert.equal((await node.call('ipcs', 'ipcs.publishBlockchain', { blockchainID: TIMESTAMP_CHAIN_ID })).result, { url });
    const frames: Uint8Array[] = [];
    const ac = new AbortController();
    const reading = (async () => {
      for await (const f of readIpcFrames(url, { signal: ac.signal })) frames.push(f);
    })().catch(() => {});
    // Warm up until the publisher has registered the reader: a frame carrying our warm-up payload.
    const dataOf = (f: Uint8Array) => cb58Encode(f.subarray(32, 64));
    for (let i = 0; ; i++) {
      const data = payload(900 + i);
      await proposeAndWait(node, data);
      const seen = async () => {
        for (let t = 0; t < 20; t++) {
          if (frames.some((f) => dataOf(f) === data)) return true;
          await new Promise((r) => setTimeout(r, 10));
        }
        return false;
      };
      if (await seen()) break;
      assert.ok(i < 20, 'the reader never received a frame');
    }
    const start = frames.length;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await proposeAndWait(node, payload(100 + i))).id);
    for (let t = 0; t < 200 && frames.length < start + 5; t++) await new Promise((r) => setTimeout(r, 10));
    ac.abort();
    await reading;
    const got = frames.slice(start);
    assert.is(got.length, 5);
    assert.equal(got.map((f) => cb58Encode(sha256(f))), ids, 'each frame is the block whose ID is its hash, in acceptance order');
    assert.equal((await node.call('ipcs', 'ipcs.unpublishBlockchain', { blockchainID: 'timestamp' })).result, { success: true });
    const again = await node.call('ipcs', 'ipcs.unpublishBlockchain', { blockchainID: 'timestamp' });
    assert.is(again.error?.message, `blockchainID not publishing: ${TIMESTAMP_CHAIN_ID}`);
  } finally {
    await node.stop();
  }
});

test('without --api-ipcs-enabled there is no /ext/ipcs', async () => {
  const node = await startNodeProcess([...npmStartFlags(), `--data-dir=${dir}/d`, '--db-type=memory']);
  try {
    const res = await fetch(`${node.url}/ext/ipcs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.is(res.status, 404);
  } finally {
    await node.stop();
  }
});

test.run();
