/**
 * eth_createAccessList and eth_simulateV1: calls run in the call lane with the request's signal
 * (a departed client stops them), answered in geth's shapes.
 */
import type { AccessListEntry, BlockRef, CallRequest, EvmBackend, StateOverrides } from '../evm-backend.js';
import { parseCallRequest, parseStateOverrides } from './args.js';
import { optional, required, type MethodSpec } from './dispatch.js';
import { hexData, parseBlockRef, quantity } from './hex.js';
import type { Lane } from './lanes.js';

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
  return m;
}
