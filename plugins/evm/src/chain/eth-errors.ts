/** The -32000 errors of the chain's JSON-RPC answers (admission, eth_call, eth_estimateGas), as geth words them. */
import { EvmRpcError } from '../evm-backend.js';

export function rpcErr(message: string): EvmRpcError {
  return new EvmRpcError(-32000, message);
}

export function shortReason(e: unknown): string {
  const m = e instanceof Error ? e.message : String(e);
  // ethereumjs appends "(tx type=… hash=…)"-style context; keep the reason.
  return m.replace(/\s*\(.*\)\s*$/s, '').slice(0, 200);
}
