import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Id, bindService, defineService, method, p, result, sha256, silentLogger } from '@cornice/sdk';
import { JsonRpcEndpoint } from '../../src/api/jsonrpc.js';
import { nodeIdFromCert } from '../../src/staking/cert.js';
import { rpc, startTestNode, type TestNode } from '../helpers/node.js';

let node: TestNode;
const chainId = Id.fromBytes(sha256(new TextEncoder().encode('test chain')));

test.before(async () => {
  node = await startTestNode();
  // A stand-in chain endpoint, as the chain manager will mount them.
  const echo = defineService('echo', { hello: method({ params: p.none(), result: result<{ hi: string }>() }) });
  node.chains.register(chainId, ['T']);
  node.routes.mount(`bc/${chainId}`, {
    kind: 'jsonrpc',
    endpoint: new JsonRpcEndpoint([bindService(echo, { hello: async () => ({ hi: 'there' }) })], { maxBatchSize: 10, log: silentLogger }),
  });
});
test.after(() => node.close());

const err = async (method: string, params: unknown) => {
  const r = await node.call('admin', method, params);
  assert.ok(r.error, `${method} ${JSON.stringify(params)} should fail`);
  assert.is.not(r.error!.code, -32603);
  return r.error!;
};

test('getNodeID is the hash of the staking certificate', async () => {
  const r = await node.call('admin', 'admin.getNodeID');
  const pem = await readFile(node.config.stakingTlsCertFile, 'utf8');
  const der = Buffer.from(pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');
  assert.is(r.result.nodeID, nodeIdFromCert(der).toString());
  assert.match(r.result.nodeID, /^[1-9A-HJ-NP-Za-km-z]{20,40}$/);
});

test('getNetworkID answers the configured network as a decimal string, getNetworkName its name', async () => {
  assert.equal((await node.call('admin', 'admin.getNetworkID')).result, { networkID: '12345' });
  assert.equal((await node.call('admin', 'admin.getNetworkName')).result, { networkName: 'local' });
  // Only the local network has a built-in genesis: another network brings its own.
  const genesis = join(node.dataDir, 'genesis-99.json');
  await writeFile(genesis, JSON.stringify({ chains: [], validators: [{ nodeID: node.nodeId, weight: '1' }] }));
  const other = await startTestNode(['--network-id=network-99', `--genesis-file=${genesis}`]);
  try {
    assert.equal((await other.call('admin', 'admin.getNetworkID')).result, { networkID: '99' });
    assert.equal((await other.call('admin', 'admin.getNetworkName')).result, { networkName: 'network-99' });
  } finally {
    await other.close();
  }
});

test('getNodeVersion is cornice/<version of @cornice/core>', async () => {
  const { version } = JSON.parse(await readFile(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
  assert.equal((await node.call('admin', 'admin.getNodeVersion')).result, { version: `cornice/${version}` });
});

test('peers is empty on a node with no other nodes', async () => {
  assert.equal((await node.call('admin', 'admin.peers')).result, { peers: [], details: [] });
});

test('no-param methods ignore unknown fields and refuse wrong shapes', async () => {
  for (const m of ['admin.getNodeID', 'admin.getNetworkID', 'admin.getNodeVersion', 'admin.getNetworkName', 'admin.peers', 'admin.stopCPUProfiler', 'admin.stacktrace']) {
    const [r, bare] = [await node.call('admin', m, { bogus: 1 }), await node.call('admin', m)];
    if (m === 'admin.stacktrace') assert.type(r.result?.stacktrace, 'string', m);
    else assert.equal([r.result, r.error?.message], [bare.result, bare.error?.message], m); // stopCPUProfiler: "cpu profiler not running" both times
    assert.is((await err(m, 'str')).code, -32600);
    assert.is((await err(m, [1, 2])).code, -32602);
  }
});

test('alias: /ext/<alias> serves the endpoint, the original keeps working', async () => {
  assert.equal((await node.call('admin', 'admin.alias', { endpoint: 'admin', alias: 'adm' })).result, { success: true });
  const r = await rpc(`${node.url}/ext/adm`, { jsonrpc: '2.0', id: 1, method: 'admin.getNodeID' });
  assert.is(r.result.nodeID, node.nodeId);
  assert.ok((await node.call('admin', 'admin.getNodeID')).result);
  // aliases of chain endpoints follow sub-paths and chain aliases
  await node.call('admin', 'admin.alias', { endpoint: 'bc/T', alias: 'tee/v1' });
  const t = await rpc(`${node.url}/ext/tee/v1`, { jsonrpc: '2.0', id: 1, method: 'echo.hello' });
  assert.equal(t.result, { hi: 'there' });
});

test('alias: invalid inputs', async () => {
  assert.match((await err('admin.alias', { endpoint: 'nothing', alias: 'x1' })).message, /\/ext\/nothing doesn't exist/);
  assert.match((await err('admin.alias', { endpoint: 'admin', alias: 'keystore' })).message, /\/ext\/keystore is already in use/);
  assert.match((await err('admin.alias', { endpoint: 'admin', alias: 'adm' })).message, /already in use/);
  assert.match((await err('admin.alias', { endpoint: 'admin', alias: '../etc' })).message, /alias must be/);
  assert.match((await err('admin.alias', { endpoint: 'admin', alias: 'a b' })).message, /alias must be/);
  const missing = await err('admin.alias', { endpoint: 'admin' });
  assert.is(missing.code, -32602);
  assert.match(missing.message, /^alias: missing required field/);
  assert.match((await err('admin.alias', { endpoint: 'admin', alias: '' })).message, /alias: must not be empty/);
  assert.match((await err('admin.alias', { endpoint: 5, alias: 'x' })).message, /endpoint: expected a string but got number/);
});

test('aliasChain: /ext/bc/<alias> works, getBlockchainID and getChainAliases see it', async () => {
  assert.equal((await node.call('admin', 'admin.aliasChain', { chain: 'T', alias: 'tchain' })).result, { success: true });
  const r = await rpc(`${node.url}/ext/bc/tchain`, { jsonrpc: '2.0', id: 1, method: 'echo.hello' });
  assert.equal(r.result, { hi: 'there' });
  const byId = await rpc(`${node.url}/ext/bc/${chainId}`, { jsonrpc: '2.0', id: 1, method: 'echo.hello' });
  assert.equal(byId.result, { hi: 'there' });
  assert.equal((await node.call('admin', 'admin.getBlockchainID', { alias: 'tchain' })).result, { blockchainID: chainId.toString() });
  assert.equal((await node.call('admin', 'admin.getChainAliases', { chainID: chainId.toString() })).result, { Aliases: ['T', 'tchain'] });
});

test('aliasChain / getBlockchainID / getChainAliases: invalid inputs', async () => {
  assert.is((await err('admin.aliasChain', { chain: 'nope', alias: 'z' })).message, 'there is no ID with alias nope');
  assert.match((await err('admin.aliasChain', { chain: 'T', alias: 'tchain' })).message, /alias tchain is already used/);
  assert.match((await err('admin.aliasChain', { chain: 'T', alias: 'a/b' })).message, /alias must be/);
  assert.is((await err('admin.getBlockchainID', { alias: 'nope' })).message, 'there is no ID with alias nope');
  assert.is((await err('admin.getBlockchainID', {})).code, -32602);
  assert.match((await err('admin.getChainAliases', { chainID: 'notcb58!' })).message, /chainID: Invalid base58 digit/);
  assert.match((await err('admin.getChainAliases', { chainID: Id.fromBytes(new Uint8Array(32).fill(7)).toString() })).message, /no chain with ID/);
});

test('CPU profiler: start, stop writes a V8 profile; double start and stray stop refused', async () => {
  assert.equal((await node.call('admin', 'admin.startCPUProfiler', { fileName: 'cpu.cpuprofile' })).result, { success: true });
  assert.is((await err('admin.startCPUProfiler', { fileName: 'other.cpuprofile' })).message, 'cpu profiler already running');
  assert.equal((await node.call('admin', 'admin.stopCPUProfiler')).result, { success: true });
  const profile = JSON.parse(await readFile(join(node.config.profileDir, 'cpu.cpuprofile'), 'utf8'));
  assert.ok(Array.isArray(profile.nodes) && profile.nodes.length > 0);
  assert.is((await err('admin.stopCPUProfiler', {})).message, 'cpu profiler not running');
  // the reference spelled the field `filename`; names match case-insensitively
  assert.equal((await node.call('admin', 'admin.startCPUProfiler', { filename: 'cpu2.cpuprofile' })).result, { success: true });
  await node.call('admin', 'admin.stopCPUProfiler');
});

test('memoryProfile writes a sampling heap profile; a second one meanwhile is refused; snapshots need the flag (issue 32, point 8)', async () => {
  const first = node.call('admin', 'admin.memoryProfile', { fileName: 'heap.heapprofile', durationMs: 300 });
  await new Promise((r) => setTimeout(r, 50));
  const second = await err('admin.memoryProfile', { fileName: 'other.heapprofile', durationMs: 100 });
  assert.is(second.code, -32000);
  assert.match(second.message, /^a memory profile is already being taken \(one at a time\)/);
  assert.equal((await first).result, { success: true });
  const profile = JSON.parse(await readFile(join(node.config.profileDir, 'heap.heapprofile'), 'utf8'));
  assert.ok(profile.head && Array.isArray(profile.samples), 'a .heapprofile: a call tree and its samples');
  const snapshot = await err('admin.memoryProfile', { fileName: 'heap.heapsnapshot', kind: 'snapshot' });
  assert.match(snapshot.message, /full heap snapshots are off: .*--profile-heap-snapshot-enabled/);
  assert.equal(snapshot.data, { code: 'Disabled' });
  assert.match((await err('admin.memoryProfile', { fileName: 'x', durationMs: 60_001 })).message, /^durationMs: must be at most 60000/);
  assert.match((await err('admin.memoryProfile', { fileName: 'x', kind: 'full' })).message, /^kind: must be one of sampling, snapshot/);
});

test('memoryProfile kind snapshot writes a heap snapshot with --profile-heap-snapshot-enabled', async () => {
  const other = await startTestNode(['--profile-heap-snapshot-enabled']);
  try {
    assert.equal((await other.call('admin', 'admin.memoryProfile', { fileName: 'heap.heapsnapshot', kind: 'snapshot' })).result, { success: true });
    const heap = await readFile(join(other.config.profileDir, 'heap.heapsnapshot'), 'utf8');
    assert.ok(JSON.parse(heap).snapshot.meta);
  } finally {
    await other.close();
  }
});

test('lockProfile writes the event-loop report', async () => {
  assert.equal((await node.call('admin', 'admin.lockProfile', { fileName: 'lock.json' })).result, { success: true });
  const lock = JSON.parse(await readFile(join(node.config.profileDir, 'lock.json'), 'utf8'));
  assert.type(lock.eventLoopDelayMs.p99, 'number');
  assert.type(lock.activeResources, 'object');
  assert.is((await stat(join(node.config.profileDir, 'lock.json'))).mode & 0o777, 0o600);
});

test('--profile-max-files bounds the profiles kept: the oldest is replaced', async () => {
  const n = await startTestNode(['--profile-max-files=2']);
  try {
    for (const fileName of ['a.json', 'b.json', 'c.json']) {
      assert.equal((await n.call('admin', 'admin.lockProfile', { fileName })).result, { success: true });
    }
    await n.call('admin', 'admin.memoryProfile', { fileName: 'd.heapsnapshot' });
    const kept = (await readdir(n.config.profileDir)).filter((f) => !f.startsWith('.')).sort();
    assert.equal(kept, ['c.json', 'd.heapsnapshot']);
  } finally {
    await n.close();
  }
});

test('profile file names cannot leave the profile directory', async () => {
  for (const m of ['admin.startCPUProfiler', 'admin.memoryProfile', 'admin.lockProfile']) {
    for (const fileName of ['../evil', '/etc/passwd', 'a/b', '..', '.', '', 'x\u0000y', 'a\\b', 'x'.repeat(256)]) {
      const e = await err(m, { fileName });
      assert.is(e.code, -32602, `${m} ${JSON.stringify(fileName)}`);
      assert.match(e.message, /^fileName: /);
    }
    assert.is((await err(m, {})).code, -32602);
    assert.is((await err(m, { fileName: 3 })).code, -32602);
  }
});

test('stacktrace returns the JavaScript and native stacks', async () => {
  const r = await node.call('admin', 'admin.stacktrace');
  assert.match(r.result.stacktrace, /JavaScript stack/);
  assert.match(r.result.stacktrace, /Native stack/);
});

test.run();
