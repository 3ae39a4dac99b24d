/**
 * The debug_ methods' front end over the fake backend: geth's trace config shapes, invalid input for
 * every param, the off switch, the trace lane's bound, the raw encodings.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseDuration } from '../src/rpc/debug.js';
import { TOKEN, filled, hex, pastTheTraceLane, serve, type Served } from './rpc-fake-backend.js';

let s: Served;
test.before(async () => {
  s = await serve({ debugApi: true, limits: { traceLane: { concurrency: 1, perConnectionQueue: 1, queue: 1 } } });
});
test.after(async () => {
  await s.close();
});

const H = hex(filled(0x11));

test('debug_traceTransaction: the trace config reaches the chain; the result is the chain JSON as is', async () => {
  s.backend.traceJson = '{"gas":1,"failed":false,"returnValue":"0x","structLogs":[]}';
  assert.equal(await s.ok('debug_traceTransaction', [H]), { gas: 1, failed: false, returnValue: '0x', structLogs: [] });
  let r = s.backend.calls.at(-1)!.args[1] as Record<string, unknown>;
  assert.is(r.timeoutMs, 5_000);
  assert.is(r.tracer, undefined);
  await s.ok('debug_traceTransaction', [H, { tracer: 'callTracer', tracerConfig: { withLog: true }, timeout: '1m30s', disableStack: true }]);
  r = s.backend.calls.at(-1)!.args[1] as Record<string, unknown>;
  assert.is(r.tracer, 'callTracer');
  assert.equal(r.tracerConfig, { withLog: true });
  assert.is(r.timeoutMs, 90_000);
  assert.is((r.logger as Record<string, unknown>).disableStack, true);
  assert.ok((r.maxChars as number) <= 64 * 1024 * 1024);
});

test('timeouts are Go durations', () => {
  assert.is(parseDuration('5s'), 5_000);
  assert.is(parseDuration('300ms'), 300);
  assert.is(parseDuration('1.5h'), 5_400_000);
  assert.is(parseDuration('0'), 0);
  for (const bad of ['5', '-1s', '1d', '', 's', '5 s', 'x'.repeat(100)]) assert.throws(() => parseDuration(bad), /invalid duration/);
  assert.throws(() => parseDuration(5), /want a duration string/);
});

test('invalid params: -32602 naming the argument and field', async () => {
  const bad = async (method: string, params: unknown[], want: RegExp) => {
    const r = await s.call(method, params);
    assert.is(r.error?.code, -32602, `${method} ${JSON.stringify(params)}: ${JSON.stringify(r)}`);
    assert.match(r.error!.message, want);
  };
  await bad('debug_traceTransaction', [], /missing value for required argument 0/);
  await bad('debug_traceTransaction', ['0x12'], /invalid argument 0/);
  await bad('debug_traceTransaction', [H, 'callTracer'], /invalid argument 1: cannot unmarshal string into trace config/);
  await bad('debug_traceTransaction', [H, { tracer: 5 }], /invalid argument 1: tracer: want a string/);
  await bad('debug_traceTransaction', [H, { tracerConfig: [] }], /invalid argument 1: tracerConfig: want an object/);
  await bad('debug_traceTransaction', [H, { timeout: 'soon' }], /invalid argument 1: timeout: time: invalid duration "soon"/);
  await bad('debug_traceTransaction', [H, { timeout: 5 }], /invalid argument 1: timeout: want a duration string/);
  await bad('debug_traceTransaction', [H, { reexec: -1 }], /invalid argument 1: reexec/);
  await bad('debug_traceTransaction', [H, {}, 1], /too many arguments, want at most 2/);
  await bad('debug_traceCall', [], /missing value for required argument 0/);
  await bad('debug_traceCall', [{ to: hex(TOKEN) }, 'nope'], /invalid argument 1/);
  await bad('debug_traceCall', [{ to: hex(TOKEN) }, 'latest', { stateOverrides: { x: {} } }], /invalid argument 2: stateOverrides/);
  await bad('debug_traceCall', [{ to: hex(TOKEN) }, 'latest', { blockOverrides: { number: 'x' } }], /invalid argument 2: blockOverrides/);
  await bad('debug_traceBlockByNumber', ['0xzz'], /invalid argument 0/);
  await bad('debug_traceBlockByHash', ['0x12'], /invalid argument 0/);
  await bad('debug_traceBlock', ['zz'], /invalid argument 0/);
  await bad('debug_getRawHeader', [], /missing value/);
  await bad('debug_getRawTransaction', ['0x1'], /invalid argument 0/);
});

test('debug_traceCall passes its overrides; traceBlock* answer [{txHash, result}]', async () => {
  await s.ok('debug_traceCall', [{ to: hex(TOKEN) }, 'latest', { tracer: 'callTracer', stateOverrides: { [hex(TOKEN)]: { balance: '0x1' } }, blockOverrides: { number: '0x5' } }]);
  const args = s.backend.calls.at(-1)!.args;
  assert.is((args[3] as Map<string, { balance: bigint }>).get(hex(TOKEN))!.balance, 1n);
  assert.equal(args[4], { number: 5n });
  const r = await s.call('debug_traceCall', [{ to: hex(TOKEN) }, 'latest', { blockOverrides: { beaconRoot: H } }]);
  assert.is(r.error?.code, -32000);
  assert.equal(await s.ok('debug_traceBlockByNumber', ['0x0']), []);
});

test('debug_getRaw*: hex encodings; unknown blocks as geth words them', async () => {
  assert.is(await s.ok('debug_getRawHeader', ['latest']), '0xc101');
  assert.is(await s.ok('debug_getRawBlock', ['latest']), '0xc2c0c0');
  assert.equal(await s.ok('debug_getRawReceipts', ['latest']), ['0x02c0']);
  const r = await s.call('debug_getRawBlock', ['0x99']);
  assert.equal(r.error, { code: -32000, message: 'block #153 not found' });
  assert.is(await s.ok('debug_getRawTransaction', [H]), null);
});

test('traces run in a bounded lane: past its queue, -32005', async () => {
  const trace = () => s.call('debug_traceTransaction', [H]);
  const third = await pastTheTraceLane(s, trace, trace, trace);
  assert.is(third.error?.code, -32005, JSON.stringify(third));
});

test('off: every debug_ method is -32601 naming the chain config key', async () => {
  const off = await serve();
  try {
    for (const method of ['debug_traceTransaction', 'debug_traceCall', 'debug_traceBlockByNumber', 'debug_traceBlockByHash', 'debug_traceBlock', 'debug_getRawBlock', 'debug_getRawHeader', 'debug_getRawReceipts', 'debug_getRawTransaction']) {
      const r = await off.call(method, [H]);
      assert.is(r.error?.code, -32601, method);
      assert.match(r.error!.message, /debug API is off on this chain \(start the node with --evm-debug-api, or list "debug-tracer" in the chain config key "eth-apis"\)/);
    }
  } finally {
    await off.close();
  }
});

test.run();
