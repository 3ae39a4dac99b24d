/**
 * The tracers (struct logger, callTracer) and the replay behind debug_trace* on a real chain, with
 * the EVM patches on (makeVM's), against outputs worked out by hand from the opcodes' costs.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { utf8Encode } from '@cornice/sdk';
import { EvmRpcError, type TraceRequest } from '../src/index.js';
import { tracerMaker } from '../src/chain/tracing/registry.js';
import { BlockContexts } from '../src/chain/tracing/replay.js';
import { EWOQ, buildAndAccept, genesisJson, hex, signedTx, startVM } from './helpers.js';

const at = (b: number): Uint8Array => new Uint8Array(20).fill(b);
const ADDER = at(0xaa);

function genesis(alloc: Record<string, string>): Uint8Array {
  const extra: Record<string, unknown> = {};
  for (const [a, code] of Object.entries(alloc)) extra[a] = { balance: '0x0', code };
  return utf8Encode(JSON.stringify(genesisJson(extra)));
}

const req = (o: Partial<TraceRequest> = {}): TraceRequest => ({ logger: {}, timeoutMs: 5_000, maxChars: 10_000_000, ...o });

test('struct logger: PUSH1 2 PUSH1 3 ADD PUSH0 SSTORE STOP, gas and stack and storage as geth logs them', async () => {
  const vm = await startVM({ genesis: genesis({ [hex(ADDER)]: '0x60026003015f5500' }) });
  try {
    const be = vm.backend;
    const hash = await be.sendRawTransaction(signedTx({ nonce: 0n, to: ADDER, gas: 100_000n }).serialize());
    await buildAndAccept(vm);
    const out = JSON.parse(await be.traceTransaction(hash, req()));
    const slot0 = '00'.repeat(32);
    assert.equal(out, {
      gas: 43_111,
      failed: false,
      returnValue: '0x',
      structLogs: [
        { pc: 0, op: 'PUSH1', gas: 79_000, gasCost: 3, depth: 1, stack: [] },
        { pc: 2, op: 'PUSH1', gas: 78_997, gasCost: 3, depth: 1, stack: ['0x2'] },
        { pc: 4, op: 'ADD', gas: 78_994, gasCost: 3, depth: 1, stack: ['0x2', '0x3'] },
        { pc: 5, op: 'PUSH0', gas: 78_991, gasCost: 2, depth: 1, stack: ['0x5'] },
        // A cold slot set from zero: 2,100 + 20,000.
        { pc: 6, op: 'SSTORE', gas: 78_989, gasCost: 22_100, depth: 1, stack: ['0x5', '0x0'], storage: { [slot0]: '00'.repeat(31) + '05' } },
        { pc: 7, op: 'STOP', gas: 56_889, gasCost: 0, depth: 1, stack: [] },
      ],
    });
    // disableStack, disableStorage and limit.
    const small = JSON.parse(await be.traceTransaction(hash, req({ logger: { disableStack: true, disableStorage: true, limit: 5 } })));
    assert.equal(small.structLogs.length, 5);
    assert.equal(small.structLogs[4], { pc: 6, op: 'SSTORE', gas: 78_989, gasCost: 22_100, depth: 1 });

  } finally {
    await vm.shutdown();
  }
});

const READER = at(0xab);

test('struct logger: an SLOAD out of gas logs the slot it would read, as geth reads it when it logs the opcode', async () => {
  const slot0 = '00'.repeat(32);
  const five = '00'.repeat(31) + '05';
  // PUSH0 SLOAD STOP, its slot 0 holding 5.
  const alloc = { [hex(READER)]: { balance: '0x0', code: '0x5f5400', storage: { ['0x' + slot0]: '0x' + five } } };
  const vm = await startVM({ genesis: utf8Encode(JSON.stringify(genesisJson(alloc))) });
  try {
    const be = vm.backend;
    // 2,101 after the intrinsic gas: PUSH0 takes 2, the cold SLOAD needs 2,100 of the 2,099 left.
    const hash = await be.sendRawTransaction(signedTx({ nonce: 0n, to: READER, gas: 23_101n }).serialize());
    await buildAndAccept(vm);
    const out = JSON.parse(await be.traceTransaction(hash, req()));
    assert.equal(out, {
      gas: 23_101,
      failed: true,
      returnValue: '0x',
      structLogs: [
        { pc: 0, op: 'PUSH0', gas: 2_101, gasCost: 2, depth: 1, stack: [] },
        { pc: 1, op: 'SLOAD', gas: 2_099, gasCost: 2_100, depth: 1, error: 'out of gas', stack: ['0x0'], storage: { [slot0]: five } },
      ],
    });
  } finally {
    await vm.shutdown();
  }
});

const REVERTER = at(0xbb);
const CALLER = at(0xcc);
/** PUSH1 1 PUSH0 MSTORE PUSH1 0x20 PUSH0 REVERT: reverts with the word 1 (16 gas). */
const REVERTER_CODE = '0x60015f5260205ffd';
/** LOG0 (empty), CALL REVERTER with all the gas it may pass, POP, LOG0, STOP. */
const CALLER_CODE = `0x5f5fa0 5f5f5f5f5f73${'bb'.repeat(20)}5af1 50 5f5fa0 00`.replace(/\s+/g, '');

