/**
 * The RPC layer of eth_call's and eth_estimateGas's block overrides, eth_createAccessList and
 * eth_simulateV1 over the fake backend: parameter parsing, invalid input, result shapes.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BOB, TOKEN, filled, hex, serve, type Served } from './rpc-fake-backend.js';

let s: Served;
test.before(async () => {
  s = await serve();
});
test.after(async () => {
  await s.close();
});

test('block overrides: every field geth knows, passed to eth_call and eth_estimateGas', async () => {
  const overrides = {
    number: '0x3e8',
    difficulty: '0x2',
    time: '0x64',
    gasLimit: '0x1c9c380',
    feeRecipient: hex(BOB),
    prevRandao: '0x' + '11'.repeat(32),
    baseFeePerGas: '0x7',
    blobBaseFee: '0x63',
  };
  const want = {
    number: 1000n,
    difficulty: 2n,
    time: 100n,
    gasLimit: 30_000_000n,
    feeRecipient: BOB,
    prevRandao: filled(0x11),
    baseFeePerGas: 7n,
    blobBaseFee: 99n,
  };
  await s.ok('eth_call', [{ to: hex(TOKEN) }, 'latest', null, overrides]);
  assert.equal(s.backend.calls.at(-1)!.args[3], want);
  await s.ok('eth_estimateGas', [{ to: hex(TOKEN) }, 'latest', {}, overrides]);
  assert.equal(s.backend.calls.at(-1)!.args[3], want);
});

test('block overrides: keys as geth decodes them (any case; an unknown key is ignored; null is absent)', async () => {
  await s.ok('eth_call', [{ to: hex(TOKEN) }, 'latest', null, { NUMBER: '0x5', BaseFeePerGas: '0x1', timestamp: '0x9', time: null }]);
  assert.equal(s.backend.calls.at(-1)!.args[3], { number: 5n, baseFeePerGas: 1n });
});

test('block overrides: invalid input is -32602 naming the field; beaconRoot and withdrawals are refused for one call, as geth', async () => {
  const bad = async (o: unknown, message: string, method = 'eth_call') => {
    const r = await s.call(method, [{ to: hex(TOKEN) }, 'latest', null, o]);
    assert.equal(r.error, { code: -32602, message }, JSON.stringify(o));
  };
  await bad('0x1', 'invalid argument 3: cannot unmarshal string into block overrides');
  await bad([], 'invalid argument 3: cannot unmarshal array into block overrides');
  await bad({ number: 5 }, 'invalid argument 3: number: cannot unmarshal number into a hex quantity');
  await bad({ time: '0x' + '1'.repeat(17) }, 'invalid argument 3: time: hex number > 64 bits');
  await bad({ gasLimit: '0x01' }, 'invalid argument 3: gasLimit: hex number with leading zero digits', 'eth_estimateGas');
  await bad({ feeRecipient: '0x1234' }, 'invalid argument 3: feeRecipient: hex string has length 4, want 40 for address');
  await bad({ prevRandao: '0x12' }, 'invalid argument 3: prevRandao: hex string has length 2, want 64 for hash');
  await bad({ baseFeePerGas: '0x' + '1'.repeat(65) }, 'invalid argument 3: baseFeePerGas: hex number > 256 bits');
  await bad({ blobBaseFee: 'x' }, 'invalid argument 3: blobBaseFee: hex string without 0x prefix');
  await bad({ withdrawals: {} }, 'invalid argument 3: withdrawals: cannot unmarshal object into withdrawals');
  await bad({ withdrawals: new Array(17).fill({}) }, 'invalid argument 3: withdrawals: more than 16 withdrawals');
  const beacon = await s.call('eth_call', [{ to: hex(TOKEN) }, 'latest', null, { beaconRoot: '0x' + '00'.repeat(32) }]);
  assert.equal(beacon.error, { code: -32000, message: 'block override "beaconRoot" is not supported for this RPC method' });
  const w = await s.call('eth_estimateGas', [{ to: hex(TOKEN) }, 'latest', null, { withdrawals: [] }]);
  assert.equal(w.error, { code: -32000, message: 'block override "withdrawals" is not supported for this RPC method' });
  const five = await s.call('eth_call', [{ to: hex(TOKEN) }, 'latest', null, {}, 1]);
  assert.is(five.error?.code, -32602);
});

test('eth_createAccessList: {accessList, gasUsed} (error only when the call failed); block and state overrides passed through', async () => {
  const r = await s.ok('eth_createAccessList', [{ from: hex(BOB), to: hex(TOKEN), data: '0x01' }]);
  assert.equal(r, { accessList: [{ address: hex(TOKEN), storageKeys: ['0x' + '01'.repeat(32)] }], gasUsed: '0x62d4' });
  assert.equal(Object.keys(r), ['accessList', 'gasUsed']);
  const [req, ref, overrides] = s.backend.calls.at(-1)!.args as any[];
  assert.equal(req, { from: BOB, to: TOKEN, data: Uint8Array.of(1) });
  assert.is(ref, 'latest');
  assert.is(overrides, undefined);
  await s.ok('eth_createAccessList', [{ to: hex(TOKEN) }, '0x0', { [hex(BOB)]: { balance: '0x1' } }]);
  const args = s.backend.calls.at(-1)!.args as any[];
  assert.is(args[1], 0n);
  assert.is(args[2].get(hex(BOB)).balance, 1n);
  s.backend.accessListResult = { accessList: [], gasUsed: 21_000n, error: 'execution reverted' };
  assert.equal(await s.ok('eth_createAccessList', [{ to: hex(TOKEN) }]), { accessList: [], error: 'execution reverted', gasUsed: '0x5208' });
});

test('eth_createAccessList: invalid input is -32602 naming the argument', async () => {
  const bad = async (params: unknown, message: string) => {
    const r = await s.call('eth_createAccessList', params);
    assert.equal(r.error, { code: -32602, message }, JSON.stringify(params));
  };
  await bad([], 'missing value for required argument 0');
  await bad(['0x1'], 'invalid argument 0: cannot unmarshal string into transaction object');
  await bad([{ to: '0x12' }], 'invalid argument 0: to: hex string has length 2, want 40 for address');
  await bad([{ gas: '0x' + 'f'.repeat(17) }], 'invalid argument 0: gas: hex number > 64 bits');
  await bad([{ accessList: {} }], 'invalid argument 0: accessList: cannot unmarshal object into access list');
  await bad([{}, 'newest'], 'invalid argument 1: hex string without 0x prefix');
  await bad([{}, 'latest', []], 'invalid argument 2: cannot unmarshal array into state override set');
  await bad([{}, 'latest', {}, {}], 'too many arguments, want at most 3');
});

/** The spec's Block properties (schemas/block.yaml: additionalProperties false), and eth_simulateV1's `calls`. */
const BLOCK_FIELDS = new Set([
  'hash', 'parentHash', 'sha3Uncles', 'miner', 'stateRoot', 'transactionsRoot', 'receiptsRoot', 'logsBloom', 'difficulty', 'number', 'gasLimit',
  'gasUsed', 'timestamp', 'extraData', 'mixHash', 'nonce', 'totalDifficulty', 'baseFeePerGas', 'withdrawalsRoot', 'blobGasUsed', 'excessBlobGas',
  'parentBeaconBlockRoot', 'size', 'transactions', 'withdrawals', 'uncles', 'calls',
]);

