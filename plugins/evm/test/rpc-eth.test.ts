import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { toHex } from '@cornice/sdk';
import { EvmRpcError, revertReason } from '../src/index.js';
import { ALICE, BOB, TOKEN, TRANSFER_TOPIC, filled, hex, makeTx, serve, type Served } from './rpc-fake-backend.js';

let s: Served;
test.before.each(async () => {
  s = await serve();
});
test.after.each(async () => {
  await s.close();
});

const A = hex(ALICE);
const QUANTITY = /^0x(0|[1-9a-f][0-9a-f]*)$/;

const ok = (method: string, params: unknown[] = []): Promise<any> => s.ok(method, params);

test('web3_ and net_', async () => {
  assert.is(await ok('web3_clientVersion'), 'cornice-evm/test');
  assert.is(await ok('web3_sha3', ['0x68656c6c6f']), '0x' + toHex(keccak_256(new TextEncoder().encode('hello'))));
  assert.is(await ok('web3_sha3', ['0x']), '0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470');
  assert.is(await ok('net_version'), '1');
  assert.is(await ok('net_listening'), true);
  assert.is(await ok('net_peerCount'), '0x3');
});

test('a spec method this chain does not serve (eth_config): -32601 with the reason, whatever the params', async () => {
  for (const params of [[], ['x'], [{}]]) {
    const e = (await s.call('eth_config', params)).error!;
    assert.is(e.code, -32601);
    assert.match(e.message, /^the method eth_config is not available: .*fork ID/);
  }
});

test('eth_chainId, eth_blockNumber, eth_syncing, eth_accounts', async () => {
  assert.is(await ok('eth_chainId'), '0xa866');
  assert.is(await ok('eth_blockNumber'), '0x0');
  s.backend.mine([makeTx()]);
  assert.is(await ok('eth_blockNumber'), '0x1');
  assert.is(await ok('eth_syncing'), false);
  assert.equal(await ok('eth_accounts'), []);
});

test('eth_getBlockByNumber: hashes and full transactions, geth fields; null when unknown', async () => {
  const tx = makeTx();
  const legacy = makeTx({ type: 0, maxFeePerGas: undefined, maxPriorityFeePerGas: undefined, accessList: undefined, yParity: undefined, v: 86255n });
  const { block } = s.backend.mine([tx, legacy]);
  const b = await ok('eth_getBlockByNumber', ['0x1', false]);
  for (const f of ['number', 'hash', 'parentHash', 'nonce', 'mixHash', 'sha3Uncles', 'logsBloom', 'stateRoot', 'miner', 'difficulty', 'extraData', 'gasLimit', 'gasUsed', 'timestamp', 'transactionsRoot', 'receiptsRoot', 'baseFeePerGas', 'size', 'transactions', 'uncles']) {
    assert.ok(f in b, f);
  }
  assert.is(b.number, '0x1');
  assert.is(b.hash, hex(block.header.hash));
  assert.is(b.nonce, '0x0000000000000000');
  assert.is(b.logsBloom.length, 2 + 512);
  assert.is(b.baseFeePerGas, '0x5d21dba00');
  assert.is(b.gasLimit, '0xe4e1c0');
  assert.is(b.miner, '0x' + '00'.repeat(20));
  assert.equal(b.uncles, []);
  assert.equal(b.transactions, [hex(tx.hash), hex(legacy.hash)]);
  for (const q of [b.number, b.difficulty, b.gasLimit, b.gasUsed, b.timestamp, b.size, b.baseFeePerGas]) assert.match(q, QUANTITY);

  const full = await ok('eth_getBlockByNumber', ['latest', true]);
  const t = full.transactions[0];
  assert.equal(t, {
    blockHash: b.hash,
    blockNumber: '0x1',
    blockTimestamp: b.timestamp,
    from: A,
    gas: '0x5208',
    gasPrice: '0x5d21dba00',
    maxFeePerGas: '0xba43b7400',
    maxPriorityFeePerGas: '0x3b9aca00',
    hash: hex(tx.hash),
    input: '0x',
    nonce: '0x' + tx.nonce.toString(16),
    to: hex(BOB),
    transactionIndex: '0x0',
    value: '0x3e8',
    type: '0x2',
    accessList: [],
    chainId: '0xa866',
    v: '0x1',
    r: '0x1234',
    s: '0x5678',
    yParity: '0x1',
  });
  const l = full.transactions[1];
  assert.is(l.type, '0x0');
  assert.is(l.transactionIndex, '0x1');
  assert.not.ok('maxFeePerGas' in l);
  assert.not.ok('accessList' in l);
  assert.not.ok('yParity' in l);
  assert.is(l.v, '0x150ef');

  assert.is(await ok('eth_getBlockByNumber', ['0x99', false]), null);
  assert.is((await ok('eth_getBlockByNumber', ['earliest', false])).number, '0x0');
  for (const tag of ['pending', 'safe', 'finalized', 'accepted']) assert.is((await ok('eth_getBlockByNumber', [tag, false])).number, '0x1', tag);
});

