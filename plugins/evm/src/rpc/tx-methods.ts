/**
 * eth_getRawTransactionByHash, eth_fillTransaction, eth_blobBaseFee, and the pieces of
 * eth_signTransaction the node-held accounts use (personal.ts), as geth answers them. Tests:
 * rpc-tx-methods.test.ts; through a real node test/e2e/evm-txpool.test.ts.
 */
import { EvmRpcError, type Address, type CallRequest, type EvmBackend, type TxEnvelope } from '../evm-backend.js';
import { parseCallRequest } from './args.js';
import { required, type MethodSpec } from './dispatch.js';
import { hexData, parseHash, quantity } from './hex.js';
import type { Lane } from './lanes.js';

/** EIP-4844's (cancun) blob base fee parameters. */
const MIN_BLOB_BASE_FEE = 1n;
const BLOB_BASE_FEE_UPDATE_FRACTION = 3_338_477n;
/**
 * Largest excess blob gas served: EIP-4844's series takes ~e × excess / fraction steps, so an
 * unbounded header value would hold the thread. This chain's blocks carry none (its headers are
 * checked for zero blob gas), so it is never reached here.
 */
const MAX_EXCESS_BLOB_GAS = BLOB_BASE_FEE_UPDATE_FRACTION * 1_024n;

/** EIP-4844's fake_exponential(factor, numerator, denominator): factor × e^(numerator / denominator), in integers. */
export function fakeExponential(factor: bigint, numerator: bigint, denominator: bigint): bigint {
  let output = 0n;
  let accum = factor * denominator;
  for (let i = 1n; accum > 0n; i++) {
    output += accum;
    accum = (accum * numerator) / (denominator * i);
  }
  return output / denominator;
}

/** The blob base fee of a block whose header has `excessBlobGas` (at least 1 wei). */
export function blobBaseFee(excessBlobGas: bigint): bigint {
  if (excessBlobGas > MAX_EXCESS_BLOB_GAS) throw new EvmRpcError(-32000, `excess blob gas ${excessBlobGas} out of range`);
  return fakeExponential(MIN_BLOB_BASE_FEE, excessBlobGas, BLOB_BASE_FEE_UPDATE_FRACTION);
}

/**
 * geth's JSON of a transaction itself (types.Transaction, the `tx` of eth_signTransaction and
 * eth_fillTransaction): no sender or block fields; the fee caps of a legacy tx are null; chainId only
 * when the tx is bound to one. An EIP-1559 tx's gasPrice is its fee cap, as the execution-apis schema
 * requires of a tx not in a block, where geth writes null (test/e2e/execution-apis.test.ts).
 */
export function envelopeJson(e: TxEnvelope): { raw: string; tx: Record<string, unknown> } {
  const t = e.tx;
  const dynamic = t.type === 2;
  const tx: Record<string, unknown> = { type: quantity(t.type) };
  if (t.chainId !== undefined) tx.chainId = quantity(t.chainId);
  tx.nonce = quantity(t.nonce);
  tx.to = t.to ? hexData(t.to) : null;
  tx.gas = quantity(t.gas);
  tx.gasPrice = quantity(dynamic ? (t.maxFeePerGas ?? t.gasPrice) : t.gasPrice);
  tx.maxPriorityFeePerGas = dynamic ? quantity(t.maxPriorityFeePerGas ?? 0n) : null;
  tx.maxFeePerGas = dynamic ? quantity(t.maxFeePerGas ?? t.gasPrice) : null;
  tx.value = quantity(t.value);
  tx.input = hexData(t.input);
  if (t.type !== 0) tx.accessList = (t.accessList ?? []).map((a) => ({ address: hexData(a.address), storageKeys: a.storageKeys.map(hexData) }));
  tx.v = quantity(t.v);
  tx.r = quantity(t.r);
  tx.s = quantity(t.s);
  if (t.type !== 0) tx.yParity = quantity(t.yParity ?? Number(t.v & 1n));
  tx.hash = hexData(t.hash);
  return { raw: hexData(e.raw), tx };
}

/**
 * eth_signTransaction's checks of its request before any default is filled, with geth's texts: the
 * wallet signs only what names its gas, fees and nonce.
 */
export function checkSignRequest(req: CallRequest): void {
  if (req.gas === undefined) throw new EvmRpcError(-32000, 'gas not specified');
  if (req.gasPrice === undefined && (req.maxPriorityFeePerGas === undefined || req.maxFeePerGas === undefined)) {
    throw new EvmRpcError(-32000, 'missing gasPrice or maxFeePerGas/maxPriorityFeePerGas');
  }
  if (req.nonce === undefined) throw new EvmRpcError(-32000, 'nonce not specified');
}

/** eth_signTransaction with `key` (the caller's unlocked one): `{raw, tx}`, not sent. */
export async function signTransaction(backend: EvmBackend, req: CallRequest & { readonly from: Address }, key: Uint8Array): Promise<unknown> {
  return envelopeJson(await backend.signTransaction(req, key));
}

/** `callLane`: eth_fillTransaction's gas estimate is EVM execution, run there with the request's signal (as eth_estimateGas). */
export function txMethods(backend: EvmBackend, callLane: Lane): Map<string, MethodSpec> {
  const m = new Map<string, MethodSpec>();
  const def = (name: string, args: MethodSpec['args'], run: MethodSpec['run']): void => void m.set(name, { args, run });
  def('eth_getRawTransactionByHash', [required(parseHash)], async (a) => {
    const raw = await backend.rawTransaction(a[0] as Uint8Array);
    return raw ? hexData(raw) : null;
  });
  def('eth_fillTransaction', [required(parseCallRequest)], async (a, ctx) =>
    envelopeJson(await callLane.run(ctx.client, ctx.signal, () => backend.fillTransaction(a[0] as CallRequest, ctx.signal))),
  );
  // As geth: the fee of the last accepted block's header; null when headers carry no excess blob gas.
  def('eth_blobBaseFee', [], async () => {
    const excess = (await backend.block('latest'))?.header.excessBlobGas;
    return excess === undefined ? null : quantity(blobBaseFee(excess));
  });
  return m;
}
