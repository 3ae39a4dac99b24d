import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { maxSizeCases, sweepCases } from '../../src/testing/sweep.js';
import { platformApiWithSymbol } from '../../src/platform/api.js';
import { PASSWORD, harness } from './fake-backend.js';

test('every platform method (aliases included) answers every malformed call with -32602 naming the field, never -32603', async () => {
  const h = harness();
  await h.backend.keystore.createUser('bob', PASSWORD);
  const def = platformApiWithSymbol('AVA');
  const cases = sweepCases(def);
  const problems: string[] = [];
  for (const c of cases) {
    const r = await h.endpoint.handle(JSON.stringify({ jsonrpc: '2.0', id: 1, method: c.method, params: c.params }));
    const reply = JSON.parse(r!) as { result?: unknown; error?: { code: number; message: string } };
    const what = `${c.method} ${c.label}`;
    if (!reply.error) {
      if (!c.mayPass) problems.push(`${what}: succeeded`);
      continue;
    }
    const { code, message } = reply.error;
    if (code === -32603) problems.push(`${what}: -32603`);
    else if (c.expectField !== undefined && (code !== -32602 || !message.startsWith(`${c.expectField}:`))) problems.push(`${what}: ${code} ${message}`);
  }
  assert.equal(problems, []);
  assert.ok(cases.length > 400, `${cases.length} cases`);
  assert.equal(h.backend.issued, []);
});

test('every string field at its largest is refused quickly (bounded before decoding)', async () => {
  const h = harness();
  const cases = maxSizeCases(platformApiWithSymbol('AVA'));
  let worst = 0;
  for (const c of cases) {
    const t0 = performance.now();
    const r = JSON.parse((await h.endpoint.handle(JSON.stringify({ jsonrpc: '2.0', id: 1, method: c.method, params: c.params })))!);
    worst = Math.max(worst, performance.now() - t0);
    assert.is(r.error?.code, -32602, `${c.method} ${c.label}: ${JSON.stringify(r.error ?? r.result).slice(0, 200)}`);
  }
  assert.ok(cases.length > 30, `${cases.length} cases`);
  assert.ok(worst < 1000, `slowest ${worst.toFixed(0)} ms`);
});

test.run();