test('eth_getBlockByHash, headers, transaction counts by number and hash, uncle counts', async () => {
  const { block } = s.backend.mine([makeTx(), makeTx(), makeTx()]);
  const h = hex(block.header.hash);
  assert.is((await ok('eth_getBlockByHash', [h, false])).number, '0x1');
  assert.is(await ok('eth_getBlockByHash', ['0x' + '99'.repeat(32), true]), null);
  assert.is(await ok('eth_getBlockTransactionCountByNumber', ['0x1']), '0x3');
  assert.is(await ok('eth_getBlockTransactionCountByHash', [h]), '0x3');
  assert.is(await ok('eth_getBlockTransactionCountByNumber', ['0x9']), null);
  assert.is(await ok('eth_getBlockTransactionCountByHash', ['0x' + '99'.repeat(32)]), null);
  const header = await ok('eth_getHeaderByHash', [h]);
  assert.is(header.hash, h);
  assert.not.ok('transactions' in header);
  assert.equal(await ok('eth_getHeaderByNumber', ['0x1']), header);
  assert.is(await ok('eth_getHeaderByNumber', ['0x9']), null);
  assert.is(await ok('eth_getUncleCountByBlockNumber', ['latest']), '0x0');
  assert.is(await ok('eth_getUncleCountByBlockHash', ['0x' + '99'.repeat(32)]), null);
  assert.is(await ok('eth_getUncleByBlockNumberAndIndex', ['latest', '0x0']), null);
  assert.is(await ok('eth_getUncleByBlockHashAndIndex', [h, '0x0']), null);
  assert.is(await ok('eth_coinbase'), header.miner);
});

test('state reads: balance, nonce (latest and pending), code, storage; EIP-1898 block objects; unknown block', async () => {
  s.backend.balances.set(toHex(ALICE), 10n ** 18n);
  s.backend.codes.set(toHex(TOKEN), Uint8Array.of(0x60, 0x80));
  assert.is(await ok('eth_getBalance', [A, 'latest']), '0xde0b6b3a7640000');
  assert.is(await ok('eth_getBalance', [hex(BOB), '0x0']), '0x0');
  assert.is(await ok('eth_getTransactionCount', [A, 'latest']), '0x5');
  assert.is(await ok('eth_getTransactionCount', [A, 'pending']), '0x7');
  assert.is(await ok('eth_getCode', [hex(TOKEN), 'latest']), '0x6080');
  assert.is(await ok('eth_getCode', [A, 'latest']), '0x');
  assert.is(await ok('eth_getStorageAt', [hex(TOKEN), '0x' + '00'.repeat(31) + '07', 'latest']), '0x' + '07'.repeat(32));
  // A short slot is a quantity, left-padded (as geth).
  assert.is(await ok('eth_getStorageAt', [hex(TOKEN), '0x5', 'latest']), '0x' + '05'.repeat(32));
  const genesis = hex(s.backend.blocks[0]!.block.header.hash);
  assert.is(await ok('eth_getBalance', [A, { blockHash: genesis }]), '0xde0b6b3a7640000');
  assert.equal(s.backend.calls.at(-1)!.args[1], { hash: s.backend.blocks[0]!.block.header.hash });
  assert.is(await ok('eth_getBalance', [A, { blockHash: genesis, requireCanonical: true }]), '0xde0b6b3a7640000');
  assert.is(await ok('eth_getBalance', [A, { blockNumber: '0x0' }]), '0xde0b6b3a7640000');
  assert.equal((await s.call('eth_getBalance', [A, '0x9'])).error, { code: -32000, message: 'header not found' });
  assert.equal((await s.call('eth_getBalance', [A, { blockHash: '0x' + '99'.repeat(32) }])).error, { code: -32000, message: 'header for hash not found' });
});