async function callerChain() {
  const vm = await startVM({ genesis: genesis({ [hex(REVERTER)]: REVERTER_CODE, [hex(CALLER)]: CALLER_CODE }) });
  const hash = await vm.backend.sendRawTransaction(signedTx({ nonce: 0n, to: CALLER, gas: 100_000n }).serialize());
  await buildAndAccept(vm);
  return { vm, hash };
}

test('callTracer: a call that reverts inside a tx, its gas as geth counts it, logs with their position', async () => {
  const { vm, hash } = await callerChain();
  try {
    const be = vm.backend;
    // In CALLER: 79,000 after the intrinsic gas; LOG0 with its pushes 379, five PUSH0 10, PUSH20 3, GAS 2
    // leave 78,606; the cold CALL costs 2,600 and passes all but a 64th of the 76,006 left: 74,819.
    // REVERTER uses 16 and gives back 74,803; POP 2 and LOG0 379 leave 75,609: 3,391 used, the tx 24,391.
    const inner = { from: hex(CALLER), gas: '0x12443', gasUsed: '0x10', to: hex(REVERTER), input: '0x', output: '0x' + '00'.repeat(31) + '01', error: 'execution reverted', value: '0x0', type: 'CALL' };
    const top = { from: hex(EWOQ), gas: '0x186a0', gasUsed: '0x5f47', to: hex(CALLER), input: '0x', calls: [inner], value: '0x0', type: 'CALL' };
    assert.equal(JSON.parse(await be.traceTransaction(hash, req({ tracer: 'callTracer' }))), top);
    const log = (position: string) => ({ address: hex(CALLER), topics: [], data: '0x', position });
    assert.equal(JSON.parse(await be.traceTransaction(hash, req({ tracer: 'callTracer', tracerConfig: { withLog: true } }))), { ...top, calls: [inner], logs: [log('0x0'), log('0x1')] });
    const { calls: _calls, ...onlyTop } = top;
    assert.equal(JSON.parse(await be.traceTransaction(hash, req({ tracer: 'callTracer', tracerConfig: { onlyTopCall: true } }))), onlyTop);
    // The struct logger: the CALL's cost holds the gas it passed; the frame below is at depth 2.
    const logs = JSON.parse(await be.traceTransaction(hash, req({ logger: { enableReturnData: true, enableMemory: true } }))).structLogs as Array<Record<string, unknown>>;
    const call = logs.find((l) => l.op === 'CALL')!;
    assert.is(call.gas, 78_606);
    assert.is(call.gasCost, 2_600 + 74_819);
    const below = logs.filter((l) => l.depth === 2);
    assert.equal(below.map((l) => l.op), ['PUSH1', 'PUSH0', 'MSTORE', 'PUSH1', 'PUSH0', 'REVERT']);
    assert.is(below[0]!.gas, 74_819);
    assert.equal(below[3]!.memory, ['00'.repeat(31) + '01']);
    const pop = logs[logs.indexOf(call) + 7]!;
    assert.is(pop.op, 'POP');
    assert.is(pop.returnData, '0x' + '00'.repeat(31) + '01');
    assert.is(pop.gas, 75_990);
  } finally {
    await vm.shutdown();
  }
});

