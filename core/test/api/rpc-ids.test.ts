import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rawIds } from '../../src/api/raw-ids.js';
import { post, startTestNode, type TestNode } from '../helpers/node.js';

let node: TestNode;
test.before(async () => {
  node = await startTestNode();
});
test.after(() => node.close());

/** The raw text of the reply's id member (the reply is written `{"jsonrpc":"2.0","id":<id>,...`). */
function idText(reply: string): string {
  const m = /^\{"jsonrpc":"2\.0","id":(.*?),"(result|error)":/.exec(reply);
  assert.ok(m, `reply starts with jsonrpc and id: ${reply.slice(0, 120)}`);
  return m![1]!;
}

const call = (idToken: string, method = 'admin.getNodeID') => `{"jsonrpc":"2.0","id":${idToken},"method":"${method}"}`;

const ids = [
  '12345678901234567890',
  '1e400',
  '-1e400',
  '1.50',
  '-0',
  '1E+2',
  '0.1000000000000000055511151231257827',
  '7',
  '"plain"',
  '"a\\u0041\\"b\\\\c\\n"',
  '"\\u00e9t\\u00e9 \\ud83d\\ude00"',
  '"id"',
  'null',
];

test('ids are echoed exactly as sent, numbers JSON.parse would alter included', async () => {
  for (const id of ids) {
    const r = await post(`${node.url}/ext/admin`, call(id));
    assert.is(r.status, 200);
    assert.is(idText(r.text), id, id);
    assert.ok(JSON.parse(r.text).result.nodeID, id);
  }
});

test('errors echo the exact id too (unknown method, bad params, bad envelope)', async () => {
  const admin = `${node.url}/ext/admin`;
  let r = await post(admin, call('12345678901234567890', 'admin.nope'));
  assert.is(idText(r.text), '12345678901234567890');
  assert.is(JSON.parse(r.text).error.code, -32601);
  r = await post(admin, '{"jsonrpc":"2.0","id":1e400,"method":"admin.getBlockchainID","params":{}}');
  assert.is(idText(r.text), '1e400');
  assert.is(JSON.parse(r.text).error.code, -32602);
  r = await post(admin, '{"jsonrpc":"1.0","id":1.50,"method":"admin.getNodeID"}');
  assert.is(idText(r.text), '1.50');
  assert.is(JSON.parse(r.text).error.code, -32600);
});

test('whitespace, key order, nested "id" members and strings holding "id" do not confuse the echo', async () => {
  const body = ` {
    "params" : { "id" : 5, "x": ["\\"id\\": 6", {"id": 7}] } ,
    "method" :"admin.getNetworkID", "jsonrpc": "2.0",
    "\\u0069d"  :  12345678901234567891
  } `;
  const r = await post(`${node.url}/ext/admin`, body);
  assert.is(idText(r.text), '12345678901234567891');
  assert.equal(JSON.parse(r.text).result, { networkID: '12345' }, 'params with unknown fields are served (the fields ignored)');
});

test('a repeated id member: the last one wins, as JSON.parse decides', async () => {
  const r = await post(`${node.url}/ext/admin`, '{"jsonrpc":"2.0","id":1,"method":"admin.getNodeID","id":98765432109876543210}');
  assert.is(idText(r.text), '98765432109876543210');
});

test('batches: every reply carries its own exact id; notifications and non-objects handled', async () => {
  const body = `[${call('12345678901234567890')}, ${call('1e400', 'admin.nope')}, {"jsonrpc":"2.0","method":"admin.getNodeID"}, 5, ${call('"x\\ty"')}, ${call('-0')}, ${call('null')}]`;
  const r = await post(`${node.url}/ext/admin`, body);
  assert.is(r.status, 200);
  const replies = JSON.parse(r.text) as unknown[];
  assert.is(replies.length, 6, 'the notification gets no reply');
  // Split the batch text into its reply objects by their ids, in order.
  const found = [...r.text.matchAll(/\{"jsonrpc":"2\.0","id":(.*?),"(?:result|error)":/g)].map((m) => m[1]);
  assert.equal(found, ['12345678901234567890', '1e400', 'null', '"x\\ty"', '-0', 'null']);
  assert.is((replies[2] as any).error.code, -32600, 'the bare number is refused');
});

test('a number id longer than 256 characters is refused like a long string id', async () => {
  const r = await post(`${node.url}/ext/admin`, call('1'.repeat(300)));
  const body = JSON.parse(r.text);
  assert.is(body.error.code, -32600);
  assert.match(body.error.message, /id is too long/);
  assert.is(body.id, null);
});

test('rawIds: source text per request, robust to strings, brackets and nesting', () => {
  assert.equal(rawIds('{}'), [undefined]);
  assert.equal(rawIds(' { "id" : 1.0 } '), ['1.0']);
  assert.equal(rawIds('{"a":"}\\"{[","id":"x"}'), ['"x"']);
  assert.equal(rawIds('{"a":{"id":1,"b":[{"id":2}]},"c":"\\\\","id":3e9}'), ['3e9']);
  assert.equal(rawIds('[]'), []);
  assert.equal(rawIds('[1, "id", [ {"id": 9} ], {"id": true}, {}, {"id":-0}]'), [undefined, undefined, undefined, 'true', undefined, '-0']);
  assert.equal(rawIds('"id"'), []);
  assert.equal(rawIds('null'), []);
  const deep = `{"params":${'['.repeat(100_000)}${']'.repeat(100_000)},"id":5}`;
  assert.equal(rawIds(deep), ['5'], 'deep nesting is skipped without recursion');
});

test.run();
