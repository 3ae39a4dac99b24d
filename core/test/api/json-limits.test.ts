/**
 * The JSON depth bound (issue 32, point 11): a linear scan before JSON.parse, strings skipped; a body
 * nested deeper than --http-max-json-depth gets -32700 from every core JSON-RPC endpoint, fast.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { bindService, defineService, method, p, result, silentLogger } from '@cornice/sdk';
import { jsonDepthExceeds, JsonLimitError, parseJsonBounded } from '../../src/api/json-limits.js';
import { JsonRpcEndpoint } from '../../src/api/jsonrpc.js';

test('depth counts arrays and objects, not brackets inside strings (escaped quotes included)', () => {
  assert.is(jsonDepthExceeds('[]', 1), false);
  assert.is(jsonDepthExceeds('[[]]', 1), true);
  assert.is(jsonDepthExceeds('{"a":[{"b":1}]}', 3), false);
  assert.is(jsonDepthExceeds('{"a":[{"b":1}]}', 2), true);
  assert.is(jsonDepthExceeds('["[[[[[[", "\\"[[[[[", "\\\\"]', 1), false);
  assert.is(jsonDepthExceeds('[1,[2],[3],[4]]', 2), false, 'siblings do not add up');
  assert.is(jsonDepthExceeds('"[[[[" ', 0), false);
});

test('parseJsonBounded: too deep and malformed are -32700, in bounded time', () => {
  const deep = `${'['.repeat(500_000)}${']'.repeat(500_000)}`;
  const t0 = performance.now();
  try {
    parseJsonBounded(deep, 64);
    assert.unreachable('refused');
  } catch (e) {
    assert.instance(e, JsonLimitError);
    assert.is((e as JsonLimitError).code, -32700);
    assert.match((e as Error).message, /nested deeper than 64 levels/);
  }
  assert.ok(performance.now() - t0 < 100, 'refused before parsing (one scan, stops early)');
  assert.throws(() => parseJsonBounded('{"a":', 64), (e: unknown) => e instanceof JsonLimitError && e.code === -32700);
  assert.equal(parseJsonBounded('{"a":[1,{"b":null}]}', 3), { a: [1, { b: null }] });
});

test('a JSON-RPC endpoint refuses a deep body with -32700 and serves one within the bound', async () => {
  const svc = defineService('t', { echo: method({ params: p.object({ v: p.string() }), result: result<string>() }) });
  const ep = new JsonRpcEndpoint([bindService(svc, { echo: async ({ v }) => v })], { maxBatchSize: 10, maxJsonDepth: 8, log: silentLogger });
  const nested = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
  const deep = JSON.parse((await ep.handle(`{"jsonrpc":"2.0","id":1,"method":"t.echo","params":{"v":${nested(20)}}}`))!);
  assert.is(deep.error.code, -32700);
  assert.is(deep.id, null);
  assert.match(deep.error.message, /^parse error: JSON nested deeper than 8 levels \(--http-max-json-depth\)$/);
  const ok = JSON.parse((await ep.handle('{"jsonrpc":"2.0","id":1,"method":"t.echo","params":{"v":"[[[[[[[[[[[[[[[["}}'))!);
  assert.is(ok.result, '[[[[[[[[[[[[[[[[');
  const shallow = JSON.parse((await ep.handle(`{"jsonrpc":"2.0","id":2,"method":"t.echo","params":{"v":${nested(5)}}}`))!);
  assert.is(shallow.error.code, -32602, 'within the bound: the params parser answers');
});

test.run();