test('a block hash as the block parameter (as ethers sends a hash blockTag): every state read, eth_call, eth_estimateGas, block receipts; unknown hash -32000', async () => {
  s.backend.balances.set(toHex(ALICE), 10n ** 18n);
  const { block } = s.backend.mine([makeTx()]);
  const h = hex(block.header.hash);
  const ref = { hash: block.header.hash };
  assert.is(await ok('eth_getBalance', [A, h]), '0xde0b6b3a7640000');
  assert.equal(s.backend.calls.at(-1)!.args[1], ref);
  assert.is(await ok('eth_getBalance', [A, h.toUpperCase().replace('0X', '0x')]), '0xde0b6b3a7640000');
  assert.is(await ok('eth_getTransactionCount', [A, h]), '0x5');
  assert.equal(s.backend.calls.at(-1)!.args[1], ref);
  assert.is(await ok('eth_getCode', [A, h]), '0x');
  assert.is(await ok('eth_getStorageAt', [hex(TOKEN), '0x7', h]), '0x' + '07'.repeat(32));
  assert.equal(s.backend.calls.at(-1)!.args[2], ref);
  await ok('eth_call', [{ to: hex(TOKEN) }, h]);
  assert.equal(s.backend.calls.at(-1)!.args[1], ref);
  await ok('eth_estimateGas', [{ to: hex(TOKEN) }, h]);
  assert.equal(s.backend.calls.at(-1)!.args[1], ref);
  assert.is((await ok('eth_getBlockReceipts', [h])).length, 1);
  const unknown = '0x' + '99'.repeat(32);
  for (const [method, params] of [
    ['eth_getBalance', [A, unknown]],
    ['eth_getTransactionCount', [A, unknown]],
    ['eth_getCode', [A, unknown]],
    ['eth_getStorageAt', [A, '0x0', unknown]],
  ] as const) {
    assert.equal((await s.call(method, [...params])).error, { code: -32000, message: 'header for hash not found' }, method);
  }
  assert.is(await ok('eth_getBlockReceipts', [unknown]), null);
  // 64 digits are a hash, never a number; other lengths stay quantities with geth's texts.
  assert.equal((await s.call('eth_getBalance', [A, '0x' + '9'.repeat(63)])).error, { code: -32602, message: 'invalid argument 1: hex number > 64 bits' });
  assert.equal((await s.call('eth_getBalance', [A, '0x' + 'zz'.repeat(32)])).error, { code: -32602, message: 'invalid argument 1: invalid hex string' });
  // Block-number-only methods (geth's BlockNumber) still refuse a hash.
  assert.is((await s.call('eth_getBlockByNumber', [h, false])).error!.code, -32602);
});

