/**
 * The shared machinery of a stateful precompile (subnet-evm's precompile/contract): gas metering,
 * dispatch on the 4-byte selector with the reference's errors, functions activated only from an
 * upgrade (setManager from Durango), logs, and the DELEGATECALL/CALLCODE policy. Built-in modules and
 * third parties build their `run` with `precompileDispatcher`.
 */
import type { PrecompileCall, PrecompileLog, PrecompileResult } from '@cornice/evm';
import { hasErrorCode, toHex } from '@cornice/sdk';
import type { ModuleCallContext, PrecompileConfigBase } from '../types.js';
import { hex0x, selector } from './abi.js';
import { PrecompileHalt } from './errors.js';

/** precompile/contract/utils.go: storage and log prices. */
export const WRITE_GAS_PER_SLOT = 20_000n;
export const READ_GAS_PER_SLOT = 5_000n;
export const LOG_GAS = 375n;
export const LOG_TOPIC_GAS = 375n;
export const LOG_DATA_GAS = 8n;

/**
 * From this block time (2025-08-02 04:00 UTC) a DELEGATECALL/CALLCODE into a stateful precompile
 * invalidates the execution; from Granite it reverts (params/hooks_libevm.go).
 */
export const INVALIDATE_DELEGATE_UNIX = 1_754_107_200n;

export const ERR_OUT_OF_GAS = 'out of gas';
export const ERR_WRITE_PROTECTION = 'write protection';
export const ERR_EXECUTION_REVERTED = 'execution reverted';

/** Gas charged so far against the frame's gas. */
export class GasMeter {
  used = 0n;
  constructor(readonly limit: bigint) {}

  /** contract.DeductGas: fails with `out of gas` when less than `amount` remains. */
  charge(amount: bigint): void {
    if (this.limit - this.used < amount) throw new PrecompileHalt(ERR_OUT_OF_GAS);
    this.used += amount;
  }
}

/** What a function handler works with. */
export interface PrecompileEnv<C extends PrecompileConfigBase = PrecompileConfigBase> {
  readonly call: PrecompileCall;
  readonly ctx: ModuleCallContext<C>;
  /** The input after the selector. */
  readonly args: Uint8Array;
  readonly gas: GasMeter;
  /** Durango is active at the block: events are emitted, inputs are read leniently. */
  readonly durango: boolean;
  /** Adds a log (dropped if the call fails). */
  emit(topics: readonly Uint8Array[], data?: Uint8Array): void;
}

export interface PrecompileFunction<C extends PrecompileConfigBase = PrecompileConfigBase> {
  /** The Solidity signature, e.g. `setAdmin(address)`: its selector dispatches. */
  readonly signature: string;
  /** Active at this call (default always); an inactive one is `invalid non-activated function selector`. */
  isActive?(env: PrecompileEnv<C>): boolean;
  /** Returns the output; throws PrecompileHalt to fail with its text. */
  run(env: PrecompileEnv<C>): Promise<Uint8Array>;
}

/**
 * Before Durango an input must have exactly `length` bytes after the selector ("strict mode"); the
 * failure reads `<what>: <actual length>`.
 */
export function requireStrictLength(env: PrecompileEnv<PrecompileConfigBase>, length: number, what: string): void {
  if (!env.durango && env.args.length !== length) throw new PrecompileHalt(`${what}: ${env.args.length}`);
}

/** Fails a write attempted in a static call. */
export function requireWritable(env: PrecompileEnv<PrecompileConfigBase>): void {
  if (env.call.isStatic) throw new PrecompileHalt(ERR_WRITE_PROTECTION);
}

function isGranite(ctx: ModuleCallContext<PrecompileConfigBase>, timestamp: bigint): boolean {
  const granite = ctx.chain.upgrades.graniteTimestamp;
  return granite !== undefined && timestamp >= granite;
}

/**
 * Makes a module's `run` from its functions. Input shorter than a selector, an unknown selector, a
 * not-yet-activated function and any PrecompileHalt fail without revert (all gas consumed) with the
 * reference's text; a DELEGATECALL/CALLCODE reverts from Granite and fails from
 * INVALIDATE_DELEGATE_UNIX (the reference invalidates the whole execution; here the frame fails).
 * Other errors (a broken state) propagate.
 */
export function precompileDispatcher<C extends PrecompileConfigBase>(
  functions: readonly PrecompileFunction<C>[],
): (call: PrecompileCall, ctx: ModuleCallContext<C>) => Promise<PrecompileResult> {
  const bySelector = new Map<string, PrecompileFunction<C>>();
  for (const f of functions) {
    const key = toHex(selector(f.signature));
    if (bySelector.has(key)) throw new RangeError(`duplicate selector 0x${key} (${f.signature})`);
    bySelector.set(key, f);
  }
  return async (call, ctx) => {
    const timestamp = call.block.timestamp;
    if (call.isDelegate) {
      if (isGranite(ctx, timestamp)) {
        return { ok: false, error: ERR_EXECUTION_REVERTED, revert: true, output: new Uint8Array(0), gasUsed: call.gas };
      }
      if (timestamp >= INVALIDATE_DELEGATE_UNIX) return fail(call, 'precompile cannot be called with DELEGATECALL');
    }
    if (call.input.length < 4) return fail(call, `missing function selector to precompile - input length (${call.input.length})`);
    const sel = call.input.subarray(0, 4);
    const fn = bySelector.get(toHex(sel));
    if (!fn) return fail(call, `invalid function selector ${hex0x(sel)}`);
    const logs: PrecompileLog[] = [];
    const env: PrecompileEnv<C> = {
      call,
      ctx,
      args: call.input.subarray(4),
      gas: new GasMeter(call.gas),
      durango: ctx.chain.isDurango(timestamp),
      emit: (topics, data = new Uint8Array(0)) => logs.push({ topics, data }),
    };
    if (fn.isActive && !fn.isActive(env)) return fail(call, `invalid non-activated function selector ${hex0x(sel)}`);
    try {
      const output = await fn.run(env);
      return { ok: true, output, gasUsed: env.gas.used, logs };
    } catch (e) {
      if (hasErrorCode(e, 'PrecompileHalt')) return fail(call, e.message);
      throw e;
    }
  };
}

function fail(call: PrecompileCall, error: string): PrecompileResult {
  return { ok: false, error, gasUsed: call.gas };
}
