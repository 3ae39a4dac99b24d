/**
 * Faults with real node processes: a default-flag node that cannot reach its validators, and VM
 * plugins that spin, hang or fail to initialize. The node stays responsive, says what is wrong, and
 * the first SIGTERM ends it.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { vmIdFromName } from '@cornice/sdk';
import { postRpc } from '@cornice/core/testing';
import { npmStartFlags } from '../src/fixtures.js';
import { startNodeProcess, type NodeProcess } from '../src/process.js';

let dir: string;
test.before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cornice-e2e-faults-'));
});
test.after(() => rm(dir, { recursive: true, force: true }));

/** A plugin dir holding one VM named `faulty` whose behaviour is `mode`, and a genesis file running it. */
async function faultyPlugin(mode: 'spin' | 'hang' | 'initfail' | 'stuckshutdown'): Promise<string[]> {
  const plugins = join(dir, `plugins-${mode}`);
  await mkdir(plugins, { recursive: true });
  await writeFile(
    join(plugins, `${vmIdFromName('faulty').toString()}.mjs`),
    `import { Id, NotFoundError, defineVM } from '@cornice/sdk';
const MODE = ${JSON.stringify(mode)};
const block = (height, parentId) => ({
  id: Id.fromBytes(new Uint8Array(32).fill(height + 1)), parentId, height, timestamp: height, bytes: Uint8Array.of(height),
  verify: async () => { if (MODE === 'hang') await new Promise(() => {}); }, accept: async () => {}, reject: async () => {},
});
const GENESIS = block(0, Id.empty);
class FaultyVM {
  #events = 0;
  async initialize() {
    setInterval(() => {}, 1000); // never cleared: must not keep a stopped node alive
    if (MODE === 'initfail') throw new Error('cannot open my files');
  }
  async setState() {}
  async buildBlock() {
    if (MODE === 'spin') throw new Error('mempool is corrupt');
    return block(1, GENESIS.id);
  }
  async parseBlock() { throw new Error('unparseable'); }
  async getBlock(id) { if (id.equals(GENESIS.id)) return GENESIS; throw new NotFoundError('no such block'); }
  async setPreference() {}
  async lastAccepted() { return GENESIS.id; }
  async getBlockIdAtHeight(h) { if (h === 0) return GENESIS.id; throw new NotFoundError('no such height'); }
  waitForEvent(signal) {
    if (MODE === 'spin' || this.#events++ === 0) return Promise.resolve('pendingTxs');
    return new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted'))));
  }
  async createHandlers() { return []; }
  async shutdown() { if (MODE === 'stuckshutdown') await new Promise(() => {}); }
}
export const vmFactory = defineVM({ name: 'faulty', version: '1.0.0', create: () => new FaultyVM() });
`,
  );
  const genesis = join(dir, 'genesis-faulty.json');
  await writeFile(genesis, JSON.stringify({ chains: [{ name: 'Faulty', vm: 'faulty', aliases: ['faulty'] }] }));
  return [...npmStartFlags(), `--data-dir=${dir}/${mode}`, '--db-type=memory', `--plugin-dir=${plugins}`, `--genesis-file=${genesis}`];
}

