/**
 * geth's BlockOverrides argument (eth_call's and eth_estimateGas's 4th parameter, each block of
 * eth_simulateV1). Keys match as geth's JSON decoding matches them: case-insensitively, and a key
 * it does not know is ignored (test: rpc-simulate.test.ts "block overrides: keys as geth decodes them").
 */
import type { BlockOverrides } from '../evm-backend.js';
import { ArgumentError, field, kindOf, parseAddress, parseHash, parseQuantity, parseUint64 } from './hex.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** The most withdrawals a block may carry (the spec's bound). */
const MAX_WITHDRAWALS = 16;

function parseWithdrawals(v: unknown): unknown[] {
  if (!Array.isArray(v)) throw new ArgumentError(`cannot unmarshal ${kindOf(v)} into withdrawals`);
  if (v.length > MAX_WITHDRAWALS) throw new ArgumentError(`more than ${MAX_WITHDRAWALS} withdrawals`);
  for (let i = 0; i < v.length; i++) {
    const w = v[i] as unknown;
    if (w === null || typeof w !== 'object' || Array.isArray(w)) throw new ArgumentError(`[${i}]: cannot unmarshal ${kindOf(w)} into withdrawal`);
  }
  return v;
}

/** Each field geth knows, by its lower-cased name: where it goes and how it parses. */
const FIELDS: ReadonlyMap<string, (o: Mutable<BlockOverrides>, v: unknown) => void> = new Map<string, (o: Mutable<BlockOverrides>, v: unknown) => void>([
  ['number', (o, v) => void (o.number = field('number', v, parseQuantity))],
  ['difficulty', (o, v) => void (o.difficulty = field('difficulty', v, parseQuantity))],
  ['time', (o, v) => void (o.time = field('time', v, parseUint64))],
  ['gaslimit', (o, v) => void (o.gasLimit = field('gasLimit', v, parseUint64))],
  ['feerecipient', (o, v) => void (o.feeRecipient = field('feeRecipient', v, parseAddress))],
  ['prevrandao', (o, v) => void (o.prevRandao = field('prevRandao', v, parseHash))],
  ['basefeepergas', (o, v) => void (o.baseFeePerGas = field('baseFeePerGas', v, parseQuantity))],
  ['blobbasefee', (o, v) => void (o.blobBaseFee = field('blobBaseFee', v, parseQuantity))],
  ['beaconroot', (o, v) => void (o.beaconRoot = field('beaconRoot', v, parseHash))],
  ['withdrawals', (o, v) => void (o.withdrawals = field('withdrawals', v, parseWithdrawals))],
]);

export function parseBlockOverrides(v: unknown): BlockOverrides {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new ArgumentError(`cannot unmarshal ${kindOf(v)} into block overrides`);
  const out: Mutable<BlockOverrides> = {};
  for (const [key, value] of Object.entries(v as Record<string, unknown>)) {
    if (value === null || value === undefined) continue;
    FIELDS.get(key.toLowerCase())?.(out, value);
  }
  return out;
}
