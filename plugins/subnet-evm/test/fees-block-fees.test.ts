import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { hasErrorCode } from '@cornice/sdk';
import { DEFAULT_FEE_CONFIG } from '../src/config/fee-config.js';
import { DEFAULT_NETWORK_UPGRADES } from '../src/config/network-upgrades.js';
import { baseFeeFromWindow, childWindow, nextBaseFee, type ParentFeeInfo } from '../src/fees/base-fee.js';
import { blockGasCost, buildableAt, nextBlockGasCost, verifyBlockFee } from '../src/fees/block-gas-cost.js';
import { EXTRA_DATA_BYTES, decodeExtraData, encodeExtraData } from '../src/fees/extra-data.js';
import { nextFeeFields, parentFeeState } from '../src/fees/header.js';
import { addGas, decodeWindow, emptyWindow, encodeWindow, shiftWindow, windowSum } from '../src/fees/window.js';
import type { FeeConfig } from '../src/types.js';

const D = DEFAULT_FEE_CONFIG;
const MAX_U64 = (1n << 64n) - 1n;
const GWEI = 1_000_000_000n;

function throwsCode(fn: () => unknown, code: string, why: RegExp): void {
  try {
    fn();
  } catch (e) {
    assert.ok(hasErrorCode(e, code), String(e));
    assert.match((e as Error).message, why);
    return;
  }
  assert.unreachable('expected ' + code);
}

test('block gas cost with the defaults: 0 s after a zero-cost parent 400,000; 1 s 200,000; >= 2 s 0', () => {
  assert.is(blockGasCost(D, 0n, 0n), 400_000n);
  assert.is(blockGasCost(D, 0n, 1n), 200_000n);
  assert.is(blockGasCost(D, 0n, 2n), 0n);
  assert.is(blockGasCost(D, 0n, 100n), 0n);
});

test('block gas cost grows by 400,000 per back-to-back block up to maxBlockGasCost, falls by step per second late', () => {
  let cost = 0n;
  const seen: bigint[] = [];
  for (let i = 0; i < 4; i++) seen.push((cost = blockGasCost(D, cost, 0n)));
  assert.equal(seen, [400_000n, 800_000n, 1_000_000n, 1_000_000n]);
  assert.is(blockGasCost(D, 1_000_000n, 2n), 1_000_000n);
  assert.is(blockGasCost(D, 1_000_000n, 5n), 400_000n);
  assert.is(blockGasCost(D, 1_000_000n, 7n), 0n);
});

test('block gas cost: a parent without one costs minBlockGasCost; min clamps; uint64 overflow saturates to max', () => {
  const cfg: FeeConfig = { ...D, minBlockGasCost: 50_000n };
  assert.is(blockGasCost(cfg, undefined, 0n), 50_000n);
  assert.is(blockGasCost(cfg, 0n, 10n), 50_000n);
  const huge: FeeConfig = { ...D, blockGasCostStep: MAX_U64, maxBlockGasCost: MAX_U64 };
  assert.is(blockGasCost(huge, 5n, 0n), MAX_U64);
  assert.is(blockGasCost(huge, MAX_U64, 100n), 0n);
});

test('nextBlockGasCost: a timestamp before the parent counts as 0 s; Granite makes it 0', () => {
  assert.is(nextBlockGasCost(D, 0n, 100n, 90n, false), 400_000n);
  assert.is(nextBlockGasCost(D, 1_000_000n, 100n, 100n, true), 0n);
});

