import { MemoryStore } from '@cornice/sdk';
import { createBlock } from '@ethereumjs/block';
import type { RunTxResult } from '@ethereumjs/vm';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { makeVM, stateManagerAt, type ExecutionHooks } from '../src/chain/executor.js';
import { StateDB } from '../src/chain/state/state-db.js';
import { flatCallTracerOver, flatten, type CallFrameJson, type FlatContext } from '../src/chain/tracing/flat-call.js';
import { TracerConfigError, type TracerFactory } from '../src/chain/tracing/tracer.js';
import { common, hex, signedTx } from './helpers.js';

const a = (n: number) => `0x${n.toString(16).padStart(2, '0').repeat(20)}`;
const S = a(0x8d);
const A = a(0xa1);
const L = a(0x1b);
const X = a(0xee);
const B = a(0xb2);
const R = a(0xf7);
const O = a(0x0f);
const IDENTITY = '0x0000000000000000000000000000000000000004';
const REVERT_DATA = '0x08c379a00000000000000000000000000000000000000000000000000000000000000020000000000000000000000000000000000000000000000000000000000000000046e6f706500000000000000000000000000000000000000000000000000000000';
const BLOCK_HASH = `0x${'ab'.repeat(32)}`;
const TX_HASH = `0x${'cd'.repeat(32)}`;

/** callTracer's tree of a tx: a precompile STATICCALL, a DELEGATECALL that CREATE2s a contract that self-destructs, a revert, an out-of-gas call. */
const TREE: CallFrameJson = {
  type: 'CALL',
  from: S,
  to: A,
  value: '0x0',
  gas: '0x7a120',
  gasUsed: '0x1d4c0',
  input: '0xdeadbeef',
  calls: [
    { type: 'STATICCALL', from: A, to: IDENTITY, gas: '0x100', gasUsed: '0x12', input: '0x12345678', output: '0x12345678' },
    {
      type: 'DELEGATECALL',
      from: A,
      to: L,
      value: '0x0',
      gas: '0x60000',
      gasUsed: '0x9000',
      input: '0x',
      calls: [
        {
          type: 'CREATE2',
          from: A,
          to: X,
          value: '0x0',
          gas: '0x50000',
          gasUsed: '0x8000',
          input: '0x6000',
          output: '0x00',
          calls: [{ type: 'SELFDESTRUCT', from: X, to: B, value: '0x5', gas: '0x0', gasUsed: '0x0', input: '0x' }],
        },
      ],
    },
    { type: 'CALL', from: A, to: R, value: '0x0', gas: '0x1000', gasUsed: '0x200', input: '0x', output: REVERT_DATA, error: 'execution reverted', revertReason: 'nope' },
    { type: 'CALL', from: A, to: O, value: '0x1', gas: '0x800', gasUsed: '0x800', input: '0x01', error: 'out of gas' },
  ],
};

const CTX: FlatContext = { blockHash: BLOCK_HASH, blockNumber: 7, transactionHash: TX_HASH, transactionPosition: 2, isPrecompile: (x) => x === IDENTITY.slice(2) };
const where = { blockHash: BLOCK_HASH, blockNumber: 7 };
const tail = (traceAddress: number[], subtraces: number, type: string) => ({ subtraces, traceAddress, transactionHash: TX_HASH, transactionPosition: 2, type });

const TOP = { action: { callType: 'call', from: S, gas: '0x7a120', input: '0xdeadbeef', to: A, value: '0x0' }, ...where, result: { gasUsed: '0x1d4c0', output: '0x' } };
const DELEGATE = { action: { callType: 'delegatecall', from: A, gas: '0x60000', input: '0x', to: L, value: '0x0' }, ...where, result: { gasUsed: '0x9000', output: '0x' } };
const CREATE = { action: { from: A, gas: '0x50000', init: '0x6000', value: '0x0' }, ...where, result: { address: X, code: '0x00', gasUsed: '0x8000' } };
const SUICIDE = { action: { address: X, balance: '0x5', refundAddress: B }, ...where };
const REVERTED = (error: string) => ({ action: { callType: 'call', from: A, gas: '0x1000', input: '0x', to: R, value: '0x0' }, ...where, error, result: { gasUsed: '0x200', output: REVERT_DATA } });
const OOG = (error: string) => ({ action: { callType: 'call', from: A, gas: '0x800', input: '0x01', to: O, value: '0x1' }, ...where, error });
const PRECOMPILE = { action: { callType: 'staticcall', from: A, gas: '0x100', input: '0x12345678', to: IDENTITY, value: '0x0' }, ...where, result: { gasUsed: '0x12', output: '0x12345678' } };

test('flatten: nested calls, a create, a selfdestruct, a revert and an out-of-gas call as geth flattens them (the precompile call left out)', () => {
  const flat = JSON.parse(JSON.stringify(flatten(TREE, CTX)));
  assert.equal(flat, [
    { ...TOP, ...tail([], 3, 'call') },
    { ...DELEGATE, ...tail([0], 1, 'call') },
    { ...CREATE, ...tail([0, 0], 1, 'create') },
    { ...SUICIDE, ...tail([0, 0, 0], 0, 'suicide') },
    { ...REVERTED('execution reverted'), ...tail([1], 0, 'call') },
    { ...OOG('out of gas'), ...tail([2], 0, 'call') },
  ]);
  assert.equal(Object.keys(flat[4]), ['action', 'blockHash', 'blockNumber', 'error', 'result', 'subtraces', 'traceAddress', 'transactionHash', 'transactionPosition', 'type'], "geth's field order");
  assert.equal(Object.keys(flat[0].action), ['callType', 'from', 'gas', 'input', 'to', 'value']);
});