test('eth_simulateV1: one block object per simulated block with its calls (returnData, logs, gasUsed, status, error {message, code, data})', async () => {
  const block = s.backend.blocks.at(-1)!.block;
  const log = { address: TOKEN, topics: [filled(0xdd)], data: Uint8Array.of(1), blockNumber: block.header.number, blockHash: block.header.hash, transactionHash: filled(0x01), transactionIndex: 0, logIndex: 0, removed: false };
  // Error("nope")
  const revertData = Uint8Array.from(Buffer.from('08c379a0' + '20'.padStart(64, '0') + '4'.padStart(64, '0') + Buffer.from('nope').toString('hex').padEnd(64, '0'), 'hex'));
  s.backend.simulateResult = [
    {
      block,
      calls: [
        { status: 1, returnData: Uint8Array.of(0xab), gasUsed: 21_000n, logs: [log] },
        { status: 0, returnData: revertData, gasUsed: 22_000n, logs: [], error: { code: 3, message: 'execution reverted', data: revertData } },
        { status: 0, returnData: new Uint8Array(), gasUsed: 30_000n, logs: [], error: { code: -32015, message: 'out of gas' } },
      ],
    },
  ];
  try {
    const r = await s.ok('eth_simulateV1', [{ blockStateCalls: [{ calls: [{ to: hex(TOKEN) }] }] }, 'latest']);
    assert.is(r.length, 1);
    for (const k of Object.keys(r[0])) assert.ok(BLOCK_FIELDS.has(k), `unexpected field ${k}`);
    assert.is(r[0].hash, hex(block.header.hash));
    assert.equal(r[0].uncles, []);
    assert.equal(r[0].calls, [
      {
        returnData: '0xab',
        logs: [{ address: hex(TOKEN), topics: [hex(filled(0xdd))], data: '0x01', blockNumber: '0x0', transactionHash: hex(filled(1)), transactionIndex: '0x0', blockHash: hex(block.header.hash), logIndex: '0x0', removed: false }],
        gasUsed: '0x5208',
        status: '0x1',
      },
      { returnData: hex(revertData), logs: [], gasUsed: '0x55f0', status: '0x0', error: { message: 'execution reverted: nope', code: 3, data: hex(revertData) } },
      { returnData: '0x', logs: [], gasUsed: '0x7530', status: '0x0', error: { message: 'out of gas', code: -32015 } },
    ]);
  } finally {
    s.backend.simulateResult = undefined;
  }
});

