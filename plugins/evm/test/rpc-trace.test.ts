/**
 * trace_transaction and trace_block over the fake backend: flatCallTracer with parity's conventions
 * reaches the chain, a block's lists are joined, unknown and pending answer [] (as anvil), invalid
 * input is -32602, they share the debug_trace lane and the debug API switch.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { joinLists, PARITY_FLAT_TRACE } from '../src/rpc/trace.js';
import { filled, hex, makeTx, pastTheTraceLane, serve, type Served } from './rpc-fake-backend.js';

let s: Served;
test.before(async () => {
  s = await serve({ debugApi: true, limits: { traceLane: { concurrency: 1, perConnectionQueue: 1, queue: 1 } } });
});
test.after(async () => {
  await s.close();
});

const FLAT = '[{"action":{"callType":"call","from":"0xa1","gas":"0x5208","input":"0x","to":"0xb0","value":"0x3e8"},"blockHash":"0xb1","blockNumber":1,"result":{"gasUsed":"0x5208","output":"0x"},"subtraces":0,"traceAddress":[],"transactionHash":"0x7e","transactionPosition":0,"type":"call"}]';

test('joinLists joins JSON lists as text, skipping empty ones', () => {
  assert.is(joinLists([]), '[]');
  assert.is(joinLists(['[]', ' [ ] ']), '[]');
  assert.is(joinLists(['[1,2]', '[]', '[{"a":[3]}]']), '[1,2,{"a":[3]}]');
  assert.equal(JSON.parse(joinLists([FLAT, FLAT])).length, 2);
});

test('trace_transaction: flatCallTracer with parity errors and precompile calls, the chain JSON as is', async () => {
  const tx = makeTx();
  s.backend.mine([tx]);
  s.backend.traceJson = FLAT;
  assert.equal(await s.ok('trace_transaction', [hex(tx.hash)]), JSON.parse(FLAT));
  const call = s.backend.calls.filter((c) => c.method === 'traceTransaction').at(-1)!;
  const req = call.args[1] as Record<string, unknown>;
  assert.equal(hex(call.args[0] as Uint8Array), hex(tx.hash));
  assert.is(req.tracer, 'flatCallTracer');
  assert.equal(req.tracerConfig, PARITY_FLAT_TRACE.tracerConfig);
  assert.equal(req.tracerConfig, { convertParityErrors: true, includePrecompiles: true });
  assert.is(req.timeoutMs, 5_000);
  assert.ok((req.maxChars as number) > 0 && (req.maxChars as number) <= 64 * 1024 * 1024);
});

test('trace_transaction: an unknown or a pending tx answers [] (as anvil), without a trace', async () => {
  const pending = makeTx();
  s.backend.admit(pending);
  const before = s.backend.calls.filter((c) => c.method === 'traceTransaction').length;
  assert.equal(await s.ok('trace_transaction', [hex(filled(0x99))]), []);
  assert.equal(await s.ok('trace_transaction', [hex(pending.hash)]), []);
  assert.is(s.backend.calls.filter((c) => c.method === 'traceTransaction').length, before);
});

test('trace_block: by number, tag, hash and EIP-1898 object; every tx\'s list joined in order; unknown block, genesis and an empty block []', async () => {
  const { block } = s.backend.mine([makeTx(), makeTx()]);
  s.backend.traceJson = FLAT;
  const n = `0x${block.header.number.toString(16)}`;
  for (const ref of [n, 'latest', hex(block.header.hash), { blockHash: hex(block.header.hash) }, { blockNumber: n }]) {
    const got = await s.ok('trace_block', [ref]);
    assert.is(got.length, 2, JSON.stringify(ref));
    const call = s.backend.calls.filter((c) => c.method === 'traceBlock').at(-1)!;
    assert.equal(hex((call.args[0] as { hash: Uint8Array }).hash), hex(block.header.hash));
    assert.is((call.args[1] as { tracer: string }).tracer, 'flatCallTracer');
  }
  assert.equal(await s.ok('trace_block', ['0x0']), []);
  assert.equal(await s.ok('trace_block', ['earliest']), []);
  assert.equal(await s.ok('trace_block', ['0x999']), []);
  assert.equal(await s.ok('trace_block', [hex(filled(0x42))]), []);
  s.backend.mine([]);
  assert.equal(await s.ok('trace_block', ['latest']), []);
});

test('invalid params: -32602 naming the argument', async () => {
  const bad = async (method: string, params: unknown, want: RegExp) => {
    const r = await s.call(method, params);
    assert.is(r.error?.code, -32602, `${method} ${JSON.stringify(params)}: ${JSON.stringify(r)}`);
    assert.match(r.error!.message, want);
  };
  await bad('trace_transaction', [], /missing value for required argument 0/);
  await bad('trace_transaction', ['0x12'], /invalid argument 0/);
  await bad('trace_transaction', [5], /invalid argument 0/);
  await bad('trace_transaction', [`0x${'ab'.repeat(5000)}`], /invalid argument 0/);
  await bad('trace_transaction', [hex(filled(1)), {}], /too many arguments, want at most 1/);
  await bad('trace_block', [], /missing value for required argument 0/);
  await bad('trace_block', ['0xzz'], /invalid argument 0/);
  await bad('trace_block', ['newest'], /invalid argument 0/);
  await bad('trace_block', [{ blockHash: '0x12' }], /invalid argument 0: blockHash/);
  await bad('trace_block', [[1]], /invalid argument 0/);
  await bad('trace_block', ['latest', 1], /too many arguments, want at most 1/);
  await bad('trace_block', { block: 'latest' }, /./);
});

test('they run in the debug_trace lane: past its queue, -32005', async () => {
  const tx = makeTx();
  s.backend.mine([tx]);
  const third = await pastTheTraceLane(
    s,
    () => s.call('trace_transaction', [hex(tx.hash)]),
    () => s.call('trace_block', ['latest']),
    () => s.call('debug_traceTransaction', [hex(tx.hash)]),
  );
  assert.is(third.error?.code, -32005, JSON.stringify(third));
});

test('off: -32601 naming the flag and the chain config key', async () => {
  const off = await serve();
  try {
    for (const [method, params] of [['trace_transaction', [hex(filled(1))]], ['trace_block', ['latest']]] as const) {
      const r = await off.call(method, params);
      assert.is(r.error?.code, -32601, method);
      assert.match(r.error!.message, /^the method trace_\w+ does not exist\/is not available: the debug API is off on this chain \(start the node with --evm-debug-api, or list "debug-tracer" in the chain config key "eth-apis"\)$/);
    }
  } finally {
    await off.close();
  }
});

test.run();
