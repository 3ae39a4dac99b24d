import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rpcSweep, sweepCases } from '../../src/testing/sweep.js';
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

test.run();