test('eth_simulateV1: the payload parsed (any key case, defaults false), the block parameter (latest)', async () => {
  await s.ok('eth_simulateV1', [
    {
      blockStateCalls: [
        { blockOverrides: { number: '0x5' }, stateOverrides: { [hex(BOB)]: { balance: '0x1' } }, calls: [{ from: hex(BOB), to: hex(TOKEN), value: '0x1' }] },
        { Calls: [] },
      ],
      traceTransfers: true,
      Validation: true,
    },
  ]);
  const [req, ref] = s.backend.calls.at(-1)!.args as any[];
  assert.is(ref, 'latest');
  assert.is(req.traceTransfers, true);
  assert.is(req.validation, true);
  assert.is(req.returnFullTransactions, false);
  assert.equal(req.blocks[0].blockOverrides, { number: 5n });
  assert.is(req.blocks[0].stateOverrides.get(hex(BOB)).balance, 1n);
  assert.equal(req.blocks[0].calls, [{ from: BOB, to: TOKEN, value: 1n }]);
  assert.equal(req.blocks[1], { calls: [] });
  await s.ok('eth_simulateV1', [{ blockStateCalls: [{}] }, '0x0']);
  assert.is((s.backend.calls.at(-1)!.args as any[])[1], 0n);
  // Full transactions: the block's transaction objects.
  const full = await s.ok('eth_simulateV1', [{ blockStateCalls: [{}], returnFullTransactions: true }]);
  assert.ok(Array.isArray(full[0].transactions));
});

test('eth_simulateV1: invalid input, with geth\'s codes and texts', async () => {
  const bad = async (params: unknown, code: number, message: string) => {
    const r = await s.call('eth_simulateV1', params);
    assert.equal(r.error, { code, message }, JSON.stringify(params).slice(0, 200));
  };
  await bad([], -32602, 'missing value for required argument 0');
  await bad(['0x1'], -32602, 'invalid argument 0: cannot unmarshal string into simulate options');
  await bad([{}], -32602, 'empty input');
  await bad([{ blockStateCalls: [] }], -32602, 'empty input');
  await bad([{ blockStateCalls: {} }], -32602, 'invalid argument 0: blockStateCalls: cannot unmarshal object into block state calls');
  await bad([{ blockStateCalls: [1] }], -32602, 'invalid argument 0: blockStateCalls[0]: cannot unmarshal number into block state call');
  await bad([{ blockStateCalls: [{ calls: {} }] }], -32602, 'invalid argument 0: blockStateCalls[0]: calls: cannot unmarshal object into calls');
  await bad([{ blockStateCalls: [{ calls: [{ to: '0x1' }] }] }], -32602, 'invalid argument 0: blockStateCalls[0]: calls: [0]: to: hex string of odd length');
  await bad([{ blockStateCalls: [{ blockOverrides: { time: 'x' } }] }], -32602, 'invalid argument 0: blockStateCalls[0]: blockOverrides: time: hex string without 0x prefix');
  await bad([{ blockStateCalls: [{ stateOverrides: [] }] }], -32602, 'invalid argument 0: blockStateCalls[0]: stateOverrides: cannot unmarshal array into state override set');
  await bad([{ blockStateCalls: [{}], validation: 'yes' }], -32602, 'invalid argument 0: validation: cannot unmarshal string into bool');
  await bad([{ blockStateCalls: [{}], traceTransfers: 1 }], -32602, 'invalid argument 0: traceTransfers: cannot unmarshal number into bool');
  await bad([{ blockStateCalls: [{}], returnFullTransactions: null, validation: [] }], -32602, 'invalid argument 0: validation: cannot unmarshal array into bool');
  await bad([{ blockStateCalls: new Array(257).fill({}) }], -38026, 'too many blocks');
  await bad([{ blockStateCalls: [{ calls: new Array(600).fill({}) }, { calls: new Array(401).fill({}) }] }], -38026, 'too many calls: 1001 > 1000');
  await bad([{ blockStateCalls: [{}] }, 'soon'], -32602, 'invalid argument 1: hex string without 0x prefix');
  await bad([{ blockStateCalls: [{}] }, 'latest', {}], -32602, 'too many arguments, want at most 2');
});

test.run();