async function waitForLog(node: NodeProcess, match: (l: Record<string, unknown>) => boolean, what: string, maxMs = 10_000): Promise<Record<string, unknown>> {
  const started = Date.now();
  for (;;) {
    const line = node.logs.find(match);
    if (line) return line;
    if (Date.now() - started > maxMs) throw new Error(`no log line: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('default flags, a proposeBlock and no validator reachable: no polls, one warning with the reason, health 503 saying why', async () => {
  const flags = npmStartFlags().filter((f) => !f.startsWith('--sybil-protection-enabled'));
  const node = await startNodeProcess([...flags, `--data-dir=${dir}/default`, '--db-type=memory']);
  try {
    const r = await node.call('timestamp', 'timestamp.proposeBlock', { data: 'SkB92YpWm4Q2iPnLGCuDPZPgUQMxajqQQuz91oi3xD984f8r' });
    assert.equal(r.result, { Success: true });
    const wait = await waitForLog(node, (l) => l.msg === 'waiting for validators' && l.chain === 'timestamp', 'waiting for validators');
    assert.is(wait.level, 'warn');
    assert.is(wait.chain, 'timestamp');
    assert.is(wait.detail, '1 of 5 connected, 20% of stake, need 75%');
    const res = await fetch(`${node.url}/ext/health`);
    assert.is(res.status, 503);
    const report = (await res.json()) as { checks: Record<string, { error?: { message: string }; message: { processing: number } }> };
    assert.is(report.checks['chain timestamp']!.error!.message, 'waiting for validators: 1 of 5 connected, 20% of stake, need 75%');
    assert.is(report.checks['chain timestamp']!.message.processing, 1);
    const metrics = await (await fetch(`${node.url}/ext/metrics`)).text();
    assert.match(metrics, /cornice_chain_polls\{chain="2SMYrx4Dj6QqCEA3WjnUTYEFSnpqVTwyV3GPNgQqQZbBbFgoJX"\} 0\n/);
    assert.match(metrics, /cornice_chain_waiting_for_validators\{chain="[^"]+"\} 1\n/);
    assert.is(node.logs.filter((l) => l.msg === 'waiting for validators' && l.chain === 'timestamp').length, 1, 'rate-limited');
  } finally {
    assert.is(await node.stop(), 0);
  }
});

test('a plugin whose buildBlock always throws while waitForEvent always has work: backoff, a responsive node, a clean SIGTERM', async () => {
  const node = await startNodeProcess(await faultyPlugin('spin'));
  try {
    const failures = [];
    for (let i = 0; i < 4; i++) failures.push(await waitForLog(node, (l) => l.msg === 'buildBlock failed' && l.failures === i + 1, `failure ${i + 1}`));
    assert.equal(failures.map((f) => f.retryInMs), [100, 200, 400, 800]);
    assert.is(failures[0]!.level, 'warn');
    assert.is(failures[0]!.chain, 'faulty');
    assert.match(String(failures[0]!.error), /mempool is corrupt/);
    const t0 = performance.now();
    assert.is((await node.call('admin', 'admin.getNodeID')).result.nodeID, node.nodeId);
    assert.ok(performance.now() - t0 < 1_000, 'the API answers');
  } finally {
    assert.is(await node.stop(), 0, 'the first SIGTERM ends the process cleanly');
  }
});

test('a plugin whose verify never settles and that leaves an interval running: the chain halts, health says why, SIGTERM still ends the process', async () => {
  const node = await startNodeProcess([...(await faultyPlugin('hang')), '--vm-call-timeout=300ms']);
  try {
    const halted = await waitForLog(node, (l) => l.msg === 'chain halted', 'chain halted');
    assert.is(halted.reason, 'block.verify did not settle within 300 ms');
    const health = (await postRpc(`${node.url}/ext/health`, 'health.getLiveness')).result;
    assert.is(health.checks['chain faulty'].error.message, 'halted: block.verify did not settle within 300 ms');
    assert.is((await node.call('admin', 'admin.getNodeID')).result.nodeID, node.nodeId);
  } finally {
    assert.is(await node.stop(), 0);
  }
});

test('a plugin whose initialize fails (leaving an interval behind): its chain is not run, the error is logged, the node serves and SIGTERM ends it', async () => {
  const node = await startNodeProcess(await faultyPlugin('initfail'));
  try {
    const failed = await waitForLog(node, (l) => l.msg === 'chain not run: its creation failed', 'creation failed');
    assert.is(failed.level, 'error');
    assert.is(failed.chain, 'Faulty');
    assert.match(String(failed.error), /chain "Faulty" .* failed to initialize: cannot open my files/);
    assert.is((await node.call('admin', 'admin.getNodeID')).result.nodeID, node.nodeId);
    assert.is((await fetch(`${node.url}/ext/bc/faulty`, { method: 'POST', body: '{}' })).status, 404);
  } finally {
    assert.is(await node.stop(), 0);
  }
});

test('a plugin whose shutdown never settles: the stop gives up after --shutdown-timeout and the process exits 1', async () => {
  const node = await startNodeProcess([...(await faultyPlugin('stuckshutdown')), '--shutdown-timeout=500ms', '--vm-call-timeout=1m']);
  const t0 = performance.now();
  assert.is(await node.stop(), 1);
  assert.ok(performance.now() - t0 < 5_000, 'it did not wait for the VM call deadline');
  assert.ok(node.logs.some((l) => l.msg === 'shutdown did not finish in time; exiting' && l.timeoutMs === 500));
});

test.run();
