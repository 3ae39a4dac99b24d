/**
 * Helpers for the precompile tests: the package's in-memory HookState, a chain config view with Durango
 * (and Granite) at chosen times, and hand-built PrecompileCall values.
 */
import type { BlockInfo, HookState, PrecompileCall, PrecompileResult } from '@cornice/evm';
import { concatBytes, fromHex, toHex } from '@cornice/sdk';
import * as assert from 'uvu/assert';
import type { ChainConfigView, FeeConfig, PrecompileConfigBase, PrecompileModule } from '../src/index.js';
import { addressWord, ConfigError, DEFAULT_FEE_CONFIG, MemoryHookState, selector, uint256Word } from '../src/index.js';

export { MemoryHookState };

export { DEFAULT_FEE_CONFIG };

/** Durango (and Granite) from the given unix seconds; undefined: never. */
export function chainView(opts: { durango?: bigint; granite?: bigint; allowFeeRecipients?: boolean; feeConfig?: FeeConfig } = {}): ChainConfigView {
  return {
    chainId: 99999n,
    feeConfig: opts.feeConfig ?? DEFAULT_FEE_CONFIG,
    allowFeeRecipients: opts.allowFeeRecipients ?? false,
    upgrades: { subnetEVMTimestamp: 0n, durangoTimestamp: opts.durango, graniteTimestamp: opts.granite },
    isDurango: (t) => opts.durango !== undefined && t >= opts.durango,
  };
}

/** Durango active from genesis. */
export const DURANGO = chainView({ durango: 0n });
/** Before Durango (strict inputs, no events, no setManager). */
export const PRE_DURANGO = chainView();

export const addr = (last: number) => fromHex(`0x${'00'.repeat(19)}${last.toString(16).padStart(2, '0')}`);
export const ADMIN = fromHex('0x8db97c7cece249c2b98bdc0226cc4c2a57bf52fc');
export const MANAGER = addr(0x33);
export const ENABLED = addr(0x11);
export const NOBODY = addr(0x99);

export function block(over: Partial<BlockInfo> = {}): BlockInfo {
  return { number: 7n, timestamp: 1_700_000_000n, parentTimestamp: 1_699_999_998n, coinbase: new Uint8Array(20), baseFeePerGas: 25_000_000_000n, ...over };
}

/** ABI call data: the selector of `signature`, then the words. */
export function calldata(signature: string, ...words: Uint8Array[]): Uint8Array {
  return concatBytes(selector(signature), ...words);
}

export const word = (v: bigint) => uint256Word(v);
export const aword = (a: Uint8Array) => addressWord(a);

export interface CallOptions {
  caller?: Uint8Array;
  gas?: bigint;
  isStatic?: boolean;
  isDelegate?: boolean;
  block?: BlockInfo;
  chain?: ChainConfigView;
}

/** Runs `input` against `module` as a call from `caller` (default the admin). */
export async function callModule<C extends PrecompileConfigBase>(
  module: PrecompileModule<C>,
  config: C,
  state: HookState,
  input: Uint8Array,
  o: CallOptions = {},
): Promise<PrecompileResult> {
  const call: PrecompileCall = {
    address: module.address,
    caller: o.caller ?? ADMIN,
    origin: o.caller ?? ADMIN,
    value: 0n,
    input,
    gas: o.gas ?? 1_000_000n,
    isStatic: o.isStatic ?? false,
    isDelegate: o.isDelegate ?? false,
    block: o.block ?? block(),
    state,
  };
  return module.run(call, { config, chain: o.chain ?? DURANGO });
}

/** Parses `json` and configures a fresh (or the given) state with it. */
export async function activate<C extends PrecompileConfigBase>(
  module: PrecompileModule<C>,
  json: unknown,
  o: { chain?: ChainConfigView; state?: MemoryHookState; block?: BlockInfo } = {},
): Promise<{ state: MemoryHookState; config: C }> {
  const chain = o.chain ?? DURANGO;
  const state = o.state ?? new MemoryHookState();
  const config = module.parseConfig(json, module.key, chain);
  await module.configure(state, config, o.block ?? block(), chain);
  return { state, config };
}

export function expectOk(r: PrecompileResult): Extract<PrecompileResult, { ok: true }> {
  if (!r.ok) assert.unreachable(`expected success, got ${r.error}`);
  return r as Extract<PrecompileResult, { ok: true }>;
}

/** A non-revert failure with exactly this text, consuming all the frame's gas. */
export function expectHalt(r: PrecompileResult, error: string, gas = 1_000_000n): void {
  if (r.ok) assert.unreachable(`expected failure "${error}", got success`);
  else {
    assert.is(r.error, error);
    assert.is(r.revert ?? false, false, 'not a revert');
    assert.is(r.gasUsed, gas, 'all gas consumed');
  }
}

export const hex = (b: Uint8Array) => `0x${toHex(b)}`;

/** parseConfig refuses `json` with a ConfigError for `field` and this reason. */
export function expectConfigError<C extends PrecompileConfigBase>(
  module: PrecompileModule<C>,
  json: unknown,
  field: string,
  why: string,
  chain: ChainConfigView = DURANGO,
): void {
  try {
    module.parseConfig(json, module.key, chain);
    assert.unreachable('accepted');
  } catch (e) {
    assert.instance(e, ConfigError);
    assert.is((e as ConfigError).field, field);
    assert.is((e as ConfigError).message, `invalid chain config: ${field}: ${why}`);
  }
}