test('fees: eth_gasPrice, eth_maxPriorityFeePerGas, eth_baseFee, eth_feeHistory', async () => {
  assert.is(await ok('eth_gasPrice'), '0x60db88400');
  assert.is(await ok('eth_maxPriorityFeePerGas'), '0x3b9aca00');
  assert.is(await ok('eth_baseFee'), '0x5d21dba00');
  assert.equal(await ok('eth_feeHistory', ['0x1', 'latest', [25, 75]]), {
    oldestBlock: '0x0',
    baseFeePerGas: ['0x5d21dba00', '0x5d21dba00'],
    gasUsedRatio: [0.5],
    reward: [['0x3b9aca00', '0x3b9aca00']],
  });
  assert.equal(s.backend.calls.at(-1)!.args, [1, 'latest', [25, 75]]);
  // Decimal counts (HexOrDecimal64) and a count above geth's cap of 1,024.
  await ok('eth_feeHistory', [4, 'latest']);
  assert.is(s.backend.calls.at(-1)!.args[0], 4);
  await ok('eth_feeHistory', ['5000', '0x0', []]);
  assert.is(s.backend.calls.at(-1)!.args[0], 1024);
  const noReward = await ok('eth_feeHistory', ['0x2', 'latest']);
  assert.not.ok('reward' in noReward);
  assert.equal(await ok('eth_feeHistory', ['0x0', 'latest']), { oldestBlock: '0x0', baseFeePerGas: [], gasUsedRatio: [] });
});

test('eth_call: result data; block tag and EIP-1898; state overrides passed through', async () => {
  assert.is(await ok('eth_call', [{ to: hex(TOKEN), data: '0x70a08231' }]), '0x0000002a');
  let [req, ref, overrides] = s.backend.calls.at(-1)!.args as any[];
  assert.equal(req.to, TOKEN);
  assert.equal(req.data, Uint8Array.of(0x70, 0xa0, 0x82, 0x31));
  assert.is(ref, 'latest');
  assert.is(overrides, undefined);
  await ok('eth_call', [
    { from: A, to: hex(TOKEN), input: '0x01', gas: '0x5208', value: '0x1', maxFeePerGas: '0x2', maxPriorityFeePerGas: '0x1', nonce: '0x3', accessList: [{ address: hex(TOKEN), storageKeys: ['0x' + '00'.repeat(32)] }] },
    { blockNumber: '0x0' },
    { [hex(BOB)]: { balance: '0x10', nonce: '0x2', code: '0x6000', stateDiff: { ['0x' + '01'.repeat(32)]: '0x' + '02'.repeat(32) } } },
  ]);
  [req, ref, overrides] = s.backend.calls.at(-1)!.args as any[];
  assert.equal(req, {
    from: ALICE,
    to: TOKEN,
    gas: 21000n,
    maxFeePerGas: 2n,
    maxPriorityFeePerGas: 1n,
    value: 1n,
    nonce: 3n,
    data: Uint8Array.of(1),
    accessList: [{ address: TOKEN, storageKeys: [new Uint8Array(32)] }],
  });
  assert.is(ref, 0n);
  const o = overrides.get(hex(BOB));
  assert.is(o.balance, 16n);
  assert.is(o.nonce, 2n);
  assert.equal(o.code, Uint8Array.of(0x60, 0));
  assert.equal(o.stateDiff.get('0x' + '01'.repeat(32)), filled(2));
  const both = await s.call('eth_call', [{}, 'latest', { [hex(BOB)]: { state: {}, stateDiff: {} } }]);
  assert.equal(both.error, { code: -32602, message: `invalid argument 2: account ${hex(BOB)} has both 'state' and 'stateDiff'` });
  const badSlot = await s.call('eth_call', [{}, 'latest', { [hex(BOB)]: { state: { '0x01': '0x' + '00'.repeat(32) } } }]);
  assert.equal(badSlot.error, { code: -32602, message: `invalid argument 2: ${hex(BOB)}.state: 0x01: hex string has length 2, want 64 for hash` });
});

