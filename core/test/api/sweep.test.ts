import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { maxSizeSweep, rpcSweep, sweepCases } from '../../src/testing/sweep.js';
import { startTestNode, type TestNode } from '../helpers/node.js';

let node: TestNode;
test.before(async () => {
  node = await startTestNode(['--api-ipcs-enabled']);
});
test.after(() => node.close());

test('every registered method answers every malformed call with a clear error, never -32603', async () => {
  let cases = 0;
  const endpoints = node.routes.paths();
  for (const expected of ['admin', 'keystore', 'health', 'ipcs']) assert.ok(endpoints.includes(expected), expected);
  for (const path of endpoints) {
    const route = node.routes.lookup(path)!;
    if (route.kind !== 'jsonrpc') continue;
    const defs = route.endpoint.services.map((s) => s.def);
    cases += defs.reduce((n, d) => n + sweepCases(d).length, 0);
    const problems = await rpcSweep(`${node.url}/ext/${path}`, defs);
    assert.equal(problems, [], `${path}:\n${problems.join('\n')}`);
  }
  assert.ok(cases > 200, `swept ${cases} calls`);
  // still serving
  assert.is((await node.call('admin', 'admin.getNodeID')).result.nodeID, node.nodeId);
});

test('every string field of every method at its largest: /ext/health keeps answering meanwhile (no call stalls the node)', async () => {
  let cases = 0;
  const health: number[] = [];
  const swept = new Set<string>();
  for (const path of node.routes.paths()) {
    const route = node.routes.lookup(path)!;
    if (route.kind !== 'jsonrpc') continue;
    const defs = route.endpoint.services.map((s) => s.def);
    const report = await maxSizeSweep(`${node.url}/ext/${path}`, defs, `${node.url}/ext/health`);
    assert.equal(report.problems, [], `${path}:\n${report.problems.join('\n')}`);
    cases += report.cases;
    health.push(...report.healthMs);
    for (const d of defs) swept.add(d.name);
  }
  for (const name of ['admin', 'keystore', 'ipcs']) assert.ok(swept.has(name), name);
  assert.ok(cases >= 15, `${cases} max-size calls`);
  assert.ok(health.length >= cases, `${health.length} health polls`);
  const worst = Math.max(...health);
  console.log(`  ${cases} max-size calls, ${health.length} health polls, slowest ${worst.toFixed(1)} ms`);
  // A stall is what this catches (a quadratic decode of a long string froze a node for a minute); the
  // bound is loose so that a busy machine (CI's 2 shared cores) cannot fail it.
  assert.ok(worst < 1_000, `a health poll took ${worst.toFixed(0)} ms`);
});

test.run();
