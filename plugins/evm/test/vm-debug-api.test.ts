/**
 * The debug API switch of an EVM chain: on when the node runs with --evm-debug-api (the chain's
 * ChainContext.debugApis) or when the chain config's eth-apis lists a debug name; otherwise every
 * debug_ and trace_ method answers -32601 naming both. The network ID plays no part: a node on the
 * local network without the flag has it off.
 */
import { createServer } from 'node:http';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryStore, utf8Encode } from '@cornice/sdk';
import { testChainContext } from '@cornice/core/testing';
import { EvmVM } from '../src/chain-entry.js';
import { GENESIS } from './helpers.js';

type Reply = { result?: unknown; error?: { code: number; message: string } };

async function vmWith(o: { debugApis: boolean; config?: object }): Promise<EvmVM> {
  const vm = new EvmVM();
  await vm.initialize(testChainContext({ db: new MemoryStore(), debugApis: o.debugApis }), { genesis: GENESIS, ...(o.config ? { config: utf8Encode(JSON.stringify(o.config)) } : {}) });
  await vm.setState('normalOp');
  return vm;
}

async function callVm(vm: EvmVM, method: string, params: unknown[]): Promise<Reply> {
  const rpc = (await vm.createHandlers()).find((h) => h.path === 'rpc')!.http!;
  const server = createServer((req, res) => void rpc(req as never, res as never));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as { port: number }).port}/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
    return (await res.json()) as Reply;
  } finally {
    server.close();
  }
}

const CALL = { from: '0x8db97C7cEcE249c2b98bDC0226Cc4C2A57BF52FC', to: '0x0100000000000000000000000000000000000000', value: '0x1' };
const HASH = `0x${'11'.repeat(32)}`;

/** Each debug_/trace_ method with params it would accept, and what it answers when on. */
const METHODS: ReadonlyArray<[string, unknown[]]> = [
  ['debug_traceTransaction', [HASH]],
  ['debug_traceCall', [CALL, 'latest', { tracer: 'callTracer' }]],
  ['debug_traceBlockByNumber', ['0x0']],
  ['debug_traceBlockByHash', [HASH]],
  ['debug_traceBlock', ['0xc0']],
  ['debug_getRawTransaction', [HASH]],
  ['debug_getRawHeader', ['0x0']],
  ['debug_getRawBlock', ['0x0']],
  ['debug_getRawReceipts', ['0x0']],
  ['trace_transaction', [HASH]],
  ['trace_block', ['latest']],
];

test('off without the flag and without eth-apis (on the local network too): every debug_/trace_ method -32601 naming --evm-debug-api and the chain config key', async () => {
  const vm = await vmWith({ debugApis: false });
  try {
    for (const [method, params] of METHODS) {
      const r = await callVm(vm, method, params);
      assert.is(r.error?.code, -32601, method);
      assert.is(
        r.error!.message,
        `the method ${method} does not exist/is not available: the debug API is off on this chain (start the node with --evm-debug-api, or list "debug-tracer" in the chain config key "eth-apis")`,
      );
    }
  } finally {
    await vm.shutdown();
  }
});

test('on with ChainContext.debugApis (the node flag): the methods run (none answers -32601)', async () => {
  const vm = await vmWith({ debugApis: true });
  try {
    for (const [method, params] of METHODS) assert.is.not((await callVm(vm, method, params)).error?.code, -32601, method);
    const call = await callVm(vm, 'debug_traceCall', [CALL, 'latest', { tracer: 'callTracer' }]);
    assert.is((call.result as { type: string }).type, 'CALL');
    assert.match((await callVm(vm, 'debug_getRawHeader', ['0x0'])).result as string, /^0x[0-9a-f]+$/);
  } finally {
    await vm.shutdown();
  }
});

test('on by the chain config alone (eth-apis listing debug-tracer, internal-debug or debug); the flag wins over an eth-apis that lists none', async () => {
  for (const [debugApis, config, on] of [
    [false, { 'eth-apis': ['eth', 'debug-tracer'] }, true],
    [false, { 'eth-apis': ['eth', 'internal-debug'] }, true],
    [false, { 'eth-apis': ['eth', 'debug'] }, true],
    [false, { 'eth-apis': ['eth', 'internal-personal'] }, false],
    [true, { 'eth-apis': ['eth'] }, true],
  ] as const) {
    const vm = await vmWith({ debugApis, config });
    try {
      const code = (await callVm(vm, 'debug_getRawHeader', ['0x0'])).error?.code;
      if (on) assert.is(code, undefined, JSON.stringify({ debugApis, config }));
      else assert.is(code, -32601, JSON.stringify({ debugApis, config }));
    } finally {
      await vm.shutdown();
    }
  }
});

test.run();
