import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  MAX_WIRE_BYTES,
  RpcCallError,
  bindService,
  cb58Decode,
  cb58Encode,
  createClient,
  defineService,
  httpTransport,
  method,
  p,
  result,
  silentLogger,
  vmIdFromName,
  type Id,
} from '@cornice/sdk';
import { JsonRpcEndpoint } from '../../src/api/jsonrpc.js';
import { rpc, startTestNode, type TestNode } from '../helpers/node.js';

interface Blob {
  data: Uint8Array;
  raw: Buffer;
  nested: { list: Uint8Array[] };
  id: Id;
  n: bigint;
}
const blobApi = defineService('blob', {
  get: method({ params: p.none(), result: result<Blob>() }),
  tooLong: method({ params: p.none(), result: result<{ data: Uint8Array }>() }),
  cyclic: method({ params: p.none(), result: result<Record<string, unknown>>() }),
});
const bytes = Uint8Array.from([1, 2, 3, 0, 255]);

let node: TestNode;
let url: string;
test.before(async () => {
  node = await startTestNode();
  node.routes.mount('blob', {
    kind: 'jsonrpc',
    endpoint: new JsonRpcEndpoint(
      [
        bindService(blobApi, {
          get: async () => ({ data: bytes, raw: Buffer.from(bytes), nested: { list: [bytes, new Uint8Array(32)] }, id: vmIdFromName('blob'), n: 2n ** 64n - 1n }),
          tooLong: async () => ({ data: new Uint8Array(MAX_WIRE_BYTES + 1) }),
          cyclic: async () => {
            const o: Record<string, unknown> = {};
            o.self = o;
            return o;
          },
        }),
      ],
      { maxBatchSize: 10, log: silentLogger },
    ),
  });
  url = `${node.url}/ext/blob`;
});
test.after(() => node.close());

test('Uint8Array and Buffer in a result are cb58 strings, as the typed client declares', async () => {
  const cb58 = cb58Encode(bytes);
  const r = await node.call('blob', 'blob.get');
  assert.equal(r.result, {
    data: cb58,
    raw: cb58,
    nested: { list: [cb58, cb58Encode(new Uint8Array(32))] },
    id: vmIdFromName('blob').toString(),
    n: '18446744073709551615',
  });
  const client = createClient(blobApi, httpTransport(url));
  const got = await client.get();
  const data: string = got.data; // Wire<Uint8Array> is string
  assert.equal(cb58Decode(data), bytes);
  assert.equal(cb58Decode(got.nested.list[1]!), new Uint8Array(32));
});

test('a result that cannot be encoded is that request’s error; the others in the batch are answered', async () => {
  const reply = (await rpc(url, [
    { jsonrpc: '2.0', id: 1, method: 'blob.tooLong' },
    { jsonrpc: '2.0', id: 2, method: 'blob.get' },
    { jsonrpc: '2.0', id: 3, method: 'blob.cyclic' },
  ])) as unknown as Array<{ id: number; result?: unknown; error?: { code: number; message: string } }>;
  assert.is(reply.length, 3);
  assert.is(reply[0]!.id, 1);
  assert.is(reply[0]!.error?.code, -32000);
  assert.match(reply[0]!.error!.message, /16385 bytes is too long to send as cb58 \(at most 16384\)/);
  assert.ok(reply[1]!.result);
  assert.equal(reply[2], { jsonrpc: '2.0', id: 3, error: { code: -32603, message: 'internal error' } });
  try {
    await createClient(blobApi, httpTransport(url)).tooLong();
    assert.unreachable();
  } catch (e) {
    assert.instance(e, RpcCallError);
    assert.is((e as RpcCallError).rpcCode, -32000);
  }
  // the node keeps serving
  assert.is((await node.call('admin', 'admin.getNodeID')).result?.nodeID, node.nodeId);
});

test.run();