test('eth_call revert: code 3, reason decoded, revert data in data; other EVM errors -32000', async () => {
  // Error("Not enough")
  const data = '0x08c379a0' + '20'.padStart(64, '0') + 'a'.padStart(64, '0') + Buffer.from('Not enough').toString('hex').padEnd(64, '0');
  s.backend.callResult = { returnData: Uint8Array.from(Buffer.from(data.slice(2), 'hex')), gasUsed: 30000n, error: { kind: 'revert', message: 'revert' } };
  assert.equal((await s.call('eth_call', [{ to: hex(TOKEN) }])).error, { code: 3, message: 'execution reverted: Not enough', data });
  s.backend.callResult = { returnData: new Uint8Array(0), gasUsed: 30000n, error: { kind: 'revert', message: 'revert' } };
  assert.equal((await s.call('eth_call', [{ to: hex(TOKEN) }])).error, { code: 3, message: 'execution reverted', data: '0x' });
  s.backend.callResult = { returnData: new Uint8Array(0), gasUsed: 30000n, error: { kind: 'error', message: 'out of gas' } };
  assert.equal((await s.call('eth_call', [{ to: hex(TOKEN) }])).error, { code: -32000, message: 'out of gas' });
});

test('revertReason: Error(string), Panic(uint256), malformed', () => {
  const panic = (code: number) => Uint8Array.from(Buffer.from('4e487b71' + code.toString(16).padStart(64, '0'), 'hex'));
  assert.is(revertReason(panic(0x11)), 'arithmetic underflow or overflow');
  assert.is(revertReason(panic(0x99)), 'unknown panic code: 0x99');
  assert.is(revertReason(Uint8Array.of(0x08, 0xc3, 0x79, 0xa0, 1)), undefined);
  assert.is(revertReason(Uint8Array.from(Buffer.from('08c379a0' + 'ff'.repeat(32), 'hex'))), undefined);
  assert.is(revertReason(Uint8Array.of(1, 2)), undefined);
});

test('eth_estimateGas: quantity; a revert from the backend keeps code 3 and data', async () => {
  assert.is(await ok('eth_estimateGas', [{ from: A, to: hex(BOB), value: '0x1' }]), '0x5208');
  assert.is(await ok('eth_estimateGas', [{ to: hex(BOB) }, 'pending']), '0x5208');
  s.backend.estimateGas = async () => {
    throw new EvmRpcError(3, 'execution reverted: nope', '0x08c379a0');
  };
  assert.equal((await s.call('eth_estimateGas', [{ to: hex(BOB) }])).error, { code: 3, message: 'execution reverted: nope', data: '0x08c379a0' });
});

test('eth_sendRawTransaction: hash; backend errors as sent; empty data refused', async () => {
  assert.is(await ok('eth_sendRawTransaction', ['0x02f8']), '0x' + '02'.repeat(32));
  assert.equal(s.backend.calls.at(-1)!.args[0], Uint8Array.of(2, 0xf8));
  assert.equal((await s.call('eth_sendRawTransaction', ['0xff00'])).error, { code: -32000, message: 'insufficient funds for gas * price + value' });
  assert.is((await s.call('eth_sendRawTransaction', ['0x'])).error!.code, -32000);
  assert.is((await s.call('eth_sendRawTransaction', ['0x0'])).error!.code, -32602);
});

test('transactions by hash (mined and pending) and by block and index', async () => {
  const tx = makeTx();
  const { block } = s.backend.mine([makeTx(), tx]);
  const mined = await ok('eth_getTransactionByHash', [hex(tx.hash)]);
  assert.is(mined.blockHash, hex(block.header.hash));
  assert.is(mined.blockNumber, '0x1');
  assert.is(mined.blockTimestamp, '0x' + block.header.timestamp.toString(16));
  assert.is(mined.transactionIndex, '0x1');
  const pending = makeTx();
  s.backend.admit(pending);
  const p = await ok('eth_getTransactionByHash', [hex(pending.hash)]);
  assert.is(p.blockHash, null);
  assert.is(p.blockNumber, null);
  assert.is(p.blockTimestamp, null);
  assert.is(p.transactionIndex, null);
  assert.is(await ok('eth_getTransactionByHash', ['0x' + '99'.repeat(32)]), null);
  assert.equal(await ok('eth_getTransactionByBlockNumberAndIndex', ['0x1', '0x1']), mined);
  assert.equal(await ok('eth_getTransactionByBlockHashAndIndex', [hex(block.header.hash), '0x1']), mined);
  assert.is(await ok('eth_getTransactionByBlockNumberAndIndex', ['0x1', '0x2']), null);
  assert.is(await ok('eth_getTransactionByBlockNumberAndIndex', ['0x7', '0x0']), null);
  assert.is((await s.call('eth_getTransactionByBlockNumberAndIndex', ['0x1', '0x' + 'f'.repeat(16)])).error!.code, -32602);
});

