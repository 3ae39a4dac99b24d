/**
 * eth_createAccessList and eth_simulateV1: calls run in the call lane with the request's signal
 * (a departed client stops them), answered in geth's shapes.
 */
import {
  EvmRpcError,
  type AccessListEntry,
  type BlockRef,
  type CallRequest,
  type EvmBackend,
  type SimulateBlockRequest,
  type SimulatedBlock,
  type SimulateRequest,
  type StateOverrides,
} from '../evm-backend.js';
import { parseCallRequest, parseStateOverrides } from './args.js';
import { parseBlockOverrides } from './block-overrides.js';
import { optional, required, type MethodSpec } from './dispatch.js';
import { revertReason } from '../revert-reason.js';
import { blockJson, logJson, type Json } from './format.js';
import { ArgumentError, field, hexData, kindOf, parseBlockRef, parseBool, quantity } from './hex.js';
import type { Lane } from './lanes.js';

/** The most blocks one eth_simulateV1 asks for (geth's; gaps filled count too: the chain's bound). */
export const MAX_SIMULATE_BLOCKS = 256;
/** The most calls of one eth_simulateV1, over all its blocks (each runs up to the gas budget). */
export const MAX_SIMULATE_CALLS = 1_000;

type Obj = Record<string, unknown>;

function objectOf(v: unknown, what: string): Obj {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new ArgumentError(`cannot unmarshal ${kindOf(v)} into ${what}`);
  return v as Obj;
}

/** `o`'s value for `name` as geth's JSON decoding finds it (any case); null counts as absent. */
function member(o: Obj, name: string): unknown {
  if (o[name] !== undefined && o[name] !== null) return o[name];
  const lower = name.toLowerCase();
  for (const k of Object.keys(o)) if (k.toLowerCase() === lower && o[k] !== null) return o[k];
  return undefined;
}

function parseCalls(v: unknown): CallRequest[] {
  if (!Array.isArray(v)) throw new ArgumentError(`cannot unmarshal ${kindOf(v)} into calls`);
  if (v.length > MAX_SIMULATE_CALLS) throw new EvmRpcError(-38026, `too many calls: ${v.length} > ${MAX_SIMULATE_CALLS}`);
  return v.map((c, i) => field(`[${i}]`, c, parseCallRequest));
}

function parseBlockStateCall(v: unknown): SimulateBlockRequest {
  const o = objectOf(v, 'block state call');
  const blockOverrides = member(o, 'blockOverrides');
  const stateOverrides = member(o, 'stateOverrides');
  const calls = member(o, 'calls');
  return {
    ...(blockOverrides !== undefined && { blockOverrides: field('blockOverrides', blockOverrides, parseBlockOverrides) }),
    ...(stateOverrides !== undefined && { stateOverrides: field('stateOverrides', stateOverrides, parseStateOverrides) }),
    calls: calls === undefined ? [] : field('calls', calls, parseCalls),
  };
}

interface SimulatePayload extends SimulateRequest {
  readonly returnFullTransactions: boolean;
}

/** geth's simOpts: `{blockStateCalls, traceTransfers?, validation?, returnFullTransactions?}`. */
export function parseSimulatePayload(v: unknown): SimulatePayload {
  const o = objectOf(v, 'simulate options');
  const raw = member(o, 'blockStateCalls');
  let blocks: SimulateBlockRequest[] = [];
  if (raw !== undefined) {
    if (!Array.isArray(raw)) throw new ArgumentError(`blockStateCalls: cannot unmarshal ${kindOf(raw)} into block state calls`);
    if (raw.length > MAX_SIMULATE_BLOCKS) throw new EvmRpcError(-38026, 'too many blocks');
    blocks = raw.map((b, i) => field(`blockStateCalls[${i}]`, b, parseBlockStateCall));
  }
  let calls = 0;
  for (const b of blocks) calls += b.calls.length;
  if (calls > MAX_SIMULATE_CALLS) throw new EvmRpcError(-38026, `too many calls: ${calls} > ${MAX_SIMULATE_CALLS}`);
  const flag = (name: string): boolean => {
    const f = member(o, name);
    return f === undefined ? false : field(name, f, parseBool);
  };
  return { blocks, traceTransfers: flag('traceTransfers'), validation: flag('validation'), returnFullTransactions: flag('returnFullTransactions') };
}

/** One simulated block as geth writes it: the block's fields, then `calls`. */
function simulatedBlockJson(b: SimulatedBlock, fullTx: boolean): Json {
  const o = blockJson(b.block, fullTx);
  o.calls = b.calls.map((c) => {
    const call: Json = { returnData: hexData(c.returnData), logs: c.logs.map(logJson), gasUsed: quantity(c.gasUsed), status: quantity(c.status) };
    if (c.error) {
      const reason = c.error.code === 3 && c.error.data ? revertReason(c.error.data) : undefined;
      call.error = {
        message: reason === undefined ? c.error.message : `${c.error.message}: ${reason}`,
        code: c.error.code,
        ...(c.error.data !== undefined && { data: hexData(c.error.data) }),
      };
    }
    return call;
  });
  return o;
}

function accessListJson(list: readonly AccessListEntry[]): unknown[] {
  return list.map((e) => ({ address: hexData(e.address), storageKeys: e.storageKeys.map(hexData) }));
}

export function simulateMethods(backend: EvmBackend, callLane: Lane): Map<string, MethodSpec> {
  const m = new Map<string, MethodSpec>();
  // geth's: the call object, the block (latest), state overrides. A failing call is an answer with
  // `error` (geth's text), not a JSON-RPC error.
  m.set('eth_createAccessList', {
    args: [required(parseCallRequest), optional(parseBlockRef), optional(parseStateOverrides)],
    run: async (a, ctx) => {
      const r = await callLane.run(ctx.client, ctx.signal, () =>
        backend.createAccessList(a[0] as CallRequest, (a[1] as BlockRef | undefined) ?? 'latest', a[2] as StateOverrides | undefined, ctx.signal),
      );
      return { accessList: accessListJson(r.accessList), ...(r.error !== undefined && { error: r.error }), gasUsed: quantity(r.gasUsed) };
    },
  });
  // geth's: the payload and the block to build on (latest).
  m.set('eth_simulateV1', {
    args: [required(parseSimulatePayload), optional(parseBlockRef)],
    run: async (a, ctx) => {
      const payload = a[0] as SimulatePayload;
      if (payload.blocks.length === 0) throw new EvmRpcError(-32602, 'empty input');
      const ref = (a[1] as BlockRef | undefined) ?? 'latest';
      const blocks = await callLane.run(ctx.client, ctx.signal, () => backend.simulate(payload, ref, ctx.signal));
      return blocks.map((b) => simulatedBlockJson(b, payload.returnFullTransactions));
    },
  });
  return m;
}