test('buildableAt: the earliest second when the cost is back at the minimum (and not a second earlier)', () => {
  assert.is(buildableAt(1000n, 0n, D), 1002n);
  assert.is(buildableAt(1000n, 1_000_000n, D), 1007n);
  assert.is(buildableAt(1000n, 300_000n, D), 1004n);
  assert.is(buildableAt(1000n, undefined, D), 1000n);
  assert.is(buildableAt(1000n, 1_000_000n, D, true), 1000n);
  assert.is(buildableAt(1000n, 1_000_000n, { ...D, blockGasCostStep: 0n }), 1000n);
  const configs: FeeConfig[] = [D, { ...D, minBlockGasCost: 100_000n }, { ...D, targetBlockRate: 5n, blockGasCostStep: 333n, maxBlockGasCost: 10_000n }];
  for (const cfg of configs) {
    for (const parentCost of [0n, 1n, 199_999n, 200_000n, 200_001n, 777_777n, 1_000_000n, 5_000_000n]) {
      const at = buildableAt(0n, parentCost, cfg);
      assert.is(blockGasCost(cfg, parentCost, at), cfg.minBlockGasCost, `cost at ${at} for ${parentCost}`);
      if (at > 0n) assert.ok(blockGasCost(cfg, parentCost, at - 1n) > cfg.minBlockGasCost, `cost at ${at - 1n} for ${parentCost}`);
    }
  }
});

test('verifyBlockFee: tips must buy the block gas cost at the base fee; subnet-evm texts', () => {
  const baseFee = 25n * GWEI;
  const needTip = (400_000n * baseFee + 20_999n) / 21_000n;
  assert.is(verifyBlockFee(baseFee, 400_000n, [{ gasUsed: 21_000n, tipPerGas: needTip }]), undefined);
  assert.is(
    verifyBlockFee(baseFee, 400_000n, [{ gasUsed: 21_000n, tipPerGas: needTip - 1n }]),
    `insufficient gas (399999) to cover the block cost (400000) at base fee (25000000000) (total block fee: ${(needTip - 1n) * 21_000n})`,
  );
  assert.is(verifyBlockFee(baseFee, 0n, []), undefined);
  assert.is(verifyBlockFee(baseFee, 0n, [{ gasUsed: 21_000n, tipPerGas: 0n }]), undefined);
  assert.match(verifyBlockFee(baseFee, 1n, [{ gasUsed: 21_000n, tipPerGas: 0n }])!, /^insufficient gas \(0\) to cover the block cost \(1\)/);
  assert.is(verifyBlockFee(0n, 0n, []), 'invalid base fee (0) in SubnetEVM');
  assert.is(verifyBlockFee(1n, MAX_U64 + 1n, []), `invalid block gas cost (${MAX_U64 + 1n}) in SubnetEVM`);
  // Several txs add up.
  assert.is(verifyBlockFee(10n, 3n, [{ gasUsed: 10n, tipPerGas: 1n }, { gasUsed: 20n, tipPerGas: 1n }]), undefined);
});

test('fee window: add to the newest second, shift out the oldest, saturating sum; 80 bytes big-endian', () => {
  const w = addGas(emptyWindow(), 21_000n);
  assert.equal(w, [0n, 0n, 0n, 0n, 0n, 0n, 0n, 0n, 0n, 21_000n]);
  assert.equal(shiftWindow(w, 1n), [0n, 0n, 0n, 0n, 0n, 0n, 0n, 0n, 21_000n, 0n]);
  assert.equal(shiftWindow(w, 9n), [21_000n, 0n, 0n, 0n, 0n, 0n, 0n, 0n, 0n, 0n]);
  assert.equal(shiftWindow(w, 10n), emptyWindow());
  assert.equal(shiftWindow(w, MAX_U64), emptyWindow());
  assert.equal(shiftWindow(w, 0n), w);
  assert.is(windowSum(addGas(addGas(emptyWindow(), MAX_U64), 5n)), MAX_U64);
  assert.is(windowSum([MAX_U64, 1n, 0n, 0n, 0n, 0n, 0n, 0n, 0n, 0n]), MAX_U64);
  const bytes = encodeWindow([1n, 2n, 3n, 4n, 5n, 6n, 7n, 8n, 9n, 0x0102030405060708n]);
  assert.is(bytes.length, 80);
  assert.equal([...bytes.slice(72)], [1, 2, 3, 4, 5, 6, 7, 8]);
  assert.equal([...bytes.slice(0, 8)], [0, 0, 0, 0, 0, 0, 0, 1]);
  assert.equal(decodeWindow(bytes), [1n, 2n, 3n, 4n, 5n, 6n, 7n, 8n, 9n, 0x0102030405060708n]);
  throwsCode(() => decodeWindow(new Uint8Array(79)), 'InvalidExtraData', /fee window needs 80 bytes, got 79/);
});

