/**
 * The JSON-RPC front end's bounds from the chain config (coreth's key names): batch-request-limit,
 * batch-response-max-size, http-body-limit; bad values fail the chain's start naming the key.
 */
import { createServer } from 'node:http';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { hasErrorCode, MemoryStore, utf8Encode } from '@cornice/sdk';
import { testChainContext } from '@cornice/core/testing';
import { EvmVM } from '../src/chain-entry.js';
import { parseChainConfig } from '../src/chain-config.js';
import { GENESIS } from './helpers.js';

test('parseChainConfig reads batch-request-limit, batch-response-max-size and http-body-limit into the front end\'s bounds', () => {
  const { options, ignored } = parseChainConfig(utf8Encode(JSON.stringify({ 'batch-request-limit': 5, 'batch-response-max-size': 100_000, 'http-body-limit': 2048, 'rpc-gas-cap': 30_000 })));
  assert.equal(options, { rpcLimits: { maxBatchItems: 5, maxResponseChars: 100_000, maxBodyBytes: 2048 }, rpcGasCap: 30_000n });
  assert.equal(ignored, []);
});

test('bad values fail the chain\'s start naming the key', async () => {
  for (const [config, want] of [
    [{ 'batch-request-limit': 0 }, /^invalid chain config file: batch-request-limit: must be a whole number >= 1$/],
    [{ 'batch-response-max-size': '25MB' }, /^invalid chain config file: batch-response-max-size: must be a whole number >= 1024$/],
    [{ 'http-body-limit': -1 }, /^invalid chain config file: http-body-limit: must be a whole number >= 1024$/],
  ] as const) {
    const err = await new EvmVM().initialize(testChainContext(), { genesis: GENESIS, config: utf8Encode(JSON.stringify(config)) }).then(() => undefined, (e: unknown) => e);
    assert.ok(hasErrorCode(err, 'InvalidConfig'), String(err));
    assert.match((err as Error).message, want);
  }
  const err = await new EvmVM({ rpcCallConcurrency: 0 }).initialize(testChainContext(), { genesis: GENESIS }).then(() => undefined, (e: unknown) => e);
  assert.match((err as Error).message, /invalid chain option rpcCallConcurrency: must be a whole number >= 1/);
});

test("a chain's handlers follow its config's bounds", async () => {
  const vm = new EvmVM();
  await vm.initialize(testChainContext({ db: new MemoryStore() }), { genesis: GENESIS, config: utf8Encode(JSON.stringify({ 'batch-request-limit': 2, 'http-body-limit': 2048 })) });
  await vm.setState('normalOp');
  const handlers = await vm.createHandlers();
  const http = handlers.find((h) => h.path === 'rpc')!.http!;
  const server = createServer((req, res) => void http(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
  const post = async (body: string) => {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    return { status: res.status, json: (await res.json()) as any };
  };
  try {
    const one = { jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] };
    assert.is((await post(JSON.stringify([one, one]))).json.length, 2);
    assert.equal((await post(JSON.stringify([one, one, one]))).json, [{ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'batch too large' } }]);
    const big = await post(JSON.stringify({ ...one, params: ['x'.repeat(3000)] }));
    assert.is(big.status, 413);
    assert.match(big.json.error.message, /more than 2048 bytes/);
  } finally {
    server.close();
    await vm.shutdown();
  }
});

test.run();