const ECHO = at(0xdd);
const OVERWRITER = at(0xde);
/** PUSH1 0xff PUSH0 MSTORE PUSH1 0x20 PUSH0 RETURN: returns the word 0xff. */
const ECHO_CODE = '0x60ff5f5260205ff3';
/**
 * MSTORE 0x2a at 0, CALL ECHO with memory[0..32] as input and as output (the answer overwrites the
 * input, as a Solidity call's usually does), POP; then MSTORE8 0 at 0, CREATE with the 1-byte init
 * code memory[0..1] (STOP), POP, and MSTORE8 0xff over that init code; STOP.
 */
const OVERWRITER_CODE = `0x602a5f52 6020 5f 6020 5f 5f 73${'dd'.repeat(20)} 5a f1 50 5f5f53 6001 5f 5f f0 50 60ff5f53 00`.replace(/\s+/g, '');

test('callTracer: a frame\'s input is what the opcode read, not what its caller later wrote over that memory', async () => {
  const vm = await startVM({ genesis: genesis({ [hex(ECHO)]: ECHO_CODE, [hex(OVERWRITER)]: OVERWRITER_CODE }) });
  try {
    const be = vm.backend;
    const hash = await be.sendRawTransaction(signedTx({ nonce: 0n, to: OVERWRITER, gas: 200_000n }).serialize());
    await buildAndAccept(vm);
    const top = JSON.parse(await be.traceTransaction(hash, req({ tracer: 'callTracer' })));
    assert.equal(
      top.calls.map((c: Record<string, unknown>) => [c.type, c.input]),
      [
        ['CALL', '0x' + '00'.repeat(31) + '2a'],
        ['CREATE', '0x00'],
      ],
    );
    assert.is(top.calls[0].output, '0x' + '00'.repeat(31) + 'ff');
    const flat = JSON.parse(await be.traceTransaction(hash, req({ tracer: 'flatCallTracer' })));
    assert.equal(flat[1].action.input, '0x' + '00'.repeat(31) + '2a');
    assert.equal(flat[2].action.init, '0x00');
  } finally {
    await vm.shutdown();
  }
});

test('registry: an unknown tracer, a JavaScript tracer and a malformed config are -32602 naming the built-in tracers', async () => {
  const { vm, hash } = await callerChain();
  try {
    const be = vm.backend;
    const refused = async (r: TraceRequest, want: RegExp) => {
      try {
        await be.traceTransaction(hash, r);
        assert.unreachable('traced');
      } catch (e) {
        assert.instance(e, EvmRpcError);
        assert.is((e as EvmRpcError).rpcCode, -32602);
        assert.match((e as EvmRpcError).message, want);
      }
    };
    await refused(req({ tracer: 'nope' }), /tracer "nope" not found: the built-in tracers are callTracer/);
    await refused(req({ tracer: '{step: function(log) {}, result: function() { return 1; }}' }), /JavaScript tracers are not supported: the built-in tracers are callTracer/);
    await refused(req({ tracer: 'callTracer', tracerConfig: { onlyTopCall: 'yes' } }), /tracerConfig.onlyTopCall: want a boolean/);
    await refused(req({ logger: { limit: -1 } }), /limit: want a non-negative integer/);
    await refused(req({ logger: { disableStack: 1 } }), /disableStack: want a boolean/);
    // The tracer made to check the config is the first one handed out; each later call makes a new one.
    const make = tracerMaker({ tracer: 'callTracer' });
    const made = [make(), make(), make()];
    assert.is(new Set(made).size, 3);
  } finally {
    await vm.shutdown();
  }
});

const LOOP = at(0x10);
const RECURSE = at(0x12);

