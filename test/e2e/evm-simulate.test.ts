/**
 * eth_simulateV1, eth_createAccessList and eth_call's block overrides as clients send them, through
 * a real node: viem's simulateBlocks / simulateCalls and ethers' provider.send.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { JsonRpcProvider } from 'ethers';
import { createPublicClient, http, pad, toHex, type Hex, type PublicClient } from 'viem';
import { EWOQ_EVM_ADDRESS, setupReporting, startEvmTarget, type EvmTarget } from '../src/evm.js';

let dir: string;
let target: EvmTarget;
let pub: PublicClient;
let provider: JsonRpcProvider;

const A = `0x${'aa'.repeat(20)}` as Hex;
const B = `0x${'bb'.repeat(20)}` as Hex;
const COUNTER = `0x${'c0'.repeat(20)}` as Hex;
const OTHER = `0x${'77'.repeat(20)}` as Hex;
/** STATICCALL(gas, B, 0, 0, 0, 0x20) POP STOP. */
const A_CODE = `0x60205f5f5f73${'bb'.repeat(20)}5afa5000` as Hex;
/** SLOAD(0) + SLOAD(1), returned. */
const B_CODE = '0x5f5460015401' + '5f5260205ff3';
/** No calldata: returns slot 0; calldata: stores its first word in slot 0. */
const COUNTER_CODE = '0x' + '36' + '600c' + '57' + '5f545f5260205ff3' + '5b' + '5f35' + '5f55' + '00';
/** NUMBER and TIMESTAMP returned. */
const ENV_CODE = '0x435f52426020526040' + '5ff3';

test.before(
  setupReporting(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cornice-e2e-evm-simulate-'));
    target = await startEvmTarget({ dataDir: dir, dbType: 'memory' });
    pub = createPublicClient({ transport: http(target.rpcUrl) });
    provider = new JsonRpcProvider(target.rpcUrl, undefined, { pollingInterval: 100, cacheTimeout: -1 });
  }),
);

test.after(async () => {
  provider?.destroy();
  await target?.stop();
  await rm(dir, { recursive: true, force: true });
});

test('viem simulateBlocks: state carries from block to block, times follow the overrides', async () => {
  if (target.kind !== 'cornice') return;
  const head = await pub.getBlock();
  const time = head.timestamp + 100n;
  const blocks = await pub.simulateBlocks({
    blocks: [
      { blockOverrides: { time }, stateOverrides: [{ address: COUNTER, code: COUNTER_CODE as Hex }], calls: [{ from: EWOQ_EVM_ADDRESS, to: COUNTER, data: pad(toHex(42)) }] },
      { calls: [{ from: EWOQ_EVM_ADDRESS, to: COUNTER, data: '0x' }] },
    ],
  });
  assert.equal(blocks.map((b) => b.number), [head.number + 1n, head.number + 2n]);
  assert.equal(blocks.map((b) => b.timestamp), [time, time + 12n]);
  assert.is(blocks[0]!.calls[0]!.status, 'success');
  assert.is(blocks[1]!.calls[0]!.status, 'success');
  assert.is(blocks[1]!.calls[0]!.data, pad(toHex(42)));
  assert.is(blocks[1]!.parentHash, blocks[0]!.hash);
  assert.is(blocks[1]!.baseFeePerGas, 0n);
  // Nothing stayed on the chain.
  assert.is(await pub.getBlockNumber(), head.number);
  assert.is(await pub.getCode({ address: COUNTER }), undefined);
});

test('eth_simulateV1 through client.request: a gap in the numbers is filled with empty blocks (as geth)', async () => {
  if (target.kind !== 'cornice') return;
  const head = await pub.getBlockNumber();
  const r = (await pub.request({
    method: 'eth_simulateV1' as never,
    params: [{ blockStateCalls: [{ blockOverrides: { number: toHex(head + 3n) } }] }, 'latest'] as never,
  })) as Array<{ number: Hex; calls: unknown[] }>;
  assert.equal(r.map((b) => BigInt(b.number)), [head + 1n, head + 2n, head + 3n]);
  assert.equal(r.map((b) => b.calls), [[], [], []]);
});

test('viem simulateCalls with traceTransfers: the transfer is a log of 0xeeee…eeee', async () => {
  if (target.kind !== 'cornice') return;
  const { results } = await pub.simulateCalls({ account: EWOQ_EVM_ADDRESS, calls: [{ to: OTHER, value: 5n }], traceTransfers: true });
  assert.is(results[0]!.status, 'success');
  const log = results[0]!.logs![0]!;
  assert.is(log.address, `0x${'ee'.repeat(20)}`);
  assert.is(log.topics[0], '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef');
  assert.is(log.topics[2], pad(OTHER));
  assert.is(log.data, pad(toHex(5)));
});

test('ethers provider.send eth_createAccessList: a contract reading 2 slots of another: exact list and gas', async () => {
  if (target.kind !== 'cornice') return;
  const overrides = { [A]: { code: A_CODE }, [B]: { code: B_CODE } };
  const r = await provider.send('eth_createAccessList', [{ from: EWOQ_EVM_ADDRESS, to: A }, 'latest', overrides]);
  assert.equal(r, { accessList: [{ address: B, storageKeys: [pad('0x0'), pad('0x1')] }], gasUsed: toHex(27_540) });
});

test('ethers provider.send eth_call with block overrides: the EVM sees the overridden number and time', async () => {
  if (target.kind !== 'cornice') return;
  const at = `0x${'e0'.repeat(20)}`;
  const r: string = await provider.send('eth_call', [{ to: at }, 'latest', { [at]: { code: ENV_CODE } }, { number: '0x3e8', time: '0x64' }]);
  assert.is(r, pad(toHex(1000)) + pad(toHex(100)).slice(2));
});

test.run();