test('extraData: window || blockGasCost (88 bytes); short, long or empty extraData is a clear error', () => {
  const e = encodeExtraData({ window: addGas(emptyWindow(), 7n), blockGasCost: 400_000n });
  assert.is(e.length, EXTRA_DATA_BYTES);
  const back = decodeExtraData(e);
  assert.is(back.blockGasCost, 400_000n);
  assert.is(back.window[9], 7n);
  // A subarray at an offset decodes too.
  const padded = new Uint8Array(100);
  padded.set(e, 5);
  assert.is(decodeExtraData(padded.subarray(5, 93)).blockGasCost, 400_000n);
  for (const n of [0, 1, 80, 87, 89, 200]) {
    throwsCode(() => decodeExtraData(new Uint8Array(n)), 'InvalidExtraData', new RegExp(`extraData has ${n} bytes, want 88 \\(fee window 80 \\+ block gas cost 8\\)`));
  }
  throwsCode(() => encodeExtraData({ window: emptyWindow(), blockGasCost: MAX_U64 + 1n }), 'InvalidExtraData', /not a uint64/);
});

const parent = (over: Partial<ParentFeeInfo> = {}): ParentFeeInfo => ({
  number: 5n,
  timestamp: 1000n,
  gasUsed: 0n,
  baseFeePerGas: 25n * GWEI,
  window: emptyWindow(),
  ...over,
});

test('base fee: minBaseFee on the genesis parent; up under load, by max(1, fee*excess/target/denominator)', () => {
  assert.is(nextBaseFee(D, parent({ number: 0n, baseFeePerGas: 999n }), 1000n).baseFee, D.minBaseFee);
  // 30M gas in the window with a 15M target: +25 gwei/36.
  const loaded = nextBaseFee(D, parent({ gasUsed: 30_000_000n }), 1001n);
  assert.is(windowSum(loaded.window), 30_000_000n);
  assert.is(loaded.baseFee, 25n * GWEI + 694_444_444n);
  // Just above the target: the delta rounds to 0 and becomes 1.
  assert.is(nextBaseFee({ ...D, minBaseFee: 0n }, parent({ gasUsed: 15_000_001n, baseFeePerGas: 10n }), 1001n).baseFee, 11n);
});

test('base fee: exactly on target keeps the parent base fee, even below minBaseFee (legacy, unclamped)', () => {
  assert.is(nextBaseFee(D, parent({ gasUsed: 15_000_000n, baseFeePerGas: 7n }), 1000n).baseFee, 7n);
});

test('base fee: down when idle, faster per 10 s window elapsed beyond the first, never below minBaseFee', () => {
  const p = parent({ baseFeePerGas: 50n * GWEI });
  assert.is(nextBaseFee(D, p, 1001n).baseFee, 50n * GWEI - 1_388_888_888n);
  assert.is(nextBaseFee(D, p, 1019n).baseFee, 50n * GWEI - 1_388_888_888n);
  assert.is(nextBaseFee(D, p, 1030n).baseFee, 50n * GWEI - 3n * 1_388_888_888n);
  assert.is(nextBaseFee(D, parent(), 1001n).baseFee, D.minBaseFee);
  assert.is(nextBaseFee(D, parent({ baseFeePerGas: 25n * GWEI + 1n }), 1100n).baseFee, D.minBaseFee);
});