test('flatten: includePrecompiles keeps the STATICCALL (value 0x0); convertParityErrors gives parity texts', () => {
  const flat = JSON.parse(JSON.stringify(flatten(TREE, CTX, { includePrecompiles: true, convertParityErrors: true })));
  assert.equal(flat, [
    { ...TOP, ...tail([], 4, 'call') },
    { ...PRECOMPILE, ...tail([0], 0, 'call') },
    { ...DELEGATE, ...tail([1], 1, 'call') },
    { ...CREATE, ...tail([1, 0], 1, 'create') },
    { ...SUICIDE, ...tail([1, 0, 0], 0, 'suicide') },
    { ...REVERTED('Reverted'), ...tail([2], 0, 'call') },
    { ...OOG('Out of gas'), ...tail([3], 0, 'call') },
  ]);
});

test('flatten: parity texts by prefix, unknown errors kept; a create tx; a DELEGATECALL to a precompile stays; unknown frame types refused', () => {
  const top: CallFrameJson = {
    type: 'CREATE',
    from: S,
    to: X,
    value: '0x10',
    gas: '0x10000',
    gasUsed: '0x10000',
    input: '0x60',
    error: 'invalid opcode: INVALID',
    calls: [
      { type: 'DELEGATECALL', from: X, to: IDENTITY, gas: '0x10', gasUsed: '0x10', input: '0x', error: 'stack underflow (0 <= 1)' },
      { type: 'CALL', from: X, to: A, gas: '0x10', gasUsed: '0x10', input: '0x', error: 'write protection' },
    ],
  };
  const flat = JSON.parse(JSON.stringify(flatten(top, { ...CTX, blockHash: null }, { includePrecompiles: false, convertParityErrors: true })));
  assert.equal(flat, [
    { action: { from: S, gas: '0x10000', init: '0x60', value: '0x10' }, blockHash: null, blockNumber: 7, error: 'Bad instruction', ...tail([], 2, 'create') },
    { action: { callType: 'delegatecall', from: X, gas: '0x10', input: '0x', to: IDENTITY, value: '0x0' }, blockHash: null, blockNumber: 7, error: 'Stack underflow', ...tail([0], 0, 'call') },
    { action: { callType: 'call', from: X, gas: '0x10', input: '0x', to: A, value: '0x0' }, blockHash: null, blockNumber: 7, error: 'write protection', ...tail([1], 0, 'call') },
  ]);
  assert.throws(() => flatten({ ...TREE, type: 'JUMP' }, CTX), /unrecognized call frame type: JUMP/);
});

test('flatCallTracer over a callTracer: the inner tracer gets {} and the tx, block and index; tracerConfig checked as geth', async () => {
  const sm = await stateManagerAt(common, new StateDB(new MemoryStore()), undefined, 100);
  const vm = await makeVM(common, sm, {} as ExecutionHooks, async () => undefined);
  const block = createBlock({ header: { number: 9n, gasLimit: 30_000_000n, baseFeePerGas: 1n } }, { common });
  const tx = signedTx({ nonce: 0n, to: new Uint8Array(20).fill(0xa1) });
  const configs: unknown[] = [];
  const fakeCallTracer: TracerFactory = (config) => {
    configs.push(config);
    return { start() {}, finish: () => TREE };
  };
  const factory = flatCallTracerOver(fakeCallTracer);
  const tracer = factory({ convertParityErrors: true, onlyTopCall: true });
  await tracer.start({ vm, tx, block, txIndex: 3, grow: () => {} });
  const flat = (await tracer.finish({} as RunTxResult)) as Array<Record<string, unknown>>;
  assert.equal(configs, [{}]);
  assert.is(flat.length, 6, 'the identity precompile (a precompile of the VM) left out');
  assert.equal(
    { blockHash: flat[0]!.blockHash, blockNumber: flat[0]!.blockNumber, transactionHash: flat[0]!.transactionHash, transactionPosition: flat[0]!.transactionPosition },
    { blockHash: hex(block.hash()), blockNumber: 9, transactionHash: hex(tx.hash()), transactionPosition: 3 },
  );
  assert.is(flat[4]!.error, 'Reverted');
  const call = factory({});
  await call.start({ vm, tx, block, grow: () => {} });
  const traced = (await call.finish({} as RunTxResult)) as Array<Record<string, unknown>>;
  assert.equal([traced[0]!.blockHash, traced[0]!.transactionPosition], [null, 0], 'a traced call has no block hash');
  assert.throws(
    () => factory({ includePrecompiles: 'yes' }),
    (e: Error) => e instanceof TracerConfigError && e.message === 'json: cannot unmarshal string into Go struct field flatCallTracerConfig.includePrecompiles of type bool',
  );
});

test.run();
