import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { sweepCases } from '../../src/testing/sweep.js';
import { startTestNode, type TestNode } from '../helpers/node.js';

let node: TestNode;
test.before(async () => {
  node = await startTestNode();
});
test.after(() => node.close());

test('every registered method answers every malformed call with a clear error, never -32603', async () => {
  let calls = 0;
  const endpoints = node.routes.paths();
  assert.ok(endpoints.includes('admin') && endpoints.includes('keystore') && endpoints.includes('health'));
  for (const path of endpoints) {
    const route = node.routes.lookup(path)!;
    if (route.kind !== 'jsonrpc') continue;
    for (const service of route.endpoint.services) {
      for (const c of sweepCases(service.def)) {
        const r = await node.call(path, c.method, c.params);
        calls++;
        const what = `${c.method} ${c.label}`;
        if (!r.error) {
          assert.ok(c.mayPass, `${what} should have failed but returned ${JSON.stringify(r.result).slice(0, 100)}`);
          continue;
        }
        assert.is.not(r.error.code, -32603, what);
        assert.ok([-32600, -32602, -32000].includes(r.error.code), `${what}: code ${r.error.code}`);
        assert.ok(r.error.message.length > 0, what);
        if (c.expectField !== undefined) {
          assert.is(r.error.code, -32602, `${what}: ${r.error.message}`);
          assert.ok(r.error.message.startsWith(`${c.expectField}:`), `${what}: "${r.error.message}" should name ${c.expectField}`);
        }
      }
    }
  }
  assert.ok(calls > 200, `swept ${calls} calls`);
  // still serving
  assert.is((await node.call('admin', 'admin.getNodeID')).result.nodeID, node.nodeId);
});

test.run();