test('receipts: every field clients read; block receipts; null when unknown', async () => {
  const tx = makeTx();
  const deploy = makeTx({ to: null });
  const { block } = s.backend.mine([tx, deploy], 2);
  const r = await ok('eth_getTransactionReceipt', [hex(tx.hash)]);
  assert.equal(Object.keys(r).sort(), [
    'blockHash', 'blockNumber', 'contractAddress', 'cumulativeGasUsed', 'effectiveGasPrice', 'from', 'gasUsed', 'logs', 'logsBloom', 'status', 'to', 'transactionHash', 'transactionIndex', 'type',
  ]);
  assert.is(r.status, '0x1');
  assert.is(r.type, '0x2');
  assert.is(r.contractAddress, null);
  assert.is(r.effectiveGasPrice, '0x60db88400');
  assert.is(r.cumulativeGasUsed, '0x5208');
  assert.equal(r.logs[1], {
    address: hex(TOKEN),
    topics: [hex(TRANSFER_TOPIC), hex(filled(2))],
    data: '0x01',
    blockNumber: '0x1',
    transactionHash: hex(tx.hash),
    transactionIndex: '0x0',
    blockHash: hex(block.header.hash),
    logIndex: '0x1',
    removed: false,
  });
  const d = await ok('eth_getTransactionReceipt', [hex(deploy.hash)]);
  assert.is(d.contractAddress, hex(filled(0xcc, 20)));
  assert.is(d.to, null);
  assert.is(d.cumulativeGasUsed, '0xa410');
  assert.is(d.logs[0].logIndex, '0x2');
  assert.is(await ok('eth_getTransactionReceipt', ['0x' + '99'.repeat(32)]), null);
  const all = await ok('eth_getBlockReceipts', ['latest']);
  assert.equal(all, [r, d]);
  assert.is(await ok('eth_getBlockReceipts', ['0x9']), null);
});

test('eth_getLogs: ranges resolved from tags, clamped to the head; address and topic filters; block hash', async () => {
  s.backend.mine([makeTx()], 2);
  s.backend.mine([makeTx()], 1);
  const all = await ok('eth_getLogs', [{ fromBlock: '0x0' }]);
  assert.is(all.length, 3);
  assert.equal(s.backend.calls.at(-1)!.args[0], { fromBlock: 0n, toBlock: 2n, addresses: [], topics: [] });
  assert.is((await ok('eth_getLogs', [{}])).length, 1, 'default range: latest..latest');
  assert.is((await ok('eth_getLogs', [{ fromBlock: 'earliest', toBlock: '0x99' }])).length, 3);
  assert.equal((s.backend.calls.at(-1)!.args[0] as any).toBlock, 2n);
  assert.equal(await ok('eth_getLogs', [{ fromBlock: '0x50' }]), [], 'above the head: empty');
  const second = await ok('eth_getLogs', [{ fromBlock: '0x1', topics: [hex(TRANSFER_TOPIC), [hex(filled(2)), hex(filled(9))]] }]);
  assert.is(second.length, 1);
  assert.is(second[0].logIndex, '0x1');
  assert.is((await ok('eth_getLogs', [{ fromBlock: '0x1', address: [hex(BOB)] }])).length, 0);
  assert.is((await ok('eth_getLogs', [{ fromBlock: '0x1', address: hex(TOKEN), topics: [null, []] }])).length, 3);
  const byHash = await ok('eth_getLogs', [{ blockHash: hex(s.backend.blocks[2]!.block.header.hash) }]);
  assert.is(byHash.length, 1);
  assert.equal((await s.call('eth_getLogs', [{ fromBlock: '0x2', toBlock: '0x1' }])).error, { code: -32000, message: 'invalid block range params' });
});

test.run();