test('base fee rises over a run of loaded blocks and falls back to minBaseFee when idle', () => {
  let p = parent({ gasUsed: 8_000_000n });
  const fees: bigint[] = [];
  for (let t = 1001n; t <= 1010n; t++) {
    const { window, baseFee } = nextBaseFee(D, p, t);
    fees.push(baseFee);
    p = { number: p.number + 1n, timestamp: t, gasUsed: 8_000_000n, baseFeePerGas: baseFee, window };
  }
  for (let i = 2; i < fees.length; i++) assert.ok(fees[i]! > fees[i - 1]!, `rising at ${i}`);
  let idle = { ...p, gasUsed: 0n };
  let t = p.timestamp;
  for (let i = 0; i < 200 && idle.baseFeePerGas > D.minBaseFee; i++) {
    t += 3n;
    const { window, baseFee } = nextBaseFee(D, idle, t);
    assert.ok(baseFee <= idle.baseFeePerGas || windowSum(window) > D.targetGas);
    idle = { number: idle.number + 1n, timestamp: t, gasUsed: 0n, baseFeePerGas: baseFee, window };
  }
  assert.is(idle.baseFeePerGas, D.minBaseFee);
});

test('childWindow: the parent gas goes into the newest second before the shift; a timestamp before the parent is an error', () => {
  const w = childWindow(parent({ gasUsed: 100n, window: addGas(emptyWindow(), 5n) }), 1002n);
  assert.equal(w, [0n, 0n, 0n, 0n, 0n, 0n, 0n, 105n, 0n, 0n]);
  assert.equal(childWindow(parent({ number: 0n, gasUsed: 100n }), 1002n), emptyWindow());
  throwsCode(() => childWindow(parent(), 999n), 'InvalidTimestamp', /prior to parent timestamp 1000/);
  assert.is(baseFeeFromWindow(D, parent(), emptyWindow(), 1000n), D.minBaseFee);
});

test('nextFeeFields: gas limit from the config, extraData = window || cost; genesis parent: empty window, cost 0 under Etna', () => {
  const genesis = { number: 0n, timestamp: 1000n, gasUsed: 0n, baseFeePerGas: 0n, extraData: new Uint8Array([0]) };
  assert.equal(parentFeeState(genesis, DEFAULT_NETWORK_UPGRADES), { window: emptyWindow(), blockGasCost: 0n });
  assert.equal(parentFeeState(genesis, { subnetEVMTimestamp: 0n }), { window: emptyWindow(), blockGasCost: undefined });
  const b1 = nextFeeFields(D, genesis, 1000n, DEFAULT_NETWORK_UPGRADES);
  assert.is(b1.gasLimit, 8_000_000n);
  assert.is(b1.baseFee, D.minBaseFee);
  assert.is(b1.blockGasCost, 400_000n);
  assert.equal(decodeExtraData(b1.extraData), { window: emptyWindow(), blockGasCost: 400_000n });
  const b2 = nextFeeFields(D, { number: 1n, timestamp: 1000n, gasUsed: 21_000n, baseFeePerGas: b1.baseFee, extraData: b1.extraData }, 1001n, DEFAULT_NETWORK_UPGRADES);
  assert.is(b2.blockGasCost, 600_000n);
  assert.is(b2.window[8], 21_000n);
  const granite = nextFeeFields(D, { number: 1n, timestamp: 1000n, gasUsed: 0n, baseFeePerGas: b1.baseFee, extraData: b1.extraData }, 1000n, { ...DEFAULT_NETWORK_UPGRADES, graniteTimestamp: 1000n });
  assert.is(granite.blockGasCost, 0n);
  throwsCode(
    () => nextFeeFields(D, { number: 1n, timestamp: 1000n, gasUsed: 0n, baseFeePerGas: 1n, extraData: new Uint8Array(32) }, 1001n, DEFAULT_NETWORK_UPGRADES),
    'InvalidExtraData',
    /extraData has 32 bytes/,
  );
});

test.run();