test('replay: unknown tx, genesis, a trace past its output bound or its timeout, a call tree 128 deep', async () => {
  const vm = await startVM({ genesis: genesis({ [hex(LOOP)]: '0x5b5f56', [hex(RECURSE)]: '0x5f5f5f5f5f305af100' }) });
  try {
    const be = vm.backend;
    const fails = async (p: Promise<unknown>, code: number, want: RegExp) => {
      try {
        await p;
        assert.unreachable('answered');
      } catch (e) {
        assert.instance(e, EvmRpcError);
        assert.is((e as EvmRpcError).rpcCode, code, (e as Error).message);
        assert.match((e as Error).message, want);
      }
    };
    await fails(be.traceTransaction(new Uint8Array(32).fill(7), req()), -32000, /^transaction not found$/);
    await fails(be.traceBlock(0n, req()), -32000, /^genesis is not traceable$/);
    await fails(be.traceBlock(99n, req()), -32000, /^block #99 not found$/);
    const loop = await be.sendRawTransaction(signedTx({ nonce: 0n, to: LOOP, gas: 300_000n }).serialize());
    const deep = await be.sendRawTransaction(signedTx({ nonce: 1n, to: RECURSE, gas: 10_000_000n }).serialize());
    await buildAndAccept(vm);
    // A loop's struct log passes a small output bound before it is built whole.
    await fails(be.traceTransaction(loop, req({ maxChars: 100_000 })), -32003, /trace output larger than 100000 characters: ask for less \(disableStack/);
    // ... and a 1 ms timeout (geth's text).
    await fails(be.traceTransaction(loop, req({ timeoutMs: 1 })), -32000, /^execution timeout$/);
    // A call tree far deeper than 128 frames (each passes all but a 64th of its gas on).
    const tree = JSON.parse(await be.traceTransaction(deep, req({ tracer: 'callTracer' })));
    let depth = 0;
    for (let f = tree; f.calls; f = f.calls[0]) depth++;
    assert.ok(depth >= 128, `depth ${depth}`);
    // traceBlock answers each tx of the block, in order.
    const all = await be.traceBlock(1n, req({ tracer: 'callTracer', tracerConfig: { onlyTopCall: true } }));
    assert.equal(all.map((t) => hex(t.txHash)), [hex(loop), hex(deep)]);
  } finally {
    await vm.shutdown();
  }
});

test('traces share a kept VM yet see nothing another left: a debug_traceCall\'s state overrides, a trace refused past its bound', async () => {
  const vm = await startVM({ genesis: genesis({ [hex(ADDER)]: '0x60026003015f5500' }) });
  try {
    const be = vm.backend;
    const hash = await be.sendRawTransaction(signedTx({ nonce: 0n, to: ADDER, gas: 100_000n }).serialize());
    await buildAndAccept(vm);
    const want = await be.traceTransaction(hash, req());
    const OTHER = at(0x77);
    // PUSH1 7 PUSH0 SSTORE STOP at OTHER, and ADDER's slot 0 preset: only for this call.
    const overrides = new Map([
      [hex(OTHER), { code: Uint8Array.from([0x60, 0x07, 0x5f, 0x55, 0x00]), balance: 5n }],
      [hex(ADDER), { stateDiff: new Map([[`0x${'00'.repeat(32)}`, new Uint8Array(32).fill(9)]]) }],
    ]);
    const overridden = JSON.parse(await be.traceCall({ to: OTHER, gas: 100_000n }, 'latest', req(), overrides));
    assert.is(overridden.structLogs.length, 4);
    // The same call without overrides: no code at OTHER; ADDER's transaction traced as before.
    const plain = JSON.parse(await be.traceCall({ to: OTHER, gas: 100_000n }, 'latest', req()));
    assert.is(plain.structLogs.length, 0);
    assert.is(await be.traceTransaction(hash, req()), want);
    const prestate = JSON.parse(await be.traceCall({ to: ADDER, gas: 100_000n }, 'latest', req({ tracer: 'prestateTracer' })));
    assert.is(prestate[hex(ADDER)].storage?.[`0x${'00'.repeat(32)}`], `0x${'00'.repeat(31)}05`, 'the slot as the block left it');
    assert.is(prestate[hex(OTHER)], undefined);
    // A trace refused past its output bound ends mid-frame: the next trace is as before.
    await be.traceTransaction(hash, req({ maxChars: 10 })).then(
      () => assert.unreachable('answered'),
      (e: EvmRpcError) => assert.is(e.rpcCode, -32003),
    );
    assert.is(await be.traceTransaction(hash, req()), want);
  } finally {
    await vm.shutdown();
  }
});

test('replay: a block\'s context is made once and kept, as the block ran (its number, time, coinbase, base fee, parent)', async () => {
  const vm = await startVM({ genesis: genesis({ [hex(ADDER)]: '0x60026003015f5500' }) });
  try {
    const be = vm.backend;
    const first = await be.sendRawTransaction(signedTx({ nonce: 0n, to: ADDER, gas: 100_000n }).serialize());
    await buildAndAccept(vm);
    const second = await be.sendRawTransaction(signedTx({ nonce: 1n, to: ADDER, gas: 100_000n }).serialize());
    await buildAndAccept(vm);
    const b1 = (await vm.chain.acceptedAt(1n))!.eth;
    const b2 = (await vm.chain.acceptedAt(2n))!.eth;
    const genesisBlock = (await vm.chain.acceptedAt(0n))!.eth;
    const contexts = new BlockContexts();
    const c2 = contexts.of(b1, b2, vm.chain.blockOpts, true);
    assert.is(contexts.of(b1, b2, vm.chain.blockOpts, true), c2, 'kept');
    assert.is.not(contexts.of(genesisBlock, b1, vm.chain.blockOpts, true), c2);
    const h = c2.block.header;
    assert.is(h.number, 2n);
    assert.is(h.timestamp, b2.header.timestamp);
    assert.is(hex(h.parentHash), hex(b1.hash()));
    assert.is(hex(h.coinbase.bytes), hex(b2.header.coinbase.bytes));
    assert.is(h.baseFeePerGas, b2.header.baseFeePerGas);
    assert.is(c2.info?.parentTimestamp, b1.header.timestamp);
    // Traced again, through the kept context: the same answers.
    const want = [await be.traceTransaction(first, req()), await be.traceTransaction(second, req())];
    assert.equal([await be.traceTransaction(first, req()), await be.traceTransaction(second, req())], want);
  } finally {
    await vm.shutdown();
  }
});

const COUNTER = at(0x13);

test('struct logger: a storage loop of hundreds of logs, in order, each storage and stack as the step saw it, with and without the stack', async () => {
  // JUMPDEST PUSH1 0 SLOAD PUSH1 1 ADD PUSH1 0 SSTORE PUSH2 5000 GAS GT PUSH1 0 JUMPI STOP: slot 0 counts up until < 5,000 gas is left.
  const vm = await startVM({ genesis: genesis({ [hex(COUNTER)]: '0x5b6000546001016000556113885a1160005700' }) });
  try {
    const be = vm.backend;
    const hash = await be.sendRawTransaction(signedTx({ nonce: 0n, to: COUNTER, gas: 70_000n }).serialize());
    await buildAndAccept(vm);
    const ops = ['JUMPDEST', 'PUSH1', 'SLOAD', 'PUSH1', 'ADD', 'PUSH1', 'SSTORE', 'PUSH2', 'GAS', 'GT', 'PUSH1', 'JUMPI'];
    const pcs = [0, 1, 3, 4, 6, 7, 9, 10, 13, 14, 15, 17];
    const slot = (n: number) => ({ ['00'.repeat(32)]: n.toString(16).padStart(64, '0') });
    for (const logger of [{}, { disableStack: true }]) {
      const logs = JSON.parse(await be.traceTransaction(hash, req({ logger }))).structLogs as Array<Record<string, unknown>>;
      assert.ok(logs.length > 600, `${logs.length} logs`);
      assert.is(logs[logs.length - 1]!.op, 'STOP');
      for (let i = 0; i < logs.length - 1; i++) {
        const log = logs[i]!;
        const n = Math.floor(i / 12);
        assert.is(log.op, ops[i % 12], `log ${i}`);
        assert.is(log.pc, pcs[i % 12]);
        assert.is(logs[i + 1]!.gas, (log.gas as number) - (log.gasCost as number), `gas after log ${i}`);
        if (log.op === 'SLOAD') assert.equal(log.storage, slot(n), `SLOAD ${n}`);
        if (log.op === 'SSTORE') assert.equal(log.storage, slot(n + 1), `SSTORE ${n}`);
        if ('disableStack' in logger) assert.is(log.stack, undefined);
        else if (log.op === 'SSTORE') assert.equal(log.stack, [`0x${(n + 1).toString(16)}`, '0x0']);
      }
    }
  } finally {
    await vm.shutdown();
  }
});

test.run();
